import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// `readTime` on every read method: queries, aggregations, lists and collection ids see exactly
/// what the database held then; read-only transactions read one snapshot; Firestore's limits.
@Suite struct HistoricalReadTests {
    static func stamp(_ t: Instant) -> JSON { .string(ValueJSON.formatTimestamp(t)) }

    /// Runs `structured` at `readTime` (nil: now); returns status, ids and the whole answer.
    static func query(_ h: TestHarness, _ structured: JSON, at readTime: Instant?, parent: String = "") -> (status: Int, ids: [String], json: JSON) {
        var body: [(String, JSON)] = [("structuredQuery", structured)]
        if let readTime { body.append(("readTime", stamp(readTime))) }
        let r = h.call("POST", h.api(parent + ":runQuery"), .object(JSONObject(body)))
        let ids = (r.json.arrayValue ?? []).compactMap { $0["document"]?["name"]?.stringValue }
            .map { String($0.dropFirst(h.root.count + 1)) }
        return (r.status, ids, r.json)
    }

    // MARK: Queries see the past

    @Test func queriesFilterOrderAndLimitOnPastValues() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1), "tag": str("x")])
        h.put("c/b", ["n": int(5), "tag": str("x")])
        h.put("c/gone", ["n": int(9), "tag": str("y")])
        h.clock.advance(seconds: 10)
        let t = h.clock.now()
        h.clock.advance(seconds: 10)
        h.put("c/a", ["n": int(100), "tag": str("y")])         // changed value and tag
        #expect(h.call("DELETE", h.api("/c/gone")).status == 200)  // deleted since
        h.put("c/late", ["n": int(7), "tag": str("x")])        // created since

        let cases: [(String, JSON, [String], [String])] = [
            ("all", sq("c"), ["c/a", "c/b", "c/gone"], ["c/a", "c/b", "c/late"]),
            ("==", sq("c", where: ff("tag", "EQUAL", str("x"))), ["c/a", "c/b"], ["c/b", "c/late"]),
            ("range", sq("c", where: ff("n", "LESS_THAN", int(6))), ["c/a", "c/b"], ["c/b"]),
            ("order desc limit", sq("c", orderBy: [order("n", "DESCENDING")], limit: 2), ["c/gone", "c/b"], ["c/a", "c/late"]),
            ("order asc offset", sq("c", orderBy: [order("n")], limit: 1, offset: 1), ["c/b"], ["c/late"]),
            ("cursor", sq("c", orderBy: [order("n")], startAt: .object(["values": .array([int(2)])])), ["c/b", "c/gone"], ["c/b", "c/late", "c/a"]),
            ("== with order", sq("c", where: ff("tag", "EQUAL", str("y")), orderBy: [order("n", "DESCENDING")], limit: 5), ["c/gone"], ["c/a"]),
            ("name desc", sq("c", orderBy: [order("__name__", "DESCENDING")], limit: 2), ["c/gone", "c/b"], ["c/late", "c/b"]),
            ("in", sq("c", where: ff("n", "IN", arr([int(1), int(9), int(7)]))), ["c/a", "c/gone"], ["c/late"]),
            ("OR", sq("c", where: composite("OR", [ff("n", "EQUAL", int(1)), ff("tag", "EQUAL", str("y"))])), ["c/a", "c/gone"], ["c/a"]),
        ]
        for (label, structured, past, now) in cases {
            let then = Self.query(h, structured, at: t)
            #expect(then.status == 200, "\(label): \(then.json)")
            #expect(then.ids == past, "\(label) at readTime")
            #expect(Self.query(h, structured, at: nil).ids == now, "\(label) now")
        }
        // Field values and versions are those of then.
        let a = Self.query(h, sq("c", where: ff("__name__", "EQUAL", QueryTests.ref(h, "c/a"))), at: t).json[0]
        #expect(a?["document"]?["fields"]?["n"] == int(1))
        #expect(a?["readTime"] == Self.stamp(t))
    }

    @Test func everyReadReportsTheSnapshotItUsed() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        h.clock.advance(seconds: 5)
        let t = h.clock.now()
        h.clock.advance(seconds: 5)
        h.put("c/a", ["n": int(2)])
        let q = Self.query(h, sq("c"), at: t)
        #expect(q.json[0]?["readTime"] == Self.stamp(t))
        let empty = Self.query(h, sq("none"), at: t)
        #expect(empty.json == .array([.object(["readTime": Self.stamp(t), "done": .bool(true)])]))
        let agg = h.call("POST", h.api(":runAggregationQuery"), .object([
            "structuredAggregationQuery": .object(["structuredQuery": sq("c"), "aggregations": .array([.object(["count": .object([:])])])]),
            "readTime": Self.stamp(t),
        ]))
        #expect(agg.json[0]?["readTime"] == Self.stamp(t))
        // Without a read time: the time of the read, never before what it returned.
        let now = Self.query(h, sq("c"), at: nil).json[0]
        let updated = now?["document"]?["updateTime"]?.stringValue.flatMap(ValueJSON.parseTimestamp)
        let readTime = now?["readTime"]?.stringValue.flatMap(ValueJSON.parseTimestamp)
        #expect(updated != nil && readTime != nil && readTime! >= updated!)
    }

    @Test func aggregationsCountAndSumThePast() throws {
        let h = try TestHarness()
        for i in 1...4 { h.put("c/d\(i)", ["n": int(Int64(i))]) }
        h.clock.advance(seconds: 1)
        let t = h.clock.now()
        h.clock.advance(seconds: 1)
        #expect(h.call("DELETE", h.api("/c/d4")).status == 200)
        h.put("c/d1", ["n": int(100)])
        h.put("c/d9", ["n": int(9)])
        func aggregate(at time: Instant?) -> JSON? {
            var body: [(String, JSON)] = [("structuredAggregationQuery", .object([
                "structuredQuery": sq("c"),
                "aggregations": .array([.object(["alias": .string("n"), "count": .object([:])]),
                                        .object(["alias": .string("s"), "sum": .object(["field": .object(["fieldPath": .string("n")])])])]),
            ]))]
            if let time { body.append(("readTime", Self.stamp(time))) }
            return h.call("POST", h.api(":runAggregationQuery"), .object(JSONObject(body))).json[0]?["result"]?["aggregateFields"]
        }
        #expect(aggregate(at: t)?["n"] == int(4))
        #expect(aggregate(at: t)?["s"] == int(10))
        #expect(aggregate(at: nil)?["n"] == int(4))
        #expect(aggregate(at: nil)?["s"] == int(114))
    }

    @Test func listDocumentsAndCollectionIdsSeeThePast() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        h.put("c/b/sub/x", ["n": int(2)])   // b itself never exists
        h.put("old/z", [:])
        h.clock.advance(seconds: 3)
        let t = h.clock.now()
        h.clock.advance(seconds: 3)
        #expect(h.call("DELETE", h.api("/c/a")).status == 200)
        #expect(h.call("DELETE", h.api("/old/z")).status == 200)
        h.put("c/new", [:])
        h.put("fresh/y", [:])
        h.put("c/b/later/q", [:])
        func names(_ suffix: String) -> [String] {
            (h.call("GET", h.api(suffix)).json["documents"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
                .map { String($0.dropFirst(h.root.count + 1)) }
        }
        let rt = "readTime=" + ValueJSON.formatTimestamp(t)
        #expect(names("/c?\(rt)") == ["c/a"])
        #expect(names("/c") == ["c/new"])
        #expect(names("/c?\(rt)&showMissing=true") == ["c/a", "c/b"])
        #expect(names("?\(rt)&recursive=true") == ["c/a", "c/b/sub/x", "old/z"])
        #expect(names("/c?\(rt)&orderBy=n%20desc") == ["c/a"])
        func collections(_ parent: String, at time: Instant?) -> [String] {
            var body: [(String, JSON)] = []
            if let time { body.append(("readTime", Self.stamp(time))) }
            let r = h.call("POST", h.api(parent + ":listCollectionIds"), .object(JSONObject(body)))
            #expect(r.status == 200, "\(r.json)")
            return (r.json["collectionIds"]?.arrayValue ?? []).compactMap(\.stringValue)
        }
        #expect(collections("", at: t) == ["c", "old"])
        #expect(collections("", at: nil) == ["c", "fresh"])
        #expect(collections("/c/b", at: t) == ["sub"])
        #expect(collections("/c/b", at: nil) == ["later", "sub"])
    }

    @Test func readOnlyTransactionsReadOneSnapshot() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        h.clock.advance(seconds: 1)
        let t = h.clock.now()
        h.clock.advance(seconds: 1)
        h.put("c/a", ["n": int(2)])
        h.put("c/b", ["n": int(3)])
        // A read time given to the transaction: every kind of read sees it.
        let begun = h.call("POST", h.api(":beginTransaction"), .object(["options": .object(["readOnly": .object(["readTime": Self.stamp(t)])])]))
        let txn = begun.json["transaction"] ?? .null
        let inTxn = h.call("POST", h.api(":runQuery"), .object(["structuredQuery": sq("c"), "transaction": txn]))
        #expect(inTxn.json.arrayValue?.count == 1)
        #expect(inTxn.json[0]?["document"]?["fields"]?["n"] == int(1))
        #expect(inTxn.json[0]?["readTime"] == Self.stamp(t))
        // Without a read time: the snapshot is fixed by the first read.
        let r = h.call("POST", h.api(":runQuery"), .object(["structuredQuery": sq("c"), "newTransaction": .object(["readOnly": .object([:])])]))
        // The transaction comes as its own first element, the documents after it.
        #expect(r.json[0]?["transaction"] != nil)
        let snapshot = r.json[1]?["readTime"]
        #expect(snapshot != nil)
        h.clock.advance(seconds: 1)
        h.put("c/a", ["n": int(50)])
        h.put("c/z", [:])
        let again = h.call("POST", h.api(":runQuery"), .object(["structuredQuery": sq("c"), "transaction": r.json[0]?["transaction"] ?? .null]))
        #expect(again.json.arrayValue?.compactMap { $0["document"]?["fields"]?["n"] } == [int(2), int(3)])
        #expect(again.json[0]?["readTime"] == snapshot)
        let got = h.call("POST", h.api(":batchGet"), .object(["documents": .array([.string(h.root + "/c/a"), .string(h.root + "/c/z")]),
                                                               "transaction": r.json[0]?["transaction"] ?? .null]))
        #expect(got.json[0]?["found"]?["fields"]?["n"] == int(2))
        #expect(got.json[1]?["missing"] != nil)
        #expect(got.json[0]?["readTime"] == snapshot)
    }

    // MARK: Firestore's limits

    @Test func readTimeLimits() throws {
        let h = try TestHarness()
        h.put("c/a", [:])
        h.clock.advance(seconds: 3599.5)  // so the document exists at every accepted time below
        let now = h.clock.now()
        let wholeMinuteTwoHoursAgo = Instant(unixMicros: (now.unixMicros - 7_200_000_000) / 60_000_000 * 60_000_000)
        let cases: [(String, Instant, Int, String)] = [
            ("future", now.adding(seconds: 0.001), 400, "INVALID_ARGUMENT"),
            ("whole minute beyond the hour", wholeMinuteTwoHoursAgo, 400, "FAILED_PRECONDITION"),
            ("other time beyond the hour", wholeMinuteTwoHoursAgo.adding(seconds: 1.5), 400, "INVALID_ARGUMENT"),
            ("just inside the hour", now.adding(seconds: -3599), 200, ""),
            ("now", now, 200, ""),
        ]
        for (label, t, status, code) in cases {
            let requests: [(String, String, JSON?)] = [
                ("GET", h.api("/c/a?readTime=\(ValueJSON.formatTimestamp(t))"), nil),
                ("GET", h.api("/c?readTime=\(ValueJSON.formatTimestamp(t))"), nil),
                ("POST", h.api(":runQuery"), .object(["structuredQuery": sq("c"), "readTime": Self.stamp(t)])),
                ("POST", h.api(":runAggregationQuery"), .object([
                    "structuredAggregationQuery": .object(["structuredQuery": sq("c"), "aggregations": .array([.object(["count": .object([:])])])]),
                    "readTime": Self.stamp(t)])),
                ("POST", h.api(":batchGet"), .object(["documents": .array([.string(h.root + "/c/a")]), "readTime": Self.stamp(t)])),
                ("POST", h.api(":listCollectionIds"), .object(["readTime": Self.stamp(t)])),
                ("POST", h.api(":beginTransaction"), .object(["options": .object(["readOnly": .object(["readTime": Self.stamp(t)])])])),
                ("POST", h.api(":runQuery"), .object(["structuredQuery": sq("c"), "newTransaction": .object(["readOnly": .object(["readTime": Self.stamp(t)])])])),
            ]
            for (method, target, body) in requests {
                let r = h.call(method, target, body)
                #expect(r.status == status, "\(label) \(target): \(r.json)")
                if status != 200 { #expect(r.json["error"]?["status"]?.stringValue == code, "\(label) \(target)") }
            }
        }
        let future = h.call("POST", h.api(":runQuery"), .object(["structuredQuery": sq("c"), "readTime": Self.stamp(now.adding(seconds: 1))]))
        #expect(future.json["error"]?["message"]?.stringValue == "The requested 'read_time' cannot be in the future.")
    }

    @Test func commitTimesAheadOfAFrozenClockAreValidReadTimes() throws {
        let h = try TestHarness()
        // The clock is frozen: each commit takes 1 µs more than the last.
        var times: [JSON] = []
        for i in 0..<3 { times.append(h.put("c/a", ["n": int(Int64(i))])["updateTime"] ?? .null) }
        #expect(Set(times.compactMap(\.stringValue)).count == 3)
        for (i, t) in times.enumerated() {
            let r = h.call("POST", h.api(":runQuery"), .object(["structuredQuery": sq("c"), "readTime": t]))
            #expect(r.status == 200, "\(r.json)")
            #expect(r.json[0]?["document"]?["fields"]?["n"] == int(Int64(i)))
        }
        // A strong read reports a time no earlier than the last commit.
        #expect(Self.query(h, sq("c"), at: nil).json[0]?["readTime"] == times[2])
    }

    @Test func historyIsPrunedBeyondTheHour() throws {
        let h = try TestHarness()
        for i in 0..<5 { h.put("c/a", ["n": int(Int64(i))]) }
        func historyRows() throws -> Int64 {
            try h.database.read { conn in try conn.scalarInt("SELECT count(*) FROM fs_history") } ?? -1
        }
        #expect(try historyRows() == 4)
        h.clock.advance(seconds: 3601)
        h.put("c/b", ["n": int(1)])
        #expect(try historyRows() == 4)  // creating replaces nothing, so nothing is pruned yet
        h.put("c/b", ["n": int(2)])
        #expect(try historyRows() == 1)  // only the version just replaced
    }

    // MARK: Against an oracle

    /// Random writes over time; at sampled instants, every query at that `readTime` must answer
    /// exactly what the same query answers on a fresh database holding that instant's state.
    @Test func randomHistoriesMatchReplayedStates() throws {
        var rng = SplitMix(seed: 20260102)
        let h = try TestHarness()
        let paths = (0..<8).map { "items/d\($0)" } + (0..<4).map { "p/x/items/e\($0)" } + ["other/o1"]
        var state: [String: [String: JSON]] = [:]
        var snapshots: [(Instant, [String: [String: JSON]])] = []
        func randomFields() -> [String: JSON] {
            var f: [String: JSON] = [:]
            if rng.next(4) > 0 { f["n"] = rng.next(5) == 0 ? dbl(Double(rng.next(10)) + 0.5) : int(Int64(rng.next(10))) }
            if rng.next(3) > 0 { f["tag"] = str(["a", "b", "c"][rng.next(3)]) }
            if rng.next(2) == 0 { f["arr"] = arr((0..<rng.next(3)).map { _ in int(Int64(rng.next(3))) }) }
            if rng.next(2) == 0 { f["grp"] = bool(rng.next(2) == 0) }
            return f
        }
        for step in 0..<60 {
            h.clock.advance(seconds: Double(1 + rng.next(5)))
            let path = paths[rng.next(paths.count)]
            if rng.next(4) == 0 {
                #expect(h.call("DELETE", h.api("/" + path)).status == 200)
                state[path] = nil
            } else {
                let fields = randomFields()
                h.put(path, fields)
                state[path] = fields
            }
            if step % 6 == 5 { snapshots.append((h.clock.now(), state)) }
        }
        let queries: [(String, JSON, String)] = [
            ("all", sq("items"), ""),
            ("n > 3", sq("items", where: ff("n", "GREATER_THAN", int(3))), ""),
            ("n == 5", sq("items", where: ff("n", "EQUAL", int(5))), ""),
            ("tag in", sq("items", where: ff("tag", "IN", arr([str("a"), str("b")]))), ""),
            ("tag !=", sq("items", where: ff("tag", "NOT_EQUAL", str("a"))), ""),
            ("n desc limit 3", sq("items", orderBy: [order("n", "DESCENDING")], limit: 3), ""),
            ("n offset limit", sq("items", orderBy: [order("n")], limit: 4, offset: 2), ""),
            ("array-contains", sq("items", where: ff("arr", "ARRAY_CONTAINS", int(1))), ""),
            ("grp order limit", sq("items", where: ff("grp", "EQUAL", bool(true)), orderBy: [order("n")], limit: 2), ""),
            ("cursors", sq("items", orderBy: [order("n")], startAt: .object(["values": .array([int(4)]), "before": .bool(true)]),
                           endAt: .object(["values": .array([int(7)])])), ""),
            ("OR", sq("items", where: composite("OR", [ff("n", "LESS_THAN", int(2)), ff("tag", "EQUAL", str("c"))])), ""),
            ("group", sq("items", allDescendants: true, where: ff("n", "GREATER_THAN_OR_EQUAL", int(5))), ""),
            ("group under p/x", sq("items", allDescendants: true, orderBy: [order("__name__", "DESCENDING")], limit: 3), "/p/x"),
            ("name desc", sq("items", orderBy: [order("__name__", "DESCENDING")], limit: 5), ""),
        ]
        #expect(snapshots.count == 10)
        for (t, expectedState) in snapshots {
            let oracle = try TestHarness()
            for (path, fields) in expectedState { oracle.put(path, fields) }
            for (label, structured, parent) in queries {
                let got = Self.query(h, structured, at: t, parent: parent)
                let want = Self.query(oracle, structured, at: nil, parent: parent)
                #expect(got.status == 200, "\(label): \(got.json)")
                #expect(got.ids == want.ids, "\(label) at \(ValueJSON.formatTimestamp(t))")
                let gotFields = (got.json.arrayValue ?? []).map { $0["document"]?["fields"] }
                let wantFields = (want.json.arrayValue ?? []).map { $0["document"]?["fields"] }
                #expect(gotFields == wantFields, "\(label) fields")
            }
            // Point reads agree too.
            for path in paths {
                let r = h.call("GET", h.api("/\(path)?readTime=\(ValueJSON.formatTimestamp(t))"))
                #expect(r.status == (expectedState[path] == nil ? 404 : 200), "\(path)")
            }
        }
    }
}

/// A small deterministic generator (SplitMix64) so random histories replay identically.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A number in `0..<n`.
    mutating func next(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
