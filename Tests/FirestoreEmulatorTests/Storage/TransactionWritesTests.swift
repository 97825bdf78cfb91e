import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The versions transactions last committed (`TransactionWrites`) answer a read-write transaction's
/// batchGet only while they are the latest committed state: every other write of the document,
/// by any route, takes them out of service, and the answer is always the store's.
struct TransactionWritesTests {
    /// Rules that read no documents: reads may come from the slots.
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /users/{uid}/files/{f} { allow read, write: if request.auth != null && request.auth.uid == uid; }
          }
        }
        """

    /// Rules that read a document (`exists`): every read takes the store's path.
    static let readingRules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /granted/{d} { allow read, write: if exists(/databases/$(database)/documents/grants/$(request.auth.uid)); }
          }
        }
        """

    let db = DatabaseID(project: "demo-test", database: "(default)")

    func path(_ p: String) -> ResourcePath { ResourcePath(p.split(separator: "/").map(String.init)) }

    func doc(_ p: String, _ n: Int64, at t: Int64) -> StoredDocument {
        StoredDocument(path: path(p), fields: [ExactString("n"): .integer(n)], createTime: Instant(unixMicros: 1),
                       updateTime: Instant(unixMicros: t))
    }

    // MARK: The type alone

    @Test func aSlotServesOnlyTheFillOfTheCommitThatMadeIt() {
        let slots = TransactionWrites()
        let a = path("c/a"), b = path("c/b")
        #expect(slots.documents(space: 1, paths: [a]) == nil)
        // Pending until its commit fills it.
        slots.writing(space: 1, path: a, at: 10)
        #expect(slots.documents(space: 1, paths: [a]) == nil)
        slots.committed(space: 1, at: 10, [(path: a, document: doc("c/a", 1, at: 10))])
        #expect(slots.documents(space: 1, paths: [a]) == [doc("c/a", 1, at: 10)])
        // Another space, or a path without a slot: nothing (all or none).
        #expect(slots.documents(space: 2, paths: [a]) == nil)
        #expect(slots.documents(space: 1, paths: [a, b]) == nil)
        // A later transaction's commit: pending again until its own fill; an older fill is refused.
        slots.writing(space: 1, path: a, at: 20)
        #expect(slots.documents(space: 1, paths: [a]) == nil)
        slots.committed(space: 1, at: 10, [(path: a, document: doc("c/a", 1, at: 10))])
        #expect(slots.documents(space: 1, paths: [a]) == nil)
        slots.committed(space: 1, at: 20, [(path: a, document: doc("c/a", 2, at: 20))])
        #expect(slots.documents(space: 1, paths: [a]) == [doc("c/a", 2, at: 20)])
        // Any other update or delete: pending, and no fill can end it — only the next transaction's commit.
        slots.replacing(space: 1, path: a)
        #expect(slots.documents(space: 1, paths: [a]) == nil)
        slots.committed(space: 1, at: 20, [(path: a, document: doc("c/a", 2, at: 20))])
        #expect(slots.documents(space: 1, paths: [a]) == nil)
        slots.writing(space: 1, path: a, at: 30)
        slots.writing(space: 1, path: b, at: 30)
        slots.committed(space: 1, at: 30, [(path: a, document: doc("c/a", 3, at: 30)), (path: b, document: doc("c/b", 3, at: 30))])
        #expect(slots.documents(space: 1, paths: [b, a]) == [doc("c/b", 3, at: 30), doc("c/a", 3, at: 30)])
        // A transaction's delete stays pending.
        slots.writing(space: 1, path: b, at: 40)
        slots.committed(space: 1, at: 40, [(path: b, document: nil)])
        #expect(slots.documents(space: 1, paths: [b]) == nil)
        #expect(slots.documents(space: 1, paths: [a]) == [doc("c/a", 3, at: 30)])
    }

    @Test func markingAndFillingNeverMakeASlot() {
        let slots = TransactionWrites()
        let a = path("c/a")
        slots.replacing(space: 1, path: a)
        slots.committed(space: 1, at: 10, [(path: a, document: doc("c/a", 1, at: 10))])
        #expect(slots.documents(space: 1, paths: [a]) == nil)
        // A slot dropped while its commit was under way is not made again by the fill.
        slots.writing(space: 1, path: a, at: 20)
        slots.removeAll()
        slots.committed(space: 1, at: 20, [(path: a, document: doc("c/a", 2, at: 20))])
        #expect(slots.documents(space: 1, paths: [a]) == nil)
    }

    @Test func pastItsCapacityEverySlotGoes() {
        let slots = TransactionWrites()
        for i in 0..<TransactionWrites.capacity {
            slots.writing(space: 1, path: path("c/d\(i)"), at: Int64(i))
            slots.committed(space: 1, at: Int64(i), [(path: path("c/d\(i)"), document: doc("c/d\(i)", 0, at: Int64(i)))])
        }
        #expect(slots.documents(space: 1, paths: [path("c/d0")]) != nil)
        let last = Int64(TransactionWrites.capacity)
        slots.writing(space: 1, path: path("c/new"), at: last)
        #expect(slots.documents(space: 1, paths: [path("c/d0")]) == nil)
        slots.committed(space: 1, at: last, [(path: path("c/new"), document: doc("c/new", 0, at: last))])
        #expect(slots.documents(space: 1, paths: [path("c/new")]) != nil)
    }

    @Test func largeVersionsAreNotHeld() {
        let slots = TransactionWrites()
        let a = path("c/a")
        var large = doc("c/a", 1, at: 10)
        large.fields[ExactString("blob")] = .bytes([UInt8](repeating: 7, count: TransactionWrites.maxDocumentBytes))
        slots.writing(space: 1, path: a, at: 10)
        slots.committed(space: 1, at: 10, [(path: a, document: large)])
        #expect(slots.documents(space: 1, paths: [a]) == nil)
        // Past the bytes held in all, a fill leaves its slot pending too.
        var medium = doc("c/m", 1, at: 20)
        medium.fields[ExactString("blob")] = .bytes([UInt8](repeating: 7, count: TransactionWrites.maxDocumentBytes - 1024))
        var held = 0
        for i in 0..<(TransactionWrites.capacityBytes / TransactionWrites.maxDocumentBytes + 8) {
            let p = path("c/m\(i)")
            medium.path = p
            slots.writing(space: 1, path: p, at: 20)
            slots.committed(space: 1, at: 20, [(path: p, document: medium)])
            if slots.documents(space: 1, paths: [p]) != nil { held += 1 }
        }
        #expect(held > 0 && held <= TransactionWrites.capacityBytes / (TransactionWrites.maxDocumentBytes - 1024))
    }

    // MARK: Through the service

    func begin(_ h: TestHarness, as who: TestHarness.As = .owner) -> String {
        h.call("POST", h.api(":beginTransaction"), .object([:]), as: who).json["transaction"]?.stringValue ?? ""
    }

    func batchGet(_ h: TestHarness, _ paths: [String], transaction: String, as who: TestHarness.As = .owner) -> (status: Int, json: JSON) {
        let r = h.call("POST", h.api(":batchGet"), .object([
            "documents": .array(paths.map { JSON.string(h.root + "/" + $0) }), "transaction": .string(transaction)]), as: who)
        return (r.status, r.json)
    }

    /// A commit in transaction `t` setting `status` of `p` (a masked update, as the bench's).
    func commit(_ h: TestHarness, _ p: String, status: String, transaction t: String, as who: TestHarness.As = .owner) -> Int {
        h.call("POST", h.api(":commit"), .object([
            "writes": .array([.object(["update": .object(["name": .string(h.root + "/" + p), "fields": .object(["status": str(status)])]),
                                       "updateMask": .object(["fieldPaths": .array([.string("status")])])])]),
            "transaction": .string(t)]), as: who).status
    }

    /// The slots' versions of `paths`, when they would answer.
    func held(_ h: TestHarness, _ paths: [String]) -> [StoredDocument]? {
        guard let space = h.service.storage.cachedSpace(of: db) else { return nil }
        return h.service.storage.transactionWrites.documents(space: space, paths: paths.map(path))
    }

    /// What a transaction's batchGet of `p` answers, and what a plain get (the store) answers: equal.
    func expectReadIsTheStores(_ h: TestHarness, _ p: String, as who: TestHarness.As = .owner,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        let t = begin(h, as: who)
        let read = batchGet(h, [p], transaction: t, as: who)
        #expect(read.status == 200, sourceLocation: sourceLocation)
        let plain = h.call("GET", h.api("/" + p))
        if plain.status == 404 {
            #expect(read.json[0]?["missing"]?.stringValue == h.root + "/" + p, sourceLocation: sourceLocation)
        } else {
            #expect(read.json[0]?["found"] == plain.json, sourceLocation: sourceLocation)
        }
        _ = h.call("POST", h.api(":rollback"), .object(["transaction": .string(t)]), as: who)
    }

    /// The loop the bench runs: each transaction's read is the version the previous one committed,
    /// answered from the slots, and the commits never conflict.
    @Test func aReadModifyWriteLoopReadsItsOwnLastCommit() throws {
        let h = try TestHarness(rules: Self.rules)
        let alice = TestHarness.As.user("alice")
        let p = "users/alice/files/f"
        #expect(h.call("PATCH", h.api("/" + p), .object(["fields": .object(["status": str("pending"), "n": int(1)])]), as: alice).status == 200)
        var status = "pending"
        for i in 0..<6 {
            let t = begin(h, as: alice)
            let read = batchGet(h, [p], transaction: t, as: alice)
            #expect(read.status == 200)
            #expect(read.json[0]?["found"]?["fields"]?["status"] == str(status))
            #expect(read.json[0]?["found"] == h.call("GET", h.api("/" + p)).json)
            // From the second transaction on, the read came from what the first committed.
            #expect((held(h, [p]) != nil) == (i > 0))
            status = status == "pending" ? "ready" : "pending"
            #expect(commit(h, p, status: status, transaction: t, as: alice) == 200)
            #expect(held(h, [p])?.first?.fields[ExactString("status")] == .string(status))
        }
        // Reads served from the slots are recorded like the store's: a write in between aborts.
        let t = begin(h, as: alice)
        #expect(batchGet(h, [p], transaction: t, as: alice).status == 200)
        let other = begin(h, as: alice)
        #expect(batchGet(h, [p], transaction: other, as: alice).status == 200)
        #expect(commit(h, p, status: "ready", transaction: other, as: alice) == 200)
        #expect(commit(h, p, status: "pending", transaction: t, as: alice) == 409)
        // The aborted commit wrote nothing and changed no slot.
        #expect(held(h, [p])?.first?.fields[ExactString("status")] == .string("ready"))
        expectReadIsTheStores(h, p, as: alice)
    }

    /// Every other way to change the document takes its slot out of service, so the next
    /// transaction's read is the store's, never the version the last transaction wrote.
    @Test func everyOtherWriteRouteMakesTheReadTheStores() throws {
        let h = try TestHarness()
        let p = "c/d"
        func primed() {
            h.put(p, ["status": str("pending"), "n": int(1)])
            let t = begin(h)
            _ = batchGet(h, [p], transaction: t)
            #expect(commit(h, p, status: "ready", transaction: t) == 200)
            #expect(held(h, [p]) != nil)
        }
        // PATCH (an update through commit), DELETE, :commit without a transaction, :batchWrite, and the
        // commit of the gRPC path (`commit(completion:)`).
        primed()
        h.put(p, ["status": str("patched")])
        #expect(held(h, [p]) == nil)
        expectReadIsTheStores(h, p)
        primed()
        #expect(h.call("DELETE", h.api("/" + p)).status == 200)
        #expect(held(h, [p]) == nil)
        expectReadIsTheStores(h, p)
        primed()
        #expect(h.call("POST", h.api(":commit"), .object(["writes": .array([.object([
            "update": .object(["name": .string(h.root + "/" + p), "fields": .object(["n": int(7)])])])])])).status == 200)
        #expect(held(h, [p]) == nil)
        expectReadIsTheStores(h, p)
        primed()
        #expect(h.call("POST", h.api(":batchWrite"), .object(["writes": .array([.object([
            "update": .object(["name": .string(h.root + "/" + p), "fields": .object(["n": int(8)])])])])])).status == 200)
        #expect(held(h, [p]) == nil)
        expectReadIsTheStores(h, p)
        primed()
        let done = DispatchSemaphore(value: 0)
        let write = Write(path: path(p), operation: .delete, transforms: [], precondition: nil)
        h.service.commit(db, writes: [write], transaction: nil, caller: .admin) { _ in done.signal() }
        done.wait()
        #expect(held(h, [p]) == nil)
        expectReadIsTheStores(h, p)
        // A transaction's own delete: its slot stays out of service.
        primed()
        let t = begin(h)
        #expect(h.call("POST", h.api(":commit"), .object(["writes": .array([.object(["delete": .string(h.root + "/" + p)])]),
                                                         "transaction": .string(t)])).status == 200)
        #expect(held(h, [p]) == nil)
        expectReadIsTheStores(h, p)
        // Clearing the database and resetting everything.
        primed()
        #expect(h.call("DELETE", "/emulator/v1/projects/\(h.project)/databases/(default)/documents").status == 200)
        #expect(held(h, [p]) == nil)
        expectReadIsTheStores(h, p)
        primed()
        try h.service.reset()
        #expect(held(h, [p]) == nil)
        expectReadIsTheStores(h, p)
    }

    /// A batchGet of several documents is answered from the slots only when they hold all of them.
    @Test func severalDocumentsComeFromTheSlotsOnlyAllTogether() throws {
        let h = try TestHarness()
        for p in ["c/a", "c/b"] { h.put(p, ["status": str("pending")]) }
        let t = begin(h)
        _ = batchGet(h, ["c/a", "c/b"], transaction: t)
        #expect(h.call("POST", h.api(":commit"), .object([
            "writes": .array(["c/a", "c/b"].map { JSON.object(["update": .object(["name": .string(h.root + "/" + $0),
                                                                            "fields": .object(["status": str("ready")])])]) }),
            "transaction": .string(t)])).status == 200)
        #expect(held(h, ["c/a", "c/b"])?.count == 2)
        h.put("c/a", ["status": str("other")])
        #expect(held(h, ["c/a", "c/b"]) == nil)
        let t2 = begin(h)
        let read = batchGet(h, ["c/b", "c/a", "c/b"], transaction: t2)
        #expect(read.status == 200)
        #expect(read.json.arrayValue?.count == 2)
        #expect(read.json[0]?["found"] == h.call("GET", h.api("/c/b")).json)
        #expect(read.json[1]?["found"] == h.call("GET", h.api("/c/a")).json)
    }

    /// The rules judge a read from the slots as they judge the store's: the same denial for a stranger.
    @Test func theRulesJudgeEveryReadFromTheSlots() throws {
        let h = try TestHarness(rules: Self.rules)
        let alice = TestHarness.As.user("alice"), bob = TestHarness.As.user("bob")
        let p = "users/alice/files/f"
        #expect(h.call("PATCH", h.api("/" + p), .object(["fields": .object(["status": str("pending")])]), as: alice).status == 200)
        let t = begin(h, as: alice)
        _ = batchGet(h, [p], transaction: t, as: alice)
        #expect(commit(h, p, status: "ready", transaction: t, as: alice) == 200)
        #expect(held(h, [p]) != nil)
        let denied = batchGet(h, [p], transaction: begin(h, as: bob), as: bob)
        // The same request on the store's path: the slots emptied.
        h.service.storage.transactionWrites.removeAll()
        let deniedByStore = batchGet(h, [p], transaction: begin(h, as: bob), as: bob)
        #expect(denied.status == 403)
        #expect(denied.status == deniedByStore.status)
        #expect(denied.json == deniedByStore.json)
    }

    /// Rules that judge `resource.data` (the version read, and the one an update replaces).
    static let resourceRules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /users/{uid}/files/{f} {
              allow read: if request.auth.uid == uid && resource.data.status in ['pending', 'ready'];
              allow update: if request.auth.uid == uid && resource.data.status != 'locked';
              allow create: if request.auth.uid == uid;
            }
          }
        }
        """

    /// A held version carries the `resource` its commit made for the rules (its `request.resource`),
    /// equal to the one made from the document; the next read and the next commit are judged on it
    /// exactly as on the store's path. A commit the rules did not judge (an admin's) carries none.
    @Test func aHeldVersionCarriesTheResourceItsCommitMade() throws {
        let h = try TestHarness(rules: Self.resourceRules)
        let alice = TestHarness.As.user("alice")
        let p = "users/alice/files/f"
        #expect(h.call("PATCH", h.api("/" + p), .object(["fields": .object(["status": str("pending"), "n": int(1)])]), as: alice).status == 200)
        var t = begin(h, as: alice)
        #expect(batchGet(h, [p], transaction: t, as: alice).status == 200)
        #expect(commit(h, p, status: "ready", transaction: t, as: alice) == 200)
        let space = try #require(h.service.storage.cachedSpace(of: db))
        let held = try #require(h.service.storage.transactionWrites.held(space: space, paths: [path(p)])?.first)
        #expect(held.resource == RulesConversion.resource(db, path: held.document.path, fields: held.document.fields))
        #expect(held.encoded == StoredValueCodec.encodeFields(held.document.fields))
        expectReadIsTheStores(h, p, as: alice)
        // The next transaction reads and updates on the carried `resource`: `locked` is written
        // (allowed: the old version was `ready`), and the update after it is denied on the held one.
        t = begin(h, as: alice)
        #expect(batchGet(h, [p], transaction: t, as: alice).status == 200)
        #expect(commit(h, p, status: "locked", transaction: t, as: alice) == 200)
        #expect(h.service.storage.transactionWrites.held(space: space, paths: [path(p)])?.first?.resource != nil)
        // The replaced version went to the history rows from the carried stored form: read back at its time.
        let then = h.call("GET", h.api("/" + p) + "?readTime=" + ValueJSON.formatTimestamp(held.document.updateTime))
        #expect(then.status == 200)
        #expect(then.json["fields"]?["status"] == str("ready"))
        #expect(then.json["fields"]?["n"] == int(1))
        t = begin(h, as: alice)
        // The read is denied (`locked` is not a readable status), on the slots' path as on the store's.
        let denied = batchGet(h, [p], transaction: t, as: alice)
        #expect(denied.status == 403)
        #expect(commit(h, p, status: "ready", transaction: t, as: alice) == 403)
        h.service.storage.transactionWrites.removeAll()
        let deniedByStore = batchGet(h, [p], transaction: begin(h, as: alice), as: alice)
        #expect(denied.json == deniedByStore.json)
        // An admin's transaction is not judged: its version is held without a `resource`, and read as before.
        let ta = begin(h)
        #expect(batchGet(h, [p], transaction: ta).status == 200)
        #expect(commit(h, p, status: "pending", transaction: ta) == 200)
        let adminHeld = try #require(h.service.storage.transactionWrites.held(space: space, paths: [path(p)])?.first)
        #expect(adminHeld.resource == nil)
        expectReadIsTheStores(h, p, as: alice)
    }

    /// Rules that read documents take the store's path (the grant is read in the same snapshot):
    /// without the store their `exists()` could only deny.
    @Test func rulesThatReadDocumentsReadTheStore() throws {
        let h = try TestHarness(rules: Self.readingRules)
        let bob = TestHarness.As.user("bob")
        #expect(h.call("PATCH", h.api("/grants/bob"), .object(["fields": .object([:])])).status == 200)
        #expect(h.call("PATCH", h.api("/granted/g"), .object(["fields": .object(["status": str("pending")])]), as: bob).status == 200)
        let tb = begin(h, as: bob)
        _ = batchGet(h, ["granted/g"], transaction: tb, as: bob)
        #expect(commit(h, "granted/g", status: "ready", transaction: tb, as: bob) == 200)
        #expect(held(h, ["granted/g"]) != nil)
        // Allowed: the grant was read from the store (a read without it would have been denied).
        #expect(batchGet(h, ["granted/g"], transaction: begin(h, as: bob), as: bob).status == 200)
        #expect(h.call("DELETE", h.api("/grants/bob")).status == 200)
        #expect(batchGet(h, ["granted/g"], transaction: begin(h, as: bob), as: bob).status == 403)
    }
}

/// The slots in the shapes these tests read and write them: documents alone.
private extension TransactionWrites {
    func committed(space: Int64, at time: Int64, _ documents: [(path: ResourcePath, document: StoredDocument?)]) {
        committed(space: space, at: time, documents.map { Version(path: $0.path, document: $0.document) })
    }

    func documents(space: Int64, paths: [ResourcePath]) -> [StoredDocument]? {
        held(space: space, paths: paths)?.map(\.document)
    }
}
