import Foundation
internal import CLinuxIO

/// Hearth's own listening socket: accepts connections on an event loop, sniffs their first bytes and
/// hands each to HTTP/2 (the client preface) or to libmicrohttpd (anything else).
///
/// gRPC clients speak cleartext HTTP/2 with prior knowledge, so the only way to tell them from an
/// HTTP/1.1 client on one port is to look: `recv(MSG_PEEK)` leaves the bytes in the kernel, and
/// whoever takes the socket reads the request from its first byte.
/// Related: RFC 9113 §3.4 (the connection preface).
final class ConnectionAcceptor: @unchecked Sendable {
    /// A socket whose protocol is known, with its peer address.
    struct Accepted {
        var fd: Int32
        var address: sockaddr_storage
        var addressLength: socklen_t
    }

    /// What the sniff decided.
    enum Route { case http1, http2 }

    /// `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`.
    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Classifies the first bytes seen: nil while they are still a proper prefix of the preface.
    static func route(of bytes: some Collection<UInt8>) -> Route? {
        var matched = 0
        for (b, p) in zip(bytes, preface) {
            if b != p { return .http1 }
            matched += 1
        }
        if matched == preface.count { return .http2 }
        return matched < bytes.count ? .http1 : nil
    }

    private struct Pending {
        var accepted: Accepted
        var deadline: UInt64
    }

    private let listenFD: Int32
    private let loop: EventLoop
    private let sniffTimeoutNanos: UInt64
    private let admit: (Int) -> Bool
    private let deliver: (Accepted, Route) -> Void
    /// Sockets accepted and not yet classified (loop thread only).
    private var pending: [Int32: Pending] = [:]

    /// - Parameters:
    ///   - admit: given the number of sockets still being sniffed, whether one more connection fits
    ///     under the cap (checked on every accept, on the loop thread).
    ///   - deliver: takes ownership of a classified socket; called on the loop thread.
    init(listenFD: Int32, name: String, sniffTimeout: Double, admit: @escaping (Int) -> Bool,
         deliver: @escaping (Accepted, Route) -> Void) throws(HTTPServerError) {
        self.listenFD = listenFD
        self.loop = try EventLoop(name: "\(name)-accept")
        self.sniffTimeoutNanos = UInt64(sniffTimeout * 1e9)
        self.admit = admit
        self.deliver = deliver
        loop.tick = { [unowned self] in sweep() }
    }

    func start() {
        loop.execute { [self] in
            loop.register(listenFD, events: hearth_epollin()) { [unowned self] _ in acceptAll() }
        }
        loop.start()
    }

    /// Closes the listening socket and every socket still being sniffed (they have sent no request).
    func stop() {
        loop.execute { [self] in
            loop.unregister(listenFD)
            close(listenFD)
            for fd in pending.keys {
                loop.unregister(fd)
                close(fd)
            }
            pending = [:]
        }
        loop.stop()
    }

    // MARK: Loop thread

    private func acceptAll() {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept4(listenFD, $0, &length, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
                }
            }
            if fd < 0 {
                // EAGAIN: drained. EMFILE and friends: the socket stays in the backlog and epoll
                // reports it again; a short pause keeps that from spinning a core.
                if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED { usleep(10_000) }
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            // Over the cap, close at once, as libmicrohttpd does with its own listener.
            guard admit(pending.count) else {
                close(fd)
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let accepted = Accepted(fd: fd, address: storage, addressLength: length)
            pending[fd] = Pending(accepted: accepted, deadline: DispatchTime.now().uptimeNanoseconds + sniffTimeoutNanos)
            // Edge-triggered: the peeked bytes stay readable, so only new bytes should wake us.
            loop.register(fd, events: hearth_epollin() | hearth_epollrdhup() | hearth_epollet()) { [unowned self] _ in sniff(fd) }
            sniff(fd)
        }
    }

    private func sniff(_ fd: Int32) {
        guard let entry = pending[fd] else { return }
        var bytes = [UInt8](repeating: 0, count: ConnectionAcceptor.preface.count)
        let n = recv(fd, &bytes, bytes.count, Int32(MSG_PEEK))
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            drop(fd)
            close(fd)
            return
        }
        if n == 0 {
            // Closed before sending anything: nobody to serve.
            drop(fd)
            close(fd)
            return
        }
        guard let route = ConnectionAcceptor.route(of: bytes[0..<n]) else { return }
        drop(fd)
        deliver(entry.accepted, route)
    }

    private func drop(_ fd: Int32) {
        loop.unregister(fd)
        pending[fd] = nil
    }

    /// Hands sockets that stayed silent (or stalled inside a preface prefix such as "P") past the
    /// time limit to libmicrohttpd, whose idle timeout then applies as it always has.
    private func sweep() -> Int32 {
        guard !pending.isEmpty else { return -1 }
        let now = DispatchTime.now().uptimeNanoseconds
        var next = UInt64.max
        for (fd, entry) in pending {
            if entry.deadline <= now {
                drop(fd)
                deliver(entry.accepted, .http1)
            } else {
                next = min(next, entry.deadline)
            }
        }
        guard next != .max else { return -1 }
        return Int32(min(1_000, max(1, (next - now) / 1_000_000 + 1)))
    }
}
