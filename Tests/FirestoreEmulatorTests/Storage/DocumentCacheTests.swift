import Foundation
import HearthCore
import HearthGRPC
import HearthProtobuf
import SecurityRules
import Testing
@testable import FirestoreEmulator

/// The read cache answers what the store answers: the same bytes as the general path, never a
/// version a write has replaced, and a rules decision made for each request and caller.
struct DocumentCacheTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /users/{uid}/files/{f} { allow read: if request.auth != null && request.auth.uid == uid; }
            match /granted/{d} { allow read: if exists(/databases/$(database)/documents/grants/$(request.auth.uid)); }
          }
        }
        """

    let db = DatabaseID(project: "demo-test", database: "(default)")

    func path(_ p: String) -> ResourcePath { ResourcePath(p.split(separator: "/").map(String.init)) }

    /// The document as the store holds it now, read past the cache (a transaction-free admin read
    /// at the latest time goes through `getDocument`, which never consults the cache).
    func stored(_ h: TestHarness, _ p: String) throws -> StoredDocument {
        try h.service.getDocument(db, path: path(p), consistency: .strong, caller: .admin)
    }

    /// A GetDocument request for `p`, as every client sends it (the name only).
    func getRequest(_ h: TestHarness, _ p: String) -> [UInt8] {
        var w = ProtoWriter(capacity: 128)
        w.string(1, h.root + "/" + p)
        return w.bytes
    }

    func grpcGet(_ h: TestHarness, _ p: String, as who: TestHarness.As) throws(GRPCStatus) -> [UInt8]? {
        try RESTBridge(service: h.service).directGet(getRequest(h, p), DirectReadsTests.context(who))
    }

    /// A streamed query reads through the cache (`QueryExecutor.readCache`): a kept version's fields
    /// are not decoded again, yet the documents are exactly the store's, and a replaced version is
    /// never answered.
    @Test func aQueryTakesKeptVersionsOnlyWhileTheyAreCurrent() throws {
        let h = try TestHarness(rules: Self.rules)
        for i in 0..<8 {
            _ = h.put("users/alice/files/f\(i)", ["status": str(i % 2 == 0 ? "ready" : "pending"), "n": int(Int64(i)),
                                                  "m": map([("z", bool(true)), ("é", dbl(0.5))])])
        }
        let query = try QueryParser(database: db, parent: path("users/alice")).parse(ProtoObject(
            json: sq("files", where: ff("status", "EQUAL", str("ready")), orderBy: [order("n", "DESCENDING")], limit: 3),
            path: "structured_query"))
        let cache = h.service.storage.readCache
        func run(_ through: DocumentCache?) throws -> QueryExecutor.Result {
            // As runQuery: the pairs taken before the snapshot, the missing ones built after it.
            var executor = h.service.indexedExecutor(db)
            executor.readCache = through
            defer { h.service.buildMissingIndexes(executor, db, query) }
            return try h.database.read { conn in
                return try executor.run(query, space: try h.service.storage.space(of: db, conn), conn)
            }
        }
        let plain = try run(nil)
        #expect(plain.versions == nil)
        #expect(plain.documents.map(\.path.string) == ["users/alice/files/f6", "users/alice/files/f4", "users/alice/files/f2"])

        let generation = cache.current
        let first = try run(cache)
        let firstVersions = try #require(first.versions)
        #expect(first.documents == plain.documents)
        #expect(firstVersions.map(\.wasKept) == [false, false, false])
        #expect(firstVersions.map(\.document) == plain.documents)
        // Encoded as the general path encodes them, and kept.
        for (v, doc) in zip(firstVersions, plain.documents) {
            #expect(cache.proto(of: v, readAt: generation, keep: true) == DocumentProto.document(doc, in: db))
        }
        let second = try run(cache)
        #expect(second.documents == plain.documents)
        #expect(try #require(second.versions).map(\.wasKept) == [true, true, true])

        // A write empties the cache: the new version is read, never the kept one.
        _ = h.put("users/alice/files/f4", ["status": str("ready"), "n": int(4), "m": map([("z", bool(false))])])
        let after = try run(cache)
        #expect(try #require(after.versions).map(\.wasKept) == [false, false, false])
        #expect(after.documents == (try run(nil)).documents)
        #expect(after.documents[1].fields["m"] == .map(["z": .boolean(false)]))
        // A get's entry is not kept by key: the query reads that version itself and keeps its own.
        _ = h.call("GET", h.api("/users/alice/files/f2"), as: .user("alice"))
        #expect(cache.entry(h.root + "/users/alice/files/f2") != nil)
        let afterGet = try run(cache)
        #expect(afterGet.documents == after.documents)
        #expect(try #require(afterGet.versions).map(\.wasKept) == [false, false, false])
        let made = try #require(afterGet.versions)
        for v in made { _ = cache.proto(of: v, readAt: cache.current, keep: true) }
        let again = try run(cache)
        #expect(try #require(again.versions).map(\.wasKept) == [true, true, true])
    }

    @Test func restGetsAnswerTheGeneralPathsBytesWhetherCachedOrNot() throws {
        let h = try TestHarness(rules: Self.rules)
        h.put("users/alice/files/f1", ["name": str("a \"quoted\" é"), "n": int(7), "m": map([("z", bool(true)), ("a", dbl(0.5))])])
        var w = JSONWriter()
        w.document(try stored(h, "users/alice/files/f1"), in: db, mask: nil)
        let miss = h.call("GET", h.api("/users/alice/files/f1"), as: .user("alice"))
        let hit = h.call("GET", h.api("/users/alice/files/f1"), as: .user("alice"))
        #expect(miss.status == 200 && hit.status == 200)
        #expect(h.service.storage.readCache.entry(h.root + "/users/alice/files/f1") != nil)
        #expect(miss.response.bodyBytes == w.bytes)
        #expect(hit.response.bodyBytes == w.bytes)
        // A mask or prettyPrint still shapes the answer from the cached document.
        let masked = h.call("GET", h.api("/users/alice/files/f1?mask.fieldPaths=n"), as: .user("alice"))
        #expect(masked.json["fields"]?.objectValue?.members.map(\.0) == ["n"])
        let pretty = h.call("GET", h.api("/users/alice/files/f1?prettyPrint=true"), as: .user("alice"))
        #expect(pretty.json == hit.json && pretty.response.bodyBytes != hit.response.bodyBytes)
    }

    @Test func grpcGetsAnswerTheDocumentsProtobufWhetherCachedOrNot() throws {
        let h = try TestHarness(rules: Self.rules)
        h.put("users/alice/files/f1", ["name": str("x"), "n": int(7)])
        let expected = DocumentProto.document(try stored(h, "users/alice/files/f1"), in: db)
        #expect(try grpcGet(h, "users/alice/files/f1", as: .user("alice")) == expected)
        #expect(try grpcGet(h, "users/alice/files/f1", as: .user("alice")) == expected)
        // The REST path's entry serves gRPC too, and the other way round.
        h.put("users/alice/files/f2", ["n": int(1)])
        #expect(h.call("GET", h.api("/users/alice/files/f2"), as: .user("alice")).status == 200)
        #expect(try grpcGet(h, "users/alice/files/f2", as: .user("alice")) == DocumentProto.document(try stored(h, "users/alice/files/f2"), in: db))
    }

    @Test func everyWriteEndsTheCachedVersions() throws {
        let h = try TestHarness(rules: Self.rules)
        h.put("users/alice/files/f1", ["n": int(1)])
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .user("alice")).json["fields"]?["n"] == int(1))
        h.put("users/alice/files/f1", ["n": int(2)])
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .user("alice")).json["fields"]?["n"] == int(2))
        #expect(try grpcGet(h, "users/alice/files/f1", as: .user("alice")) == DocumentProto.document(try stored(h, "users/alice/files/f1"), in: db))
        // A write to another document ends it too (the cache keeps one generation).
        h.put("users/alice/files/other", ["n": int(0)])
        #expect(h.service.storage.readCache.entry(h.root + "/users/alice/files/f1") == nil)
        // Deleted: not found, also over gRPC, once cached as present.
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .user("alice")).status == 200)
        #expect(h.call("DELETE", h.api("/users/alice/files/f1")).status == 200)
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .user("alice")).status == 404)
        #expect(throws: GRPCStatus.self) { try grpcGet(h, "users/alice/files/f1", as: .user("alice")) }
        // Created after its absence was cached.
        h.put("users/alice/files/f1", ["n": int(3)])
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .user("alice")).json["fields"]?["n"] == int(3))
        // Cleared through the emulator endpoint.
        #expect(h.call("DELETE", "/emulator/v1/projects/demo-test/databases/(default)/documents").status == 200)
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .user("alice")).status == 404)
    }

    @Test func theRulesJudgeEveryRequestOnACachedDocument() throws {
        let h = try TestHarness(rules: Self.rules)
        h.put("users/alice/files/f1", ["n": int(1)])
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .user("alice")).status == 200)
        #expect(h.service.storage.readCache.entry(h.root + "/users/alice/files/f1") != nil)
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .user("bob")).status == 403)
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .anonymous).status == 403)
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .owner).status == 200)
        #expect(throws: GRPCStatus.self) { try grpcGet(h, "users/alice/files/f1", as: .user("bob")) }
        #expect(try grpcGet(h, "users/alice/files/f1", as: .user("alice")) != nil)
        // A missing document is judged too: bob may not learn that alice's f9 is absent.
        #expect(h.call("GET", h.api("/users/alice/files/f9"), as: .user("alice")).status == 404)
        #expect(h.call("GET", h.api("/users/alice/files/f9"), as: .user("bob")).status == 403)
    }

    @Test func rulesThatReadDocumentsAreJudgedOnTheStore() throws {
        let h = try TestHarness(rules: Self.rules)
        guard case .ruleset(let ruleset, _) = h.service.rules.active(for: "demo-test", database: "(default)") else { throw FirestoreError.internal("no rules") }
        #expect(ruleset.readsDocuments)
        h.put("granted/d", ["n": int(1)])
        #expect(h.call("GET", h.api("/granted/d"), as: .user("alice")).status == 403)
        h.put("grants/alice", [:])
        #expect(h.call("GET", h.api("/granted/d"), as: .user("alice")).status == 200)
        #expect(h.call("GET", h.api("/granted/d"), as: .user("alice")).status == 200)
        #expect(h.call("GET", h.api("/granted/d"), as: .user("bob")).status == 403)
    }

    /// Rules that read no documents: a client's batchGet may be answered from kept documents.
    static let plainRules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /users/{uid}/files/{f} { allow read: if request.auth != null && request.auth.uid == uid; }
          }
        }
        """

    @Test func batchGetsAnswerFromKeptDocumentsWhatTheStoreAnswers() throws {
        let h = try TestHarness(rules: Self.plainRules)
        let cache = h.service.storage.readCache
        h.put("users/alice/files/f1", ["n": int(1)])
        h.put("users/alice/files/f2", ["n": int(2), "m": map([("a", str("x"))])])
        h.put("users/bob/files/f1", ["n": int(3)])
        func batchGet(_ docs: [String], as who: TestHarness.As) -> (status: Int, json: JSON, bytes: [UInt8]) {
            let body: JSON = .object(["documents": .array(docs.map { .string(h.root + "/" + $0) })])
            let r = h.call("POST", h.api(":batchGet"), body, as: who)
            return (r.status, r.json, r.response.bodyBytes ?? [])
        }
        let docs = ["users/alice/files/f1", "users/alice/files/f9", "users/alice/files/f2", "users/alice/files/f1"]
        // Read through the store and kept (found and missing alike), then answered from what was kept.
        let miss = batchGet(docs, as: .user("alice"))
        #expect(miss.status == 200)
        #expect(miss.json.arrayValue?.count == 3)
        for d in docs { #expect(cache.entry(h.root + "/" + d) != nil, "\(d)") }
        let hit = batchGet(docs, as: .user("alice"))
        #expect(hit.status == 200 && hit.bytes == miss.bytes)
        // The rules judge every request on the kept documents, in request order.
        #expect(batchGet(["users/alice/files/f1"], as: .user("bob")).status == 403)
        #expect(batchGet(["users/alice/files/f9"], as: .anonymous).status == 403)
        #expect(batchGet(["users/alice/files/f1", "users/bob/files/f1"], as: .user("alice")).status == 403)
        #expect(batchGet(["users/alice/files/f1", "users/bob/files/f1"], as: .owner).status == 200)
        // A write shows at once; a request that finds only some documents kept reads them all
        // from the store (one state), then keeps them.
        h.put("users/alice/files/f2", ["n": int(5)])
        #expect(h.call("GET", h.api("/users/alice/files/f1"), as: .user("alice")).status == 200)
        #expect(cache.entry(h.root + "/users/alice/files/f2") == nil)
        let changed = batchGet(docs, as: .user("alice"))
        #expect(changed.status == 200)
        #expect(changed.json.arrayValue?.compactMap { $0["found"]?["fields"]?["n"] } == [int(1), int(5)])
        #expect(cache.entry(h.root + "/users/alice/files/f2") != nil)
        // Answered from what is kept: a row removed behind the storage's back (no write through
        // it, so nothing was forgotten) still shows, as it would to a get.
        try h.database.write { conn in try conn.execute("DELETE FROM fs_documents") }
        #expect(batchGet(docs, as: .user("alice")).bytes == changed.bytes)
        // A transaction's reads go to the store.
        let inTransaction = h.call("POST", h.api(":batchGet"), .object([
            "documents": .array([.string(h.root + "/users/alice/files/f1")]), "newTransaction": .object([:])]))
        #expect(inTransaction.json.arrayValue?.last?["missing"] != nil)
    }

    @Test func batchGetsUnderRulesThatReadDocumentsReadTheStore() throws {
        let h = try TestHarness(rules: Self.rules)
        h.put("granted/d", ["n": int(1)])
        h.put("grants/alice", [:])
        let body: JSON = .object(["documents": .array([.string(h.root + "/granted/d")])])
        for _ in 0..<2 {
            #expect(h.call("POST", h.api(":batchGet"), body, as: .user("alice")).status == 200)
            #expect(h.call("POST", h.api(":batchGet"), body, as: .user("bob")).status == 403)
        }
        #expect(h.call("DELETE", h.api("/grants/alice")).status == 200)
        #expect(h.call("POST", h.api(":batchGet"), body, as: .owner).status == 200)
        #expect(h.call("POST", h.api(":batchGet"), body, as: .user("alice")).status == 403)
    }

    @Test func aReadThatRacedAWriteIsNotKept() {
        let cache = DocumentCache()
        let db = DatabaseID(project: "p", database: "(default)")
        let entry = DocumentCache.Entry(database: db, path: path("c/d"), name: db.name(of: path("c/d")), document: nil)
        let before = cache.current
        cache.invalidate()  // a write committed while the read ran
        cache.insert(entry, readAt: before)
        #expect(cache.entry(entry.name) == nil)
        cache.insert(entry, readAt: cache.current)
        #expect(cache.entry(entry.name) === entry)
        cache.invalidate()
        #expect(cache.entry(entry.name) == nil)
    }

    @Test func pagesAndQueryResultsAnswerTheGeneralPathsBytesAndNeverAReplacedVersion() throws {
        let h = try TestHarness(rules: Self.rules)
        h.put("users/alice/files/f1", ["name": str("a \"quoted\" é"), "n": int(1)])
        h.put("users/alice/files/f2", ["n": int(2), "m": map([("z", bool(true)), ("a", dbl(0.5))])])
        func encoded(_ p: String) throws -> [UInt8] {
            var w = JSONWriter()
            w.document(try stored(h, p), in: db, mask: nil)
            return w.bytes
        }
        let query = JSON.object(JSONObject([("structuredQuery", .object(JSONObject([
            ("from", .array([.object(JSONObject([("collectionId", .string("files"))]))])),
            ("orderBy", .array([.object(JSONObject([("field", .object(JSONObject([("fieldPath", .string("n"))]))),
                                                    ("direction", .string("DESCENDING"))]))]))])))]))
        // Miss (encoded, kept), then hit (the kept bytes): both what the general path writes.
        for _ in 0..<2 {
            let page = h.call("GET", h.api("/users/alice/files"), as: .user("alice"))
            #expect(page.status == 200)
            let text = String(decoding: page.response.bodyBytes ?? [], as: UTF8.self)
            #expect(text == "{\"documents\":[" + String(decoding: try encoded("users/alice/files/f1"), as: UTF8.self) + ","
                + String(decoding: try encoded("users/alice/files/f2"), as: UTF8.self) + "]}")
            #expect(h.service.storage.readCache.entry(h.root + "/users/alice/files/f2") != nil)
            let results = h.call("POST", h.api("/users/alice:runQuery"), query, as: .user("alice"))
            let docs = results.json.arrayValue?.compactMap { $0["document"] }
            #expect(docs?.count == 2)
            #expect(docs?.first == (try JSON.parse(encoded("users/alice/files/f2"))))
        }
        // After a write the page shows the new version (the kept encoding was of the old one).
        h.put("users/alice/files/f2", ["n": int(2), "m": str("changed")])
        let page = h.call("GET", h.api("/users/alice/files"), as: .user("alice"))
        #expect(page.json["documents"]?.arrayValue?.last?["fields"]?["m"]?["stringValue"]?.stringValue == "changed")
        let masked = h.call("GET", h.api("/users/alice/files?mask.fieldPaths=n"), as: .user("alice"))
        #expect(masked.json["documents"]?.arrayValue?.last?["fields"]?.objectValue?.members.map(\.0) == ["n"])
    }

    @Test func aKeptEncodingServesOnlyItsOwnVersion() {
        let cache = DocumentCache()
        let db = DatabaseID(project: "p", database: "(default)")
        let v1 = StoredDocument(path: path("c/d"), fields: ["a": .integer(1)], createTime: Instant(unixMicros: 10),
                                updateTime: Instant(unixMicros: 10))
        var v2 = v1
        v2.fields = ["a": .integer(2)]
        v2.updateTime = Instant(unixMicros: 20)
        func plain(_ d: StoredDocument) -> [UInt8] {
            var w = JSONWriter()
            w.document(d, in: db)
            return w.bytes
        }
        // Not kept: a past read's version must not answer later gets.
        #expect(cache.json(of: v1, in: db, readAt: cache.current, keep: false) == plain(v1))
        #expect(cache.entry(db.name(of: v1.path)) == nil)
        #expect(cache.json(of: v1, in: db, readAt: cache.current, keep: true) == plain(v1))
        #expect(cache.entry(db.name(of: v1.path))?.document == v1)
        // Another version of the same document is encoded for itself, whatever is kept.
        #expect(cache.json(of: v2, in: db, readAt: cache.current, keep: false) == plain(v2))
        #expect(cache.json(of: v1, in: db, readAt: cache.current, keep: false) == plain(v1))
        // The protobuf likewise, from the same entries.
        #expect(cache.proto(of: v1, in: db, readAt: cache.current, keep: false) == DocumentProto.document(v1, in: db))
        #expect(cache.proto(of: v2, in: db, readAt: cache.current, keep: false) == DocumentProto.document(v2, in: db))
        #expect(cache.proto(of: v2, in: db, readAt: cache.current, keep: true) == DocumentProto.document(v2, in: db))
        #expect(cache.entry(db.name(of: v1.path))?.document == v2)
        #expect(cache.proto(of: v1, in: db, readAt: cache.current, keep: false) == DocumentProto.document(v1, in: db))
        // A read that raced a write is not kept.
        let generation = cache.current
        cache.invalidate()
        #expect(cache.proto(of: v1, in: db, readAt: generation, keep: true) == DocumentProto.document(v1, in: db))
        #expect(cache.entry(db.name(of: v1.path)) == nil)
    }

    @Test func idsWithSlashesAreNotKept() {
        #expect(DocumentCache.accepts(DatabaseID(project: "p", database: "(default)")))
        #expect(!DocumentCache.accepts(DatabaseID(project: "a/b", database: "(default)")))
        #expect(!DocumentCache.accepts(DatabaseID(project: "p", database: "x/documents/y")))
    }

    @Test func rulesWithoutDocumentReadsSaySo() {
        let (ruleset, _) = Ruleset.compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /a/{b} { allow read: if request.auth != null && f(b); }
                function f(x) { return x.size() > 0; }
              }
            }
            """)
        #expect(ruleset?.readsDocuments == false)
        let (reading, _) = Ruleset.compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /a/{b} { allow read: if f(b); }
                function f(x) { return get(/databases/$(database)/documents/b/$(x)).data.ok == true; }
              }
            }
            """)
        #expect(reading?.readsDocuments == true)
    }
}
