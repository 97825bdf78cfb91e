import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// Collection-group index rows exist only for collection ids a collection-group query asked for;
/// until they are built such queries scan, with the same answers.
struct GroupIndexTests {
    private let db = DatabaseID(project: "demo-test", database: "(default)")

    private func groupRows(_ h: TestHarness, _ collectionID: String) throws -> [[UInt8]] {
        try h.database.read { conn in
            try conn.rows("SELECT value FROM fs_index WHERE scope = ? ORDER BY value, doc_key", [IndexEntry.groupScope(collectionID)]) { $0.blob(0) }
        }
    }

    private func space(_ h: TestHarness) throws -> Int64 {
        try h.database.read { try $0.scalarInt("SELECT space FROM fs_spaces WHERE name = ?", [db.spaceName]) } ?? -1
    }

    private func run(_ h: TestHarness, _ q: JSON) throws -> QueryExecutor.Result {
        let query = try QueryParser(database: db, parent: .root).parse(ProtoObject(json: q, path: "structured_query"))
        return try h.service.runQuery(db, query: query, consistency: .strong, caller: .admin).result
    }

    /// The group rows a complete build gives for the documents stored now.
    private func expectedRows(_ h: TestHarness, _ collectionID: String) throws -> [[UInt8]] {
        let docs = try h.database.read { conn in
            try conn.rows("SELECT \(FirestoreStorage.documentColumns) FROM fs_documents WHERE collection_id = ?", [collectionID]) {
                try FirestoreStorage.document(from: $0)
            }
        }
        // Only registered fields have rows.
        let indexed = try h.indexedFields(collectionID)
        return docs.flatMap { d in IndexEntry.entries(of: d.fields).filter { indexed.contains(ExactString($0.field)) }.map(\.value) }
            .sorted { OrderedEncoding.compare($0, $1) < 0 }
    }

    @Test func writesKeepNoGroupRowsUntilAGroupQueryAsks() throws {
        let h = try TestHarness()
        for i in 0..<20 { h.put("cities/c\(i)/landmarks/l\(i)", ["type": str(i % 2 == 0 ? "bridge" : "museum"), "n": int(Int64(i))]) }
        #expect(try groupRows(h, "landmarks").isEmpty)
        let q = sq("landmarks", allDescendants: true, where: ff("type", "EQUAL", str("bridge")))
        // Not built yet: the group's documents are scanned, with the same answer.
        let first = try run(h, q)
        #expect(first.documents.count == 10)
        #expect(first.examined == 20)
        // Scanned: nothing registered yet (the group's rows were not there to need `type`'s).
        #expect(try h.indexedFields("landmarks").isEmpty)
        try h.indexFields("landmarks", ["type"])
        h.service.storage.buildGroupIndex(space: try space(h), collectionID: "landmarks")
        #expect(try groupRows(h, "landmarks") == expectedRows(h, "landmarks"))
        #expect(try !groupRows(h, "landmarks").isEmpty)
        let second = try run(h, q)
        #expect(second.documents.map(\.path) == first.documents.map(\.path))
        #expect(second.examined == 10)
        // From now on writes keep the group rows.
        h.put("countries/jp/landmarks/y", ["type": str("bridge")])
        h.call("DELETE", h.api("/cities/c0/landmarks/l0"))
        h.put("cities/c1/landmarks/l1", ["type": str("bridge"), "n": int(99)])
        #expect(try groupRows(h, "landmarks") == expectedRows(h, "landmarks"))
        #expect(try run(h, q).documents.count == 11)
    }

    /// Writes during a build: documents the build already passed keep their rows current, later
    /// ones are read by the build when it gets there.
    @Test func writesDuringABuildLeaveTheIndexExact() throws {
        let h = try TestHarness()
        for i in 0..<10 { h.put("a/a\(i)/items/i\(i)", ["k": int(Int64(i))]) }
        try h.indexFields("items", ["k"])
        let s = try space(h)
        h.service.storage.buildGroupIndex(space: s, collectionID: "items", batch: 4, transactions: 1)
        let complete = { try h.database.read { try h.service.storage.groupIndexComplete(space: s, collectionID: "items", $0) } }
        #expect(try complete() == false)
        h.put("a/a1/items/i1", ["k": int(100)])  // before the cursor
        h.call("DELETE", h.api("/a/a2/items/i2"))  // before the cursor
        h.put("a/a8/items/i8", ["k": int(80)])  // after it
        h.call("DELETE", h.api("/a/a9/items/i9"))  // after it
        h.put("a/a0/items/new", ["k": int(-1)])  // a new document before it
        h.put("z/z/items/new", ["k": int(1000)])  // and after it
        h.service.storage.buildGroupIndex(space: s, collectionID: "items", batch: 4)
        #expect(try complete())
        #expect(try groupRows(h, "items") == expectedRows(h, "items"))
        #expect(try groupRows(h, "items").count == 10)
        let all = try run(h, sq("items", allDescendants: true, where: ff("k", "GREATER_THAN_OR_EQUAL", int(0))))
        #expect(all.documents.count == 9)
        #expect(all.examined == 9)
    }

    @Test func clearingTheDatabaseStopsABuildAndDropsItsState() throws {
        let h = try TestHarness()
        for i in 0..<6 { h.put("a/a\(i)/items/i\(i)", ["k": int(Int64(i))]) }
        let s = try space(h)
        h.service.storage.buildGroupIndex(space: s, collectionID: "items", batch: 2, transactions: 1)
        #expect(h.call("DELETE", "/emulator/v1/projects/demo-test/databases/(default)/documents", as: .anonymous).status == 200)
        h.service.storage.buildGroupIndex(space: s, collectionID: "items", batch: 2)
        h.service.storage.collectGarbage()
        let left = try h.database.read { conn in
            (try conn.scalarInt("SELECT count(*) FROM fs_index") ?? -1, try conn.scalarInt("SELECT count(*) FROM fs_group_indexes") ?? -1)
        }
        #expect(left.0 == 0)
        #expect(left.1 == 0)
    }

    /// A database written before group rows became on-demand has them for every collection id; the
    /// migration marks those indexes complete so queries keep using them.
    @Test func migratedDatabasesKeepTheirGroupIndexes() throws {
        let database = try Database(path: nil)
        let old = Array(FirestoreService.migrations.prefix(3))
        try database.migrate(old)
        try database.write { conn in
            try conn.run("INSERT INTO fs_spaces (name, space) VALUES ('p/(default)', 1)")
            try conn.run("""
                INSERT INTO fs_documents (space, key, parent, collection_id, fields, create_time, update_time)
                VALUES (1, ?, ?, 'items', ?, 1, 1)
                """, [ResourcePath(["a", "b", "items", "c"]).key, ResourcePath(["a", "b", "items"]).key, StoredValueCodec.encodeFields([:])])
        }
        try database.migrate(FirestoreService.migrations)
        let marker = try database.read { conn in
            try conn.first("SELECT space, collection_id, built_upto IS NULL FROM fs_group_indexes") { ($0.int64(0), $0.text(1), $0.int64(2)) }
        }
        #expect(marker?.0 == 1)
        #expect(marker?.1 == "items")
        #expect(marker?.2 == 1)
    }
}
