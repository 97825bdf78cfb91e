import Foundation
import Testing
@testable import HearthHTTP

/// A stream reaches its connection through the connection's `HTTP2ConnectionLink` until the
/// connection shuts down; a stream kept after that (a call that has not ended) neither reaches
/// the connection nor keeps it alive — as the weak reference it replaced.
@Suite struct ConnectionLinkTests {
    /// Keeps every stream it is given.
    final class Keeper: HTTP2StreamHandler, @unchecked Sendable {
        final class Ignore: HTTP2StreamDelegate {
            func received(_ bytes: [UInt8]) {}
            func endOfStream() {}
            func closed(errorCode: UInt32) {}
        }
        let lock = NSLock()
        var streams: [HTTP2Stream] = []
        func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)]) -> any HTTP2StreamDelegate {
            lock.withLock { streams.append(stream) }
            return Ignore()
        }
        var first: HTTP2Stream? { lock.withLock { streams.first } }
    }

    @Test func aKeptStreamLetsItsConnectionGoAtShutdown() throws {
        let keeper = Keeper()
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(), http2: keeper)
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        var c: RawSocket? = try RawSocket(port: server.port)
        c?.send(preface + h2Frame(type: 4, flags: 0, stream: 0) +
                h2Frame(type: 1, flags: 4, stream: 1, BadInputTests.requestHeaders("/s/Hold")))
        for _ in 0..<3000 where keeper.first == nil { Thread.sleep(forTimeInterval: 0.01) }
        let stream = try #require(keeper.first)
        weak var connection = stream.connection
        #expect(connection != nil)
        c = nil  // the client goes: the connection shuts down
        for _ in 0..<3000 where stream.connection != nil || connection != nil { Thread.sleep(forTimeInterval: 0.01) }
        #expect(stream.connection == nil)
        #expect(connection == nil, "the connection outlived its shutdown")
        #expect(stream.isClosed)
    }
}
