import Foundation
import HearthCore
import HearthProtobuf
import Testing
@testable import FirestoreEmulator

/// The direct encoders write the same bytes as the general path (the REST JSON re-read as protobuf),
/// so the hot calls that use them answer exactly what every other call would.
struct DocumentProtoTests {
    let db = DatabaseID(project: "p", database: "(default)")

    /// Every value type, the edge values of each, nesting and keys that sort differently by bytes.
    static let fields: [ExactString: FirestoreValue] = [
        "n": .integer(-5), "big": .integer(.max), "small": .integer(.min), "zero": .integer(0),
        "f": .double(1.5), "whole": .double(2), "negZero": .double(-0.0), "inf": .double(.infinity),
        "ninf": .double(-.infinity), "nan": .double(.nan), "tiny": .double(.leastNonzeroMagnitude), "huge": .double(1e300),
        "s": .string("héllo \"quoted\" \n\u{2028}"), "empty": .string(""), "b": .bytes([0, 0xFF, 1]), "noBytes": .bytes([]),
        "z": .null, "yes": .boolean(true), "no": .boolean(false),
        "t": .timestamp(Instant(unixMicros: 1_700_000_000_123_456)), "epoch": .timestamp(Instant(unixMicros: 0)),
        "old": .timestamp(Instant(unixMicros: -1_500_000)), "ms": .timestamp(Instant(unixMicros: 1_000)),
        "g": .geoPoint(latitude: 1.5, longitude: -2), "g0": .geoPoint(latitude: 0, longitude: 0),
        "r": .reference("projects/p/databases/(default)/documents/c/e"),
        "a": .array([.boolean(true), .string(""), .array([]), .map([:])]), "noItems": .array([]),
        "m": .map(["inner": .map(["deep": .integer(1)]), "B": .null, "a": .double(0.1)]), "noMembers": .map([:]),
        "Z": .integer(1), "é": .integer(2), "10": .integer(3), "9": .integer(4),
        "v": .vector([1.5, -0.0, 1e300]), "mv": .map(["inner": .vector([0.25])]),
    ]

    /// What the general path answers: the REST JSON of the document, parsed, encoded by the schemas.
    func general(_ doc: StoredDocument) throws -> [UInt8] {
        var w = JSONWriter()
        w.document(doc, in: db)
        guard case .object(let o) = try JSON.parse(w.bytes) else { throw FirestoreError.internal("not an object") }
        return ProtoJSON.encode(o, FirestoreSchemas.v1 + "Document")
    }

    @Test func aDocumentEncodesAsTheGeneralPathEncodesIt() throws {
        let doc = StoredDocument(path: ResourcePath(["users", "u1", "files", "f 1%/é"]), fields: Self.fields,
                                 createTime: Instant(unixMicros: 1_000_001), updateTime: Instant(unixMicros: 2_000_000))
        #expect(DocumentProto.document(doc, in: db) == (try general(doc)))
    }

    @Test func anEmptyDocumentEncodesAsTheGeneralPathEncodesIt() throws {
        let doc = StoredDocument(path: ResourcePath(["c", "d"]), fields: [:],
                                 createTime: Instant(unixMicros: 5), updateTime: Instant(unixMicros: 5))
        #expect(DocumentProto.document(doc, in: db) == (try general(doc)))
    }

    @Test func aCommitResponseEncodesAsTheGeneralPathEncodesIt() throws {
        let results: [FirestoreService.WriteOutcome] = [
            .init(updateTime: Instant(unixMicros: 1_700_000_000_000_001), transformResults: [], document: nil),
            .init(updateTime: nil, transformResults: [], document: nil),
            .init(updateTime: Instant(unixMicros: 3), transformResults: [.timestamp(Instant(unixMicros: 3)), .integer(7), .null],
                  document: nil),
        ]
        let commitTime = Instant(unixMicros: 1_700_000_000_000_001)
        var o: [(String, JSON)] = [("writeResults", .array(results.map(FirestoreHTTPService.writeResultJSON)))]
        o.append(("commitTime", .string(ValueJSON.formatTimestamp(commitTime))))
        var w = JSONWriter()
        w.json(.object(JSONObject(o)))
        guard case .object(let parsed) = try JSON.parse(w.bytes) else { Issue.record("not an object"); return }
        #expect(DocumentProto.commitResponse(commitTime: commitTime, results: results)
                == ProtoJSON.encode(parsed, FirestoreSchemas.v1 + "CommitResponse"))
        // No writes, no commit time (an empty message), as Firestore answers.
        #expect(DocumentProto.commitResponse(commitTime: commitTime, results: []) == [])
    }

    /// Write-stream answers: the handshake (no results, no commit time), commits with and without
    /// transform results of every value type, a delete's result, an empty token.
    @Test func aWriteResponseEncodesAsTheGeneralPathEncodesIt() {
        let t = Instant(unixMicros: 1_700_000_000_123_456)
        let responses: [WriteStreamSession.Response] = [
            .init(streamID: "s1", streamToken: [1, 2, 0xFF], commitTime: nil, results: []),
            .init(streamID: "s1", streamToken: [0x31], commitTime: t, results: [.init(updateTime: t, transformResults: [])]),
            .init(streamID: "", streamToken: [], commitTime: Instant(unixMicros: 0), results: [
                .init(updateTime: Instant(unixMicros: -1_500_000), transformResults: Self.fields.keys.sorted().map { Self.fields[$0]! }),
                .init(updateTime: Instant(unixMicros: 3), transformResults: [.timestamp(t), .integer(7), .null]),
            ]),
        ]
        for r in responses {
            #expect(FirestoreGRPCService.encodeWrite(r) == FirestoreGRPCService.encodeWriteThroughJSON(r))
        }
    }

    @Test func plainNamesSplitAsTheRouterSplitsThem() {
        let (db, path) = RESTBridge.plainName("projects/p/databases/(default)/documents/users/u/files/f") ?? (self.db, .root)
        #expect(db == self.db && path.segments == ["users", "u", "files", "f"])
        #expect(RESTBridge.plainName("projects/p/databases/(default)/documents")?.1.segments == [])
        // Forms the router answers with its own errors stay on the general path.
        for name in ["", "projects/p/databases/(default)", "projects//databases/d/documents/c/d",
                     "projects/p/databases/d/documents//c/d", "projects/p/databases/d/documents/c/d/",
                     "project/p/databases/d/documents/c/d", "projects/p/databases/d/docs/c/d"] {
            #expect(RESTBridge.plainName(name) == nil, "\(name)")
        }
    }
}
