import Foundation
import Testing
@testable import HearthGRPC
import HearthHTTP

/// A plain TCP client for bytes no well-behaved client sends.
final class RawSocket {
    let fd: Int32
    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let r = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard r == 0 else { throw POSIXError(.ECONNREFUSED) }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }
    deinit { close(fd) }
    func send(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
    /// Everything until the server closes (or 5 s pass).
    func readToEnd() -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return out }
            out += buffer[0..<n]
        }
    }
}

let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

/// The server still serves both protocols.
func expectStillServing(_ server: HTTPServer) throws {
    let r = try curl(server.port, "/echo.Echo/Unary", body: framed([42]))
    #expect(r.body == framed([42]))
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    p.arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(server.port)/"]
    let pipe = Pipe()
    p.standardOutput = pipe
    try p.run()
    p.waitUntilExit()
    #expect(String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "200")
}

@Suite struct BadInputTests {
    @Test func brokenPrefaceIsHTTP1AndRefused() throws {
        try withGRPCServer { server in
            let c = try RawSocket(port: server.port)
            c.send(Array("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".utf8))
            let answer = String(decoding: c.readToEnd(), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 "), "\(answer)")
            try expectStillServing(server)
        }
    }

    @Test func garbageAfterThePrefaceGetsGoAwayAndClose() throws {
        try withGRPCServer { server in
            let c = try RawSocket(port: server.port)
            c.send(preface + [UInt8](repeating: 0xFF, count: 64))
            let answer = c.readToEnd()
            // SETTINGS first, then GOAWAY (type 7) with a non-zero error code; then the server closes.
            #expect(answer.count >= 9 && answer[3] == 4)
            #expect(answer.contains(7))
            try expectStillServing(server)
        }
    }

    @Test func clientThatDisconnectsMidStreamCancelsTheCall() throws {
        let watcher = CancelWatcher()
        defer { watcher.releaseCall() }
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [EchoService(), watcher]))
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let curl = try HeldOpenCurl(port: server.port, path: "/watch.Watch/Hold", first: [1])
        let opened = Date().addingTimeInterval(30)
        while !watcher.opened.value && Date() < opened { Thread.sleep(forTimeInterval: 0.02) }
        #expect(watcher.opened.value)
        curl.kill()
        let deadline = Date().addingTimeInterval(30)
        while !watcher.cancelled.value && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(watcher.cancelled.value)
        #expect(watcher.responses?.isClosed == true)
        #expect(watcher.responses?.send([1]) == false)
        try expectStillServing(server)
    }

    /// h2load (Debian nghttp2-client): one connection, 10,000 unary calls, 1,000 in flight at a time
    /// (the MAX_CONCURRENT_STREAMS we announce). curl 7.88's `-Z --http2-prior-knowledge` is no help
    /// here: it fails every transfer after the first with "Error in the HTTP2 framing layer" against
    /// nghttp2's own reference server (nghttpd) too.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/h2load"), "needs h2load (Debian nghttp2-client)"))
    func tenThousandStreamsOnOneConnection() throws {
        try withGRPCServer { server in
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("many-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let body = dir.appendingPathComponent("in")
            try Data(framed([9])).write(to: body)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/h2load")
            p.arguments = ["-n", "10000", "-c", "1", "-m", "1000", "-d", body.path, "-H", "content-type: application/grpc",
                           "http://127.0.0.1:\(server.port)/echo.Echo/Unary"]
            let pipe = Pipe()
            p.standardOutput = pipe
            try p.run()
            let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            #expect(out.contains("requests: 10000 total, 10000 started, 10000 done, 10000 succeeded, 0 failed, 0 errored"), "\(out)")
            #expect(out.contains("status codes: 10000 2xx"), "\(out)")
            // Every answer carried the echoed message: 10,000 times 6 bytes of DATA.
            #expect(out.contains("(60000) data"), "\(out)")
            try expectStillServing(server)
        }
    }
}

/// One HTTP/2 frame, written by hand: these tests send what no real client library would.
func h2Frame(type: UInt8, flags: UInt8, stream: Int32, _ payload: [UInt8] = []) -> [UInt8] {
    let n = payload.count
    return [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF), type, flags] +
        [UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)] + payload
}

/// The frames a server sent: (type, stream, payload).
func h2Frames(_ bytes: [UInt8]) -> [(type: UInt8, stream: Int32, payload: [UInt8])] {
    h2FramesWithFlags(bytes).map { ($0.type, $0.stream, $0.payload) }
}

/// The frames a server sent, with their flags.
func h2FramesWithFlags(_ bytes: [UInt8]) -> [(type: UInt8, flags: UInt8, stream: Int32, payload: [UInt8])] {
    var out: [(UInt8, UInt8, Int32, [UInt8])] = []
    var i = 0
    while i + 9 <= bytes.count {
        let n = Int(bytes[i]) << 16 | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2])
        guard i + 9 + n <= bytes.count else { break }
        let id = Int32(bytes[i + 5] & 0x7F) << 24 | Int32(bytes[i + 6]) << 16 | Int32(bytes[i + 7]) << 8 | Int32(bytes[i + 8])
        out.append((bytes[i + 3], bytes[i + 4], id, Array(bytes[(i + 9)..<(i + 9 + n)])))
        i += 9 + n
    }
    return out
}

extension BadInputTests {
    /// A request HEADERS block for `path` (HPACK static-table names, literal values, no indexing).
    static func requestHeaders(_ path: String) -> [UInt8] {
        let p = Array(path.utf8), ct = Array("application/grpc".utf8), host = Array("localhost".utf8)
        return [0x83, 0x86, 0x01, UInt8(host.count)] + host + [0x04, UInt8(p.count)] + p + [0x0F, 0x10, UInt8(ct.count)] + ct
    }

    /// Opens `count` streams that stay open (no END_STREAM), optionally after acknowledging our SETTINGS.
    static func openStreams(port: Int, count: Int, acknowledgeSettings: Bool) throws -> RawSocket {
        let c = try RawSocket(port: port)
        c.send(preface + h2Frame(type: 4, flags: 0, stream: 0))
        if acknowledgeSettings {
            Thread.sleep(forTimeInterval: 0.2)
            c.send(h2Frame(type: 4, flags: 1, stream: 0))
            Thread.sleep(forTimeInterval: 0.2)
        }
        let block = requestHeaders("/watch.Watch/Hold")
        c.send((0..<count).flatMap { h2Frame(type: 1, flags: 4, stream: Int32(1 + 2 * $0), block) })
        return c
    }

    /// Reads what the server sends for `seconds` (it keeps the connection open).
    static func read(_ c: RawSocket, seconds: Int) -> [UInt8] {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return c.readToEnd()
    }

    /// RFC 9113 §5.1.2: streams beyond MAX_CONCURRENT_STREAMS (1000) opened before the client has
    /// acknowledged our SETTINGS are refused one by one (REFUSED_STREAM, safe to retry); the
    /// connection and its 1000 open streams live on.
    @Test func streamsOverTheLimitAreRefused() throws {
        let watcher = CancelWatcher()
        defer { watcher.releaseCall() }
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [EchoService(), watcher]))
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let c = try Self.openStreams(port: server.port, count: 1010, acknowledgeSettings: false)
        let frames = h2Frames(Self.read(c, seconds: 1))
        let resets = frames.filter { $0.type == 3 }
        #expect(resets.count == 10)
        #expect(resets.allSatisfy { $0.payload == [0, 0, 0, 7] && $0.stream > 1999 })
        #expect(!frames.contains { $0.type == 7 })  // no GOAWAY
        // Still usable: once the client cancels one of its streams, a unary call on a new one is answered.
        c.send(h2Frame(type: 3, flags: 0, stream: 1, [0, 0, 0, 8]) + h2Frame(type: 1, flags: 4, stream: 2021, Self.requestHeaders("/echo.Echo/Unary")) +
               h2Frame(type: 0, flags: 1, stream: 2021, framed([5])))
        let more = h2Frames(Self.read(c, seconds: 1))
        #expect(more.contains { $0.type == 0 && $0.stream == 2021 && $0.payload == framed([5]) })
        try expectStillServing(server)
    }

    /// After the client acknowledged the limit, exceeding it ends that connection (libnghttp2 treats
    /// it as a connection error, GOAWAY PROTOCOL_ERROR); every other client is still served.
    @Test func streamsOverAnAcknowledgedLimitEndOnlyThatConnection() throws {
        let watcher = CancelWatcher()
        defer { watcher.releaseCall() }
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [EchoService(), watcher]))
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let c = try Self.openStreams(port: server.port, count: 1001, acknowledgeSettings: true)
        let goAway = h2Frames(Self.read(c, seconds: 2)).first { $0.type == 7 }
        #expect(goAway?.payload.prefix(8) == [0, 0, 0x07, 0xCF, 0, 0, 0, 1])  // last stream 1999, PROTOCOL_ERROR
        try expectStillServing(server)
    }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var set = false
    var value: Bool { lock.lock(); defer { lock.unlock() }; return set }
    func raise() { lock.lock(); set = true; lock.unlock() }
}

/// watch.Watch/Hold: a bidi call that never finishes on its own and records its cancellation.
final class CancelWatcher: GRPCService, @unchecked Sendable {
    let name = "watch.Watch"
    let opened = Flag()
    let cancelled = Flag()
    private let lock = NSLock()
    private var _responses: (any GRPCResponseStream)?
    /// The last call's response side. Under the lock: calls open on several worker threads at once,
    /// and unguarded concurrent stores of a reference over-release it (ThreadSanitizer reported
    /// the race, and the over-released `GRPCCall` later crashed the run).
    var responses: (any GRPCResponseStream)? {
        get { lock.withLock { _responses } }
        set { lock.withLock { _responses = newValue } }
    }
    final class Hold: GRPCRequestStream, @unchecked Sendable {
        let watcher: CancelWatcher
        init(_ w: CancelWatcher) { watcher = w }
        func received(_ message: [UInt8]) { watcher.opened.raise() }
        func halfClosed() {}
        func cancelled() { watcher.cancelled.raise() }
    }
    func handler(for method: String) -> GRPCHandler? {
        .bidirectional { [self] _, responses in
            self.responses = responses
            return Hold(self)
        }
    }
    /// Lets go of the last call, which holds the server, which holds this service: a cycle of the
    /// test's making that LeakSanitizer reported for every test using the watcher.
    func releaseCall() { responses = nil }
}

/// leak.Leak/Hold: a bidirectional call whose handler keeps its response stream, as real handlers
/// do; weak references tell whether the call and the handler outlive their stream.
final class LifetimeWatcher: GRPCService, @unchecked Sendable {
    let name = "leak.Leak"
    private let lock = NSLock()
    private var calls: [() -> AnyObject?] = []
    final class Hold: GRPCRequestStream, @unchecked Sendable {
        let responses: any GRPCResponseStream
        init(_ r: any GRPCResponseStream) { responses = r }
        func received(_ message: [UInt8]) { responses.send(message) }
        func halfClosed() {}
        func cancelled() {}
    }
    var opened: Int { lock.lock(); defer { lock.unlock() }; return calls.count }
    var alive: Int { lock.lock(); defer { lock.unlock() }; return calls.filter { $0() != nil }.count }
    func handler(for method: String) -> GRPCHandler? {
        .bidirectional { [self] _, responses in
            let hold = Hold(responses)
            lock.lock()
            calls.append { [weak responses] in responses }
            calls.append { [weak hold] in hold }
            lock.unlock()
            return hold
        }
    }
}

extension BadInputTests {
    /// Streams the client resets (RST_STREAM CANCEL) and streams of a connection that drops release
    /// their call and its handler (LeakSanitizer saw one kept per abandoned stream).
    @Test func cancelledStreamsReleaseTheirCalls() throws {
        let watcher = LifetimeWatcher()
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [EchoService(), watcher]))
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        var c: RawSocket? = try RawSocket(port: server.port)
        c!.send(preface + h2Frame(type: 4, flags: 0, stream: 0))
        let block = Self.requestHeaders("/leak.Leak/Hold")
        var opening: [UInt8] = []
        for i in 0..<20 {
            let id = Int32(1 + 2 * i)
            opening += h2Frame(type: 1, flags: 4, stream: id, block)
            opening += h2Frame(type: 0, flags: 0, stream: id, framed([7]))
        }
        c!.send(opening)
        for _ in 0..<600 where watcher.opened < 40 { Thread.sleep(forTimeInterval: 0.05) }
        #expect(watcher.opened == 40)
        // Half of them reset by the client, the rest dropped with the connection.
        var resets: [UInt8] = []
        for i in 0..<10 { resets += h2Frame(type: 3, flags: 0, stream: Int32(1 + 2 * i), [0, 0, 0, 8]) }
        c!.send(resets)
        for _ in 0..<600 where watcher.alive > 20 { Thread.sleep(forTimeInterval: 0.05) }
        #expect(watcher.alive == 20)
        c = nil
        for _ in 0..<600 where watcher.alive > 0 { Thread.sleep(forTimeInterval: 0.05) }
        #expect(watcher.alive == 0)
        try expectStillServing(server)
    }
}
