import Foundation
import Testing
@testable import HearthHTTP

/// Answers every stream with 32 KiB writes from a thread of its own, waiting between them until
/// less than 16 KiB is buffered (`HTTP2Stream.waitUntilBuffered`, what gRPC's `waitUntilWritable`
/// calls between the batches of a RunQuery or BatchGetDocuments answer), until the wait says the
/// stream closed.
final class WaitingWriter: HTTP2StreamHandler, @unchecked Sendable {
    static let chunk = [UInt8](repeating: 0x61, count: 32 << 10)
    private let lock = NSLock()
    private var waiting = 0
    private var released = 0

    func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)]) -> any HTTP2StreamDelegate {
        stream.respond(headers: [(":status", "200")])
        let thread = Thread { [self] in
            var counted = false
            while true {
                stream.write(Self.chunk)
                if !counted {
                    counted = true
                    lock.withLock { waiting += 1 }
                }
                guard stream.waitUntilBuffered(below: 16 << 10) else { break }
            }
            lock.withLock { released += 1 }
        }
        thread.stackSize = 256 << 10
        thread.start()
        return LoopRecorder.Delegate()
    }

    /// Writers that have written (and so wait or have waited), and writers whose wait saw the close.
    var counts: (waiting: Int, released: Int) { lock.withLock { (waiting, released) } }
}

@Suite struct StreamWaitTests {
    /// A writer waiting for its client to read is released (the wait answers false) when the client
    /// resets the stream — also when the client's WINDOW_UPDATE just let the loop take more of its
    /// bytes and wake it, so the wake-up and the close meet on two threads (ThreadSanitizer once
    /// could find `isClosed` read under the condition's lock alone while the loop wrote it).
    @Test func aWriterWaitingForItsClientIsReleasedByAReset() throws {
        let handler = WaitingWriter()
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(), http2: handler)
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let streams = 64
        let c = try RawSocket(port: server.port)
        // Our socket must keep taking the server's bytes (a few MB: the windows bound them), or its
        // writes stop before the resets count.
        let received = ReceivedBytes()
        let readerDone = DispatchSemaphore(value: 0)
        let fd = c.fd
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n <= 0 && errno != EAGAIN { break }
                if n > 0 { received.append(buffer[0..<n]) }
            }
            readerDone.signal()
        }
        let block = BadInputTests.requestHeaders("/any/Path")
        c.send(preface + h2Frame(type: 4, flags: 0, stream: 0)
            + (0..<streams).flatMap { h2Frame(type: 1, flags: 5, stream: Int32(1 + 2 * $0), block) })
        let deadline = Date().addingTimeInterval(30)
        while handler.counts.waiting < streams && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(handler.counts.waiting == streams)
        #expect(handler.counts.released == 0)  // every one waits: the client's windows are full
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        for i in 0..<streams {
            let id = Int32(1 + 2 * i)
            // More room on the stream and the connection: the loop takes the writer's bytes and wakes it...
            c.send(h2Frame(type: 8, flags: 0, stream: 0, be32(40_000)) + h2Frame(type: 8, flags: 0, stream: id, be32(40_000)))
            // ...and the reset follows, in the same read or just after it (CANCEL).
            if i % 2 == 1 { usleep(UInt32(i % 7) * 50) }
            c.send(h2Frame(type: 3, flags: 0, stream: id, be32(8)))
        }
        while handler.counts.released < streams && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(handler.counts.released == streams)
        // The connection still works: a PING is answered.
        c.send(h2Frame(type: 6, flags: 0, stream: 0, [1, 2, 3, 4, 5, 6, 7, 8]))
        while !h2FramesWithFlags(received.bytes).contains(where: { $0.type == 6 && $0.flags == 1 }) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        shutdown(c.fd, Int32(SHUT_RDWR))
        _ = readerDone.wait(timeout: .now() + 10)
        #expect(h2FramesWithFlags(received.bytes).contains { $0.type == 6 && $0.flags == 1 && $0.payload == [1, 2, 3, 4, 5, 6, 7, 8] })
    }
}

/// What a reader thread received, read by the test's thread.
final class ReceivedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [UInt8] = []

    func append(_ bytes: ArraySlice<UInt8>) { lock.withLock { storage += bytes } }
    var bytes: [UInt8] { lock.withLock { storage } }
}
