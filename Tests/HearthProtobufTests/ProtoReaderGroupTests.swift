import Testing
@testable import HearthProtobuf

/// proto2 groups, as the Datastore EntityProto of Firestore emulator exports nests them.
struct ProtoReaderGroupTests {
    @Test func readsAGroupWithANestedGroupAndSkipsOne() throws {
        // field 1 group { field 2 "ab"; field 3 group { field 4 varint 7 } } then field 5 varint 9.
        let bytes: [UInt8] = [0x0B, 0x12, 0x02, 0x61, 0x62, 0x1B, 0x20, 0x07, 0x1C, 0x0C, 0x28, 0x09]
        var r = ProtoReader(bytes)
        let tag = try #require(try r.nextTag())
        #expect(tag.number == 1 && tag.wireType == ProtoReader.startGroup)
        var g = try r.readGroup(1)
        #expect(try g.nextTag()?.number == 2)
        #expect(try g.readString() == "ab")
        let inner = try #require(try g.nextTag())
        #expect(inner.number == 3 && inner.wireType == ProtoReader.startGroup)
        try g.skipField(number: 3, wireType: inner.wireType)
        #expect(try g.nextTag() == nil)
        #expect(try r.nextTag()?.number == 5)
        #expect(try r.readVarint() == 9)
        #expect(try r.nextTag() == nil)
    }

    @Test func refusesGroupsThatDoNotEndOrEndWrongly() throws {
        var open = ProtoReader([0x0B, 0x10, 0x01])
        _ = try open.nextTag()
        #expect(throws: ProtoDecodingError.self) { _ = try open.readGroup(1) }
        var wrong = ProtoReader([0x0B, 0x14])
        _ = try wrong.nextTag()
        #expect(throws: ProtoDecodingError.self) { _ = try wrong.readGroup(1) }
        var stray = ProtoReader([0x0C])
        let t = try #require(try stray.nextTag())
        #expect(throws: ProtoDecodingError.self) { try stray.skipField(number: t.number, wireType: t.wireType) }
    }

    @Test func deepGroupNestingStops() throws {
        let depth = ProtoReader.maxDepth + 5
        let bytes = [UInt8](repeating: 0x0B, count: depth) + [UInt8](repeating: 0x0C, count: depth)
        var r = ProtoReader(bytes)
        _ = try r.nextTag()
        #expect(throws: ProtoDecodingError.self) { _ = try r.readGroup(1) }
    }

    @Test func nextFieldStillRefusesGroups() throws {
        var r = ProtoReader([0x0B, 0x0C])
        #expect(throws: ProtoDecodingError.self) { _ = try r.nextField() }
    }
}
