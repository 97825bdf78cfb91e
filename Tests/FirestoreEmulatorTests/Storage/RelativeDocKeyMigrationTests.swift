import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// `firestore.6`: collection-scope index rows hold the document's key past their scope. A file
/// written before (whole keys in every row) answers every query as a fresh file does, and its rows
/// become exactly those a fresh write makes.
@Suite struct RelativeDocKeyMigrationTests {
    /// Documents of the old file: path and fields (collection `c` at the root, `sub` under two
    /// documents, whose collection-group index is kept).
    static let documents: [(String, [ExactString: FirestoreValue])] = [
        ("c/a", ["n": .integer(3), "tags": .array([.string("x"), .string("y")]), "s": .string("alpha")]),
        ("c/b", ["n": .integer(1), "tags": .array([.string("y")]), "s": .string("beta")]),
        ("c/c", ["n": .integer(2), "m": .map(["k": .integer(1)]), "s": .string("alpha")]),
        ("c/__id7__", ["n": .integer(2), "s": .string("gamma")]),
        ("c/a/sub/x", ["n": .integer(5), "s": .string("alpha")]),
        ("c/b/sub/y", ["n": .integer(4), "s": .string("alpha")]),
        ("c/b/sub/z", ["n": .integer(6), "s": .string("beta")]),
    ]

    /// A file as Hearth wrote it with `firestore.1`–`firestore.5`: documents and their index rows
    /// with whole document keys, under their collections and (for `sub`) their collection group.
    static func oldFile() throws -> (Database, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fs-dockey-\(UUID().uuidString).sqlite").path
        let db = try Database(path: path, layout: FirestoreService.databaseLayout)
        try db.migrate(Array(FirestoreService.migrations.prefix(5)))
        try db.write { conn in
            try conn.run("INSERT INTO fs_spaces (name, space) VALUES ('demo-test/(default)', 1)")
            try conn.run("UPDATE fs_meta SET value = 2 WHERE key = 'next_space'")
            let t = Instant(rfc3339: "2026-01-02T03:03:55.123456Z")!.unixMicros
            for (p, fields) in documents {
                let doc = ResourcePath(p.split(separator: "/").map(String.init))
                let key = doc.key, parent = doc.parent.key
                try conn.run("INSERT INTO fs_documents VALUES (1, ?, ?, ?, ?, ?, ?)",
                             [key, parent, doc.collectionID, StoredValueCodec.encodeFields(fields), t, t])
                var scopes = [parent]
                if doc.collectionID == "sub" { scopes.append(IndexEntry.groupScope("sub")) }
                for e in IndexEntry.entries(of: fields) {
                    for scope in scopes {
                        try conn.run("INSERT INTO fs_index VALUES (1, ?, ?, ?, ?, ?)", [scope, e.field, Int64(e.kind), e.value, key])
                    }
                }
            }
            try conn.run("INSERT INTO fs_group_indexes VALUES (1, 'sub', NULL)")
        }
        return (db, path)
    }

    static func fresh() -> TestHarness {
        let h = try! TestHarness()
        for (p, fields) in documents { h.put(p, Dictionary(uniqueKeysWithValues: fields.map { ($0.key.string, ValueJSON.encode($0.value)) })) }
        // Keeps the collection-group rows of `sub`, as the old file does.
        _ = h.query(sq("sub", allDescendants: true, where: ff("n", "GREATER_THAN", int(0))))
        let space = try! h.database.read { try $0.scalarInt("SELECT space FROM fs_spaces") }!
        h.service.storage.buildGroupIndex(space: space, collectionID: "sub")
        return h
    }

    static let rows = "SELECT quote(scope), field, kind, quote(value), quote(doc_key) FROM fs_index ORDER BY 1, 2, 3, 4, 5"

    static func indexRows(_ db: Database) throws -> [String] {
        try db.read { try $0.rows(rows) { "\($0.text(0)) \($0.text(1)) \($0.int64(2)) \($0.text(3)) \($0.text(4))" } }
    }

    @Test func rowsEqualThoseOfAFreshFile() throws {
        let (db, path) = try Self.oldFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let before = try Self.indexRows(db)
        try db.migrate(FirestoreService.migrations)
        let migrated = try Self.indexRows(db)
        #expect(migrated != before)
        // Every field that had rows stays registered; a fresh file given the same pairs builds the same rows.
        let fresh = Self.fresh()
        try fresh.indexFields(like: db)
        #expect(migrated == (try Self.indexRows(fresh.database)))
        // Collection-scope rows hold the id's segment; group-scope rows the whole key.
        let key = ResourcePath(["c", "b", "sub", "y"]).key
        let docKeys = try db.read { conn in
            try conn.rows("SELECT doc_key FROM fs_index WHERE field = 'n' AND value = ? ORDER BY scope", [OrderedEncoding.encode(.integer(4))]) { $0.blob(0) }
        }
        #expect(docKeys == [IndexEntry.docKey(key, under: ResourcePath(["c", "b", "sub"]).key), key])
        #expect(docKeys[0] == OrderedEncoding.key(["y"]))
    }

    @Test func queriesOnAMigratedFileAnswerAsOnAFreshOne() throws {
        let (db, path) = try Self.oldFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try db.migrate(FirestoreService.migrations)
        let old = try TestHarness(database: db)
        let fresh = Self.fresh()
        let cursorB = JSON.object(["values": .array([.object(["referenceValue": .string(old.root + "/c/b")])]), "before": .bool(true)])
        let outside = JSON.object(["values": .array([.object(["referenceValue": .string(old.root + "/b/b")])]), "before": .bool(true)])
        let queries: [(JSON, [String])] = [
            (sq("c", where: ff("s", "EQUAL", str("alpha"))), ["a", "c"]),
            (sq("c", where: ff("tags", "ARRAY_CONTAINS", str("y"))), ["a", "b"]),
            (sq("c", where: ff("n", "GREATER_THAN", int(1)), orderBy: [order("n"), order("__name__", "DESCENDING")]), ["c", "__id7__", "a"]),
            (sq("c", where: ff("m.k", "EQUAL", int(1))), ["c"]),
            // Name cursors seek within an equality's rows; one outside the collection is compared whole.
            (sq("c", where: ff("s", "EQUAL", str("alpha")), orderBy: [order("__name__")], startAt: cursorB), ["c"]),
            (sq("c", where: ff("s", "EQUAL", str("alpha")), orderBy: [order("__name__")], startAt: outside), ["a", "c"]),
            (sq("c", where: ff("s", "EQUAL", str("alpha")), orderBy: [order("__name__", "DESCENDING")], startAt: cursorB), ["a"]),
            (sq("sub", where: ff("s", "EQUAL", str("alpha"))), []),
            (sq("sub", allDescendants: true, where: ff("s", "EQUAL", str("alpha"))), ["x", "y"]),
            (sq("sub", allDescendants: true, where: ff("n", "GREATER_THAN", int(4))), ["x", "z"]),
        ]
        for (q, ids) in queries {
            #expect(old.query(q).ids == ids, "\(q)")
            #expect(fresh.query(q).ids == ids, "\(q)")
        }
        // Several values' rows, read value by value.
        let among = sq("c", where: ff("n", "IN", arr([int(2), int(3)])))
        #expect(old.query(among).ids == fresh.query(among).ids)
        #expect(old.query(among).ids.sorted() == ["__id7__", "a", "c"])
        // Under c/b: `sub`'s collection scope.
        #expect(old.query(sq("sub", where: ff("s", "EQUAL", str("beta"))), parent: "/c/b").ids == ["z"])
        // Writes go on: an update and a delete find their (migrated) rows.
        old.put("c/a", ["n": int(9), "s": str("beta")])
        old.call("DELETE", old.api("/c/c"))
        #expect(old.query(sq("c", where: ff("s", "EQUAL", str("alpha")))).ids.isEmpty)
        #expect(old.query(sq("c", where: ff("s", "EQUAL", str("beta")))).ids == ["a", "b"])
        #expect(old.query(sq("c", where: ff("tags", "ARRAY_CONTAINS", str("y")))).ids == ["b"])
        #expect(try db.read { try $0.scalarInt("SELECT count(*) FROM fs_index WHERE field = 'm.k'") } == 0)
    }
}
