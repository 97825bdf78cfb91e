import Foundation
import Testing
@testable import HearthHTTP

/// An HTTP/2 handler (no gRPC) that records which loop opened each stream (and that it ran on that
/// loop's thread), answers with headers and one DATA frame, and holds the stream open until the
/// test finishes it.
final class LoopRecorder: HTTP2StreamHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var loops: [ObjectIdentifier] = []
    private var offLoop = 0
    private var held: [HTTP2Stream] = []

    final class Delegate: HTTP2StreamDelegate {
        func received(_ bytes: [UInt8]) {}
        func endOfStream() {}
        func closed(errorCode: UInt32) {}
    }

    func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)]) -> any HTTP2StreamDelegate {
        lock.withLock {
            if let loop = stream.connection?.loop {
                loops.append(ObjectIdentifier(loop))
                if !loop.isLoopThread { offLoop += 1 }
            }
            held.append(stream)
        }
        stream.respond(headers: [(":status", "200")])
        stream.write(Array("hello".utf8))
        return Delegate()
    }

    var openedOn: (loops: [ObjectIdentifier], offLoop: Int) { lock.withLock { (loops, offLoop) } }

    /// The streams opened so far (held until `finishAll`).
    var heldStreams: [HTTP2Stream] { lock.withLock { held } }

    /// Ends every held stream with trailers (from this thread: the loops apply it).
    func finishAll() {
        for s in lock.withLock({ held }) { s.finish(trailers: [("grpc-status", "0")]) }
    }
}

extension RawSocket {
    /// Frames read until `done` holds for what arrived (or the socket closes, or 5 s pass).
    func frames(until done: ([(type: UInt8, stream: Int32, payload: [UInt8])]) -> Bool) -> [(type: UInt8, stream: Int32, payload: [UInt8])] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !done(h2Frames(bytes)) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return h2Frames(bytes)
    }

    /// Opens stream 1 with request headers that end the client's side (END_STREAM | END_HEADERS):
    /// the stream then stays open until the server's response ends.
    static func h2Client(port: Int) throws -> RawSocket {
        let c = try RawSocket(port: port)
        c.send(preface + h2Frame(type: 4, flags: 0, stream: 0) + h2Frame(type: 1, flags: 5, stream: 1, BadInputTests.requestHeaders("/any/Path")))
        return c
    }
}

@Suite struct HTTP2LoopsTests {
    static func server(_ handler: LoopRecorder) throws -> HTTPServer {
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(), http2: handler)
        try server.start()
        return server
    }

    /// Connections are spread over the engine's loops (one per core, at most 4), every one served.
    @Test func connectionsSpreadOverEveryLoopAndAllAreServed() throws {
        let handler = LoopRecorder()
        let server = try Self.server(handler)
        defer { server.stop(graceSeconds: 1) }
        let loops = HTTP2Engine.defaultLoopCount
        let clients = try (0..<(3 * loops + 1)).map { _ in try RawSocket.h2Client(port: server.port) }
        for c in clients {
            let frames = c.frames { f in f.contains { $0.type == 0 && $0.stream == 1 } }
            #expect(frames.contains { $0.type == 1 && $0.stream == 1 })
            #expect(frames.contains { $0.type == 0 && $0.stream == 1 && $0.payload == Array("hello".utf8) })
        }
        let (opened, offLoop) = handler.openedOn
        #expect(opened.count == clients.count)
        #expect(offLoop == 0)  // each stream was opened on its connection's own loop thread
        // Least-loaded placement: every loop serves a connection, none more than one above another.
        let perLoop = Dictionary(grouping: opened, by: { $0 }).mapValues(\.count)
        #expect(perLoop.count == loops)
        #expect((perLoop.values.max() ?? 0) - (perLoop.values.min() ?? 0) <= 1)
    }

    /// No loop thread until HTTP/2 is spoken, then only as many as there are connections (up to the cap).
    @Test func loopThreadsStartWithTheirFirstConnection() throws {
        let engine = try HTTP2Engine(name: "lazy", handler: LoopRecorder(), loops: 3)
        defer { engine.close() }
        #expect(engine.startedLoops == 0)
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        defer { close(fds[1]) }
        engine.adopt(fd: fds[0], remoteAddress: "test")
        #expect(engine.startedLoops == 1)
        #expect(engine.connectionCount == 1)
    }

    /// Shutdown sends GOAWAY on every loop's connections, lets their open streams finish, then
    /// closes them all and ends every loop.
    @Test func shutdownDrainsEveryLoop() throws {
        let handler = LoopRecorder()
        let server = try Self.server(handler)
        let clients = try (0..<(2 * HTTP2Engine.defaultLoopCount)).map { _ in try RawSocket.h2Client(port: server.port) }
        for c in clients { _ = c.frames { f in f.contains { $0.type == 0 && $0.stream == 1 } } }
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            server.stop(graceSeconds: 60)
            stopped.signal()
        }
        for c in clients {
            let frames = c.frames { f in f.contains { $0.type == 7 } }
            let goAway = frames.first { $0.type == 7 }
            // Last stream 1, NO_ERROR: stream 1 may finish.
            #expect(goAway?.payload.prefix(8) == [0, 0, 0, 1, 0, 0, 0, 0])
        }
        #expect(stopped.wait(timeout: .now() + 0.3) == .timedOut)  // waits for the open streams
        handler.finishAll()
        for c in clients {
            // The trailers (a second HEADERS frame) end stream 1, then the server closes.
            let frames = c.frames { _ in false }
            #expect(frames.filter { $0.type == 1 && $0.stream == 1 }.count == 1)
        }
        // Stopped once the streams finished, long before the grace period (60 s) would have ended it.
        #expect(stopped.wait(timeout: .now() + 30) == .success)
    }

    /// A request the client sent whole and that waits for an answer from another thread keeps its
    /// loop from polling (`EventLoop.answersAwaited`): the loop's pauses until that answer cost no
    /// CPU, even with the window wide open and the client busy on the connection; the answer, a
    /// reset or the connection's end settles the count.
    @Test func aLoopWaitingForAnAnswerFromAnotherThreadSleeps() throws {
        let handler = LoopRecorder()
        var configuration = HTTPServer.Configuration(port: 0, threads: 2)
        configuration.http2BusyPollMicroseconds = 1000
        let server = HTTPServer(name: "t", configuration: configuration, service: PlainService(), http2: handler)
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let client = try RawSocket.h2Client(port: server.port)
        _ = client.frames { f in f.contains { $0.type == 0 && $0.stream == 1 } }
        let loop = try #require(handler.heldStreams.first?.connection?.loop)
        #expect(BusyPollTests.onLoop(loop) { loop.answersAwaited } == 1)
        // The window as wide as it gets: without the count the loop would poll through every gap
        // between the client's PINGs below (each ended by the socket within the window).
        _ = BusyPollTests.onLoop(loop) {
            for _ in 0..<10 { loop.busyPoll.slept(pause: 1_000) }
            return true
        }
        #expect(BusyPollTests.onLoop(loop) { loop.busyPoll.window } == 1_000_000)
        let before = BusyPollTests.onLoop(loop) { BusyPollTests.threadCPU() }
        for i in 0..<100 {
            client.send(h2Frame(type: 6, flags: 0, stream: 0, [UInt8](repeating: UInt8(i), count: 8)))
            usleep(500)
        }
        let acks = client.frames { f in f.filter { $0.type == 6 }.count == 100 }
        #expect(acks.filter { $0.type == 6 }.count == 100)
        let after = BusyPollTests.onLoop(loop) { BusyPollTests.threadCPU() }
        // 100 PINGs answered cost a few ms; polling through the gaps would take ~50 ms.
        #expect(after - before < 0.025)
        // A sleep while waiting teaches the window nothing.
        #expect(BusyPollTests.onLoop(loop) { loop.busyPoll.window } == 1_000_000)
        handler.finishAll()
        _ = client.frames { f in f.filter { $0.type == 1 && $0.stream == 1 }.count == 2 }
        #expect(BusyPollTests.onLoop(loop) { loop.answersAwaited } == 0)

        // A reset settles it as an answer does, and so does the connection's end.
        let other = try RawSocket.h2Client(port: server.port)
        _ = other.frames { f in f.contains { $0.type == 0 && $0.stream == 1 } }
        let third = try RawSocket.h2Client(port: server.port)
        _ = third.frames { f in f.contains { $0.type == 0 && $0.stream == 1 } }
        // The loops of every connection (the two may sit on different ones), kept past their closing.
        let loops = Dictionary(handler.heldStreams.compactMap { $0.connection?.loop }.map { (ObjectIdentifier($0), $0) },
                               uniquingKeysWith: { a, _ in a }).values
        func awaited() -> Int { loops.map { l in BusyPollTests.onLoop(l) { l.answersAwaited } }.reduce(0, +) }
        #expect(awaited() == 2)
        other.send(h2Frame(type: 3, flags: 0, stream: 1, [0, 0, 0, 8]))  // RST_STREAM(CANCEL)
        shutdown(third.fd, Int32(SHUT_RDWR))
        var settled = false
        for _ in 0..<3000 where !settled {
            settled = awaited() == 0
            if !settled { usleep(10_000) }
        }
        #expect(settled)
    }
}
