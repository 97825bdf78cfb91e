import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// Index rows exist only for (collection id, field) pairs a query has needed (`IndexedFields`): a
/// query on fields nobody queried before builds their rows first and answers exactly as a database
/// whose rows were kept by every write from the start; writes after the build keep them exact.
struct IndexedFieldsTests {
    private let db = DatabaseID(project: "demo-test", database: "(default)")
    /// Every field the queries below read an index of.
    private static let queriedFields = ["s", "n", "tags", "m.k", "m.z"]

    private static func fields(_ i: Int) -> [String: JSON] {
        var f: [String: JSON] = ["s": str(["a", "b", "c"][i % 3]),
                                 "tags": arr([str("t\(i % 4)"), str("t\((i + 1) % 4)")]),
                                 "m": map([("k", int(Int64(i % 5))), ("z", str("q\(i % 2)"))]),
                                 "other": str("never queried \(i)")]
        if i % 10 != 0 { f["n"] = int(Int64(i % 7)) }
        return f
    }

    private static func path(_ i: Int) -> String { i % 3 == 0 ? "items/d\(i)" : "rooms/r\(i % 3)/items/d\(i)" }

    private static func write(_ h: TestHarness, _ range: Range<Int>) {
        for i in range { h.put(path(i), fields(i)) }
    }

    /// (query, parent) pairs: root collection, sub-collection and collection-group queries.
    private static let queries: [(JSON, String)] = [
        (sq("items", where: ff("s", "EQUAL", str("b"))), "/rooms/r1"),
        (sq("items", where: ff("n", "GREATER_THAN", int(3)), orderBy: [order("n", "DESCENDING")]), ""),
        (sq("items", where: ff("tags", "ARRAY_CONTAINS", str("t2"))), "/rooms/r1"),
        (sq("items", where: ff("n", "IN", arr([int(1), int(4)]))), "/rooms/r2"),
        (sq("items", orderBy: [order("m.k")], limit: 7), "/rooms/r1"),
        (sq("items", where: ff("s", "EQUAL", str("a")), orderBy: [order("n")], limit: 3), ""),
        (sq("items", where: ff("tags", "ARRAY_CONTAINS_ANY", arr([str("t0"), str("t3")]))), ""),
        (sq("items", where: ff("n", "NOT_EQUAL", int(2))), "/rooms/r2"),
        (sq("items", allDescendants: true, where: ff("m.z", "EQUAL", str("q1")), orderBy: [order("m.k", "DESCENDING")]), ""),
        (sq("items", allDescendants: true, orderBy: [order("n")], limit: 5), ""),
        (sq("items", where: composite("OR", [ff("s", "EQUAL", str("a")), ff("n", "EQUAL", int(5))])), "/rooms/r1"),
    ]

    private static func answers(_ h: TestHarness) -> [[String]] {
        queries.map { q, parent in
            let r = h.query(q, parent: parent)
            precondition(r.status == 200, "\(r.json)")
            return r.ids
        }
    }

    /// Every index row but its space (both kinds of scope), after completing the group index.
    private func rows(_ h: TestHarness) throws -> [String] {
        let space = try h.database.read { try $0.scalarInt("SELECT space FROM fs_spaces WHERE name = ?", [db.spaceName]) } ?? -1
        h.service.storage.buildGroupIndex(space: space, collectionID: "items")
        return try h.database.read {
            try $0.rows("SELECT quote(scope), field, kind, quote(value), quote(doc_key) FROM fs_index WHERE space = ? ORDER BY 1, 2, 3, 4, 5",
                        [space]) { "\($0.text(0)) \($0.text(1)) \($0.int64(2)) \($0.text(3)) \($0.text(4))" }
        }
    }

    /// A database whose pairs were registered before any document was written: every write kept
    /// the rows (the way every field was indexed before).
    private func eager() throws -> TestHarness {
        let h = try TestHarness()
        h.put("seed/s", ["x": int(1)])  // the database's space, so the pairs can be registered
        try h.indexFields("items", Self.queriedFields)
        return h
    }

    @Test func queriesOnNeverQueriedFieldsAnswerAsWithRowsKeptAllAlong() throws {
        let lazy = try TestHarness(), kept = try eager()
        lazy.put("seed/s", ["x": int(1)])
        Self.write(lazy, 0..<60)
        Self.write(kept, 0..<60)
        // Writes registered nothing, so they wrote no index rows.
        #expect(try lazy.indexedFields("items").isEmpty)
        #expect(try rows(lazy).isEmpty)
        let expected = Self.answers(kept)
        #expect(expected.allSatisfy { !$0.isEmpty })
        #expect(Self.answers(lazy) == expected)
        // The queries registered exactly the fields they read, and built the same rows (both scopes).
        #expect(try lazy.indexedFields("items") == Set(Self.queriedFields.map { ExactString($0) }))
        #expect(try rows(lazy) == rows(kept))
        #expect(try !rows(lazy).isEmpty)
        #expect(try !rows(lazy).contains { $0.contains(" other ") })

        // Writes after the build: updates that change, drop and add indexed values, deletes, creates.
        for h in [lazy, kept] {
            for i in stride(from: 0, to: 60, by: 4) {
                h.put(Self.path(i), ["s": str("b"), "n": int(Int64(100 + i)), "m": map([("k", int(9))])])
            }
            for i in stride(from: 1, to: 60, by: 5) { h.call("DELETE", h.api("/" + Self.path(i))) }
            Self.write(h, 60..<75)
        }
        #expect(Self.answers(lazy) == Self.answers(kept))
        #expect(try rows(lazy) == rows(kept))
    }

    /// The first query on a field scans and builds its rows before it answers; the next one seeks
    /// them: it examines only the matches, not the collection.
    @Test func aBuiltFieldIsReadByItsIndex() throws {
        let h = try TestHarness()
        for i in 0..<30 { h.put("c/d\(i)", ["k": int(Int64(i % 3)), "v": int(Int64(i))]) }
        let query = try QueryParser(database: db, parent: .root).parse(ProtoObject(
            json: sq("c", where: ff("k", "EQUAL", int(1))), path: "structured_query"))
        let first = try h.service.runQuery(db, query: query, consistency: .strong, caller: .admin).result
        #expect(first.documents.count == 10)
        #expect(first.examined == 30)
        #expect(try h.indexedFields("c") == ["k"])
        let second = try h.service.runQuery(db, query: query, consistency: .strong, caller: .admin).result
        #expect(second.documents.map(\.path) == first.documents.map(\.path))
        #expect(second.examined == 10)
    }

    /// A reader that could not register the fields before its snapshot (a listener) answers by a
    /// scan, asks the snapshot (no view) and has the rows built in the background.
    @Test func aSnapshotWithoutTheFieldsScansAndSchedulesTheBuild() throws {
        let h = try TestHarness()
        for i in 0..<30 { h.put("c/d\(i)", ["k": int(Int64(i % 3))]) }
        let query = try QueryParser(database: db, parent: .root).parse(ProtoObject(
            json: sq("c", where: ff("k", "EQUAL", int(2))), path: "structured_query"))
        func run() throws -> QueryExecutor.Result {
            try h.database.read { conn in
                try QueryExecutor(storage: h.service.storage, database: db).run(query, space: h.service.storage.space(of: db, conn), conn)
            }
        }
        let scanned = try run()
        #expect(scanned.documents.count == 10)
        #expect(scanned.examined == 30)
        h.service.storage.collector.sync {}  // the build it scheduled
        #expect(try h.indexedFields("c") == ["k"])
        let indexed = try run()
        #expect(indexed.documents.map(\.path) == scanned.documents.map(\.path))
        #expect(indexed.examined == 10)
    }

    /// The registered pairs are in the file: a restarted process keeps writing their rows and
    /// does not build them again.
    @Test func theRegisteredFieldsSurviveARestart() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fs-fields-\(UUID().uuidString).sqlite").path
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        do {
            let h = try TestHarness(databasePath: path)
            for i in 0..<10 { h.put("c/d\(i)", ["k": int(Int64(i % 2)), "x": int(1)]) }
            #expect(h.query(sq("c", where: ff("k", "EQUAL", int(1)))).ids.count == 5)
        }
        let h = try TestHarness(databasePath: path)
        h.put("c/new", ["k": int(1), "x": int(2)])
        let rows = try h.database.read { try $0.rows("SELECT DISTINCT field FROM fs_index") { $0.text(0) } }
        #expect(rows == ["k"])
        let count = try h.database.read { try $0.scalarInt("SELECT count(*) FROM fs_index WHERE value = ?", [OrderedEncoding.encode(.integer(1))]) }
        #expect(count == 6)
        #expect(h.query(sq("c", where: ff("k", "EQUAL", int(1)))).ids.count == 6)
    }

    /// A file written before `firestore.7` (every field's rows) registers every pair it has rows for.
    @Test func anOldFileRegistersTheFieldsItHasRowsFor() throws {
        let (database, path) = try RelativeDocKeyMigrationTests.oldFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try database.migrate(FirestoreService.migrations)
        let pairs = try database.read { try $0.rows("SELECT collection_id, field FROM fs_index_fields ORDER BY 1, 2") { "\($0.text(0))/\($0.text(1))" } }
        #expect(pairs == ["c/m", "c/m.k", "c/n", "c/s", "c/tags", "sub/n", "sub/s"])
        // Writes keep them: a new document of `c` gets rows for its fields.
        let h = try TestHarness(database: database)
        h.put("c/new", ["n": int(42), "s": str("delta")])
        #expect(h.query(sq("c", where: ff("n", "EQUAL", int(42)))).ids == ["new"])
        #expect(try database.read { try $0.scalarInt("SELECT count(*) FROM fs_index WHERE field = 'n' AND value = ?", [OrderedEncoding.encode(.integer(42))]) } == 1)
    }

    /// Clearing a database drops its pairs with its rows; the new space starts with none.
    @Test func clearingDropsTheRegisteredFields() throws {
        let h = try TestHarness()
        for i in 0..<5 { h.put("c/d\(i)", ["k": int(Int64(i))]) }
        #expect(h.query(sq("c", where: ff("k", "EQUAL", int(3)))).ids == ["d3"])
        #expect(h.call("DELETE", "/emulator/v1/projects/demo-test/databases/(default)/documents", as: .anonymous).status == 200)
        h.service.storage.collectGarbage()
        #expect(try h.database.read { try $0.scalarInt("SELECT count(*) FROM fs_index_fields") } == 0)
        h.put("c/d3", ["k": int(3)])
        #expect(try h.database.read { try $0.scalarInt("SELECT count(*) FROM fs_index") } == 0)
        #expect(h.query(sq("c", where: ff("k", "EQUAL", int(3)))).ids == ["d3"])
        #expect(try h.database.read { try $0.scalarInt("SELECT count(*) FROM fs_index") } == 1)
    }
}
