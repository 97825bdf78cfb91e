import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// Reads in read-write transactions conflict with writes committed by others before the
/// transaction's commit: documents read (get, batchGet, runQuery, list, aggregations) and the
/// result sets of queries (phantoms). A conflicting commit is ABORTED and applies nothing.
@Suite struct TransactionConflictTests {
    static func begin(_ h: TestHarness) -> JSON {
        h.call("POST", h.api(":beginTransaction"), .object(["options": .object(["readWrite": .object([:])])])).json["transaction"] ?? .null
    }

    /// Commits `marker/m = {by: txn}` in `txn`; returns status and JSON.
    static func commitMarker(_ h: TestHarness, _ txn: JSON) -> (status: Int, json: JSON) {
        let r = h.call("POST", h.api(":commit"), .object([
            "writes": .array([.object(["update": .object(["name": .string(h.root + "/marker/m"), "fields": .object(["by": str("txn")])])])]),
            "transaction": txn,
        ]))
        return (r.status, r.json)
    }

    static func markerWritten(_ h: TestHarness) -> Bool { h.call("GET", h.api("/marker/m")).status == 200 }

    static func runQuery(_ h: TestHarness, _ structured: JSON, _ txn: JSON) -> Int {
        h.call("POST", h.api(":runQuery"), .object(["structuredQuery": structured, "transaction": txn])).status
    }

    static func seed() throws -> TestHarness {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1), "tag": str("x")])
        h.put("c/b", ["n": int(5), "tag": str("x")])
        h.put("c/c", ["n": int(9), "tag": str("y")])
        return h
    }

    /// (label, query read in the transaction, what another client does next, whether the commit aborts)
    static let queryCases: [(String, JSON, @Sendable (TestHarness) -> Void, Bool)] = [
        ("a new document matches", sq("c", where: ff("tag", "EQUAL", str("x"))), { $0.put("c/new", ["tag": str("x")]) }, true),
        ("a document starts matching", sq("c", where: ff("tag", "EQUAL", str("x"))), { $0.put("c/c", ["n": int(9), "tag": str("x")]) }, true),
        ("a document stops matching", sq("c", where: ff("tag", "EQUAL", str("x"))), { $0.put("c/a", ["n": int(1), "tag": str("z")]) }, true),
        ("a matching document changes", sq("c", where: ff("tag", "EQUAL", str("x"))), { $0.put("c/b", ["n": int(6), "tag": str("x")]) }, true),
        ("a matching document is deleted", sq("c", where: ff("tag", "EQUAL", str("x"))), { _ = $0.call("DELETE", $0.api("/c/a")) }, true),
        ("an unrelated document is created", sq("c", where: ff("tag", "EQUAL", str("x"))), { $0.put("c/other", ["tag": str("q")]) }, false),
        ("an unrelated document changes", sq("c", where: ff("tag", "EQUAL", str("x"))), { $0.put("c/c", ["n": int(10), "tag": str("y")]) }, false),
        ("another collection", sq("c"), { $0.put("d/a", ["tag": str("x")]) }, false),
        ("range: inserted inside", sq("c", where: ff("n", "GREATER_THAN", int(3))), { $0.put("c/r", ["n": int(4)]) }, true),
        ("range: inserted outside", sq("c", where: ff("n", "GREATER_THAN", int(3))), { $0.put("c/r", ["n": int(2)]) }, false),
        ("limit: sorts before the last", sq("c", orderBy: [order("n")], limit: 2), { $0.put("c/r", ["n": int(0)]) }, true),
        ("limit: sorts after the last", sq("c", orderBy: [order("n")], limit: 2), { $0.put("c/r", ["n": int(100)]) }, false),
        ("empty result gains one", sq("c", where: ff("tag", "EQUAL", str("none"))), { $0.put("c/r", ["tag": str("none")]) }, true),
        ("collection group", sq("c", allDescendants: true), { $0.put("p/q/c/r", [:]) }, true),
    ]

    @Test(arguments: 0..<queryCases.count)
    func queriesConflictWithPhantoms(_ index: Int) throws {
        let (label, structured, interfere, aborts) = Self.queryCases[index]
        let h = try Self.seed()
        let txn = Self.begin(h)
        #expect(Self.runQuery(h, structured, txn) == 200, "\(label)")
        interfere(h)
        let result = Self.commitMarker(h, txn)
        if aborts {
            #expect(result.status == 409, "\(label): \(result.json)")
            #expect(result.json["error"]?["status"]?.stringValue == "ABORTED", "\(label)")
            #expect(result.json["error"]?["message"]?.stringValue == "Too much contention on these documents. Please try again.")
            #expect(!Self.markerWritten(h), "\(label): nothing is applied")
        } else {
            #expect(result.status == 200, "\(label): \(result.json)")
            #expect(Self.markerWritten(h), "\(label)")
        }
    }

    @Test func queriesInANewTransactionAreChecked() throws {
        let h = try Self.seed()
        let r = h.call("POST", h.api(":runQuery"), .object(["structuredQuery": sq("c", where: ff("tag", "EQUAL", str("y"))),
                                                            "newTransaction": .object(["readWrite": .object([:])])]))
        let txn = r.json[0]?["transaction"] ?? .null
        h.put("c/z", ["tag": str("y")])
        #expect(Self.commitMarker(h, txn).status == 409)
    }

    @Test func aggregationsAndListsConflictToo() throws {
        // An aggregation read in the transaction.
        var h = try Self.seed()
        var txn = Self.begin(h)
        let agg = h.call("POST", h.api(":runAggregationQuery"), .object([
            "structuredAggregationQuery": .object(["structuredQuery": sq("c"), "aggregations": .array([.object(["count": .object([:])])])]),
            "transaction": txn]))
        #expect(agg.json[0]?["result"]?["aggregateFields"]?["field_1"] == int(3))
        h.put("c/d", [:])
        #expect(Self.commitMarker(h, txn).status == 409)

        // A list of the collection.
        h = try Self.seed()
        txn = Self.begin(h)
        let id = txn.stringValue?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        #expect(h.call("GET", h.api("/c?transaction=\(id)")).status == 200)
        h.put("c/d", [:])
        #expect(Self.commitMarker(h, txn).status == 409)

        // A list is not disturbed by a write elsewhere.
        h = try Self.seed()
        txn = Self.begin(h)
        let id2 = txn.stringValue?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        #expect(h.call("GET", h.api("/c?transaction=\(id2)&pageSize=1")).status == 200)
        h.put("c/a/sub/x", [:])
        #expect(Self.commitMarker(h, txn).status == 200)
    }

    @Test func batchGetReadsConflict() throws {
        let h = try Self.seed()
        // Read through batchGet with newTransaction: found and missing documents both count.
        let r = h.call("POST", h.api(":batchGet"), .object(["documents": .array([.string(h.root + "/c/a"), .string(h.root + "/c/missing")]),
                                                            "newTransaction": .object(["readWrite": .object([:])])]))
        let txn = r.json[0]?["transaction"] ?? .null
        h.put("c/missing", [:])
        #expect(Self.commitMarker(h, txn).status == 409)

        let t2 = Self.begin(h)
        _ = h.call("POST", h.api(":batchGet"), .object(["documents": .array([.string(h.root + "/c/a")]), "transaction": t2]))
        #expect(h.call("DELETE", h.api("/c/a")).status == 200)
        #expect(Self.commitMarker(h, t2).status == 409)
    }

    @Test func ownWritesAndUnchangedReadsCommit() throws {
        let h = try Self.seed()
        let txn = Self.begin(h)
        #expect(Self.runQuery(h, sq("c"), txn) == 200)
        // The transaction writes into the very collection it queried: no conflict with itself.
        let r = h.call("POST", h.api(":commit"), .object([
            "writes": .array([.object(["update": .object(["name": .string(h.root + "/c/mine"), "fields": .object([:])])])]),
            "transaction": txn]))
        #expect(r.status == 200, "\(r.json)")
        // A write that leaves a document unchanged keeps its version: no conflict.
        let t2 = Self.begin(h)
        #expect(Self.runQuery(h, sq("c", where: ff("tag", "EQUAL", str("x"))), t2) == 200)
        h.put("c/a", ["n": int(1), "tag": str("x")])
        #expect(Self.commitMarker(h, t2).status == 200)
    }

    @Test func readOnlyTransactionsNeverAbort() throws {
        let h = try Self.seed()
        let begun = h.call("POST", h.api(":beginTransaction"), .object(["options": .object(["readOnly": .object([:])])]))
        let txn = begun.json["transaction"] ?? .null
        #expect(Self.runQuery(h, sq("c"), txn) == 200)
        h.put("c/new", [:])
        let r = h.call("POST", h.api(":commit"), .object(["transaction": txn]))
        #expect(r.status == 200, "\(r.json)")
    }

    @Test func anAbortedTransactionIsOver() throws {
        let h = try Self.seed()
        let txn = Self.begin(h)
        #expect(Self.runQuery(h, sq("c"), txn) == 200)
        h.put("c/new", [:])
        #expect(Self.commitMarker(h, txn).status == 409)
        let again = Self.commitMarker(h, txn)
        #expect(again.status == 400)
        #expect(again.json["error"]?["message"]?.stringValue == TransactionRegistry.closedMessage)
        // A retry (retryTransaction) starts fresh and commits.
        let retry = h.call("POST", h.api(":beginTransaction"), .object(["options": .object(["readWrite": .object(["retryTransaction": txn])])]))
        let t2 = retry.json["transaction"] ?? .null
        #expect(Self.runQuery(h, sq("c"), t2) == 200)
        #expect(Self.commitMarker(h, t2).status == 200)
    }

    @Test func racingQueryTransactionsSerialize() throws {
        // Each worker counts the documents of `c` in a transaction and writes the next one;
        // only serializable outcomes survive: ids 0..<n all exist, none twice.
        let h = try TestHarness()
        let workers = 4
        let perWorker = 4
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            var done = 0
            while done < perWorker {
                let txn = Self.begin(h)
                let r = h.call("POST", h.api(":runAggregationQuery"), .object([
                    "structuredAggregationQuery": .object(["structuredQuery": sq("c"), "aggregations": .array([.object(["count": .object([:])])])]),
                    "transaction": txn]))
                let count = r.json[0]?["result"]?["aggregateFields"]?["field_1"]?["integerValue"]?.stringValue ?? "?"
                let c = h.call("POST", h.api(":commit"), .object([
                    // No precondition: without phantom detection two workers would both write d<count>.
                    "writes": .array([.object(["update": .object(["name": .string(h.root + "/c/d\(count)"), "fields": .object([:])])])]),
                    "transaction": txn]))
                if c.status == 200 { done += 1 }
            }
        }
        let names = (h.call("GET", h.api("/c")).json["documents"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        #expect(Set(names) == Set((0..<(workers * perWorker)).map { h.root + "/c/d\($0)" }))
    }
}
