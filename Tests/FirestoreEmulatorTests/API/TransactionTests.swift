import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

@Suite struct TransactionTests {
    func begin(_ h: TestHarness, readOnly: Bool = false) -> String {
        let options: JSON = readOnly ? .object(["readOnly": .object([:])]) : .object(["readWrite": .object([:])])
        let r = h.call("POST", h.api(":beginTransaction"), .object(["options": options]))
        return r.json["transaction"]?.stringValue ?? ""
    }

    func setCounter(_ h: TestHarness, _ n: Int64, transaction: String?) -> (status: Int, json: JSON) {
        var body: [(String, JSON)] = [("writes", .array([.object(["update": .object(["name": .string(h.root + "/c/counter"), "fields": .object(["n": int(n)])])])]))]
        if let transaction { body.append(("transaction", .string(transaction))) }
        let r = h.call("POST", h.api(":commit"), .object(JSONObject(body)))
        return (r.status, r.json)
    }

    func get(_ h: TestHarness, _ path: String, transaction: String) -> (status: Int, json: JSON) {
        let t = transaction.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let r = h.call("GET", h.api("/\(path)?transaction=\(t)"))
        return (r.status, r.json)
    }

    @Test func secondOfTwoRacingTransactionsAborts() throws {
        let h = try TestHarness()
        h.put("c/counter", ["n": int(0)])
        let t1 = begin(h)
        let t2 = begin(h)
        #expect(!t1.isEmpty && t1 != t2)
        #expect(get(h, "c/counter", transaction: t1).status == 200)
        #expect(get(h, "c/counter", transaction: t2).status == 200)
        #expect(setCounter(h, 1, transaction: t1).status == 200)
        let second = setCounter(h, 1, transaction: t2)
        #expect(second.status == 409)
        #expect(second.json["error"]?["status"]?.stringValue == "ABORTED")
        // The aborted transaction is over.
        #expect(setCounter(h, 5, transaction: t2).status == 400)
        #expect(h.call("GET", h.api("/c/counter")).json["fields"]?["n"] == int(1))
    }

    @Test func readOfMissingDocumentConflictsWithItsCreation() throws {
        let h = try TestHarness()
        let t = begin(h)
        #expect(get(h, "c/counter", transaction: t).status == 404)
        h.put("c/counter", ["n": int(9)])
        #expect(setCounter(h, 1, transaction: t).status == 409)
    }

    @Test func unrelatedWritesDoNotConflict() throws {
        let h = try TestHarness()
        h.put("c/counter", ["n": int(0)])
        let t = begin(h)
        _ = get(h, "c/counter", transaction: t)
        h.put("c/other", ["x": int(1)])
        #expect(setCounter(h, 2, transaction: t).status == 200)
    }

    @Test func queryReadsInANewTransactionAreRecorded() throws {
        let h = try TestHarness()
        h.put("c/counter", ["n": int(0)])
        let r = h.call("POST", h.api(":runQuery"), .object(["structuredQuery": sq("c"), "newTransaction": .object(["readWrite": .object([:])])]))
        let t = r.json[0]?["transaction"]?.stringValue ?? ""
        #expect(!t.isEmpty)
        h.put("c/counter", ["n": int(5)])
        #expect(setCounter(h, 1, transaction: t).status == 409)
    }

    @Test func idleTransactionsExpireAfter270Seconds() throws {
        let h = try TestHarness()
        h.put("c/counter", ["n": int(0)])
        let t = begin(h)
        h.clock.advance(seconds: 200)
        #expect(get(h, "c/counter", transaction: t).status == 200)  // activity refreshes it
        h.clock.advance(seconds: 271)
        let expired = get(h, "c/counter", transaction: t)
        #expect(expired.status == 400)
        #expect(expired.json["error"]?["message"]?.stringValue == "The referenced transaction has expired or is no longer valid.")
        #expect(setCounter(h, 1, transaction: t).status == 400)
    }

    @Test func readOnlyRollbackAndUnknownTransactions() throws {
        let h = try TestHarness()
        let ro = begin(h, readOnly: true)
        #expect(setCounter(h, 1, transaction: ro).status == 400)
        let rw = begin(h)
        #expect(h.call("POST", h.api(":rollback"), .object(["transaction": .string(rw)])).status == 200)
        #expect(setCounter(h, 1, transaction: rw).status == 400)
        #expect(h.call("POST", h.api(":rollback"), .object(["transaction": .string("AAAA")])).status == 400)
        #expect(h.call("POST", h.api(":rollback"), .object([:])).status == 400)
        // A transaction of one database cannot be used in another.
        let other = h.call("POST", "/v1/projects/other/databases/(default)/documents:commit",
                           .object(["transaction": .string(begin(h)), "writes": .array([])]))
        #expect(other.status == 400)
        // Committing a read-only transaction without writes is fine.
        let ro2 = begin(h, readOnly: true)
        #expect(h.call("POST", h.api(":commit"), .object(["transaction": .string(ro2)])).status == 200)
    }

    @Test func concurrentIncrementsNeverLoseUpdates() throws {
        let h = try TestHarness()
        h.put("c/counter", ["n": int(0)])
        let workers = 6
        let perWorker = 5
        let aborted = Counter()
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            var done = 0
            while done < perWorker {
                let t = begin(h)
                let current = get(h, "c/counter", transaction: t).json["fields"]?["n"]?["integerValue"]?.stringValue.flatMap { Int64($0) } ?? -1
                if setCounter(h, current + 1, transaction: t).status == 200 {
                    done += 1
                } else {
                    aborted.increment()
                }
            }
        }
        #expect(h.call("GET", h.api("/c/counter")).json["fields"]?["n"] == int(Int64(workers * perWorker)))
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.lock(); value += 1; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return value }
}
