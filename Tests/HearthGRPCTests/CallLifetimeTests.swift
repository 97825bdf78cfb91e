import Foundation
import Testing
@testable import HearthGRPC
import HearthHTTP

/// life.Life/Chat: echo.Echo's Chat, whose request side holds its responses strongly as every
/// real handler does (Listen, Write), under a watcher that lets the test see, through weak references,
/// whether the call and its request side are freed once the call is over.
final class CallLifetimeWatcher: GRPCService, @unchecked Sendable {
    let name = "life.Life"
    private let lock = NSLock()
    private var calls: [Weak] = []

    struct Weak {
        weak var responses: AnyObject?
        weak var requestSide: AnyObject?
    }

    func handler(for method: String) -> GRPCHandler? {
        .bidirectional { [self] _, responses in
            let chat: any GRPCRequestStream = method == "Produced" ? EchoService.ProducedChat(responses) : EchoService.Chat(responses)
            lock.withLock { calls.append(Weak(responses: responses as AnyObject, requestSide: chat)) }
            return chat
        }
    }

    var opened: Int { lock.withLock { calls.count } }
    /// Calls whose `GRPCCall` or request side is still alive.
    var alive: Int { lock.withLock { calls.filter { $0.responses != nil || $0.requestSide != nil }.count } }
}

/// LeakSanitizer once reported a `GRPCCall` with its `HTTP2Stream` outliving a stream: the call
/// holds its bidirectional request side, which holds the call as its response stream. Every
/// finished call — completed, cancelled by the client, or ended by the server — must be freed.
@Suite struct CallLifetimeTests {
    static func eventuallyFreed(_ watcher: CallLifetimeWatcher) -> Bool {
        for _ in 0..<1500 {
            if watcher.alive == 0 { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return watcher.alive == 0
    }

    static func server(_ watcher: CallLifetimeWatcher) throws -> HTTPServer {
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [EchoService(), watcher]))
        try server.start()
        return server
    }

    @Test func completedBidirectionalCallsAreFreed() throws {
        let watcher = CallLifetimeWatcher()
        let server = try Self.server(watcher)
        defer { server.stop(graceSeconds: 1) }
        for i in 0..<3 {
            let r = try curl(server.port, "/life.Life/Chat", body: framed([UInt8(i)]))
            #expect(r.body == framed([UInt8(i)]))
            #expect(r.field("grpc-status") == "0")
        }
        #expect(watcher.opened == 3)
        #expect(Self.eventuallyFreed(watcher), "\(watcher.alive) of 3 completed calls still alive")
    }

    /// A producer is kept by the call's HTTP/2 stream and holds the call (its response side): the
    /// stream lets it go when it closes.
    @Test func callsSendingThroughAProducerAreFreed() throws {
        let watcher = CallLifetimeWatcher()
        let server = try Self.server(watcher)
        defer { server.stop(graceSeconds: 1) }
        for i in 0..<3 {
            let r = try curl(server.port, "/life.Life/Produced", body: framed([UInt8(i)]) + framed([9]))
            #expect(r.body == framed([UInt8(i)]) + framed([9]))
            #expect(r.field("grpc-status") == "0")
        }
        let held = try HeldOpenCurl(port: server.port, path: "/life.Life/Produced", first: [1])
        let deadline = Date().addingTimeInterval(30)
        while watcher.opened < 4 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        held.kill()
        #expect(watcher.opened == 4)
        #expect(Self.eventuallyFreed(watcher), "\(watcher.alive) of 4 calls with a producer still alive")
    }

    @Test func callsAbandonedByTheClientAreFreed() throws {
        let watcher = CallLifetimeWatcher()
        let server = try Self.server(watcher)
        defer { server.stop(graceSeconds: 1) }
        let curl = try HeldOpenCurl(port: server.port, path: "/life.Life/Chat", first: [1])
        let deadline = Date().addingTimeInterval(30)
        while watcher.opened == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(watcher.opened == 1)
        curl.kill()
        #expect(Self.eventuallyFreed(watcher), "the abandoned call is still alive")
    }
}
