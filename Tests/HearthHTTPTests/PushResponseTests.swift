import Foundation
import Testing
@testable import HearthHTTP
import HearthCore

/// A push body fed by the test: bytes queued by `push`, the end by `end`.
final class QueueSource: PushBodySource, @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [UInt8] = []
    private var ended = false
    private var waker: PushWaker?
    let closed = LockedCounter()

    func push(_ text: String) {
        let w: PushWaker? = lock.withLock {
            pending += Array(text.utf8)
            return waker
        }
        w?.wake()
    }

    func end() {
        let w: PushWaker? = lock.withLock {
            ended = true
            return waker
        }
        w?.wake()
    }

    func attach(_ waker: PushWaker) { lock.withLock { self.waker = waker } }

    func next(into buffer: UnsafeMutableRawBufferPointer) -> PushRead {
        lock.withLock {
            if pending.isEmpty { return ended ? .end : .wait }
            let n = min(buffer.count, pending.count)
            buffer.copyBytes(from: pending[0..<n])
            pending.removeFirst(n)
            return .bytes(n)
        }
    }

    func close() { closed.increment() }
}

/// Serves `/events` as a push body from `sources` (one per request), anything else as text.
final class PushService: HTTPService, @unchecked Sendable {
    private let lock = NSLock()
    private(set) var sources: [QueueSource] = []

    func dispose(_ request: Request) -> RequestDisposition {
        guard request.rawPath == "/events" else { return .respond(.text("plain")) }
        let s = QueueSource()
        s.push("hello\n")
        lock.withLock { sources.append(s) }
        var h = HTTPHeaders()
        h.set("Content-Type", "text/event-stream")
        return .respond(Response(status: 200, headers: h, body: .push(s)))
    }

    var latest: QueueSource? { lock.withLock { sources.last } }
}

extension RawClient {
    /// Reads until the bytes received contain `text` (false on timeout or close).
    func readUntil(_ text: String, into received: inout [UInt8]) -> Bool {
        let needle = Array(text.utf8)
        while !received.containsSubsequence(needle) {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return false }
            received += chunk[0..<n]
        }
        return true
    }
}

extension Array where Element == UInt8 {
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        for i in 0...(count - needle.count) where self[i..<(i + needle.count)].elementsEqual(needle) { return true }
        return false
    }
}

@Suite struct PushResponseTests {
    static func server(allowsPush: Bool = true, threads: Int = 2) throws -> (HTTPServer, PushService) {
        let service = PushService()
        var c = HTTPServer.Configuration(port: 0, threads: threads)
        c.allowsPush = allowsPush
        let server = HTTPServer(name: "push", configuration: c, service: service)
        try server.start()
        return (server, service)
    }

    @Test func bytesPushedLaterReachTheParkedConnectionWhileOthersAreServed() throws {
        // One worker thread: a parked push must not hold it, or the plain request could not be served.
        let (server, service) = try Self.server(threads: 1)
        defer { server.stop(graceSeconds: 1) }
        let c = try RawClient(port: server.port)
        c.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        var got: [UInt8] = []
        #expect(c.readUntil("hello", into: &got))
        #expect(String(decoding: got, as: UTF8.self).lowercased().contains("transfer-encoding: chunked"))
        for i in 0..<3 {
            let other = try RawClient(port: server.port)
            other.send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(other.readResponse()?.status == 200)
            service.latest?.push("event \(i)\n")
            #expect(c.readUntil("event \(i)", into: &got))
        }
        service.latest?.end()
        // The chunked body's last chunk: the response is complete and the connection reusable.
        #expect(c.readUntil("0\r\n\r\n", into: &got))
        c.send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
        var more: [UInt8] = []
        #expect(c.readUntil("plain", into: &more))
        #expect(until { server.pushCount == 0 && service.latest?.closed.value == 1 })
    }

    @Test func manyWakesFromOtherThreadsLoseNoBytes() throws {
        let (server, service) = try Self.server()
        defer { server.stop(graceSeconds: 1) }
        let c = try RawClient(port: server.port)
        c.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        var got: [UInt8] = []
        #expect(c.readUntil("hello", into: &got))
        let source = service.latest!
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<250 { source.push("<\(t)-\(i)>") }
        }
        source.push("done!")
        #expect(c.readUntil("done!", into: &got))
        let text = String(decoding: got, as: UTF8.self)
        for t in 0..<4 { for i in 0..<250 { #expect(text.contains("<\(t)-\(i)>")) } }
    }

    @Test func stoppingTheServerEndsParkedResponses() throws {
        let (server, service) = try Self.server()
        let c = try RawClient(port: server.port)
        c.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        var got: [UInt8] = []
        #expect(c.readUntil("hello", into: &got))
        #expect(server.pushCount == 1)
        let started = Date()
        server.stop(graceSeconds: 60)
        // Ended at once, not after the grace period, and released before the daemon stopped.
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(server.pushCount == 0)
        #expect(service.latest?.closed.value == 1)
    }

    @Test func aClientThatLeftIsReleasedAtTheNextWrite() throws {
        let (server, service) = try Self.server()
        defer { server.stop(graceSeconds: 1) }
        do {
            let c = try RawClient(port: server.port)
            c.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            var got: [UInt8] = []
            #expect(c.readUntil("hello", into: &got))
        }  // closed here
        let source = service.latest!
        // A parked connection notices the close only when it writes (hence the hub's heartbeats).
        #expect(until(seconds: 10) {
            source.push(String(repeating: "x", count: 1000) + "\n")
            return source.closed.value == 1
        })
        #expect(until { server.pushCount == 0 })
    }

    @Test func aListenerWithoutPushAnswers500() throws {
        let (server, service) = try Self.server(allowsPush: false)
        defer { server.stop(graceSeconds: 1) }
        let c = try RawClient(port: server.port)
        c.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(c.readResponse()?.status == 500)
        #expect(service.latest?.closed.value == 1)
    }
}

/// Polls `condition` every 10 ms for up to `seconds`.
func until(seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
