import Testing
@testable import HearthProtobuf

/// The reader against the encoding guide's vectors, and every malformed input it must refuse.
struct ProtoReaderTests {
    @Test func readsTheGuidesExample() throws {
        // https://protobuf.dev/programming-guides/encoding/: `message Test1 { int32 a = 1; }` with a = 150.
        var r = ProtoReader([0x08, 0x96, 0x01])
        let field = try #require(try r.nextField())
        #expect(field.number == 1 && field.wireType == .varint)
        #expect(try r.readVarint() == 150)
        #expect(try r.nextField() == nil)
    }

    @Test func readsStringsNestedMessagesAndFixedWidths() throws {
        var w = ProtoWriter()
        w.string(2, "testing")
        w.message(3) { w in w.int64(1, -1) }
        w.double(4, 1.5)
        w.fixed32(5, 0xDEADBEEF)
        var r = ProtoReader(w.bytes)
        #expect(try r.nextField()?.number == 2)
        #expect(try r.readString() == "testing")
        #expect(try r.nextField()?.number == 3)
        var nested = try r.readMessage()
        #expect(nested.depth == 1)
        #expect(try nested.nextField()?.number == 1)
        #expect(Int64(bitPattern: try nested.readVarint()) == -1)
        #expect(try nested.nextField() == nil)
        #expect(try r.nextField()?.wireType == .fixed64)
        #expect(Double(bitPattern: try r.readFixed64()) == 1.5)
        #expect(try r.nextField()?.wireType == .fixed32)
        #expect(try r.readFixed32() == 0xDEADBEEF)
        #expect(r.isAtEnd)
    }

    @Test func readsPackedAndUnpackedRepeatedVarints() throws {
        var w = ProtoWriter()
        w.packedVarints(5, [1, 300, 2])
        w.uint64(5, 7)
        var r = ProtoReader(w.bytes)
        var all: [UInt64] = []
        while let (_, type) = try r.nextField() { all += try r.readVarints(type) }
        #expect(all == [1, 300, 2, 7])
    }

    @Test func skipsUnknownFieldsOfEveryWireType() throws {
        var w = ProtoWriter()
        w.uint64(1, 1)
        w.fixed64(2, 2)
        w.bytes(3, [1, 2, 3])
        w.fixed32(4, 4)
        w.string(9, "kept")
        var r = ProtoReader(w.bytes)
        var kept: String?
        while let (number, type) = try r.nextField() {
            if number == 9 { kept = try r.readString() } else { try r.skip(type) }
        }
        #expect(kept == "kept")
    }

    @Test func zigzagRoundTrips() throws {
        for v: Int64 in [0, -1, 1, -2, .max, .min] {
            var w = ProtoWriter()
            w.sint64(1, v)
            var r = ProtoReader(w.bytes)
            _ = try r.nextField()
            #expect(ProtoReader.zigzag(try r.readVarint()) == v)
        }
    }

    @Test func longNestedMessagesGetAWiderLength() throws {
        let long = String(repeating: "x", count: 20_000)
        var w = ProtoWriter()
        w.message(1) { w in w.string(1, long) }
        var r = ProtoReader(w.bytes)
        _ = try r.nextField()
        var nested = try r.readMessage()
        _ = try nested.nextField()
        #expect(try nested.readString() == long)
        #expect(r.isAtEnd)
    }

    /// Inputs that lie, with the offset each error must name.
    @Test(arguments: [
        ("truncated varint", [0x08, 0x96] as [UInt8], 1),
        ("eleven-byte varint", [0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01], 1),
        ("varint over 64 bits", [0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x02], 1),
        ("length past the end", [0x12, 0x05, 0x61], 1),
        ("huge length", [0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], 1),
        ("truncated fixed64", [0x09, 1, 2, 3], 1),
        ("truncated fixed32", [0x0D, 1], 1),
        ("group wire type", [0x0B], 0),
        ("field number zero", [0x00, 0x01], 0),
        ("invalid UTF-8", [0x12, 0x02, 0xC3, 0x28], 1),
    ])
    func refusesMalformedInput(_ name: String, _ bytes: [UInt8], _ offset: Int) {
        var r = ProtoReader(bytes)
        do {
            while let (number, type) = try r.nextField() {
                if number == 2 && type == .lengthDelimited { _ = try r.readString() } else { try r.skip(type) }
            }
            Issue.record("\(name): accepted")
        } catch {
            #expect(error.offset == offset, "\(name): \(error)")
        }
    }

    @Test func nestingDeeperThanTheLimitIsAnError() {
        // Build 101 nested empty messages from the inside out.
        var bytes: [UInt8] = []
        for _ in 0...ProtoReader.maxDepth {
            var w = ProtoWriter()
            w.bytes(1, bytes)
            bytes = w.bytes
        }
        func descend(_ r: inout ProtoReader) throws(ProtoDecodingError) {
            while let (_, _) = try r.nextField() {
                var nested = try r.readMessage()
                try descend(&nested)
            }
        }
        var r = ProtoReader(bytes)
        #expect(throws: ProtoDecodingError.self) { try descend(&r) }
    }

    @Test func randomBytesNeverCrash() {
        // A deterministic generator: the same inputs every run.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<5_000 {
            var bytes: [UInt8] = []
            state = state &* 6364136223846793005 &+ 1442695040888963407
            for _ in 0..<Int(state >> 58) {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                bytes.append(UInt8(truncatingIfNeeded: state >> 33))
            }
            var r = ProtoReader(bytes)
            while let (_, type) = try? r.nextField() {
                if (try? r.skip(type)) == nil { break }
            }
        }
    }
}
