import Foundation
import Testing
@testable import HearthHTTP

/// libmicrohttpd workers polling an answered connection for its next request (`WorkerPoll`,
/// `HTTPServer.Configuration.http1BusyPollMicroseconds`): every request is still answered, in order,
/// and a worker's other connections wait for its polling at most about one window.
@Suite struct WorkerPollTests {
    static func withPollingServer<T>(_ body: (HTTPServer) throws -> T) throws -> T {
        // One worker, so its connections share it; the longest window.
        var configuration = HTTPServer.Configuration(port: 0, threads: 1)
        configuration.ownAcceptLoop = true
        configuration.http1BusyPollMicroseconds = BusyPoll.maximumCeilingMicroseconds
        let server = HTTPServer(name: "poll", configuration: configuration, service: EchoService())
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        return try body(server)
    }

    @Test func requestsOneAtATimeAreAnsweredWhileTheWorkerPolls() throws {
        try Self.withPollingServer { server in
            let c = try RawClient(port: server.port)
            for i in 0..<300 {
                c.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nab\(i % 10)")
                let r = try #require(c.readResponse())
                #expect(String(decoding: r.body, as: UTF8.self).hasSuffix("body=3 text=ab\(i % 10)"))
            }
            // Pipelined requests (already read when the answer goes out) come back in order.
            c.send("GET /echo?n=1 HTTP/1.1\r\nHost: h\r\n\r\nGET /echo?n=2 HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(String(decoding: try #require(c.readResponse()).body, as: UTF8.self).contains("n=1"))
            #expect(String(decoding: try #require(c.readResponse()).body, as: UTF8.self).contains("n=2"))
        }
    }

    @Test func anotherConnectionOfTheWorkerWaitsAtMostAboutAWindow() throws {
        try Self.withPollingServer { server in
            var first: RawClient? = try RawClient(port: server.port)
            let second = try RawClient(port: server.port)
            // The window grows while the first connection's requests come back to back…
            for _ in 0..<100 {
                first?.send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n")
                _ = try #require(first?.readResponse())
            }
            // …then the first goes quiet and the second asks: the worker, polling the first, takes it after at most a window.
            for _ in 0..<20 {
                first?.send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n")
                _ = try #require(first?.readResponse())
                let start = DispatchTime.now().uptimeNanoseconds
                second.send("GET /echo?other HTTP/1.1\r\nHost: h\r\n\r\n")
                let r = try #require(second.readResponse())
                #expect(r.status == 200)
                // One window is 1 ms; a worker that kept polling the quiet first connection would
                // leave the second waiting until the first closes. The bound only tells those apart:
                // a slow, shared test machine gets a margin far past its scheduling delays.
                #expect(DispatchTime.now().uptimeNanoseconds - start < 10_000_000_000)
            }
            // A closed connection ends the polling at once (its socket reads end of file).
            first = nil
            second.send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try #require(second.readResponse()).status == 200)
        }
    }
}
