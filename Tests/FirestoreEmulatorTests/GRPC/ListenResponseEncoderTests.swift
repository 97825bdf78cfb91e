import Foundation
import HearthCore
import HearthGRPC
import Testing
@testable import FirestoreEmulator

/// The Listen responses written straight as protobuf are the ones the schemas make from their JSON
/// form, for every event kind, and a document's shared bytes follow its version.
struct ListenResponseEncoderTests {
    let db = DatabaseID(project: "p", database: "(default)")
    static let listen = FirestoreSchemas.v1 + "ListenResponse"

    func ts(_ t: Instant) -> JSON { .string(ValueJSON.formatTimestamp(t)) }
    func ids(_ a: [Int32]) -> JSON { .array(a.map { .int(Int64($0)) }) }

    /// The JSON form of one response, encoded by the schemas (zero scalars left out: proto3 does
    /// not write defaults, and Firestore's NO_CHANGE has no target change type on the wire).
    func general(_ event: ListenEvent) -> [UInt8] {
        let response: JSONObject
        switch event {
        case .targetChange(let kind, let targetIDs, let cause, let readTime, let token):
            var m: [(String, JSON)] = [("targetIds", ids(targetIDs))]
            if kind != .noChange { m.append(("targetChangeType", .int(Int64(kind.rawValue)))) }
            if let cause { m.append(("cause", .object(["code": .int(cause.grpcCode), "message": .string(cause.message)]))) }
            if let token { m.append(("resumeToken", .string(Data(token).base64EncodedString()))) }
            if let readTime { m.append(("readTime", ts(readTime))) }
            response = JSONObject([("targetChange", .object(JSONObject(m)))])
        case .documentChange(let doc, let targetIDs):
            response = JSONObject([("documentChange", .object(JSONObject([("document", FirestoreGRPCService.document(doc, db)),
                                                                          ("targetIds", ids(targetIDs))])))])
        case .documentDelete(let path, let removed, let readTime):
            response = JSONObject([("documentDelete", .object(JSONObject([("document", .string(db.name(of: path))),
                                                                          ("removedTargetIds", ids(removed)), ("readTime", ts(readTime))])))])
        case .documentRemove(let path, let removed, let readTime):
            response = JSONObject([("documentRemove", .object(JSONObject([("document", .string(db.name(of: path))),
                                                                          ("removedTargetIds", ids(removed)), ("readTime", ts(readTime))])))])
        case .existenceFilter(let target, let count, let bloom):
            var f: [(String, JSON)] = [("targetId", .int(Int64(target)))]
            if count != 0 { f.append(("count", .int(Int64(count)))) }
            if let bloom {
                let bits = JSONObject([("bitmap", .string(Data(bloom.bitmap).base64EncodedString())), ("padding", .int(Int64(bloom.padding)))])
                f.append(("unchangedNames", .object(JSONObject([("bits", .object(bits)), ("hashCount", .int(Int64(bloom.hashCount)))]))))
            }
            response = JSONObject([("filter", .object(JSONObject(f)))])
        case .end:
            return []
        }
        return ProtoJSON.encode(response, Self.listen)
    }

    static let t = Instant(unixMicros: 1_700_000_000_123_456)
    static let doc = StoredDocument(path: ResourcePath(["users", "u1", "files", "f é"]), fields: DocumentProtoTests.fields.filter { $0.key != "nan" },
                                    createTime: Instant(unixMicros: 1_000_001), updateTime: t)

    static let events: [ListenEvent] = [
        .targetChange(.noChange, targetIDs: [], cause: nil, readTime: t, resumeToken: [1, 2, 3]),
        .targetChange(.add, targetIDs: [1], cause: nil, readTime: nil, resumeToken: nil),
        .targetChange(.current, targetIDs: [7, 1_000_000, -3], cause: nil, readTime: Instant(unixMicros: 5_000_000), resumeToken: [0xFF]),
        .targetChange(.remove, targetIDs: [2], cause: .permissionDenied("Missing or insufficient permissions."), readTime: nil, resumeToken: nil),
        .targetChange(.reset, targetIDs: [2], cause: nil, readTime: t, resumeToken: nil),
        .documentChange(doc, targetIDs: [1, 2]),
        .documentChange(StoredDocument(path: ResourcePath(["c", "empty"]), fields: [:], createTime: t, updateTime: t), targetIDs: [300]),
        .documentDelete(ResourcePath(["c", "gone"]), removedTargetIDs: [4], readTime: t),
        .documentRemove(ResourcePath(["c", "left"]), removedTargetIDs: [4, 5], readTime: t),
        .existenceFilter(targetID: 3, count: 2, unchangedNames: BloomFilter(["projects/p/databases/(default)/documents/c/a", "x"])),
        .existenceFilter(targetID: 3, count: 0, unchangedNames: nil),
    ]

    @Test(arguments: events.indices) func aResponseDecodesAsItsJSONFormEncodes(_ i: Int) throws {
        let event = Self.events[i]
        let direct = ListenResponseEncoder().encode(event, db)
        // Field order may differ; the decoded messages may not.
        let a = try ProtoJSON.decode(direct, Self.listen), b = try ProtoJSON.decode(general(event), Self.listen)
        #expect(a == b, "\(a) vs \(b)")
    }

    /// What a stream's pass on its connection sends: each event's response, framed, in order
    /// (document changes written straight into the batch), and nothing for `.end`.
    @Test func aBatchHoldsEachResponseAsEncodeMakesIt() throws {
        let encoder = ListenResponseEncoder()
        var batch = GRPCMessageBatch()
        for e in Self.events + [.end(.internal("gone"))] + Self.events { encoder.encode(e, db, into: &batch) }
        var got: [[UInt8]] = []
        batch.forEachMessage { got.append(Array($0)) }
        let one = Self.events.map { ListenResponseEncoder().encode($0, db) }
        #expect(batch.count == 2 * Self.events.count)
        #expect(got == one + one)
    }

    @Test func aDocumentVersionIsEncodedOnceAndANewVersionAgain() throws {
        let encoder = ListenResponseEncoder()
        let first = encoder.encode(.documentChange(Self.doc, targetIDs: [1]), db)
        #expect(encoder.encode(.documentChange(Self.doc, targetIDs: [1]), db) == first)
        var changed = Self.doc
        changed.fields["n"] = .integer(99)
        changed.updateTime = Instant(unixMicros: Self.t.unixMicros + 1)
        let next = encoder.encode(.documentChange(changed, targetIDs: [1]), db)
        #expect(try ProtoJSON.decode(next, Self.listen) == (try ProtoJSON.decode(general(.documentChange(changed, targetIDs: [1])), Self.listen)))
        // The same version in another database is named there.
        let other = DatabaseID(project: "p", database: "other")
        let elsewhere = try ProtoJSON.decode(encoder.encode(.documentChange(Self.doc, targetIDs: [1]), other), Self.listen)
        #expect("\(elsewhere)".contains("databases/other/documents/users/u1"))
    }

    /// The cache holds the newest commit's versions only: a commit of several documents is shared
    /// across its streams while it fans out, a later commit replaces it, and older versions (first
    /// results) are not kept, so a long run's encoded documents never pile up to the bound.
    @Test func theCacheHoldsOnlyTheNewestCommitsVersions() throws {
        let encoder = ListenResponseEncoder()
        func version(_ name: String, _ micros: Int64) -> StoredDocument {
            StoredDocument(path: ResourcePath(["c", name]), fields: ["n": .integer(micros)],
                           createTime: Instant(unixMicros: 1), updateTime: Instant(unixMicros: micros))
        }
        let commit = (0..<5).map { version("d\($0)", 100) }
        // Two streams of a five-document commit: the second stream's encodings are all cache hits.
        let first = commit.map { encoder.encode(.documentChange($0, targetIDs: [1]), db) }
        #expect(encoder.cached.count == 5)
        #expect(commit.map { encoder.encode(.documentChange($0, targetIDs: [1]), db) } == first)
        // A first result's older versions are encoded right and not kept.
        for i in 0..<100 { _ = encoder.encode(.documentChange(version("old\(i)", 50), targetIDs: [2]), db) }
        #expect(encoder.cached.count == 5)
        // The next commit replaces the cache.
        let next = encoder.encode(.documentChange(version("d0", 200), targetIDs: [1]), db)
        #expect(try ProtoJSON.decode(next, Self.listen) == (try ProtoJSON.decode(general(.documentChange(version("d0", 200), targetIDs: [1])), Self.listen)))
        #expect(encoder.cached.count == 1)
        #expect(encoder.cached.bytes <= ListenResponseEncoder.cacheLimit)
    }

    /// A snapshot shared by many streams (`ListenBatch.Shared`) is written for each stream exactly
    /// as its events would be, with that stream's target ids, whichever stream comes first; a
    /// stream of another database gets names in its own.
    @Test func aSharedSnapshotIsWrittenAsItsEventsForEveryStream() throws {
        let encoder = ListenResponseEncoder()
        let other = StoredDocument(path: ResourcePath(["users", "u1", "files", "g"]), fields: ["n": .integer(1)],
                                   createTime: Self.t, updateTime: Self.t)
        let snapshot = ListenBatch.Shared(changes: [.changed(Self.doc), .deleted(ResourcePath(["users", "u1", "files", "gone"])),
                                                    .changed(other)],
                                          readTime: Self.t, resumeToken: ResumeToken.encode(Self.t))
        for ids: [Int32] in [[1], [1_000], [7, -3], [1]] {
            let (shared, plain) = Self.sharedAndPlain(encoder, snapshot, ids, db)
            #expect(shared.count == 4)
            #expect(shared.framed == plain.framed)
        }
        let (shared, plain) = Self.sharedAndPlain(encoder, snapshot, [2], DatabaseID(project: "p", database: "other"))
        #expect(shared.framed == plain.framed)
    }

    /// `snapshot` for a stream of `ids` in `db` by `encoder`, and its events encoded one by one.
    static func sharedAndPlain(_ encoder: ListenResponseEncoder, _ snapshot: ListenBatch.Shared, _ ids: [Int32],
                               _ db: DatabaseID) -> (shared: GRPCMessageBatch, plain: GRPCMessageBatch) {
        var shared = GRPCMessageBatch()
        encoder.encode(snapshot, targetIDs: ids, db, into: &shared)
        var plain = GRPCMessageBatch()
        for e in snapshot.events(ids) { ListenResponseEncoder().encode(e, db, into: &plain) }
        return (shared, plain)
    }

    /// A snapshot of changed documents only, into an empty batch (a commit's usual fan-out), is laid
    /// out whole at once: byte for byte what encoding its events one by one makes, for one listener
    /// after another with ids of every varint length (none, one byte, several, negative), and after
    /// what a batch already holds.
    @Test func aSnapshotOfChangesIsLaidOutAsItsEvents() throws {
        let encoder = ListenResponseEncoder()
        let other = StoredDocument(path: ResourcePath(["users", "u1", "files", "h"]), fields: ["s": .string(String(repeating: "x", count: 300))],
                                   createTime: Self.t, updateTime: Self.t)
        let snapshot = ListenBatch.Shared(changes: [.changed(Self.doc), .changed(other)], readTime: Self.t,
                                          resumeToken: ResumeToken.encode(Self.t))
        for ids: [Int32] in [[1], [], [127], [128], [1_000_000], [7, -3], [1]] {
            let (shared, plain) = Self.sharedAndPlain(encoder, snapshot, ids, db)
            #expect(shared.count == 3)
            #expect(shared.framed == plain.framed)
            // After a message already in the batch: appended, the same bytes after it.
            var after = GRPCMessageBatch()
            after.append([1, 2, 3])
            encoder.encode(snapshot, targetIDs: ids, db, into: &after)
            #expect(after.count == 4)
            #expect(Array(after.framed.dropFirst(8)) == plain.framed)
        }
    }

    @Test func theSharedSnapshotEndFollowsItsReadTime() throws {
        let encoder = ListenResponseEncoder()
        for micros in [Self.t.unixMicros, Self.t.unixMicros, Self.t.unixMicros + 1, Self.t.unixMicros] {
            let t = Instant(unixMicros: micros)
            let event = ListenEvent.targetChange(.noChange, targetIDs: [], cause: nil, readTime: t, resumeToken: ResumeToken.encode(t))
            #expect(try ProtoJSON.decode(encoder.encode(event, db), Self.listen) == (try ProtoJSON.decode(general(event), Self.listen)))
        }
    }
}
