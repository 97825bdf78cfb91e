import Foundation
import Testing
@testable import HearthGRPC
import HearthHTTP

/// meta.Meta: `Names` answers (on the loop) the request's metadata as `name=value-length` lines in
/// arrival order; `Worker` the same on a worker; `Deny` fails on the loop.
struct MetadataService: GRPCService {
    let name = "meta.Meta"

    static func describe(_ context: GRPCContext) -> [UInt8] {
        Array(context.metadata.map { "\($0.name)=\($0.value.utf8.count)" }.joined(separator: "\n").utf8)
    }

    /// The metadata itself, `name=value` lines (`Fields`).
    static func fields(_ context: GRPCContext) -> [UInt8] {
        Array(context.metadata.map { "\($0.name)=\($0.value)" }.joined(separator: "\n").utf8)
    }

    func handler(for method: String) -> GRPCHandler? {
        switch method {
        case "Names": .unaryQuick(quick: { _, context in Self.describe(context) }, run: { _, _ in [] })
        case "Fields": .unaryQuick(quick: { _, context in Self.fields(context) }, run: { _, _ in [] })
        case "Worker": .unary { _, context in Self.describe(context) }
        case "Deny": .unaryQuick(quick: { _, _ throws(GRPCStatus) in throw GRPCStatus(.permissionDenied, "Missing or insufficient permissions.") },
                                 run: { _, _ in [] })
        default: nil
        }
    }
}

/// The unary answer as it leaves the server, frame by frame, and the request headers as they reach
/// the handler: the parts the per-call cuts of the gRPC get (docs/benchmarks.md, grpcget) touch.
@Suite struct UnaryAnswerTests {
    /// HPACK literal header fields without indexing, new name (RFC 7541 §6.2.2), 7-bit lengths
    /// extended as §5.1 says: enough for any length a test sends.
    static func literal(_ name: String, _ value: String) -> [UInt8] {
        func length(_ n: Int) -> [UInt8] {
            if n < 127 { return [UInt8(n)] }
            var out: [UInt8] = [127]
            var rest = n - 127
            while rest >= 128 {
                out.append(UInt8(rest & 0x7F | 0x80))
                rest >>= 7
            }
            return out + [UInt8(rest)]
        }
        return [0x00] + length(name.utf8.count) + Array(name.utf8) + length(value.utf8.count) + Array(value.utf8)
    }

    /// One call on a fresh connection: what the server sent on stream 1 within a second.
    func call(_ port: Int, _ path: String, extra: [(String, String)]) throws -> [(type: UInt8, flags: UInt8, payload: [UInt8])] {
        let c = try RawSocket(port: port)
        var block = BadInputTests.requestHeaders(path)
        for (name, value) in extra { block += Self.literal(name, value) }
        c.send(preface + h2Frame(type: 4, flags: 0, stream: 0) + h2Frame(type: 1, flags: 4, stream: 1, block)
               + h2Frame(type: 0, flags: 1, stream: 1, framed([0x0A, 0x01, 0x61])))
        return h2FramesWithFlags(BadInputTests.read(c, seconds: 1)).filter { $0.stream == 1 }.map { ($0.type, $0.flags, $0.payload) }
    }

    /// A unary answer is HEADERS (no END_STREAM), one DATA frame with the framed message (no
    /// END_STREAM), then the trailers ending the stream — answered on the loop or on a worker alike.
    /// Every request field reaches the handler in order, past the room first made for them, a
    /// kilobyte token included.
    @Test(arguments: ["/meta.Meta/Names", "/meta.Meta/Worker"])
    func answerIsHeadersOneDataFrameThenTrailers(path: String) throws {
        try withGRPCServer([MetadataService()]) { server in
            let token = String(repeating: "t", count: 1200)
            let extra = [("authorization", "Bearer \(token)")] + (0..<14).map { ("x-field-\($0)", String(repeating: "v", count: $0)) }
            let sent = try call(server.port, path, extra: extra)
            #expect(sent.map(\.type) == [1, 0, 1])
            guard sent.count == 3 else { return }
            #expect(sent[0].flags & 1 == 0 && sent[0].flags & 4 == 4)  // END_HEADERS, not END_STREAM
            #expect(sent[1].flags & 1 == 0)
            #expect(sent[2].flags & 1 == 1)  // the trailers end the stream
            let expected = (["content-type=16"] + extra.map { "\($0.0)=\($0.1.utf8.count)" }).joined(separator: "\n")
            #expect(sent[1].payload == framed(Array(expected.utf8)))
        }
    }

    /// An error is Trailers-Only: a single HEADERS frame that ends the stream, no DATA.
    @Test func errorOnTheLoopIsOneHeadersFrame() throws {
        try withGRPCServer([MetadataService()]) { server in
            let sent = try call(server.port, "/meta.Meta/Deny", extra: [])
            #expect(sent.map(\.type) == [1])
            #expect(sent.first.map { $0.flags & 5 == 5 } == true)  // END_HEADERS and END_STREAM
            let r = try curl(server.port, "/meta.Meta/Deny", body: framed([1]))
            #expect(r.field("grpc-status") == "7" && r.field("grpc-message") == "Missing or insufficient permissions." && r.body.isEmpty)
        }
    }

    /// Each stream of a connection gets exactly its own fields, whether they are ones the connection
    /// shares strings for, near misses of those, or bytes that are not UTF-8 (repaired), and whether
    /// the block comes in one HEADERS frame or is continued (CONTINUATION); a block over the header
    /// list limit resets its stream only, and none of its fields reach the next stream.
    @Test func everyStreamGetsExactlyItsOwnFields() throws {
        try withGRPCServer([MetadataService()]) { server in
            let c = try RawSocket(port: server.port)
            let first: [(String, String)] = [("te", "trailers"), ("grpc-timeoux", "trailerz"), ("user-agent", "application/grpx"),
                                             ("authorization", "Bearer " + String(repeating: "k", count: 600))]
            let second: [(String, String)] = [("tf", "POSt"), ("x-goog-request-params", "database=projects/p/databases/(default)"),
                                              ("google-cloud-resource-prefix", "projects/p/databases/(default)")]
            func block(_ fields: [(String, String)]) -> [UInt8] {
                BadInputTests.requestHeaders("/meta.Meta/Fields") + fields.flatMap { Self.literal($0.0, $0.1) }
            }
            let one = block(first), split = one.count / 2
            let oversized = block([("x-big", String(repeating: "b", count: 17 << 10))])
            let bad = BadInputTests.requestHeaders("/meta.Meta/Fields") + [0x00, 0x05] + Array("x-raw".utf8) + [0x03, 0x61, 0xFF, 0x62]
            var bytes = preface + h2Frame(type: 4, flags: 0, stream: 0)
            // Stream 1: HEADERS without END_HEADERS, then CONTINUATION (type 9) with it.
            bytes += h2Frame(type: 1, flags: 0, stream: 1, Array(one[..<split])) + h2Frame(type: 9, flags: 4, stream: 1, Array(one[split...]))
            bytes += h2Frame(type: 0, flags: 1, stream: 1, framed([1]))
            // Stream 3: over the 16 KiB list limit (in frames of at most 16 KiB).
            bytes += h2Frame(type: 1, flags: 0, stream: 3, Array(oversized[..<(16 << 10)]))
                + h2Frame(type: 9, flags: 4, stream: 3, Array(oversized[(16 << 10)...]))
            bytes += h2Frame(type: 1, flags: 4, stream: 5, block(second)) + h2Frame(type: 0, flags: 1, stream: 5, framed([1]))
            bytes += h2Frame(type: 1, flags: 4, stream: 7, bad) + h2Frame(type: 0, flags: 1, stream: 7, framed([1]))
            c.send(bytes)
            let frames = h2Frames(BadInputTests.read(c, seconds: 1))
            func answer(_ stream: Int32) -> String? {
                frames.first { $0.type == 0 && $0.stream == stream }.map { String(decoding: $0.payload.dropFirst(5), as: UTF8.self) }
            }
            let expected = { (fields: [(String, String)]) in (["content-type=application/grpc"] + fields.map { "\($0.0)=\($0.1)" }).joined(separator: "\n") }
            #expect(answer(1) == expected(first))
            #expect(answer(3) == nil)
            #expect(frames.contains { $0.type == 3 && $0.stream == 3 })  // RST_STREAM
            #expect(answer(5) == expected(second))
            #expect(answer(7) == expected([("x-raw", "a\u{FFFD}b")]))
        }
    }

    /// The whole answer's trailers are the OK status, and `GRPCStatus.ok`'s fields are exactly that.
    @Test func okTrailersCarryStatusZeroOnly() throws {
        #expect(GRPCStatus.ok.trailerFields.map { "\($0.0)=\($0.1)" } == ["grpc-status=0"])
        #expect(GRPCStatus(.ok, "fine").trailerFields.map { "\($0.0)=\($0.1)" } == ["grpc-status=0", "grpc-message=fine"])
        try withGRPCServer([MetadataService()]) { server in
            let r = try curl(server.port, "/meta.Meta/Names", body: framed([1]))
            #expect(r.field("grpc-status") == "0" && r.field("grpc-message") == nil)
        }
    }
}
