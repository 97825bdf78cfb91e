import Foundation
import Testing
@testable import HearthHTTP
import HearthCore

/// `/later` (any method) is answered through a `DeferredAnswer` the test sends (its body: the
/// request's, or `nobody`), `/now` answers inside the handler, anything else at once.
final class DeferredService: HTTPService, @unchecked Sendable {
    private let lock = NSLock()
    private var waiting: [(Request, DeferredAnswer)] = []
    /// Read by `/now` right after it sent its answer (the server's `parkCount`, set by a test).
    var probe: (@Sendable () -> Int)? {
        get { lock.withLock { probeFunction } }
        set { lock.withLock { probeFunction = newValue } }
    }
    private var probeFunction: (@Sendable () -> Int)?
    private var probedCounts: [Int] = []
    var probed: [Int] { lock.withLock { probedCounts } }

    func dispose(_ request: Request) -> RequestDisposition {
        switch request.rawPath {
        case "/later":
            return .collectDeferred(limit: 1024, tooLarge: .text("too large", status: 413)) { [self] req, answer in
                lock.withLock { waiting.append((req, answer)) }
            }
        case "/now":
            return .collectDeferred(limit: 1024, tooLarge: .text("too large", status: 413)) { [self] req, answer in
                answer.send(.text("now:" + String(decoding: req.body, as: UTF8.self)))
                if let probe { let n = probe(); lock.withLock { probedCounts.append(n) } }
            }
        case "/slow":
            // Returns without an answer after a while (a handler still running when `stop`'s grace ends).
            return .collectDeferred(limit: 1024, tooLarge: .text("too large", status: 413)) { _, _ in
                Thread.sleep(forTimeInterval: 1)
            }
        default:
            return .respond(.text("plain"))
        }
    }

    var pending: Int { lock.withLock { waiting.count } }

    /// Answers every waiting request (echoing its body), from another thread each.
    func answerAll() {
        let taken: [(Request, DeferredAnswer)] = lock.withLock {
            defer { waiting = [] }
            return waiting
        }
        DispatchQueue.concurrentPerform(iterations: taken.count) { i in
            let (req, answer) = taken[i]
            answer.send(.text("echo:" + (req.body.isEmpty ? "nobody" : String(decoding: req.body, as: UTF8.self))))
            answer.send(.text("a second answer is ignored", status: 500))
        }
    }
}

@Suite struct DeferredResponseTests {
    static func server(deferred: Bool = true, threads: Int = 1) throws -> (HTTPServer, DeferredService) {
        let service = DeferredService()
        var c = HTTPServer.Configuration(port: 0, threads: threads)
        c.ownAcceptLoop = true  // as the Firestore listener
        c.allowsDeferred = deferred
        let server = HTTPServer(name: "deferred", configuration: c, service: service)
        try server.start()
        return (server, service)
    }

    static func post(_ path: String, _ body: String) -> String {
        "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test func parkedRequestsHoldNoWorkerAndEachGetsItsOwnAnswer() throws {
        // One worker: were a parked request holding it, the plain request below could not be served.
        let (server, service) = try Self.server(threads: 1)
        defer { server.stop(graceSeconds: 1) }
        let clients = try (0..<16).map { _ in try RawClient(port: server.port) }
        for (i, c) in clients.enumerated() { c.send(Self.post("/later", "body-\(i)")) }
        #expect(until { service.pending == 16 })
        #expect(server.parkCount == 16)
        let other = try RawClient(port: server.port)
        other.send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(other.readResponse()?.status == 200)
        service.answerAll()
        for (i, c) in clients.enumerated() {
            let r = c.readResponse()
            #expect(r?.status == 200)
            #expect(r.map { String(decoding: $0.body, as: UTF8.self) } == "echo:body-\(i)")
        }
        // Keep-alive: each connection serves its next request.
        for c in clients {
            c.send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(c.readResponse()?.status == 200)
        }
        #expect(until { server.parkCount == 0 && server.inFlightCount == 0 })
    }

    /// It never enters the server's registry of parked requests (a REST commit at one
    /// connection: no lock, no entry; the handler sees none registered).
    @Test func anAnswerSentInsideTheHandlerIsQueuedAtOnce() throws {
        let (server, service) = try Self.server()
        defer { server.stop(graceSeconds: 1) }
        service.probe = { [weak server] in server?.parkCount ?? -1 }
        let c = try RawClient(port: server.port)
        for i in 0..<3 {
            c.send(Self.post("/now", "x\(i)"))
            let r = c.readResponse()
            #expect(r?.status == 200)
            #expect(r.map { String(decoding: $0.body, as: UTF8.self) } == "now:x\(i)")
        }
        #expect(service.probed == [0, 0, 0])
        #expect(until { server.parkCount == 0 })
    }

    @Test func aBodilessRequestIsParkedAndKeepsItsConnection() throws {
        let (server, service) = try Self.server()
        defer { server.stop(graceSeconds: 1) }
        let c = try RawClient(port: server.port)
        c.send("GET /later HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(until { service.pending == 1 })
        service.answerAll()
        let r = c.readResponse()
        #expect(r?.status == 200)
        #expect(r.map { String(decoding: $0.body, as: UTF8.self) } == "echo:nobody")
        c.send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(c.readResponse()?.status == 200)
    }

    @Test func pipelinedRequestsAreAnsweredInOrderBehindAParkedOne() throws {
        let (server, service) = try Self.server()
        defer { server.stop(graceSeconds: 1) }
        let c = try RawClient(port: server.port)
        c.send(Self.post("/later", "first") + "GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(until { service.pending == 1 })
        service.answerAll()
        // Both answers, possibly in one read (`readResponse` would drop the second with its buffer).
        var got: [UInt8] = []
        #expect(c.readUntil("\r\n\r\nplain", into: &got))  // the body, not `text/plain`
        let text = String(decoding: got, as: UTF8.self)
        let first = text.range(of: "echo:first")
        let second = text.range(of: "\r\n\r\nplain")
        #expect(first != nil && second != nil && first!.lowerBound < second!.lowerBound)
    }

    @Test func aClientThatLeftWhileParkedLeavesNothingBehind() throws {
        let (server, service) = try Self.server()
        defer { server.stop(graceSeconds: 1) }
        do {
            let c = try RawClient(port: server.port)
            c.send(Self.post("/later", "gone"))
            #expect(until { service.pending == 1 })
        }  // closed here
        service.answerAll()
        #expect(until { server.parkCount == 0 && server.inFlightCount == 0 && server.openConnections == 0 })
        let c = try RawClient(port: server.port)
        c.send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(c.readResponse()?.status == 200)
    }

    /// Sends a POST of `path` on a new connection, waits until `ready`, then stops `server` with
    /// `grace`: the stop must end (30 s at most: it must not hang) and leave no park. Returns the client.
    static func stop(_ server: HTTPServer, during path: String, grace: Double, once ready: () -> Bool) throws -> RawClient {
        let c = try RawClient(port: server.port)
        c.send(Self.post(path, "never answered"))
        let isReady = until(ready)
        #expect(isReady)
        let started = Date()
        server.stop(graceSeconds: grace)
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(server.parkCount == 0)
        return c
    }

    /// A handler still running when `stop` has answered the parked requests must not leave its
    /// connection suspended when the daemon stops: it is answered 503 at once instead of parking.
    @Test func aRequestParkingAfterStopAnsweredTheParkedOnesIsNotSuspended() throws {
        let (server, _) = try Self.server(threads: 2)
        let c = try Self.stop(server, during: "/slow", grace: 0.2) { server.inFlightCount == 1 }
        // The 503 is queued just before the daemon closes the connection: it may or may not get out.
        if let r = c.readResponse() { #expect(r.status == 503) }
    }

    @Test func stoppingAnswersRequestsStillParked() throws {
        let (server, service) = try Self.server()
        let c = try Self.stop(server, during: "/later", grace: 0.5) { service.pending == 1 }
        #expect(c.readResponse()?.status == 503)
    }

    @Test func aListenerThatDoesNotParkWaitsForTheAnswer() throws {
        let (server, service) = try Self.server(deferred: false, threads: 2)
        defer { server.stop(graceSeconds: 1) }
        let c = try RawClient(port: server.port)
        c.send(Self.post("/later", "waited"))
        #expect(until { service.pending == 1 })
        service.answerAll()
        let r = c.readResponse()
        #expect(r?.status == 200)
        #expect(r.map { String(decoding: $0.body, as: UTF8.self) } == "echo:waited")
    }

    @Test func aBodyOverTheLimitGetsTheTooLargeAnswer() throws {
        let (server, service) = try Self.server()
        defer { server.stop(graceSeconds: 1) }
        let c = try RawClient(port: server.port)
        c.send(Self.post("/later", String(repeating: "x", count: 2000)))
        #expect(c.readResponse()?.status == 413)
        #expect(service.pending == 0)
    }
}
