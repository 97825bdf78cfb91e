import Foundation
internal import CMicroHTTPD

/// Drives one push response (`Response.Body.push`) through libmicrohttpd: asks the source for
/// bytes, and when it has none suspends the connection (libmicrohttpd's documented way to avoid
/// busy-waiting from a content reader) until the source's waker resumes it.
///
/// libmicrohttpd forbids resuming a connection that is not suspended, and stopping a daemon that
/// still has suspended connections; `suspended`, `woken` and `closed` (under `lock`) keep both
/// from happening: a wake that arrives while the reader runs is remembered and makes the reader
/// ask again instead of suspending, and `HTTPServer.stop` ends every box before the daemon stops.
final class PushBox: @unchecked Sendable {
    let source: any PushBodySource
    private let connection: OpaquePointer
    private weak var server: HTTPServer?
    private let lock = NSLock()
    private var suspended = false
    private var woken = false
    private var closed = false
    /// Set by `HTTPServer.stop`: the next read ends the body.
    private var ending = false

    private init(_ source: any PushBodySource, connection: OpaquePointer, server: HTTPServer) {
        self.source = source
        self.connection = connection
        self.server = server
    }

    /// A chunked libmicrohttpd response reading from `source`.
    static func response(_ source: any PushBodySource, connection: OpaquePointer, server: HTTPServer) -> OpaquePointer? {
        let box = PushBox(source, connection: connection, server: server)
        source.attach(PushWaker { [weak box] in box?.wake() })
        if !server.pushOpened(box) { box.end() }
        let context = Unmanaged.passRetained(box).toOpaque()
        return MHD_create_response_from_callback(hearth_mhd_size_unknown(), 16 << 10, { cls, _, buf, max in
            guard let cls, let buf else { return hearth_mhd_reader_end_with_error() }
            return Unmanaged<PushBox>.fromOpaque(cls).takeUnretainedValue().read(into: UnsafeMutableRawBufferPointer(start: buf, count: max))
        }, context, { cls in
            guard let cls else { return }
            Unmanaged<PushBox>.fromOpaque(cls).takeRetainedValue().close()
        })
    }

    /// The content reader: bytes, end, or 0 after suspending the connection.
    private func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            lock.lock()
            let stop = ending
            lock.unlock()
            if stop { return hearth_mhd_reader_end_of_stream() }
            switch source.next(into: buffer) {
            case .bytes(let n) where n > 0: return n
            case .bytes, .wait:
                lock.lock()
                if woken || ending {
                    woken = false
                    lock.unlock()
                    continue
                }
                // Under the lock: a wake on another thread sees `suspended` only once it is true.
                MHD_suspend_connection(connection)
                suspended = true
                lock.unlock()
                return 0
            case .end:
                return hearth_mhd_reader_end_of_stream()
            }
        }
    }

    /// New bytes (or the end): resume the connection if parked, else make the running reader ask again.
    func wake() {
        lock.lock()
        defer { lock.unlock() }
        if closed { return }
        if suspended {
            suspended = false
            MHD_resume_connection(connection)
        } else {
            woken = true
        }
    }

    /// Ends the body at the next read (the server is stopping) and resumes a parked connection.
    func end() {
        lock.lock()
        ending = true
        lock.unlock()
        wake()
    }

    /// libmicrohttpd released the response: the connection is no longer ours to resume.
    private func close() {
        lock.lock()
        closed = true
        lock.unlock()
        server?.pushClosed(self)
        source.close()
    }
}
