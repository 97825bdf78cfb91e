import Foundation
import Testing
@testable import HearthHTTP

/// Abuse of a listener, on both accept paths — Hearth's own accept loop (the Firestore port's path)
/// and libmicrohttpd's listening socket (every other port): slowloris headers and bodies, oversized
/// headers, pipelined garbage and idle sockets. Each is refused or reclaimed, what it may hold is
/// bounded, and other clients are served throughout. (`test_connection_abuse.py` does the same to
/// every port of the real binary, with its real limits.)
@Suite struct ConnectionAbuseTests {
    /// A listener with short limits so reclaiming is observable within a test.
    func withAbuseServer(ownAcceptLoop: Bool = true, _ body: (HTTPServer) throws -> Void) throws {
        var configuration = HTTPServer.Configuration(port: 0, threads: 2, connectionLimit: 200, connectionTimeout: 1, sniffTimeout: 0.2)
        configuration.ownAcceptLoop = ownAcceptLoop
        let server = HTTPServer(name: "abuse", configuration: configuration, service: EchoService())
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        try body(server)
    }

    func expectServed(_ server: HTTPServer) throws {
        let ok = try RawClient(port: server.port)
        ok.send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(ok.readResponse()?.status == 200)
    }

    /// Waits up to `seconds` for the listener to hold no connection.
    /// Slow clients send `byte` twice, 0.3 s apart, while others are still served; then the trickle
    /// stops and the idle timeout (1 s, plus a margin) must close every one of them.
    func trickleThenExpectCut(_ slow: [RawClient], byte: String, server: HTTPServer) throws {
        for _ in 0..<2 {
            Thread.sleep(forTimeInterval: 0.3)
            for c in slow { c.send(byte) }
            try expectServed(server)
        }
        #expect(waitUntilIdle(server, seconds: 30))
        for c in slow { #expect(c.isClosedByPeer()) }
        try expectServed(server)
    }

    func waitUntilIdle(_ server: HTTPServer, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if server.openConnections == 0 { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return server.openConnections == 0
    }

    @Test(arguments: [true, false]) func slowlorisHeadersAreCutAtTheIdleTimeout(ownAcceptLoop: Bool) throws {
        try withAbuseServer(ownAcceptLoop: ownAcceptLoop) { server in
            // Fifty clients each send half a request, then a byte now and then, never the blank line.
            let slow = try (0..<50).map { _ in try RawClient(port: server.port) }
            for c in slow { c.send("GET /echo HTTP/1.1\r\nHost: h\r\n") }
            try trickleThenExpectCut(slow, byte: "X", server: server)
        }
    }

    @Test(arguments: [true, false]) func headersOver64KiBAreRefused(ownAcceptLoop: Bool) throws {
        try withAbuseServer(ownAcceptLoop: ownAcceptLoop) { server in
            let big = try RawClient(port: server.port)
            big.send("GET /echo HTTP/1.1\r\nHost: h\r\nX-Big: " + String(repeating: "a", count: 100 << 10) + "\r\n\r\n")
            // libmicrohttpd's per-connection memory cap (64 KiB) bounds what one request line and its
            // headers may hold: the answer is 431 and the connection closes.
            let answer = big.readResponse()
            #expect(answer?.status == 431)
            #expect(big.isClosedByPeer())
            try expectServed(server)
        }
    }

    @Test(arguments: [true, false]) func pipelinedGarbageGets400AndClose(ownAcceptLoop: Bool) throws {
        try withAbuseServer(ownAcceptLoop: ownAcceptLoop) { server in
            let junk = try RawClient(port: server.port)
            junk.send(Array(String(repeating: "GARBAGE \u{1}\u{2} NOT HTTP\r\n\r\n", count: 2000).utf8))
            #expect(junk.readResponse()?.status == 400)
            #expect(junk.isClosedByPeer())
            // Binary noise too, and a preface-like prefix that turns into noise.
            let noise = try RawClient(port: server.port)
            noise.send([UInt8](repeating: 0xFF, count: 70_000))
            _ = noise.readResponse()
            #expect(noise.isClosedByPeer())
            try expectServed(server)
        }
    }

    @Test(arguments: [true, false]) func silentConnectionsAreReclaimed(ownAcceptLoop: Bool) throws {
        try withAbuseServer(ownAcceptLoop: ownAcceptLoop) { server in
            // Silent sockets: sniffed for 0.2 s, then libmicrohttpd's idle timeout (1 s) closes them.
            let silent = try (0..<100).map { _ in try RawClient(port: server.port) }
            Thread.sleep(forTimeInterval: 0.1)
            try expectServed(server)
            #expect(waitUntilIdle(server, seconds: 30))
            for c in silent { #expect(c.isClosedByPeer()) }
            try expectServed(server)
        }
    }

    @Test(arguments: [true, false]) func slowlorisBodiesAreCutAtTheIdleTimeout(ownAcceptLoop: Bool) throws {
        try withAbuseServer(ownAcceptLoop: ownAcceptLoop) { server in
            // Thirty uploads announce 1 MiB each, then send a byte now and then: a streamed body
            // (`/stream`, consumed as it comes) and a buffered one (`/echo`).
            let slow = try (0..<30).map { i in
                let c = try RawClient(port: server.port)
                c.send("PUT /\(i % 2 == 0 ? "stream" : "echo") HTTP/1.1\r\nHost: h\r\nContent-Length: 1048576\r\n\r\n")
                return c
            }
            try trickleThenExpectCut(slow, byte: "x", server: server)
        }
    }
}
