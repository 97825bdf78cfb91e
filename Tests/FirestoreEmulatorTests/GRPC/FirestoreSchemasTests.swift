import Foundation
import HearthCore
import HearthProtobuf
import Testing
@testable import FirestoreEmulator

/// The message schemas and encoders against `protoc`: requests encoded by protoc decode into the
/// JSON the REST parsers read, and what Hearth encodes decodes in protoc as the protos define it.
@Suite(.enabled(if: Protoc.available, Protoc.skipReason))
struct FirestoreSchemasTests {
    let db = DatabaseID(project: "p", database: "(default)")

    @Test func everyReferencedMessageHasASchema() {
        for schema in FirestoreSchemas.all.values {
            for field in schema.fields.values {
                if case .message(let name) = field.kind { #expect(FirestoreSchemas.all[name] != nil, "\(schema.name).\(field.json) → \(name)") }
            }
        }
    }

    @Test func aCommitRequestFromProtocParsesLikeItsJSON() throws {
        let text = """
        database: "projects/p/databases/(default)"
        writes {
          update {
            name: "projects/p/databases/(default)/documents/c/d"
            fields { key: "n" value { integer_value: -5 } }
            fields { key: "f" value { double_value: 1.5 } }
            fields { key: "s" value { string_value: "héllo" } }
            fields { key: "b" value { bytes_value: "\\001\\002" } }
            fields { key: "z" value { null_value: NULL_VALUE } }
            fields { key: "t" value { timestamp_value { seconds: 1700000000 nanos: 123456789 } } }
            fields { key: "g" value { geo_point_value { latitude: 1.5 longitude: -2 } } }
            fields { key: "a" value { array_value { values { boolean_value: true } values { string_value: "" } } } }
            fields { key: "m" value { map_value { fields { key: "inner" value { reference_value: "projects/p/databases/(default)/documents/c/e" } } } } }
          }
          update_mask { field_paths: "n" field_paths: "m.inner" }
          update_transforms { field_path: "x" increment { integer_value: 2 } }
          update_transforms { field_path: "y" set_to_server_value: REQUEST_TIME }
          current_document { exists: false }
        }
        writes { delete: "projects/p/databases/(default)/documents/c/old" current_document { update_time { seconds: 5 } } }
        transaction: "\\x01\\x02\\x03"
        """
        let bytes = try Protoc.encode("google.firestore.v1.CommitRequest", text)
        let json = try ProtoJSONDecoder.decode(bytes, as: "google.firestore.v1.CommitRequest")
        #expect(json["transaction"] == .string("AQID"))
        let writes = try (json["writes"]?.arrayValue ?? []).enumerated().map { i, w in
            try WriteParser(database: db).parseWrite(try ProtoObject(json: w, path: "writes[\(i)]"))
        }
        #expect(writes.count == 2)
        guard case .update(let fields, let mask) = writes[0].operation else { Issue.record("not an update"); return }
        #expect(fields["n"] == .integer(-5))
        #expect(fields["f"] == .double(1.5))
        #expect(fields["s"] == .string("héllo"))
        #expect(fields["b"] == .bytes([1, 2]))
        #expect(fields["z"] == .null)
        #expect(fields["t"] == .timestamp(Instant(unixMicros: 1_700_000_000_123_456)))
        #expect(fields["g"] == .geoPoint(latitude: 1.5, longitude: -2))
        #expect(fields["a"] == .array([.boolean(true), .string("")]))
        #expect(fields["m"] == .map(["inner": .reference("projects/p/databases/(default)/documents/c/e")]))
        #expect(mask?.map(\.canonical) == ["n", "m.inner"])
        #expect(writes[0].transforms.count == 2)
        #expect(writes[0].precondition == Precondition(exists: false, updateTime: nil))
        #expect(writes[1].isDelete)
        #expect(writes[1].precondition == Precondition(exists: nil, updateTime: Instant(unixSeconds: 5)))
    }

    @Test func aRunQueryRequestFromProtocParsesLikeItsJSON() throws {
        let text = """
        parent: "projects/p/databases/(default)/documents"
        structured_query {
          from { collection_id: "cities" all_descendants: true }
          where { composite_filter { op: OR filters { field_filter { field { field_path: "pop" } op: GREATER_THAN value { integer_value: 5 } } }
                                          filters { unary_filter { op: IS_NAN field { field_path: "x" } } } } }
          order_by { field { field_path: "pop" } direction: DESCENDING }
          start_at { values { integer_value: 100 } before: true }
          offset: 1
          limit { value: 3 }
          select { fields { field_path: "pop" } }
        }
        read_time { seconds: 10 }
        """
        let bytes = try Protoc.encode("google.firestore.v1.RunQueryRequest", text)
        let o = ProtoObject(try ProtoJSONDecoder.decode(bytes, as: "google.firestore.v1.RunQueryRequest"), path: "")
        let q = try QueryParser(database: db, parent: .root).parse(try #require(try o.object("structuredQuery")))
        #expect(q.limit == 3)
        #expect(q.offset == 1)
        #expect(q.projection?.map(\.canonical) == ["pop"])
        #expect(o.members["readTime"] == .string("1970-01-01T00:00:10Z"))
    }

    @Test func theLastOneofMemberOnTheWireWins() throws {
        var w = ProtoWriter()
        w.message(1) { w in
            w.string(17, "first")
            w.int64(2, 7)
        }
        let json = try ProtoJSONDecoder.decode(w.bytes, as: "google.firestore.v1.ArrayValue")
        #expect(json["values"] == .array([.object(["integerValue": .string("7")])]))
    }

    @Test func aMessageThatLiesAboutItsLengthIsInvalidArgumentWithAnOffset() {
        // CommitRequest.writes (field 2) claiming 200 bytes with 3 present.
        #expect(throws: FirestoreError.invalidArgument("Invalid protobuf payload received: length 200 runs past the end of the message at byte 1.")) {
            try ProtoJSONDecoder.decode([0x12, 0xC8, 0x01, 1, 2, 3], as: "google.firestore.v1.CommitRequest")
        }
    }

    @Test func anEncodedDocumentDecodesInProtoc() throws {
        let doc = StoredDocument(path: ResourcePath(["c", "d"]), fields: [
            "n": .integer(-5), "f": .double(.infinity), "s": .string("x"), "b": .bytes([0xFF]), "z": .null,
            "t": .timestamp(Instant(unixMicros: 1_500_000)), "g": .geoPoint(latitude: 1, longitude: 0),
            "a": .array([.boolean(false)]), "m": .map(["k": .reference("projects/p/databases/(default)/documents/c/e")]),
        ], createTime: Instant(unixMicros: 1_000_001), updateTime: Instant(unixMicros: 2_000_000))
        let text = try Protoc.decode("google.firestore.v1.Document", FirestoreProto.encodeDocument(doc, in: db))
        for expected in [
            #"name: "projects/p/databases/(default)/documents/c/d""#, "integer_value: -5", "double_value: inf",
            #"string_value: "x""#, #"bytes_value: "\377""#, "null_value: NULL_VALUE", "seconds: 1\n", "nanos: 500000000",
            "latitude: 1", "boolean_value: false", #"reference_value: "projects/p/databases/(default)/documents/c/e""#,
            "nanos: 1000", "seconds: 2",
        ] {
            #expect(text.contains(expected), "\(expected) not in \(text)")
        }
        // And back through Hearth's own decoder and the REST value parser.
        let json = try ProtoJSONDecoder.decode(FirestoreProto.encodeDocument(doc, in: db), as: "google.firestore.v1.Document")
        let (_, fields) = try WriteParser(database: db).parseDocument(ProtoObject(json, path: ""), requireName: false)
        #expect(fields["f"] == .double(.infinity))
        #expect(fields == doc.fields.filter { $0.key != "f" }.merging(["f": .double(.infinity)]) { a, _ in a })
    }

    @Test func listenResponsesDecodeInProtoc() throws {
        let change = try Protoc.decode("google.firestore.v1.ListenResponse",
                                       FirestoreProto.targetChange(.remove, targetIDs: [0x5079], cause: .permissionDenied("denied"),
                                                                   resumeToken: [1], readTime: Instant(unixSeconds: 3)))
        for expected in ["target_change_type: REMOVE", "target_ids: 20601", "code: 7", #"message: "denied""#, "seconds: 3"] {
            #expect(change.contains(expected), "\(expected) not in \(change)")
        }
        let write = try Protoc.decode("google.firestore.v1.WriteResponse",
                                      FirestoreGRPCService.encodeWrite(.init(streamID: "3", streamToken: [0x31],
                                                                   commitTime: Instant(unixSeconds: 9),
                                                                   results: [.init(updateTime: Instant(unixSeconds: 9), transformResults: [.integer(1)])])))
        for expected in [#"stream_id: "3""#, #"stream_token: "1""#, "integer_value: 1", "seconds: 9"] {
            #expect(write.contains(expected), "\(expected) not in \(write)")
        }
    }

    @Test func aListenRequestFromProtocDecodes() throws {
        let text = """
        database: "projects/p/databases/(default)"
        add_target { query { parent: "projects/p/databases/(default)/documents" structured_query { from { collection_id: "rooms" } } }
                     target_id: 20601 resume_token: "\\001" expected_count { value: 4 } }
        labels { key: "goog-listen-tags" value: "limbo-document" }
        """
        let (database, action) = try FirestoreGRPCService.decodeListen(try Protoc.encode("google.firestore.v1.ListenRequest", text))
        #expect(database == "projects/p/databases/(default)")
        guard case .add(let t)? = action else { Issue.record("no target"); return }
        #expect(t.id == 20601 && t.resumeToken == [1] && t.expectedCount == 4)
        guard case .query(let q) = t.kind else { Issue.record("not a query"); return }
        #expect(q.parent.segments.isEmpty && q.collectionID == "rooms")
    }

    /// A target that cannot be listened to is refused by itself, with its id, not the stream.
    @Test(arguments: [
        #"documents { documents: "projects/p/databases/(default)/documents/rooms" }"#,
        #"query { parent: "projects/p/databases/(default)/documents" structured_query { from { collection_id: "r" } limit { value: -1 } } }"#,
        "",
    ])
    func aListenRequestWithABadTargetDecodesToARejection(_ body: String) throws {
        let text = #"database: "projects/p/databases/(default)" add_target { target_id: 9 "# + body + " }"
        let (_, action) = try FirestoreGRPCService.decodeListen(try Protoc.encode("google.firestore.v1.ListenRequest", text))
        guard case .reject(let id, let error)? = action else { Issue.record("not rejected: \(String(describing: action))"); return }
        #expect(id == 9 && error.status == "INVALID_ARGUMENT")
    }
}

/// Nesting limits of the gRPC decoder; no protoc needed, so outside the suite above.
struct ProtoJSONDepthTests {
    @Test func valuesNestedBeyondTheLimitAreRefusedNotRecursedInto() throws {
        var value = ProtoWriter()
        value.bool(1, true)
        for _ in 0..<200 {
            var outer = ProtoWriter()
            outer.message(6) { m in m.message(1) { e in e.string(1, "a"); e.encodedMessage(2, value.bytes) } }  // {"a": value}
            value = outer
        }
        var doc = ProtoWriter()
        doc.message(2) { w in
            w.string(1, "deep")
            w.encodedMessage(2, value.bytes)
        }
        // The value is read down to the first level Firestore refuses, no deeper (a value 21 maps
        // deep overflowed an HTTP/2 loop's stack in a debug build); the values' check refuses it.
        let json = try ProtoJSONDecoder.decode(doc.bytes, as: "google.firestore.v1.Document")
        var level = json["fields"]?["deep"]
        var levels = 0
        while let inner = level?["mapValue"]?["fields"]?["a"] { level = inner; levels += 1 }
        #expect(levels == ValueJSON.maxDepth + 1 && level == .object(ProtoJSON.tooDeepValue))
        #expect(throws: FirestoreError.invalidArgument("Property deep contains an invalid nested entity.")) {
            try ValueJSON.decodeFields(json["fields"], path: "document.fields")
        }
    }

    @Test func messagesNestedPastTheReadersLimitAreRefused() {
        // Filters nested 60 deep: 120 messages, past `ProtoReader.maxDepth`.
        var filter = ProtoWriter()
        filter.message(3) { u in u.int64(1, 3); u.message(2) { f in f.string(2, "v") } }  // unary IS_NULL
        for _ in 0..<60 {
            var outer = ProtoWriter()
            outer.message(1) { c in c.int64(1, 1); c.encodedMessage(2, filter.bytes) }
            filter = outer
        }
        var query = ProtoWriter()
        query.encodedMessage(3, filter.bytes)
        #expect(throws: FirestoreError.self) { try ProtoJSONDecoder.decode(query.bytes, as: "google.firestore.v1.StructuredQuery") }
    }
}

/// The names these tests were written against, over the adapter's codec.
enum ProtoJSONDecoder {
    static func decode(_ bytes: [UInt8], as name: String) throws(FirestoreError) -> JSONObject {
        try ProtoJSON.decode(bytes, name)
    }
}

enum FirestoreProto {
    static func encodeDocument(_ doc: StoredDocument, in db: DatabaseID) -> [UInt8] {
        ProtoJSON.encode(FirestoreGRPCService.document(doc, db).objectValue ?? JSONObject(), "google.firestore.v1.Document")
    }

    static func targetChange(_ kind: ListenEvent.TargetChangeKind, targetIDs: [Int32], cause: FirestoreError?,
                             resumeToken: [UInt8]?, readTime: Instant?) -> [UInt8] {
        FirestoreGRPCService.encodeListen(.targetChange(kind, targetIDs: targetIDs, cause: cause, readTime: readTime,
                                                        resumeToken: resumeToken), DatabaseID(project: "p", database: "(default)"))
    }
}
