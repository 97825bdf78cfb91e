import Foundation
import Testing
@testable import HearthHTTP
import HearthCore

/// Echo service: reports method, raw path, raw query, selected headers and the body's length/hash.
final class EchoService: HTTPService, @unchecked Sendable {
    final class Counter: RequestBodyConsumer {
        var total = 0
        var largestChunk = 0
        var checksum: UInt64 = 0
        var abandoned: (@Sendable () -> Void)?
        func consume(_ chunk: UnsafeRawBufferPointer) {
            total += chunk.count
            largestChunk = max(largestChunk, chunk.count)
            // Position-weighted sum: cheap, and order or loss of bytes changes it.
            for (i, b) in chunk.enumerated() { checksum = checksum &+ UInt64(b) &* UInt64(total - chunk.count + i + 1) }
        }
        func finish() -> Response { .text("streamed \(total) \(checksum) largest=\(largestChunk)") }
        func abandon() { abandoned?() }
    }

    let abandonedCount = LockedCounter()

    func dispose(_ request: Request) -> RequestDisposition {
        switch request.pathSegments.first ?? "" {
        case "stream":
            let c = Counter()
            let a = abandonedCount
            c.abandoned = { a.increment() }
            return .stream(c)
        case "slow":
            Thread.sleep(forTimeInterval: 0.2)
            return .respond(.text("slow"))
        case "reject":
            return .respond(.text("rejected", status: 403))
        case "big":
            return .respond(Response(status: 200, body: .stream(length: 1 << 20, source: PatternSource(total: 1 << 20))))
        default:
            return .collect(limit: 1 << 20, tooLarge: .text("too large", status: 413)) { req in
                .text("\(req.method) \(req.rawPath) \(req.rawQuery) host=\(req.headers["host"] ?? "-") body=\(req.body.count) text=\(req.bodyText.prefix(32))")
            }
        }
    }
}

final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func increment() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}

final class PatternSource: ResponseBodySource, @unchecked Sendable {
    var remaining: Int
    init(total: Int) { remaining = total }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(remaining, buffer.count)
        for i in 0..<n { buffer[i] = UInt8(truncatingIfNeeded: (remaining - i)) }
        remaining -= n
        return n
    }
    func close() {}
}

func withServer<T>(timeout: Int = 60, _ body: (HTTPServer, EchoService) throws -> T) throws -> T {
    let service = EchoService()
    // Hearth's own accept loop (the Firestore port's path), so every HTTP/1.1 behaviour is proven through it.
    var configuration = HTTPServer.Configuration(port: 0, threads: 4, connectionTimeout: timeout)
    configuration.ownAcceptLoop = true
    let server = HTTPServer(name: "test", configuration: configuration, service: service)
    try server.start()
    defer { server.stop(graceSeconds: 1) }
    return try body(server, service)
}

@Suite struct HTTPServerTests {
    @Test func rawPathAndQueryAreKeptAsSent() throws {
        try withServer { server, _ in
            let c = try RawClient(port: server.port)
            c.send("GET /a%2Fb/c%20d/..//e?x=1&b=%2F+%20&flag HTTP/1.1\r\nHost: example\r\n\r\n")
            let r = try #require(c.readResponse())
            #expect(r.status == 200)
            #expect(String(decoding: r.body, as: UTF8.self) == "GET /a%2Fb/c%20d/..//e x=1&b=%2F+%20&flag host=example body=0 text=")
        }
    }

    @Test func keepAliveReusesTheConnection() throws {
        try withServer { server, _ in
            let c = try RawClient(port: server.port)
            for i in 0..<5 {
                c.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nab\(i)")
                let r = try #require(c.readResponse())
                #expect(String(decoding: r.body, as: UTF8.self).hasSuffix("body=3 text=ab\(i)"))
            }
        }
    }

    @Test func keepAliveHoldsForRequestsWithoutABody() throws {
        try withServer { server, _ in
            let c = try RawClient(port: server.port)
            for i in 0..<5 {
                c.send(i % 2 == 0 ? "GET /echo?n=\(i) HTTP/1.1\r\nHost: h\r\n\r\n" : "DELETE /reject HTTP/1.1\r\nHost: h\r\n\r\n")
                let r = try #require(c.readResponse())
                #expect(r.status == (i % 2 == 0 ? 200 : 403))
                #expect(r.headers["connection"]?.lowercased() != "close", "request \(i) was answered with Connection: close")
            }
        }
    }

    @Test func chunkedRequestBodyIsDecoded() throws {
        try withServer { server, _ in
            let c = try RawClient(port: server.port)
            c.send("PUT /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
            let r = try #require(c.readResponse())
            #expect(String(decoding: r.body, as: UTF8.self).hasSuffix("body=11 text=hello world"))
        }
    }

    @Test func expectContinueGetsInterimResponseThenFinal() throws {
        try withServer { server, _ in
            let c = try RawClient(port: server.port)
            c.send("PUT /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
            let interim = try #require(c.readResponse())
            #expect(interim.status == 100)
            c.send("data")
            let r = try #require(c.readResponse())
            #expect(r.status == 200)
            #expect(String(decoding: r.body, as: UTF8.self).hasSuffix("body=4 text=data"))
        }
    }

    @Test func expectContinueRejectedEarlyWithoutReadingTheBody() throws {
        try withServer { server, _ in
            let c = try RawClient(port: server.port)
            c.send("PUT /reject HTTP/1.1\r\nHost: h\r\nContent-Length: 100000000\r\nExpect: 100-continue\r\n\r\n")
            let r = try #require(c.readResponse())
            #expect(r.status == 403)
        }
    }

    @Test func rejectionWithoutExpectStillReadsTheBodyFirst() throws {
        try withServer { server, _ in
            let c = try RawClient(port: server.port)
            let body = [UInt8](repeating: 65, count: 300_000)
            c.send("PUT /reject HTTP/1.1\r\nHost: h\r\nContent-Length: \(body.count)\r\n\r\n")
            c.send(body)
            let r = try #require(c.readResponse())
            #expect(r.status == 403)
            // The connection is still usable afterwards.
            c.send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(c.readResponse()?.status == 200)
        }
    }

    @Test func oversizedCollectedBodyGets413() throws {
        try withServer { server, _ in
            let c = try RawClient(port: server.port)
            c.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n")
            #expect(c.readResponse()?.status == 413)
        }
    }

    @Test func streamedBodyOf256MiBKeepsMemoryBounded() throws {
        try withServer { server, _ in
            let c = try RawClient(port: server.port)
            let total = 256 << 20
            c.send("PUT /stream HTTP/1.1\r\nHost: h\r\nContent-Length: \(total)\r\n\r\n")
            let block = [UInt8](repeating: 7, count: 1 << 20)
            for _ in 0..<(total >> 20) {
                c.send(block)
            }
            let n = UInt64(total)
            let checksum = 7 &* (n &* (n + 1) / 2)
            let r = try #require(c.readResponse())
            let text = String(decoding: r.body, as: UTF8.self)
            #expect(text.hasPrefix("streamed \(total) \(checksum) largest="))
            // The body reaches the service piece by piece as it arrives, never whole. (The process-level
            // memory bound of a real upload is checked against a hearth child in CompatTests.)
            let largest = Int(text.split(separator: "=").last ?? "") ?? Int.max
            #expect(largest <= 1 << 20, "the server handed the service a \(largest)-byte piece")
        }
    }

    @Test func malformedRequestsGet400AndServerKeepsServing() throws {
        try withServer { server, _ in
            for garbage in ["GARBAGE\r\n\r\n", "GET /x HTTP/1.1\r\nBad Header Line\r\n\r\n", "GET /x HTTP/9.9\r\nHost: h\r\n\r\n"] {
                let c = try RawClient(port: server.port)
                c.send(garbage)
                let r = c.readResponse()
                #expect(r == nil || (400...505).contains(r!.status), "got \(String(describing: r?.status)) for \(garbage.debugDescription)")
            }
            let ok = try RawClient(port: server.port)
            ok.send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(ok.readResponse()?.status == 200)
        }
    }

    @Test func slowClientTimesOutWithoutBlockingOthers() throws {
        try withServer(timeout: 1) { server, _ in
            let slow = try RawClient(port: server.port)
            slow.send("PUT /stream HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nabc")
            let fast = try RawClient(port: server.port)
            fast.send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(fast.readResponse()?.status == 200)
            // The stalled upload is closed by the server after the idle timeout, and its consumer is told.
            #expect(slow.isClosedByPeer())
            // Its consumer is told on the server's thread, after the close: wait for it.
            #expect(until(seconds: 30) { server.inFlightCount == 0 })
        }
    }

    @Test func abandonedStreamIsReported() throws {
        try withServer { server, service in
            do {
                let c = try RawClient(port: server.port)
                c.send("PUT /stream HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\nabc")
                Thread.sleep(forTimeInterval: 0.1)
            }  // client closes mid-body
            let deadline = Date().addingTimeInterval(30)
            while service.abandonedCount.value == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            #expect(service.abandonedCount.value == 1)
        }
    }

    @Test func streamedResponseHasContentLength() throws {
        try withServer { server, _ in
            let c = try RawClient(port: server.port)
            c.send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
            let r = try #require(c.readResponse())
            #expect(r.headers["content-length"] == "\(1 << 20)")
            #expect(r.body.count == 1 << 20)
            c.send("HEAD /big HTTP/1.1\r\nHost: h\r\n\r\n")
            // HEAD: same Content-Length, no body (the next response parses cleanly after it).
            c.send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n")
        }
    }

    @Test func twoHundredConcurrentConnections() throws {
        try withServer { server, _ in
            let clients = try (0..<200).map { _ in try RawClient(port: server.port) }
            for (i, c) in clients.enumerated() { c.send("GET /echo?i=\(i) HTTP/1.1\r\nHost: h\r\n\r\n") }
            var ok = 0
            for (i, c) in clients.enumerated() {
                if let r = c.readResponse(), r.status == 200, String(decoding: r.body, as: UTF8.self).contains("i=\(i) ") { ok += 1 }
            }
            #expect(ok == 200)
        }
    }

    @Test func portInUseIsAClearError() throws {
        try withServer { server, _ in
            var configuration = HTTPServer.Configuration(port: server.port)
            configuration.ownAcceptLoop = true
            let second = HTTPServer(name: "dup", configuration: configuration, service: EchoService())
            #expect(throws: HTTPServerError.self) { try second.start() }
            do { try second.start() } catch { #expect("\(error)".contains("already in use")) }
        }
    }
}
