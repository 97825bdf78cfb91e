import Foundation
import Testing
@testable import HearthGRPC
import HearthHTTP
import HearthCore

/// echo.Echo: Unary returns the request, Fail throws a status with details, Slow runs until
/// `slowDone` is signalled (30 s at most),
/// Stream sends the request back N times (N = its first byte), Chat echoes each message.
struct EchoService: GRPCService {
    let name = "echo.Echo"
    let blocking = Flag()
    let release = DispatchSemaphore(value: 0)
    /// `Slow` returns once this is signalled (or after 30 s), then raises `slowReturned`.
    let slowDone = DispatchSemaphore(value: 0)
    let slowReturned = Flag()
    /// `Quick` with first byte 3 holds the loop thread (where quick handlers run) until `gate` is
    /// signalled: a batch's later call still being computed.
    let gated = Flag()
    let gate = DispatchSemaphore(value: 0)
    final class Chat: GRPCRequestStream, @unchecked Sendable {
        let responses: any GRPCResponseStream
        init(_ responses: any GRPCResponseStream) { self.responses = responses }
        func received(_ message: [UInt8]) { responses.send(message) }
        func halfClosed() { responses.finish(.ok) }
        func cancelled() {}
    }
    /// Chat through the connection's producer: each message is queued here and sent, batched,
    /// by `produce` on the connection's thread; half-close ends the call after what is queued.
    final class ProducedChat: GRPCRequestStream, @unchecked Sendable {
        final class Queue: @unchecked Sendable {
            let lock = NSLock()
            var messages: [[UInt8]] = []
            var ending = false
            func take() -> ([[UInt8]], Bool) { lock.withLock { defer { messages = [] }; return (messages, ending) } }
        }
        let responses: any GRPCResponseStream
        let queue = Queue()
        let produce: @Sendable () -> Void
        init(_ responses: any GRPCResponseStream) {
            self.responses = responses
            let queue = self.queue
            produce = { [responses] in
                let (messages, ending) = queue.take()
                var batch = GRPCMessageBatch()
                for m in messages { batch.append(m) }
                responses.send(batch)
                if ending { responses.finish(.ok) }
            }
        }
        func received(_ message: [UInt8]) {
            queue.lock.withLock { queue.messages.append(message) }
            responses.produceSoon(produce)
        }
        func halfClosed() {
            queue.lock.withLock { queue.ending = true }
            responses.produceSoon(produce)
        }
        func cancelled() {}
    }
    /// Chat whose answers come later, from another thread (as a write's from its commit): the
    /// next message, and the half-close, are delivered only after `done`.
    final class LaterChat: GRPCRequestStream, @unchecked Sendable {
        let responses: any GRPCResponseStream
        init(_ responses: any GRPCResponseStream) { self.responses = responses }
        func received(_ message: [UInt8]) { responses.send(message) }
        func received(_ message: [UInt8], done: @escaping @Sendable () -> Void) {
            // Later messages are shorter: answered sooner, were they not held back.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10 * message.count)) { [responses] in
                responses.send(message)
                done()
            }
        }
        func halfClosed() { responses.finish(.ok) }
        func cancelled() {}
    }
    /// Replies of `Park` calls, held until the test lets them go.
    final class Parked: @unchecked Sendable {
        private let lock = NSLock()
        private var replies: [@Sendable () -> Void] = []
        func add(_ r: @escaping @Sendable () -> Void) { lock.withLock { replies.append(r) } }
        var count: Int { lock.withLock { replies.count } }
        func releaseAll() { for r in lock.withLock({ defer { replies = [] }; return replies }) { r() } }
    }
    let parked = Parked()
    /// Message `m` of `Big`.
    static func big(_ m: Int, size: Int) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ m) } }
    func handler(for method: String) -> GRPCHandler? {
        switch method {
        // Answered later, by whoever releases it: fails when the first byte is 2.
        case "Park": .unaryAsync { [parked] request, _, reply in
            parked.add { reply(request.first == 2 ? .failure(GRPCStatus(.aborted, "later")) : .success(request)) }
        }
        case "Later": .bidirectional { _, responses in LaterChat(responses) }
        case "Unary": .unary { request, _ in request }
        case "Fail": .unary { _, _ throws(GRPCStatus) in throw GRPCStatus(.notFound, "Document (a/b) not found. ✓ 100%", details: [8, 5]) }
        case "Slow": .unary { [slowDone, slowReturned] request, _ in
            _ = slowDone.wait(timeout: .now() + 30)
            slowReturned.raise()
            return request
        }
        case "Stream": .serverStreaming { request, _, responses in
            for _ in 0..<Int(request.first ?? 0) { responses.send(request) }
        }
        // Request [n, k]: n messages of k × 10,000 + 7 bytes each, every byte its own (index and message).
        case "Big": .serverStreaming { request, _, responses in
            guard request.count == 2 else { return }
            for m in 0..<Int(request[0]) { responses.send(EchoService.big(m, size: Int(request[1]) * 10_000 + 7)) }
        }
        case "Chat": .bidirectional { _, responses in Chat(responses) }
        case "Produced": .bidirectional { _, responses in ProducedChat(responses) }
        // Answers "quick" itself when the request's first byte is 1, fails when it is 2, and leaves
        // the others to `run` (on a worker), which answers "run".
        case "Quick": .unaryQuick(quick: { [gated, gate] request, _ throws(GRPCStatus) in
            switch request.first {
            case 1: return Array("quick".utf8)
            case 2: throw GRPCStatus(.permissionDenied, "no")
            case 3:
                gated.raise()
                _ = gate.wait(timeout: .now() + 10)
                return Array("quick".utf8)
            default: return nil
            }
        }, run: { _, _ in Array("run".utf8) })
        // Server-streaming, started on the loop: request [1, n] answers n messages "q" there, [2]
        // fails, [3] goes on on a worker ("rest" twice), [4] answers no message; the others are
        // left to `run` (on a worker), which answers "run".
        case "QuickStream": .serverStreamingQuick(quick: { request, _ throws(GRPCStatus) in
            switch request.first {
            case 1:
                var batch = GRPCMessageBatch()
                for _ in 0..<Int(request.count > 1 ? request[1] : 1) { batch.append(Array("q".utf8)) }
                return .answered(batch)
            case 2: throw GRPCStatus(.permissionDenied, "no")
            case 3: return .rest { responses in
                responses.send(Array("rest".utf8))
                responses.send(Array("rest".utf8))
            }
            case 4: return .answered(GRPCMessageBatch())
            default: return nil
            }
        }, run: { _, _, responses in responses.send(Array("run".utf8)) })
        // Holds its worker until `release` is signalled.
        case "Block": .unary { [blocking, release] request, _ in
            blocking.raise()
            release.wait()
            return request
        }
        default: nil
        }
    }
}

/// The HTTP/1.1 side of the test listener.
final class PlainService: HTTPService {
    func dispose(_ request: Request) -> RequestDisposition { .respond(.text("http1 ok")) }
}

func withGRPCServer<T>(_ services: [any GRPCService] = [EchoService()], _ body: (HTTPServer) throws -> T) throws -> T {
    let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                            http2: GRPCServer(services: services))
    try server.start()
    defer { server.stop(graceSeconds: 1) }
    return try body(server)
}

/// What curl printed: headers and trailers (`-i` style dump) and the body bytes.
struct CurlResult {
    var dump: String
    var body: [UInt8]
    func field(_ name: String) -> String? {
        for line in dump.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}

/// A real HTTP/2 client: Debian's curl (built with nghttp2), prior knowledge, no TLS.
func curl(_ port: Int, _ path: String, body: [UInt8], headers: [String] = ["content-type: application/grpc", "te: trailers"]) throws -> CurlResult {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("grpc-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let input = dir.appendingPathComponent("in"), output = dir.appendingPathComponent("out"), dumpFile = dir.appendingPathComponent("dump")
    try Data(body).write(to: input)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    p.arguments = ["-sS", "--http2-prior-knowledge", "--max-time", "10", "-X", "POST", "--data-binary", "@\(input.path)",
                   "-D", dumpFile.path, "-o", output.path] + headers.flatMap { ["-H", $0] } + ["http://127.0.0.1:\(port)\(path)"]
    try p.run()
    p.waitUntilExit()
    // curl's -D writes trailers after the headers.
    return CurlResult(dump: String(decoding: contents(dumpFile), as: UTF8.self), body: contents(output))
}

/// A file's bytes through a FileHandle: Foundation's `Data(contentsOf:)` (and `String(contentsOf:)`,
/// `FileManager.contents(atPath:)`) leaks a 4 KiB buffer for every empty file it reads, which every
/// error answer with no body is (LeakSanitizer, docs/reliability.md).
private func contents(_ url: URL) -> [UInt8] {
    guard let handle = try? FileHandle(forReadingFrom: url) else { return [] }
    defer { try? handle.close() }
    return Array((try? handle.readToEnd()) ?? Data())
}

func framed(_ message: [UInt8]) -> [UInt8] {
    let n = message.count
    return [0, UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + message
}

@Suite struct GRPCServerTests {
    @Test func unaryEchoesWithStatusOK() throws {
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Unary", body: framed(Array("hello".utf8)))
            #expect(r.dump.contains("HTTP/2 200"))
            #expect(r.field("content-type") == "application/grpc")
            #expect(r.body == framed(Array("hello".utf8)))
            #expect(r.field("grpc-status") == "0")
        }
    }

    /// The framed gzip of [1], sent with `grpc-encoding: gzip`: inflated on a worker, never on the loop.
    static let gzippedOne: [UInt8] = [1, 0, 0, 0, 21] + [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3, 0x63, 4, 0, 0x1B, 0xDF, 5, 0xA5, 1, 0, 0, 0]

    /// Runs `body` against a server whose only worker a `Block` call holds, with `queued` calls
    /// started meanwhile; checks that none of those is answered before the worker is let go after
    /// `body`, and returns their answers.
    func withTheWorkerHeld(_ echo: EchoService, _ body: (_ port: Int) throws -> Void,
                           queued: [@Sendable (_ port: Int) -> CurlResult?]) throws -> [CurlResult?] {
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [echo], configuration: .init(workers: 1)))
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let blocked = DispatchGroup()
        DispatchQueue.global().async(group: blocked) { _ = try? curl(server.port, "/echo.Echo/Block", body: framed([1])) }
        for _ in 0..<3000 where !echo.blocking.value { Thread.sleep(forTimeInterval: 0.01) }
        #expect(echo.blocking.value)
        try body(server.port)
        #expect(echo.blocking.value)  // all answered while the worker was still held
        let waiting = DispatchGroup()
        final class Answers: @unchecked Sendable { var all: [CurlResult?] = [] }  // written under `lock`, read after `waiting`
        let answers = Answers()
        answers.all = Array(repeating: nil, count: queued.count)
        let lock = NSLock()
        for (i, call) in queued.enumerated() {
            DispatchQueue.global().async(group: waiting) { [port = server.port] in
                let r = call(port)
                lock.withLock { answers.all[i] = r }
            }
        }
        #expect(waiting.wait(timeout: .now() + 0.5) == .timedOut)
        echo.release.signal()
        #expect(blocked.wait(timeout: .now() + 10) == .success)
        #expect(waiting.wait(timeout: .now() + 10) == .success)
        return lock.withLock { answers.all }
    }

    /// A quick handler answers on the connection's loop thread, with no worker: it is answered while
    /// the only worker is busy. A request it leaves (or a compressed one) waits for a worker; its
    /// error is the call's status.
    @Test func quickUnaryNeedsNoWorkerAndFallsBackToOne() throws {
        let answers = try withTheWorkerHeld(EchoService(), { port in
            let quick = try curl(port, "/echo.Echo/Quick", body: framed([1]))
            #expect(quick.field("grpc-status") == "0" && quick.body == framed(Array("quick".utf8)))
            let failed = try curl(port, "/echo.Echo/Quick", body: framed([2]))
            #expect(failed.field("grpc-status") == "7" && failed.field("grpc-message") == "no" && failed.body.isEmpty)
        }, queued: [
            { port in try? curl(port, "/echo.Echo/Quick", body: framed([0])) },
            { port in try? curl(port, "/echo.Echo/Quick", body: GRPCServerTests.gzippedOne,
                                headers: ["content-type: application/grpc", "grpc-encoding: gzip"]) },
        ])
        #expect(answers.map { $0?.body } == [framed(Array("run".utf8)), framed(Array("run".utf8))])
    }

    /// A quick server-streaming handler answers on the loop thread with every message, the
    /// headers and the trailers, with no worker: answered while the only worker is busy, as are its
    /// error and an answer of no message (Trailers-Only, as a handler that sends nothing). What it
    /// hands on (`.rest`), what it leaves (nil) and a compressed request wait for the worker.
    @Test func quickServerStreamingNeedsNoWorkerAndHandsOnToOne() throws {
        let answers = try withTheWorkerHeld(EchoService(), { port in
            let three = try curl(port, "/echo.Echo/QuickStream", body: framed([1, 3]))
            #expect(three.field("grpc-status") == "0" && three.body == framed(Array("q".utf8)) + framed(Array("q".utf8)) + framed(Array("q".utf8)))
            let failed = try curl(port, "/echo.Echo/QuickStream", body: framed([2]))
            #expect(failed.field("grpc-status") == "7" && failed.field("grpc-message") == "no" && failed.body.isEmpty)
            let none = try curl(port, "/echo.Echo/QuickStream", body: framed([4]))
            #expect(none.field("grpc-status") == "0" && none.body.isEmpty)
        }, queued: [
            { port in try? curl(port, "/echo.Echo/QuickStream", body: framed([3])) },
            { port in try? curl(port, "/echo.Echo/QuickStream", body: framed([0])) },
            { port in try? curl(port, "/echo.Echo/QuickStream", body: GRPCServerTests.gzippedOne,
                                headers: ["content-type: application/grpc", "grpc-encoding: gzip"]) },
        ])
        #expect(answers.map { $0?.body } == [framed(Array("rest".utf8)) + framed(Array("rest".utf8)), framed(Array("run".utf8)),
                                             framed(Array("run".utf8))])
        #expect(answers.map { $0?.field("grpc-status") } == ["0", "0", "0"])
    }

    /// Quick calls completed by one read are answered on the loop, up to `QuickCalls.loopShare` of
    /// them (here 64 of 66, while the only worker is held): the rest go to a worker and wait for it.
    @Test func aBatchOfQuickCallsIsAnsweredOnTheLoopUpToItsShare() throws {
        let echo = EchoService()
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [echo], configuration: .init(workers: 1)))
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let blocked = DispatchGroup()
        DispatchQueue.global().async(group: blocked) { _ = try? curl(server.port, "/echo.Echo/Block", body: framed([1])) }
        for _ in 0..<3000 where !echo.blocking.value { Thread.sleep(forTimeInterval: 0.01) }
        let c = try RawSocket(port: server.port)
        var calls = preface + h2Frame(type: 4, flags: 0, stream: 0)
        let count = QuickCalls.loopShare + 2
        for i in 0..<count {
            let id = Int32(1 + 2 * i)
            calls += h2Frame(type: 1, flags: 4, stream: id, BadInputTests.requestHeaders("/echo.Echo/Quick"))
            calls += h2Frame(type: 0, flags: 1, stream: id, framed([1]))
        }
        c.send(calls)
        func answered(_ bytes: [UInt8]) -> Set<Int32> {
            Set(h2Frames(bytes).filter { $0.type == 0 && $0.payload == framed(Array("quick".utf8)) }.map(\.stream))
        }
        let first = answered(BadInputTests.read(c, seconds: 1))
        let ids = (0..<Int32(count)).map { 1 + 2 * $0 }
        #expect(first == Set(ids.prefix(QuickCalls.loopShare)))
        echo.release.signal()
        #expect(blocked.wait(timeout: .now() + 10) == .success)
        #expect(answered(BadInputTests.read(c, seconds: 1)) == Set(ids.suffix(2)))
    }

    /// A batch's answers leave as each `QuickCalls.answersPerWrite` of them are ready: while the
    /// loop is still computing the call after them (held here), the client already has the first
    /// ones, and the last follows once it is done.
    @Test func aBatchsFirstAnswersLeaveWhileTheRestAreComputed() throws {
        let echo = EchoService()
        try withGRPCServer([echo]) { server in
            // Never leave the loop held (up to 10 s) after a failed expectation.
            defer { echo.gate.signal() }
            let c = try RawSocket(port: server.port)
            var calls = preface + h2Frame(type: 4, flags: 0, stream: 0)
            let count = QuickCalls.answersPerWrite + 1
            let ids = (0..<Int32(count)).map { 1 + 2 * $0 }
            for id in ids {
                calls += h2Frame(type: 1, flags: 4, stream: id, BadInputTests.requestHeaders("/echo.Echo/Quick"))
                calls += h2Frame(type: 0, flags: 1, stream: id, framed([id == ids.last ? 3 : 1]))
            }
            // One write, so one read of the server's: one batch.
            c.send(calls)
            func answered(_ bytes: [UInt8]) -> Set<Int32> {
                Set(h2Frames(bytes).filter { $0.type == 0 && $0.payload == framed(Array("quick".utf8)) }.map(\.stream))
            }
            let first = answered(BadInputTests.read(c, seconds: 1))
            #expect(echo.gated.value)
            #expect(first == Set(ids.prefix(QuickCalls.answersPerWrite)))
            echo.gate.signal()
            #expect(answered(BadInputTests.read(c, seconds: 1)) == [ids.last!])
        }
    }

    /// Connections on different loops share the server's `QuickCalls`: a loop answering its batch
    /// may answer another loop's calls in it, and every `answersPerWrite`-th answer asks that call's
    /// connection to send now (`sendQueued`). The other loop's connection must then only queue (its
    /// `closed` and `receiving` are its loop's to read: read first, before the thread check, they
    /// raced that loop under ThreadSanitizer). Four connections (two per loop) send bursts of 20
    /// calls at once, round after round: every call is answered, on every connection.
    @Test func quickCallsOfConnectionsOnTwoLoopsAreAllAnswered() throws {
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [EchoService()]))
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let connections = 4, rounds = 25, perBurst = 2 * QuickCalls.answersPerWrite + 4
        final class Counts: @unchecked Sendable { var answered = [Int](repeating: 0, count: 4) }  // under `lock`
        let counts = Counts()
        let lock = NSLock()
        let done = DispatchGroup()
        for k in 0..<connections {
            DispatchQueue.global().async(group: done) {
                guard let c = try? RawSocket(port: server.port) else { return }
                c.send(preface + h2Frame(type: 4, flags: 0, stream: 0))
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65536)
                var next: Int32 = 1
                var total = 0
                for _ in 0..<rounds {
                    var calls: [UInt8] = []
                    for _ in 0..<perBurst {
                        calls += h2Frame(type: 1, flags: 4, stream: next, BadInputTests.requestHeaders("/echo.Echo/Quick"))
                        calls += h2Frame(type: 0, flags: 1, stream: next, framed([1]))
                        next += 2
                    }
                    c.send(calls)
                    total += perBurst
                    let deadline = Date().addingTimeInterval(10)
                    while Date() < deadline {
                        let answers = h2Frames(received).filter { $0.type == 0 && $0.payload == framed(Array("quick".utf8)) }.count
                        if answers >= total { break }
                        let n = recv(c.fd, &buffer, buffer.count, 0)
                        if n <= 0 { break }
                        received += buffer[0..<n]
                    }
                }
                let answers = h2Frames(received).filter { $0.type == 0 && $0.payload == framed(Array("quick".utf8)) }.count
                lock.withLock { counts.answered[k] = answers }
            }
        }
        #expect(done.wait(timeout: .now() + 120) == .success)
        #expect(lock.withLock { counts.answered } == Array(repeating: rounds * perBurst, count: connections))
        try expectStillServing(server)
    }

    /// Paths split on bytes as `/{service}/{method}`, a stray query ignored.
    /// Request bytes go back to the flow-control windows as the loop hands them to the call
    /// (`HTTP2Stream.consume` during the read, the WINDOW_UPDATE sent after it): a request three
    /// times the stream's 1 MiB window arrives whole.
    @Test func aRequestLargerThanTheStreamWindowArrivesWhole() throws {
        let message = EchoService.big(3, size: 3 << 20)
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Unary", body: framed(message))
            #expect(r.field("grpc-status") == "0")
            #expect(r.body == framed(message))
        }
    }

    @Test func pathsSplitIntoServiceAndMethod() {
        #expect(GRPCServer.split("/a.B/C")! == ("a.B", "C"))
        #expect(GRPCServer.split("/a.B/C?x=/y")! == ("a.B", "C"))
        #expect(GRPCServer.split("/a.B/")! == ("a.B", ""))
        for bad in ["", "/", "a.B/C", "/a.B", "/a.B/C/D"] { #expect(GRPCServer.split(bad) == nil, "\(bad)") }
    }

    @Test func unknownMethodAndServiceAreUnimplemented() throws {
        try withGRPCServer { server in
            // Calls refused on their headers are sent without a body: curl 7.88 drops a complete
            // response that arrives (with RST_STREAM NO_ERROR, RFC 9113 §8.1) while it is still uploading.
            let r = try curl(server.port, "/google.firestore.v1.Firestore/Nope", body: [])
            #expect(r.field("grpc-status") == "12")
            #expect(r.field("grpc-message") == "Method not found: google.firestore.v1.Firestore/Nope")
            #expect(r.body.isEmpty)
            let m = try curl(server.port, "/echo.Echo/Nope", body: [])
            #expect(m.field("grpc-message") == "Method not found: echo.Echo/Nope")
        }
    }

    @Test func errorIsTrailersOnlyWithEncodedMessageAndDetails() throws {
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Fail", body: framed([1]))
            #expect(r.field("grpc-status") == "5")
            #expect(r.field("grpc-message") == "Document (a/b) not found. %E2%9C%93 100%25")
            #expect(r.field("grpc-status-details-bin") == "CAU")  // [8, 5], base64 without padding
            #expect(r.body.isEmpty)
        }
    }

    /// An async unary call holds no worker while it waits for its reply: with one worker, a plain
    /// call is answered meanwhile; the parked calls are answered (or fail) when replied to.
    @Test func asyncUnaryHoldsNoWorkerWhileItWaits() throws {
        let echo = EchoService()
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [echo], configuration: .init(workers: 1)))
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        final class Answers: @unchecked Sendable { var ok, failed: CurlResult? }  // read after `parkedCalls`
        let answers = Answers()
        let parkedCalls = DispatchGroup()
        DispatchQueue.global().async(group: parkedCalls) { answers.ok = try? curl(server.port, "/echo.Echo/Park", body: framed([1, 2])) }
        DispatchQueue.global().async(group: parkedCalls) { answers.failed = try? curl(server.port, "/echo.Echo/Park", body: framed([2])) }
        for _ in 0..<3000 where echo.parked.count < 2 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(echo.parked.count == 2)
        let plain = try curl(server.port, "/echo.Echo/Unary", body: framed([7]))
        #expect(plain.body == framed([7]) && plain.field("grpc-status") == "0")
        #expect(parkedCalls.wait(timeout: .now() + 0.2) == .timedOut)
        echo.parked.releaseAll()
        #expect(parkedCalls.wait(timeout: .now() + 10) == .success)
        #expect(answers.ok?.body == framed([1, 2]) && answers.ok?.field("grpc-status") == "0")
        #expect(answers.failed?.body.isEmpty == true && answers.failed?.field("grpc-status") == "10")
    }

    /// Messages answered later keep their order, and the half-close ends the call only after the last.
    @Test func bidirectionalAnswersLaterInOrderThenEnds() throws {
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Later", body: framed([3, 3, 3]) + framed([2, 2]) + framed([1]))
            #expect(r.body == framed([3, 3, 3]) + framed([2, 2]) + framed([1]))
            #expect(r.field("grpc-status") == "0")
        }
    }

    @Test func serverStreamingSendsEveryMessage() throws {
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Stream", body: framed([3, 9]))
            #expect(r.body == framed([3, 9]) + framed([3, 9]) + framed([3, 9]))
            #expect(r.field("grpc-status") == "0")
        }
    }

    /// Messages larger than a DATA frame (16 KiB) and than the loop's gathering buffer (64 KiB), a
    /// megabyte in all, arrive whole and in order: each frame's bytes are copied from the stream's
    /// queue by the send-data callback, at any offset of the buffer, across its flushes.
    @Test func largeStreamedMessagesArriveWholeAndInOrder() throws {
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Big", body: framed([12, 9]))
            let expected = (0..<12).flatMap { framed(EchoService.big($0, size: 90_007)) }
            #expect(r.body.count == expected.count)
            #expect(r.body == expected)
            #expect(r.field("grpc-status") == "0")
        }
    }

    @Test func bidirectionalEchoesThenEndsOnHalfClose() throws {
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Chat", body: framed([1]) + framed([2, 2]))
            #expect(r.body == framed([1]) + framed([2, 2]))
            #expect(r.field("grpc-status") == "0")
        }
    }

    @Test func producedOnTheConnectionsThreadInOrderThenEndsAfterThem() throws {
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Produced", body: framed([1]) + framed([2, 2]) + framed([3, 3, 3]))
            #expect(r.body == framed([1]) + framed([2, 2]) + framed([3, 3, 3]))
            #expect(r.field("grpc-status") == "0")
        }
    }

    @Test func deadlineEndsTheCall() throws {
        let echo = EchoService()
        defer { echo.slowDone.signal() }
        try withGRPCServer([echo]) { server in
            let r = try curl(server.port, "/echo.Echo/Slow", body: framed([1]),
                             headers: ["content-type: application/grpc", "grpc-timeout: 200m"])
            #expect(r.field("grpc-status") == "4")
            #expect(r.field("grpc-message") == "Deadline Exceeded")
            // Answered by the deadline, not by the handler: it is still running (no wall-clock
            // bound, which a loaded machine could miss).
            #expect(!echo.slowReturned.value)
            echo.slowDone.signal()
        }
    }

    @Test func oversizedMessageIsResourceExhausted() throws {
        try withGRPCServer { server in
            // Only the prefix claims 11 MiB; the server must refuse on the length alone.
            let r = try curl(server.port, "/echo.Echo/Unary", body: [0, 0, 0xB0, 0, 0] + [UInt8](repeating: 7, count: 1000))
            #expect(r.field("grpc-status") == "8")
        }
    }

    @Test func wrongContentTypeGets415() throws {
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Unary", body: [], headers: ["content-type: application/json"])
            #expect(r.dump.contains("HTTP/2 415"))
        }
    }

    @Test(arguments: [("1H", 3_600_000_000_000), ("5S", 5_000_000_000), ("200m", 200_000_000), ("7u", 7_000), ("9n", 9)] as [(String, UInt64)])
    func timeoutUnits(text: String, nanos: UInt64) {
        #expect(GRPCStatus.timeoutNanos(text) == nanos)
    }

    @Test func malformedTimeoutsAreRejected() {
        for bad in ["", "S", "10", "1x", "123456789S", "-1S"] { #expect(GRPCStatus.timeoutNanos(bad) == nil, "\(bad)") }
    }
}
