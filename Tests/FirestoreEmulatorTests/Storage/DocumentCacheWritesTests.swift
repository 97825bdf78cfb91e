import Dispatch
import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The read cache kept across writes (`DocumentCache`'s note on coherence): every route that stores
/// documents replaces exactly their entries with the versions it stored and leaves the others; a
/// route that does not name what it changes empties the cache; a read or a write is never answered
/// from an entry a write has made old.
struct DocumentCacheWritesTests {
    let db = DatabaseID(project: "demo-test", database: "(default)")

    func path(_ p: String) -> ResourcePath { ResourcePath(p.split(separator: "/").map(String.init)) }

    func doc(_ p: String, _ n: Int64, at micros: Int64) -> StoredDocument {
        StoredDocument(path: path(p), fields: ["n": .integer(n)], createTime: Instant(unixMicros: 1), updateTime: Instant(unixMicros: micros))
    }

    func entry(_ cache: DocumentCache, _ p: String, _ d: StoredDocument?) -> DocumentCache.Entry {
        DocumentCache.Entry(database: db, path: path(p), name: db.name(of: path(p)), document: d)
    }

    func name(_ p: String) -> String { db.name(of: path(p)) }

    // MARK: The cache alone

    @Test func aPendingWriteHidesItsDocumentUntilApplied() {
        let cache = DocumentCache()
        let x = entry(cache, "c/x", doc("c/x", 0, at: 10)), y = entry(cache, "c/y", doc("c/y", 0, at: 10))
        cache.insert(x, readAt: cache.current)
        cache.insert(y, readAt: cache.current)
        let write = cache.beginWrite(db)
        write.record(path("c/x"), after: doc("c/x", 1, at: 20))
        // Recorded on the writer, not applied yet: x is neither served nor replaced by a reader.
        #expect(cache.entry(name("c/x")) == nil)
        #expect(cache.entries([name("c/x"), name("c/y")]) == nil)
        cache.insert(entry(cache, "c/x", doc("c/x", 0, at: 10)), readAt: cache.current)
        #expect(cache.entry(name("c/x")) == nil)
        #expect(cache.entry(name("c/y")) === y)
        write.apply()
        #expect(cache.entry(name("c/x"))?.document == doc("c/x", 1, at: 20))
        #expect(cache.entry(name("c/y")) === y)
        #expect(cache.entries([name("c/x"), name("c/y")])?.map(\.document) == [doc("c/x", 1, at: 20), doc("c/y", 0, at: 10)])
        write.apply()  // once only
        #expect(cache.entry(name("c/x"))?.document == doc("c/x", 1, at: 20))
    }

    @Test func aReadThatBeganBeforeAnAppliedWriteIsNotKept() {
        let cache = DocumentCache()
        cache.insert(entry(cache, "c/x", doc("c/x", 0, at: 10)), readAt: cache.current)
        let before = cache.current
        let write = cache.beginWrite(db)
        write.record(path("c/x"), after: nil)
        write.apply()
        // Read before the write committed: refused for its own document, kept for another.
        cache.insert(entry(cache, "c/x", doc("c/x", 0, at: 10)), readAt: before)
        #expect(cache.entry(name("c/x")) != nil)  // the write's own: known absent
        #expect(cache.entry(name("c/x"))?.document == nil)
        let other = entry(cache, "c/y", doc("c/y", 0, at: 10))
        cache.insert(other, readAt: before)
        #expect(cache.entry(name("c/y")) === other)
        // Read after it: kept.
        let fresh = entry(cache, "c/x", nil)
        cache.insert(fresh, readAt: cache.current)
        #expect(cache.entry(name("c/x")) === fresh)
        // Forgetting (a reset) refuses every read that began before it, whatever its document.
        let old = cache.current
        cache.invalidate()
        cache.insert(entry(cache, "c/z", nil), readAt: old)
        #expect(cache.entry(name("c/z")) == nil)
        #expect(cache.entry(name("c/y")) == nil)
    }

    /// A document the cache does not hold is written without a slot: its version is not kept, and
    /// no reader inserts a name without a slot while such a write is in flight, nor after it with
    /// a read that began before it was applied.
    @Test func aWriteToADocumentNotHeldKeepsNothingAndHoldsOffReaders() {
        let cache = DocumentCache()
        let held = entry(cache, "c/h", doc("c/h", 0, at: 10))
        cache.insert(held, readAt: cache.current)
        let before = cache.current
        let write = cache.beginWrite(db)
        write.record(path("c/new"), after: doc("c/new", 1, at: 20))
        cache.insert(entry(cache, "c/new", nil), readAt: cache.current)
        cache.insert(entry(cache, "c/other", nil), readAt: cache.current)
        #expect(cache.entry(name("c/new")) == nil)
        #expect(cache.entry(name("c/other")) == nil)
        #expect(cache.entry(name("c/h")) === held)  // a held name is unaffected
        write.apply()
        #expect(cache.entry(name("c/new")) == nil)
        cache.insert(entry(cache, "c/new", nil), readAt: before)
        #expect(cache.entry(name("c/new")) == nil)
        let read = entry(cache, "c/new", doc("c/new", 1, at: 20))
        cache.insert(read, readAt: cache.current)
        #expect(cache.entry(name("c/new")) === read)
        #expect(cache.entry(name("c/h")) === held)
        // An abandoned one holds readers off only while it is in flight.
        let failed = cache.beginWrite(db)
        failed.record(path("c/gone"), after: nil)
        let token = cache.current
        failed.abandon()
        let other = entry(cache, "c/other", nil)
        cache.insert(other, readAt: token)
        #expect(cache.entry(name("c/other")) === other)
    }

    @Test func writesAppliedOutOfOrderLeaveTheLaterVersion() {
        let cache = DocumentCache()
        cache.insert(entry(cache, "c/x", doc("c/x", 0, at: 10)), readAt: cache.current)
        let first = cache.beginWrite(db), second = cache.beginWrite(db)
        first.record(path("c/x"), after: doc("c/x", 1, at: 20))
        second.record(path("c/x"), after: doc("c/x", 2, at: 30))
        second.apply()
        #expect(cache.entry(name("c/x")) == nil)  // the first is still pending
        first.apply()
        #expect(cache.entry(name("c/x"))?.document == doc("c/x", 2, at: 30))
    }

    @Test func anAbandonedWriteStoresNothing() {
        let cache = DocumentCache()
        let x = entry(cache, "c/x", doc("c/x", 0, at: 10))
        cache.insert(x, readAt: cache.current)
        let write = cache.beginWrite(db)
        write.record(path("c/x"), after: doc("c/x", 1, at: 20))
        write.abandon()
        write.apply()  // ended already
        #expect(cache.entry(name("c/x")) === x)
    }

    @Test func aBulkWriteHidesEverythingAndOutranksEarlierWrites() {
        let cache = DocumentCache()
        let x = entry(cache, "c/x", doc("c/x", 0, at: 10))
        cache.insert(x, readAt: cache.current)
        for p in ["c/y", "c/w"] { cache.insert(entry(cache, p, nil), readAt: cache.current) }
        let earlier = cache.beginWrite(db)
        earlier.record(path("c/y"), after: doc("c/y", 1, at: 20))
        let reader = cache.current
        let bulk = cache.beginBulk()
        #expect(cache.entry(name("c/x")) == nil)
        cache.insert(entry(cache, "c/z", nil), readAt: cache.current)
        #expect(cache.entry(name("c/z")) == nil)
        let later = cache.beginWrite(db)
        later.record(path("c/w"), after: doc("c/w", 1, at: 40))
        cache.endBulk(bulk)
        #expect(cache.entry(name("c/x")) == nil)
        // Committed before the clear, applied after it: what it stored is gone, so it stores nothing.
        earlier.apply()
        #expect(cache.entry(name("c/y")) == nil)
        // Committed after it: kept.
        later.apply()
        #expect(cache.entry(name("c/w"))?.document == doc("c/w", 1, at: 40))
        // A read that began before the clear ended is not kept.
        cache.insert(entry(cache, "c/v", nil), readAt: reader)
        #expect(cache.entry(name("c/v")) == nil)
    }

    @Test func startingOverKeepsTheWritesInFlight() {
        let cache = DocumentCache()
        let old = entry(cache, "c/x", doc("c/x", 0, at: 10))
        cache.insert(old, readAt: cache.current)
        let first = cache.beginWrite(db), second = cache.beginWrite(db)
        first.record(path("c/x"), after: doc("c/x", 1, at: 20))
        second.record(path("c/x"), after: doc("c/x", 2, at: 30))
        second.apply()
        // Past its capacity the cache starts over; x's two writes are still counted and ordered.
        for i in 0..<DocumentCache.capacityEntries { cache.insert(entry(cache, "d/\(i)", nil), readAt: cache.current) }
        #expect(cache.entry(name("c/x")) == nil)
        first.apply()
        #expect(cache.entry(name("c/x")) == nil)  // the later version was dropped with the rest; the earlier is not put back
        cache.insert(entry(cache, "c/x", doc("c/x", 2, at: 30)), readAt: cache.current)
        #expect(cache.entry(name("c/x"))?.document == doc("c/x", 2, at: 30))
    }

    @Test func documentsOfDatabasesWithSlashesAreNeitherMarkedNorKept() {
        let cache = DocumentCache()
        let odd = DatabaseID(project: "p/databases/(default)/documents/c", database: "d")
        // Its name spells a document of the plain database; that document's entry is not its.
        let plain = DatabaseID(project: "p", database: "(default)")
        let p = ResourcePath(["c", "databases", "d", "documents", "x", "y"])
        let q = ResourcePath(["x", "y"])
        #expect(odd.name(of: q) == plain.name(of: p))
        let kept = DocumentCache.Entry(database: plain, path: p, name: plain.name(of: p), document: nil)
        cache.insert(kept, readAt: cache.current)
        let write = cache.beginWrite(odd)
        write.record(q, after: nil)
        #expect(cache.entry(plain.name(of: p)) === kept)
        write.apply()
        #expect(cache.entry(plain.name(of: p)) === kept)
    }

    // MARK: Every route that writes

    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /c/{d} { allow read, write: if request.auth != null; }
          }
        }
        """

    /// `c/x` and `c/y` stored and read (kept), and their entries.
    func setUp(_ h: TestHarness) -> (x: DocumentCache.Entry, y: DocumentCache.Entry) {
        h.put("c/x", ["n": int(1)])
        h.put("c/y", ["n": int(1)])
        h.service.storage.readCache.invalidate()  // the entries below come from reads
        #expect(h.call("GET", h.api("/c/x"), as: .user("u")).status == 200)
        #expect(h.call("GET", h.api("/c/y"), as: .user("u")).status == 200)
        let cache = h.service.storage.readCache
        return (cache.entry(h.root + "/c/x")!, cache.entry(h.root + "/c/y")!)
    }

    /// What the store holds at `p` now, read past the cache.
    func stored(_ h: TestHarness, _ p: String) throws -> StoredDocument? {
        try h.database.read { conn in
            guard let space = try h.service.storage.space(of: db, conn) else { return nil }
            return try h.service.storage.document(space: space, path: path(p), conn)
        }
    }

    /// After a route wrote `c/x` (only): its entry is the stored version, `c/y`'s the same entry.
    func expectOnlyXReplaced(_ h: TestHarness, _ kept: (x: DocumentCache.Entry, y: DocumentCache.Entry),
                             _ route: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let cache = h.service.storage.readCache
        let x = cache.entry(h.root + "/c/x")
        #expect(x != nil && x !== kept.x, "\(route): c/x's entry", sourceLocation: sourceLocation)
        #expect(x?.document == (try stored(h, "c/x")), "\(route): c/x's entry is what was stored", sourceLocation: sourceLocation)
        #expect(cache.entry(h.root + "/c/y") === kept.y, "\(route): c/y's entry stays", sourceLocation: sourceLocation)
    }

    func expectEmpty(_ h: TestHarness, _ route: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let cache = h.service.storage.readCache
        #expect(cache.entry(h.root + "/c/x") == nil, "\(route)", sourceLocation: sourceLocation)
        #expect(cache.entry(h.root + "/c/y") == nil, "\(route)", sourceLocation: sourceLocation)
    }

    @Test func restWritesReplaceOnlyTheirDocuments() throws {
        let h = try TestHarness(rules: Self.rules)
        var kept = setUp(h)
        #expect(h.call("PATCH", h.api("/c/x"), .object(["fields": .object(["n": int(2)])]), as: .user("u")).status == 200)
        try expectOnlyXReplaced(h, kept, "PATCH")

        kept = setUp(h)
        #expect(h.call("DELETE", h.api("/c/x"), as: .user("u")).status == 200)
        try expectOnlyXReplaced(h, kept, "DELETE")
        #expect(h.service.storage.readCache.entry(h.root + "/c/x")?.document == nil)
        #expect(h.call("GET", h.api("/c/x"), as: .user("u")).status == 404)

        kept = setUp(h)
        let commit = h.call("POST", h.api(":commit"), .object(["writes": .array([
            .object(["update": .object(["name": .string(h.root + "/c/x"), "fields": .object(["n": int(3)])]),
                     "updateTransforms": .array([.object(["fieldPath": .string("t"), "setToServerValue": .string("REQUEST_TIME")])])]),
            .object(["transform": .object(["document": .string(h.root + "/c/x"), "fieldTransforms": .array([
                .object(["fieldPath": .string("n"), "increment": int(1)])])])]),
        ])]), as: .user("u"))
        #expect(commit.status == 200)
        try expectOnlyXReplaced(h, kept, ":commit")
        #expect(h.service.storage.readCache.entry(h.root + "/c/x")?.document?.fields["n"] == .integer(4))

        kept = setUp(h)
        let batch = h.call("POST", h.api(":batchWrite"), .object(["writes": .array([
            .object(["update": .object(["name": .string(h.root + "/c/x"), "fields": .object(["n": int(5)])])]),
            // Refused on its own (the document exists): stores nothing.
            .object(["update": .object(["name": .string(h.root + "/c/y"), "fields": .object([:])]),
                     "currentDocument": .object(["exists": .bool(false)])]),
        ])]))
        #expect(batch.status == 200)
        try expectOnlyXReplaced(h, kept, ":batchWrite")

        // A write that changes nothing stores nothing and ends no entry.
        kept = setUp(h)
        #expect(h.call("PATCH", h.api("/c/x"), .object(["fields": .object(["n": int(1)])]), as: .user("u")).status == 200)
        #expect(h.service.storage.readCache.entry(h.root + "/c/x") === kept.x)
    }

    @Test func aTransactionsCommitReplacesItsDocumentAndItsReadsComeFromTheCache() throws {
        let h = try TestHarness(rules: Self.rules)
        let kept = setUp(h)
        let begin = h.call("POST", h.api(":beginTransaction"), .object([:]), as: .user("u"))
        let txn = try #require(begin.json["transaction"]?.stringValue)
        // Answered from the kept entry: a row removed behind the storage's back (no write through
        // it) still shows, as it would to a get.
        try h.database.write { conn in try conn.run("DELETE FROM fs_documents WHERE key = ?", [path("c/x").key]) }
        let read = h.call("POST", h.api(":batchGet"), .object(["documents": .array([.string(h.root + "/c/x")]),
                                                               "transaction": .string(txn)]), as: .user("u"))
        #expect(read.status == 200)
        #expect(read.json.arrayValue?.first?["found"]?["fields"]?["n"] == int(1))
        let commit = h.call("POST", h.api(":commit"), .object([
            "writes": .array([.object(["update": .object(["name": .string(h.root + "/c/x"), "fields": .object(["n": int(2)])])])]),
            "transaction": .string(txn)]), as: .user("u"))
        #expect(commit.status == 200)
        try expectOnlyXReplaced(h, kept, "transaction")
        // A GET naming a read-write transaction reads the kept entry too, and records the version it
        // read: a write in between aborts the commit, as on the store's path.
        let second = try #require(h.call("POST", h.api(":beginTransaction"), .object([:]), as: .user("u")).json["transaction"]?.stringValue)
        let get = h.call("GET", h.api("/c/x?transaction=\(second.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"), as: .user("u"))
        #expect(get.status == 200)
        #expect(get.json["fields"]?["n"] == int(2))
        h.put("c/x", ["n": int(9)])
        let aborted = h.call("POST", h.api(":commit"), .object([
            "writes": .array([.object(["update": .object(["name": .string(h.root + "/c/x"), "fields": .object(["n": int(3)])])])]),
            "transaction": .string(second)]), as: .user("u"))
        #expect(aborted.status == 409)
        #expect(aborted.json["error"]?["status"]?.stringValue == "ABORTED")
        #expect(try stored(h, "c/x")?.fields["n"] == .integer(9))
        // A failed commit empties the cache (nothing of it was stored, but every write's failure did).
        #expect(h.service.storage.readCache.entry(h.root + "/c/x") == nil)
        #expect(h.call("GET", h.api("/c/x"), as: .user("u")).json["fields"]?["n"] == int(9))
    }

    @Test func commitsWithoutAThreadAndServerSideWritesReplaceOnlyTheirDocuments() throws {
        let h = try TestHarness(rules: Self.rules)
        var kept = setUp(h)
        let done = DispatchSemaphore(value: 0)
        let write = Write(path: path("c/x"), operation: .update(fields: ["n": .integer(6)], mask: nil), transforms: [], precondition: nil)
        h.service.commit(db, writes: [write], transaction: nil, caller: .admin, lead: false) { result in
            if case .success = result { done.signal() }
        }
        done.wait()
        try expectOnlyXReplaced(h, kept, "commit(completion:)")

        kept = setUp(h)
        _ = try h.service.setDocument(projectID: h.project, path: "c/x", fields: ["n": int(7)], serverTimestampFields: ["t"])
        try expectOnlyXReplaced(h, kept, "setDocument")

        kept = setUp(h)
        try h.service.importDocuments(.object(["databases": .array([.object(["documents": .array([
            .object(["name": .string(h.root + "/c/x"), "fields": .object(["n": int(8)])])])])])]))
        try expectOnlyXReplaced(h, kept, "importDocuments")
    }

    @Test func writesThatDoNotNameTheirDocumentsEmptyTheCache() throws {
        let h = try TestHarness(rules: Self.rules)
        _ = setUp(h)
        #expect(h.call("DELETE", "/emulator/v1/projects/demo-test/databases/(default)/documents").status == 200)
        expectEmpty(h, "clear")
        #expect(h.call("GET", h.api("/c/x"), as: .user("u")).status == 404)

        _ = setUp(h)
        try h.service.reset()
        expectEmpty(h, "reset")
        #expect(h.call("GET", h.api("/c/y"), as: .user("u")).status == 404)

        _ = setUp(h)
        try h.service.storage.write { conn in try conn.execute("DELETE FROM fs_documents") }
        expectEmpty(h, "storage.write")

        // A failed commit: nothing stored, the cache emptied all the same (as every write's was).
        _ = setUp(h)
        #expect(h.call("POST", h.api(":commit"), .object(["writes": .array([
            .object(["update": .object(["name": .string(h.root + "/c/x"), "fields": .object([:])]),
                     "currentDocument": .object(["exists": .bool(false)])])])]), as: .user("u")).status == 409)
        expectEmpty(h, "a refused commit")
        #expect(try stored(h, "c/x")?.fields["n"] == .integer(1))
    }

    // MARK: The writer's own reads

    /// The writer takes a served entry for the document it writes instead of its row: a row changed
    /// behind the storage's back does not show to the commit either (its precondition passes on the
    /// entry's document, and the new version keeps the entry's create time).
    @Test func theWriterReadsAServedEntryInsteadOfTheRow() throws {
        let h = try TestHarness(rules: Self.rules)
        let kept = setUp(h)
        try h.database.write { conn in try conn.run("DELETE FROM fs_documents WHERE key = ?", [path("c/x").key]) }
        let r = h.call("POST", h.api(":commit"), .object(["writes": .array([
            .object(["update": .object(["name": .string(h.root + "/c/x"), "fields": .object(["n": int(2)])]),
                     "currentDocument": .object(["exists": .bool(true)])])])]), as: .user("u"))
        #expect(r.status == 200)
        #expect(try stored(h, "c/x")?.createTime == kept.x.document?.createTime)
    }

    /// A commit later in a batch reads what an earlier one wrote, not the entry the earlier one made
    /// old (marked pending on the writer before either committed).
    @Test func aLaterCommitInTheSameBatchSeesTheEarliersWrite() throws {
        let h = try TestHarness()
        let kept = setUp(h)
        #expect(kept.x.document?.fields == ["n": .integer(1)])
        // Hold the writer so both commits queue behind it and run as one transaction.
        let release = h.holdWriter()
        let done = DispatchSemaphore(value: 0)
        let a = Write(path: path("c/x"), operation: .update(fields: ["a": .integer(1)], mask: [FieldPath(["a"])]), transforms: [],
                      precondition: nil)
        let b = Write(path: path("c/x"), operation: .update(fields: ["b": .integer(1)], mask: [FieldPath(["b"])]),
                      transforms: [FieldTransform(field: FieldPath(["n"]), kind: .increment(.integer(1)))], precondition: nil)
        for w in [a, b] {
            h.service.commit(db, writes: [w], transaction: nil, caller: .admin, lead: false) { _ in done.signal() }
        }
        while h.service.storage.batcher.queued < 1 { usleep(1000) }
        release()
        done.wait()
        done.wait()
        let expected: [ExactString: FirestoreValue] = ["n": .integer(2), "a": .integer(1), "b": .integer(1)]
        #expect(try stored(h, "c/x")?.fields == expected)
        #expect(h.service.storage.readCache.entry(h.root + "/c/x")?.document?.fields == expected)
    }
}
