import Foundation

/// The HTTP/2 side of a listener: one event loop owning every adopted connection and its session.
///
/// One loop thread serves all connections: the work per frame is small, handlers run elsewhere
/// (the gRPC worker pool), and an open stream costs memory, never a thread.
final class HTTP2Engine: @unchecked Sendable {
    /// What we announce in SETTINGS and enforce.
    struct Limits: Sendable {
        /// The SDKs multiplex Listen, Write and unary calls on one connection.
        var maxConcurrentStreams = 1000
        var initialWindowSize = 1 << 20
        var connectionWindowSize = 16 << 20
        var maxHeaderListSize = 16 << 10
    }

    let loop: EventLoop
    let handler: any HTTP2StreamHandler
    let limits: Limits
    private var connections: [Int32: HTTP2Connection] = [:]  // loop thread only
    private let countLock = NSLock()
    private var count = 0
    private var streams = 0

    init(name: String, handler: any HTTP2StreamHandler, limits: Limits = Limits()) throws(HTTPServerError) {
        self.loop = try EventLoop(name: "\(name)-h2")
        self.handler = handler
        self.limits = limits
        loop.start()
    }

    /// Open HTTP/2 connections (for the listener's connection cap).
    var connectionCount: Int {
        countLock.lock()
        defer { countLock.unlock() }
        return count
    }

    /// Streams open on every connection (shutdown waits for them within its grace period).
    var openStreams: Int {
        countLock.lock()
        defer { countLock.unlock() }
        return streams
    }

    /// Takes over a socket that sent the preface (the preface is still unread in the kernel).
    func adopt(fd: Int32, remoteAddress: String) {
        countLock.lock()
        count += 1
        countLock.unlock()
        loop.execute { [self] in
            let c = HTTP2Connection(fd: fd, loop: loop, remoteAddress: remoteAddress, handler: handler, limits: limits)
            c.onClose = { [unowned self] c in
                connections[c.fd] = nil
                countLock.lock()
                count -= 1
                countLock.unlock()
            }
            c.streamsChanged = { [unowned self] delta in
                countLock.lock()
                streams += delta
                countLock.unlock()
            }
            connections[fd] = c
            if !c.start() { c.shutdown(errorCode: 2) }
        }
    }

    /// Sends GOAWAY on every connection: no new streams, in-flight ones may finish.
    func goAway() {
        loop.execute { [self] in for c in connections.values { c.goAway() } }
    }

    /// Closes every connection (open streams' delegates hear `closed`) and ends the loop.
    func close() {
        loop.execute { [self] in for c in Array(connections.values) { c.shutdown(errorCode: 8) } }
        loop.stop()
    }
}
