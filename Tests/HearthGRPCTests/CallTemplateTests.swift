import Foundation
import Testing
@testable import HearthGRPC
import HearthHTTP

/// A call whose request fields repeat the previous request's on its connection shares what that
/// request's fields were read into (`GRPCCallTemplate`, kept by the connection for its handler):
/// each call must still be routed and checked by its own fields when any of them differs — the
/// method, a metadata value, a field more or fewer — and see its own metadata.
@Suite struct CallTemplateTests {
    /// Sends the calls one at a time on one connection (each answered before the next is sent) and
    /// returns, per call, the DATA it got and whether its stream ended.
    static func calls(_ port: Int, _ requests: [(path: String, fields: [(String, String)])]) throws -> [(data: [UInt8], ended: Bool)] {
        let c = try RawSocket(port: port)
        c.send(preface + h2Frame(type: 4, flags: 0, stream: 0))
        var tv = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var results: [(data: [UInt8], ended: Bool)] = []
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        for (i, request) in requests.enumerated() {
            let id = Int32(1 + 2 * i)
            var block = BadInputTests.requestHeaders(request.path)
            for (name, value) in request.fields { block += UnaryAnswerTests.literal(name, value) }
            c.send(h2Frame(type: 1, flags: 4, stream: id, block) + h2Frame(type: 0, flags: 1, stream: id, framed([0x0A, 0x01, 0x61])))
            var data: [UInt8] = []
            var ended = false
            let deadline = Date().addingTimeInterval(30)
            while !ended && Date() < deadline {
                let n = recv(c.fd, &buffer, buffer.count, 0)
                if n > 0 { pending += buffer[0..<n] }
                // Whole frames only; a partial one waits for the next read.
                var used = 0
                for frame in h2FramesWithFlags(pending) {
                    used += 9 + frame.payload.count
                    guard frame.stream == id else { continue }
                    if frame.type == 0 { data += frame.payload }
                    if (frame.type == 0 || frame.type == 1) && frame.flags & 1 != 0 { ended = true }
                }
                pending.removeFirst(used)
            }
            results.append((data, ended))
        }
        return results
    }

    /// The message of a unary answer (after its 5-byte prefix) as text.
    static func text(_ data: [UInt8]) -> String? {
        data.count >= 5 ? String(decoding: data[5...], as: UTF8.self) : nil
    }

    @Test func eachCallIsRoutedAndReadByItsOwnFields() throws {
        let tokenA = "Bearer " + String(repeating: "a", count: 40)
        let tokenB = String(tokenA.dropLast()) + "b"
        let same = [("x-a", "abc"), ("authorization", tokenA)]
        let requests: [(path: String, fields: [(String, String)])] = [
            ("/meta.Meta/Fields", same),
            ("/meta.Meta/Fields", same),                                   // repeated
            ("/meta.Meta/Names", same),                                    // another method, the same metadata
            ("/meta.Meta/Names", same),                                    // repeated
            ("/meta.Meta/Nope", same),                                     // no such method
            ("/meta.Meta/Nope", same),                                     // repeated: still none
            ("/meta.Meta/Fields", same),
            ("/meta.Meta/Fields", [("x-a", "abc"), ("authorization", tokenB)]),  // a value changed
            ("/meta.Meta/Fields", [("x-a", "abc")]),                        // a field fewer
            ("/meta.Meta/Fields", [("x-a", "abc"), ("grpc-encoding", "br")]),   // a field more: refused
            ("/meta.Meta/Fields", [("x-a", "abc"), ("grpc-encoding", "br")]),   // repeated: refused again
            ("/meta.Meta/Fields", [("x-a", "abc")]),
            ("/meta.Meta/Fields", [("x-a", "abc")]),
        ]
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [MetadataService()]))
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let results = try Self.calls(server.port, requests)
        #expect(results.count == requests.count)
        guard results.count == requests.count else { return }
        for (i, r) in results.enumerated() { #expect(r.ended, "call \(i) ended") }
        let fieldsA = "content-type=application/grpc\nx-a=abc\nauthorization=\(tokenA)"
        let names = "content-type=16\nx-a=3\nauthorization=\(tokenA.utf8.count)"
        let expected: [String?] = [
            fieldsA, fieldsA, names, names, nil, nil, fieldsA,
            "content-type=application/grpc\nx-a=abc\nauthorization=\(tokenB)",
            "content-type=application/grpc\nx-a=abc",
            nil, nil,
            "content-type=application/grpc\nx-a=abc",
            "content-type=application/grpc\nx-a=abc",
        ]
        for (i, want) in expected.enumerated() {
            #expect(Self.text(results[i].data) == want, "call \(i)")
        }
    }

    /// The template of a list, read once: what `begin` and the context take from it.
    @Test func templateReadsTheFields() {
        let server = GRPCServer(services: [MetadataService()])
        let t = GRPCCallTemplate(server, [(":method", "POST"), (":path", "/meta.Meta/Names"), ("content-type", "application/grpc+proto"),
                                          ("grpc-timeout", "1S"), ("authorization", "x"), ("grpc-encoding", "gzip")])
        #expect(t.path == "/meta.Meta/Names")
        #expect(t.isGRPCContentType)
        #expect(t.timeout == "1S" && t.encoding == "gzip")
        #expect(t.metadataStart == 2 && t.authorization == 4 && !t.pseudoAfterMetadata && !t.bidirectional)
        if case .success = t.routed {} else { Issue.record("Names is routed") }
        let missing = GRPCCallTemplate(server, [(":path", "/meta.Meta/Nope"), ("content-type", "text/plain")])
        #expect(!missing.isGRPCContentType && missing.authorization == -1)
        if case .failure(let status) = missing.routed {
            #expect(status.code == .unimplemented && status.message == "Method not found: meta.Meta/Nope")
        } else {
            Issue.record("Nope is not routed")
        }
    }
}

/// A unary answer leaves as its 5-byte prefix ahead of the message's own array
/// (`HTTP2Stream.respond(headers:prefix:body:trailers:)`): the client's window may cut its DATA
/// anywhere, inside the prefix or across its end, and the bytes must still be the framed message.
@Suite struct AnswerPrefixTests {
    /// Reads frames of stream 1 until `done` says so (or 5 s pass), after `pending` left over.
    static func read(_ c: RawSocket, _ pending: inout [UInt8], until done: ([(type: UInt8, flags: UInt8, payload: [UInt8])]) -> Bool)
        -> [(type: UInt8, flags: UInt8, payload: [UInt8])] {
        var frames: [(type: UInt8, flags: UInt8, payload: [UInt8])] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(30)
        while !done(frames) && Date() < deadline {
            let n = recv(c.fd, &buffer, buffer.count, 0)
            if n > 0 { pending += buffer[0..<n] }
            var used = 0
            for frame in h2FramesWithFlags(pending) {
                used += 9 + frame.payload.count
                if frame.stream == 1 { frames.append((frame.type, frame.flags, frame.payload)) }
            }
            pending.removeFirst(used)
        }
        return frames
    }

    static func windowUpdate(_ n: UInt32) -> [UInt8] {
        h2Frame(type: 8, flags: 0, stream: 1, [UInt8(n >> 24 & 0x7F), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)])
    }

    @Test(arguments: [false, true])
    func answerCutByTheWindowIsTheFramedMessage(quick: Bool) throws {
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(),
                                http2: GRPCServer(services: [EchoService(), MetadataService()]))
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let c = try RawSocket(port: server.port)
        var tv = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        // SETTINGS_INITIAL_WINDOW_SIZE 3: the answer's first DATA carries three bytes of its prefix.
        c.send(preface + h2Frame(type: 4, flags: 0, stream: 0, [0x00, 0x04, 0, 0, 0, 3]))
        let message: [UInt8] = [0x0A, 0x08] + Array("abcdefgh".utf8)
        var block = BadInputTests.requestHeaders(quick ? "/meta.Meta/Fields" : "/echo.Echo/Unary")
        if quick { block += UnaryAnswerTests.literal("x-a", "0123456789") }
        c.send(h2Frame(type: 1, flags: 4, stream: 1, block) + h2Frame(type: 0, flags: 1, stream: 1, framed(message)))
        let expected = framed(quick ? Array("content-type=application/grpc\nx-a=0123456789".utf8) : message)
        var pending: [UInt8] = []
        func data(_ frames: [(type: UInt8, flags: UInt8, payload: [UInt8])]) -> [UInt8] { frames.filter { $0.type == 0 }.flatMap(\.payload) }
        var frames = Self.read(c, &pending) { data($0).count >= 3 }
        #expect(frames.filter { $0.type == 0 }.map(\.payload.count) == [3])
        // Four more: the prefix's last two bytes and the message's first two, in one frame.
        c.send(Self.windowUpdate(4))
        frames += Self.read(c, &pending) { data($0).count >= 4 }
        #expect(frames.filter { $0.type == 0 }.map(\.payload.count) == [3, 4])
        c.send(Self.windowUpdate(1000))
        frames += Self.read(c, &pending) { $0.contains { $0.type == 1 && $0.flags & 1 != 0 } }
        #expect(data(frames) == expected)
        #expect(frames.last.map { $0.type == 1 && $0.flags & 1 != 0 } == true)
    }
}
