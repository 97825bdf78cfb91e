import Foundation
import HearthCore
import HearthProtobuf
import Testing
@testable import FirestoreEmulator

/// The direct protobuf → `Write` decoder builds exactly the writes the general path (proto3 JSON
/// → `WriteParser`) builds, and leaves to the general path every request it would refuse or that
/// is not a plain form.
struct WriteProtoDecoderTests {
    static let db = DatabaseID(project: "p", database: "(default)")
    static let docs = "projects/p/databases/(default)/documents"

    static func value(_ kind: String, _ v: JSON) -> JSON { .object(JSONObject([(kind, v)])) }
    static func str(_ s: String) -> JSON { value("stringValue", .string(s)) }
    /// A vector value's wire map; `elements` are `Value`s (numbers become doubles).
    static func vector(_ elements: [JSON]) -> JSON {
        value("mapValue", .object(["fields": .object(JSONObject([
            ("__type__", str("__vector__")),
            ("value", value("arrayValue", .object(["values": .array(elements.map { e in
                if case .double = e { return value("doubleValue", e) }
                return e
            })]))),
        ]))]))
    }

    static func write(_ members: [(String, JSON)]) -> JSON { .object(JSONObject(members)) }

    static func update(_ name: String, _ fields: [(String, JSON)], extra: [(String, JSON)] = []) -> JSON {
        write([("update", .object(JSONObject([("name", .string(name)), ("fields", .object(JSONObject(fields)))])))] + extra)
    }

    /// The writes of a CommitRequest with `writes`, as protobuf.
    static func commit(_ writes: [JSON], transaction: String? = nil) -> [UInt8] {
        var m: [(String, JSON)] = [("database", .string("projects/p/databases/(default)")), ("writes", .array(writes))]
        if let transaction { m.append(("transaction", .string(transaction))) }
        return ProtoJSON.encode(JSONObject(m), FirestoreSchemas.v1 + "CommitRequest")
    }

    /// The general path's writes (what `directCommit` did before), or its error.
    static func general(_ bytes: [UInt8]) -> Result<[Write], FirestoreError> {
        WriteProtoDecoder(database: db).general(bytes)
    }

    static func direct(_ bytes: [UInt8]) -> [Write]? {
        guard let request = WriteProtoDecoder.commitRequest(bytes) else { return nil }
        return WriteProtoDecoder(database: db).writes(request.writes)
    }

    static let key = "users/u1/uploads/0f8fad5b-d9cb-469f-a165-70867728950e.jpg"

    /// Plain writes: the direct path takes each and agrees with the general one.
    static let plain: [(String, [JSON])] = [
        ("the bench's create", [update("\(docs)/users/u1/files/f1",
                                       [("ownerUid", str("u1")), ("storage", str("s3")), ("s3Key", str(key)),
                                        ("contentType", str("image/jpeg")), ("status", str("ready"))],
                                       extra: [("updateTransforms", .array([.object(JSONObject([("fieldPath", .string("createdAt")),
                                                                                              ("setToServerValue", .string("REQUEST_TIME"))]))])),
                                               ("currentDocument", .object(["exists": .bool(false)]))])]),
        ("every value kind", [update("\(docs)/c/d", [
            ("n", value("nullValue", .null)), ("b", value("booleanValue", .bool(true))),
            ("i", value("integerValue", .string("-9223372036854775808"))), ("d", value("doubleValue", .double(-2.5))),
            ("inf", value("doubleValue", .string("Infinity"))),
            ("t", value("timestampValue", .string("2024-02-29T12:34:56.123456Z"))),
            ("t0", value("timestampValue", .string("0001-01-01T00:00:00Z"))),
            ("s", str("héllo ✓")), ("empty", str("")), ("y", value("bytesValue", .string("AAEC/w=="))),
            ("g", value("geoPointValue", .object(["latitude": .double(-90), "longitude": .double(179.5)]))),
            ("a", value("arrayValue", .object(["values": .array([str("x"), value("integerValue", .string("1")),
                                                                   value("mapValue", .object(["fields": .object(["k": str("v")])]))])]))),
            ("ea", value("arrayValue", .object([:]))),
            ("m", value("mapValue", .object(["fields": .object(["inner": value("mapValue", .object(["fields": .object(["z": str("deep")])])),
                                                                 "with space": str("q")])]))),
            ("em", value("mapValue", .object([:]))),
            ("v", vector([.double(1.5), .double(-2)])),
            ("mv", value("mapValue", .object(["fields": .object(["inner": vector([.double(0.25)])])]))),
        ])]),
        ("a masked merge with an update time precondition", [update("\(docs)/c/d", [("a", str("1"))], extra: [
            ("updateMask", .object(["fieldPaths": .array([.string("a"), .string("b.c"), .string("`x y`")])])),
            ("currentDocument", .object(["updateTime": .string("2024-01-01T00:00:00.5Z")])),
        ])]),
        ("transforms of every kind", [update("\(docs)/c/d", [], extra: [("updateTransforms", .array([
            .object(JSONObject([("fieldPath", .string("t")), ("setToServerValue", .string("REQUEST_TIME"))])),
            .object(JSONObject([("fieldPath", .string("n")), ("increment", value("integerValue", .string("2")))])),
            .object(JSONObject([("fieldPath", .string("x")), ("maximum", value("doubleValue", .double(1.5)))])),
            .object(JSONObject([("fieldPath", .string("y")), ("minimum", value("integerValue", .string("-1")))])),
            .object(JSONObject([("fieldPath", .string("l")), ("appendMissingElements", .object(["values": .array([str("a"), str("b")])]))])),
            .object(JSONObject([("fieldPath", .string("r")), ("removeAllFromArray", .object(["values": .array([value("integerValue", .string("3"))])]))])),
            .object(JSONObject([("fieldPath", .string("n")), ("increment", value("integerValue", .string("1")))])),
        ]))])]),
        ("a delete with exists", [write([("delete", .string("\(docs)/c/d")), ("currentDocument", .object(["exists": .bool(true)]))])]),
        ("several writes, one naming another database", [
            update("\(docs)/c/a", [("k", str("1"))]),
            write([("delete", .string("projects/p/databases/other/documents/c/b"))]),
            update("\(docs)/c/a/sub/x", []),
        ]),
        ("no writes", []),
    ]

    @Test(arguments: plain.map(\.0))
    func plainWritesAgree(_ name: String) throws {
        let writes = try #require(Self.plain.first { $0.0 == name }).1
        let bytes = Self.commit(writes)
        let general = try Self.general(bytes).get()
        let direct = try #require(Self.direct(bytes), "the direct decoder fell back on a plain request")
        #expect(direct == general)
        #expect(direct.count == writes.count)
    }

    /// Requests the general path refuses (or that are not plain): the direct decoder leaves them to it.
    static let refused: [(String, [JSON])] = [
        ("a reserved field name", [update("\(docs)/c/d", [("__x__", str("1"))])]),
        ("a reserved name inside a map", [update("\(docs)/c/d", [("m", value("mapValue", .object(["fields": .object(["__y__": str("1")])])))])]),
        ("a collection name", [update("\(docs)/c", [("a", str("1"))])]),
        ("an empty name", [update("", [("a", str("1"))])]),
        ("another project's name shape", [update("projects/p/databases/(default)/docs/c/d", [])]),
        ("a value with no kind", [update("\(docs)/c/d", [("a", .object([:]))])]),
        ("an array in an array", [update("\(docs)/c/d", [("a", value("arrayValue", .object(["values": .array([value("arrayValue", .object([:]))])])))])]),
        ("a geo point out of range", [update("\(docs)/c/d", [("g", value("geoPointValue", .object(["latitude": .double(91)])))])]),
        ("a reference (left to the general path)", [update("\(docs)/c/d", [("r", value("referenceValue", .string("\(docs)/c/e")))])]),
        ("a transform of __name__", [update("\(docs)/c/d", [], extra: [("updateTransforms", .array([
            .object(JSONObject([("fieldPath", .string("__name__")), ("setToServerValue", .string("REQUEST_TIME"))]))]))])]),
        ("a field and its child transformed", [update("\(docs)/c/d", [], extra: [("updateTransforms", .array([
            .object(JSONObject([("fieldPath", .string("a")), ("setToServerValue", .string("REQUEST_TIME"))])),
            .object(JSONObject([("fieldPath", .string("a.b")), ("setToServerValue", .string("REQUEST_TIME"))])),
        ]))])]),
        ("an increment of a string", [update("\(docs)/c/d", [], extra: [("updateTransforms", .array([
            .object(JSONObject([("fieldPath", .string("n")), ("increment", str("1"))]))]))])]),
        ("a bad mask path", [update("\(docs)/c/d", [], extra: [("updateMask", .object(["fieldPaths": .array([.string("a..b")])]))])]),
        ("a delete with a mask", [write([("delete", .string("\(docs)/c/d")), ("updateMask", .object(["fieldPaths": .array([.string("a")])]))])]),
        ("a transform write", [write([("transform", .object(JSONObject([("document", .string("\(docs)/c/d")), ("fieldTransforms", .array([
            .object(JSONObject([("fieldPath", .string("n")), ("setToServerValue", .string("REQUEST_TIME"))]))]))])))])]),
        ("an empty write", [write([])]),
        ("a vector of integers", [update("\(docs)/c/d", [("v", vector([value("integerValue", .string("1"))]))])]),
        ("a vector in an array", [update("\(docs)/c/d", [("a", value("arrayValue", .object(["values": .array([vector([.double(1)])])])))])]),
        ("a vector holding NaN", [update("\(docs)/c/d", [("v", vector([value("doubleValue", .string("NaN"))]))])]),
        ("a map typed as something else", [update("\(docs)/c/d", [("m", value("mapValue", .object(["fields": .object(["__type__": str("x")])])))])]),
    ]

    @Test(arguments: refused.map(\.0))
    func otherRequestsFallBack(_ name: String) throws {
        let writes = try #require(Self.refused.first { $0.0 == name }).1
        let bytes = Self.commit(writes)
        #expect(Self.direct(bytes) == nil)
        // Only the reference is valid; the general path refuses every other case.
        if name.hasPrefix("a reference") || name == "a transform write" {
            _ = try Self.general(bytes).get()
        } else {
            #expect(throws: FirestoreError.self) { try Self.general(bytes).get() }
        }
    }

    /// Wire forms ProtoJSON never writes: nanoseconds truncated to microseconds as the general
    /// path's text round trip truncates them, and a field given twice left to the general path.
    @Test func handWrittenWireForms() throws {
        func request(_ body: (inout ProtoWriter) -> Void) -> [UInt8] {
            var w = ProtoWriter()
            w.string(1, "projects/p/databases/(default)")
            w.message(2) { write in
                write.message(1) { doc in
                    doc.string(1, "\(Self.docs)/c/d")
                    doc.message(2) { entry in
                        entry.string(1, "t")
                        entry.message(2) { v in body(&v) }
                    }
                }
            }
            return w.bytes
        }
        let nanos = request { v in v.message(10) { t in t.int64(1, 1_700_000_000); t.int64(2, 123_456_789) } }
        let direct = try #require(Self.direct(nanos))
        #expect(direct == (try Self.general(nanos).get()))
        guard case .update(let fields, _) = direct[0].operation else { Issue.record("not an update"); return }
        #expect(fields["t"] == .timestamp(Instant(unixMicros: 1_700_000_000_123_456)))

        // Out-of-range nanos and two kinds in one Value: the general path decides.
        #expect(Self.direct(request { v in v.message(10) { t in t.int64(1, 5); t.int64(2, -1) } }) == nil)
        #expect(Self.direct(request { v in v.string(17, "a"); v.int64(2, 1) }) == nil)
        #expect(Self.direct([0xFF, 0xFF]) == nil)
    }

    /// The transaction id comes through as the REST body's base64 form; an empty one falls back.
    @Test func transactionID() throws {
        let id = Data([1, 2, 3, 250]).base64EncodedString()
        let request = try #require(WriteProtoDecoder.commitRequest(Self.commit([], transaction: id)))
        #expect(request.transaction == (try RequestContext.transactionID(id)))
        var w = ProtoWriter()
        w.bytes(3, [UInt8]())
        #expect(WriteProtoDecoder.commitRequest(w.bytes) == nil)
    }

    /// A Write-stream request decodes to the same session request either way.
    @Test func writeStreamRequest() throws {
        let json = JSONObject([("database", .string("projects/p/databases/(default)")), ("streamId", .string("s1")),
                               ("streamToken", .string(Data([9, 8]).base64EncodedString())),
                               ("writes", .array([Self.update("\(Self.docs)/c/d", [("a", Self.str("x"))])]))])
        let bytes = ProtoJSON.encode(json, FirestoreSchemas.v1 + "WriteRequest")
        let direct = try #require(FirestoreGRPCService.directWrite(bytes, nil))
        let o = try ProtoJSON.decode(bytes, FirestoreSchemas.v1 + "WriteRequest")
        let general = try WriteParser(database: Self.db).parseWrite(try ProtoObject(json: #require(o["writes"]?.arrayValue?.first), path: "writes[0]"))
        #expect(direct.database == "projects/p/databases/(default)")
        #expect(direct.streamID == "s1")
        #expect(direct.streamToken == [9, 8])
        #expect(direct.writes == [general])
        // A bad database name with writes: the general path reports it.
        let bad = ProtoJSON.encode(JSONObject([("database", .string("nope")), ("writes", .array([Self.update("\(Self.docs)/c/d", [])]))]),
                                   FirestoreSchemas.v1 + "WriteRequest")
        #expect(FirestoreGRPCService.directWrite(bad, nil) == nil)
    }
}

