import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// `a == x ORDER BY b LIMIT n` walking b's index, each entry's document checked on the fields the
/// filter names before it is read whole (`QueryExecutor`, `OrderWalkBudget`): the same answers as
/// seeking every match and sorting, and only the documents that pass are read.
@Suite struct OrderWalkTests {
    private static let db = DatabaseID(project: "demo-test", database: "(default)")

    /// Values of every type class, with ties, NaN, null, ±0 and numbers equal across int and double.
    private static let orderValues: [JSON] = [
        int(1), int(1), dbl(1.0), int(2), dbl(-0.0), int(0), dbl(2.5), .object(["doubleValue": .string("NaN")]), nullV,
        str("a"), str("b"), str(""), bool(true), bool(false), ts("2001-01-01T00:00:00Z"), arr([int(1)]), arr([]),
        map([("k", int(1))]), .object(["referenceValue": .string("projects/demo-test/databases/(default)/documents/w/x")]),
        int(7), int(7), int(7), dbl(7.0),
    ]
    /// Values of the filtered field: strings, numbers equal as int and double, null.
    private static let filterValues: [JSON] = [str("a"), str("a"), str("b"), int(1), dbl(1.0), nullV, str("a")]

    /// A small deterministic generator (the same documents on every run).
    private struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    /// `count` documents in `w`: `s` from `filterValues` (missing in some), `n` from `orderValues`
    /// (missing in some), `t` an array, `g` a small number.
    private static func seed(_ h: TestHarness, count: Int, seed: UInt64, prefix: String = "d") {
        var g = Generator(state: seed)
        var writes: [JSON] = []
        for i in 0..<count {
            var fields: [(String, JSON)] = []
            if g.next(8) != 0 { fields.append(("s", filterValues[g.next(filterValues.count)])) }
            if g.next(6) != 0 { fields.append(("n", orderValues[g.next(orderValues.count)])) }
            fields.append(("t", arr([str("x\(g.next(3))"), str("y")])))
            fields.append(("g", int(Int64(g.next(3)))))
            writes.append(.object(["update": .object(["name": .string(h.root + "/w/\(prefix)\(i)"), "fields": .object(JSONObject(fields))])]))
        }
        #expect(h.call("POST", h.api(":commit"), .object(["writes": .array(writes)])).status == 200)
    }

    private static func parse(_ q: JSON) throws -> Query {
        try QueryParser(database: db, parent: .root).parse(ProtoObject(json: q, path: "structured_query"))
    }

    /// The query run with and without the walk, at `readTime` (nil: now).
    private static func both(_ h: TestHarness, _ query: Query, at readTime: Instant? = nil) throws
        -> (walked: QueryExecutor.Result, sorted: QueryExecutor.Result) {
        try h.database.read { conn in
            let space = try h.service.storage.space(of: db, conn)
            var executor = QueryExecutor(storage: h.service.storage, database: db)
            let walked = try executor.run(query, space: space, conn, at: readTime)
            executor.walksOrderIndex = false
            let sorted = try executor.run(query, space: space, conn, at: readTime)
            return (walked, sorted)
        }
    }

    private static let filters: [(String, JSON)] = [
        ("s == a", ff("s", "EQUAL", str("a"))),
        ("s == 1", ff("s", "EQUAL", int(1))),
        ("s == 1.0", ff("s", "EQUAL", dbl(1.0))),
        ("s == b (rare)", ff("s", "EQUAL", str("b"))),
        ("s == none", ff("s", "EQUAL", str("none"))),
        ("s IS NULL", uf("s", "IS_NULL")),
        ("s in [a]", ff("s", "IN", arr([str("a")]))),
        ("s in [a, 1]", ff("s", "IN", arr([str("a"), int(1)]))),
        ("t contains x1", ff("t", "ARRAY_CONTAINS", str("x1"))),
        ("t contains-any [x2]", ff("t", "ARRAY_CONTAINS_ANY", arr([str("x2")]))),
        ("s == a AND g == 2", composite("AND", [ff("s", "EQUAL", str("a")), ff("g", "EQUAL", int(2))])),
        ("s == a AND t contains x0", composite("AND", [ff("s", "EQUAL", str("a")), ff("t", "ARRAY_CONTAINS", str("x0"))])),
        ("s == a AND n > 1", composite("AND", [ff("s", "EQUAL", str("a")), ff("n", "GREATER_THAN", int(1))])),
        ("s == a AND n != 7", composite("AND", [ff("s", "EQUAL", str("a")), ff("n", "NOT_EQUAL", int(7))])),
        // A field below the ordered one: two checks on one decoded top-level field.
        ("n.k == 1", ff("n.k", "EQUAL", int(1))),
    ]

    /// Cursors on the order (value, then value and name) in both directions.
    private static func cursors(_ h: TestHarness) -> [(String, JSON?, JSON?)] {
        let name: JSON = .object(["referenceValue": .string(h.root + "/w/d40")])
        return [
            ("none", nil, nil),
            ("startAt 1", .object(["values": .array([int(1)]), "before": .bool(true)]), nil),
            ("startAfter 7, d40", .object(["values": .array([int(7), name]), "before": .bool(false)]), nil),
            ("endBefore a", nil, .object(["values": .array([str("a")]), "before": .bool(true)])),
            ("startAt null, endAt 7", .object(["values": .array([nullV]), "before": .bool(true)]),
             .object(["values": .array([int(7)]), "before": .bool(false)])),
        ]
    }

    private static func check(_ h: TestHarness, at readTime: Instant? = nil, label: String) throws -> Int {
        var compared = 0
        for (fname, filter) in filters {
            for direction in ["ASCENDING", "DESCENDING"] {
                for (cname, start, end) in cursors(h) {
                    for (limit, offset) in [(1, 0), (6, 4), (400, 0)] {
                        // A cursor holds values of the explicit orderings only: one naming a document
                        // orders by name explicitly (in the same direction: still the walk's order).
                        let byName = [start, end].contains { ($0?["values"]?.arrayValue?.count ?? 0) > 1 }
                        let orderBy = [order("n", direction)] + (byName ? [order("__name__", direction)] : [])
                        let q = try parse(sq("w", where: filter, orderBy: orderBy, limit: limit, offset: offset,
                                             startAt: start, endAt: end))
                        let (walked, sorted) = try both(h, q, at: readTime)
                        let what = "\(label): \(fname) by n \(direction), \(cname), limit \(limit) offset \(offset)"
                        #expect(walked.documents.map(\.path) == sorted.documents.map(\.path), "\(what)")
                        #expect(walked.documents.map(\.updateTime) == sorted.documents.map(\.updateTime), "\(what)")
                        #expect(walked.skipped == sorted.skipped, "\(what)")
                        compared += 1
                    }
                }
            }
        }
        return compared
    }

    @Test func theWalkAnswersAsSortingEveryMatch() throws {
        let h = try TestHarness()
        Self.seed(h, count: 120, seed: 20)
        #expect(try Self.check(h, label: "now") == Self.filters.count * 2 * 5 * 3)
        // A collection group query walks the group's index once it is built.
        // The build writes: not inside a read (an in-memory database has one connection).
        let space = try h.database.read { conn in try h.service.storage.space(of: Self.db, conn) }
        h.service.storage.buildGroupIndex(space: try #require(space), collectionID: "w")
        for direction in ["ASCENDING", "DESCENDING"] {
            let q = try Self.parse(sq("w", allDescendants: true, where: ff("s", "EQUAL", str("a")), orderBy: [order("n", direction)], limit: 9))
            let (walked, sorted) = try Self.both(h, q)
            #expect(walked.documents.count == 9)
            #expect(walked.documents.map(\.path) == sorted.documents.map(\.path))
        }
    }

    /// At a past `readTime` the versions of then are merged into the walk in order.
    @Test func aPastReadTimeAnswersAsSortingEveryMatch() throws {
        let h = try TestHarness()
        Self.seed(h, count: 80, seed: 5)
        let then = h.service.latestTime()
        // Change half the documents (new values, some deleted, some created).
        Self.seed(h, count: 40, seed: 99)
        for i in stride(from: 40, to: 80, by: 7) { h.call("DELETE", h.api("/w/d\(i)")) }
        Self.seed(h, count: 15, seed: 3, prefix: "e")
        _ = try Self.check(h, at: then, label: "past")
        _ = try Self.check(h, label: "now")
    }

    /// The bench's query: half the documents match, the newest 10 are read and nothing else — not
    /// the other half's documents the walk steps over, not all 500 matches.
    @Test func denseMatchesReadOnlyTheResults() throws {
        let h = try TestHarness()
        let writes: [JSON] = (0..<1000).map { (i: Int) -> JSON in
            let fields: [(String, JSON)] = [
                ("status", str(i % 2 == 0 ? "ready" : "pending")), ("n", int(Int64(i))),
                ("tail", str(i < 100 ? "ready" : "pending")), ("one", int(i == 500 ? 1 : 0)),
            ]
            let name: JSON = .string(h.root + "/files/f\(i)")
            return .object(["update": .object(["name": name, "fields": .object(JSONObject(fields))])])
        }
        #expect(h.call("POST", h.api(":commit"), .object(["writes": .array(writes)])).status == 200)
        // Fields queried before (a first query on a field scans, then builds its index rows).
        try h.indexFields("files", ["status", "n", "tail", "one"])
        func run(_ q: JSON) throws -> QueryExecutor.Result { try QueryTests.execute(h, q) }
        let top = try run(sq("files", where: ff("status", "EQUAL", str("ready")), orderBy: [order("n", "DESCENDING")], limit: 10))
        #expect(top.documents.map { $0.path.lastSegment } == stride(from: 998, through: 980, by: -2).map { "f\($0)" })
        #expect(top.examined == 10)
        let paged = try run(sq("files", where: ff("status", "EQUAL", str("ready")), orderBy: [order("n")], limit: 3, offset: 4))
        #expect(paged.documents.map { $0.path.lastSegment } == ["f8", "f10", "f12"])
        #expect(paged.examined == 7)
        // Matches the descending walk meets last: once the count knows there are 100, the walk
        // gives up after spending what sorting them costs, and the seeks answer.
        let tail = try run(sq("files", where: ff("tail", "EQUAL", str("ready")), orderBy: [order("n", "DESCENDING")], limit: 10))
        #expect(tail.documents.map { $0.path.lastSegment } == (90...99).reversed().map { "f\($0)" })
        #expect(tail.examined == 100)
        // Ascending, the same matches come first: only the results are read.
        let head = try run(sq("files", where: ff("tail", "EQUAL", str("ready")), orderBy: [order("n")], limit: 10))
        #expect(head.documents.map { $0.path.lastSegment } == (0...9).map { "f\($0)" })
        #expect(head.examined == 10)
        // One match: the count ends at once and the seek answers.
        let one = try run(sq("files", where: ff("one", "EQUAL", int(1)), orderBy: [order("n", "DESCENDING")], limit: 10))
        #expect(one.documents.map { $0.path.lastSegment } == ["f500"])
        #expect(one.examined == 1)
    }

    /// The budget gives the walk up once it has spent what sorting the counted matches costs.
    @Test func theBudgetGivesUpPastTheSortsCost() throws {
        let h = try TestHarness()
        try h.database.write { conn in
            let space = try h.service.storage.writableSpace(of: Self.db, conn)
            // Three matches, far from the walk's start: the count ends after three rows.
            let scope = ResourcePath(["c"]).key
            for (i, v) in [[UInt8]([1]), [2], [3]].enumerated() {
                try conn.run("INSERT INTO fs_index (space, scope, field, kind, value, doc_key) VALUES (?, ?, 'a', 0, ?, ?)",
                             [space, scope, Array("x".utf8), v + [UInt8(i)]])
            }
            let budget = OrderWalkBudget(space: space, scope: scope, field: "a", kind: 0, values: [Array("x".utf8)], keyRange: nil, conn)
            defer { budget.finish() }
            var steps = 0
            while try budget.charge(fetched: false) { steps += 1 }
            #expect(budget.exhausted)
            // Four steps count the three rows (one a step) and find the end; then the walk may
            // spend the sort's cost of 3 matches on top of its 4.
            #expect(steps == 4 + 3 * OrderWalkBudget.sortCostPerMatch)
        }
    }
}
