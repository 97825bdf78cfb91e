import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// `firestore.5` re-encodes what a file written before numeric ids sorted first holds, so queries
/// on it answer in Firestore's order; a migration that fails leaves the file as it was.
@Suite struct NumericIDMigrationTests {
    static let root = "projects/demo-test/databases/(default)/documents"

    /// The encoding before `firestore.5`: every segment escaped as a string.
    static func oldKey(_ path: String) -> [UInt8] {
        var out: [UInt8] = []
        for s in path.split(separator: "/") { OrderedEncoding.appendEscaped(s.utf8, to: &out) }
        return out
    }

    /// The old encoding of a value: references' segments as strings, everything else as now.
    static func oldValue(_ v: FirestoreValue) -> [UInt8] {
        guard case .reference(let name) = v else { return OrderedEncoding.encode(v) }
        var out = [OrderedEncoding.tagReference]
        for s in name.split(separator: "/", omittingEmptySubsequences: false) { OrderedEncoding.appendEscaped(s.utf8, to: &out) }
        return out + [0, 0]
    }

    /// Documents of the old file: path and fields.
    static let documents: [(String, [ExactString: FirestoreValue])] = [
        ("c/A", ["n": .integer(1)]),
        ("c/Zed", ["n": .integer(2)]),
        ("c/0", ["n": .integer(3)]),
        ("c/__id5__", ["n": .integer(4)]),
        ("c/__id-3__", ["n": .integer(5), "note": .string("__id-3__")]),
        ("c/__id5__/sub/x", ["n": .integer(6)]),
        ("c/A/sub/__id7__", ["n": .integer(7)]),
        ("r/d1", ["ref": .reference(root + "/c/__id5__")]),
        ("r/d2", ["ref": .reference(root + "/c/A")]),
        ("r/d3", ["ref": .reference(root + "/c/__id-3__"), "refs": .array([.reference(root + "/c/__id5__/sub/x")])]),
    ]

    /// Ten seconds before the harness's clock: commit times of the old file (within the hour of
    /// versions a read time may ask for).
    static let base = Instant(rfc3339: "2026-01-02T03:03:55.123456Z")!.unixMicros

    /// A file as Hearth wrote it before `firestore.5`: the documents, their index rows in both
    /// scopes of `sub` (complete) and `c` (a build stopped half-way), and a replaced version.
    static func oldFile(extraKey: [UInt8]? = nil) throws -> (Database, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fs-numeric-\(UUID().uuidString).sqlite").path
        let db = try Database(path: path, layout: FirestoreService.databaseLayout)
        try db.migrate(Array(FirestoreService.migrations.prefix(4)))
        try db.write { conn in
            try conn.run("INSERT INTO fs_spaces (name, space) VALUES ('demo-test/(default)', 1)")
            try conn.run("UPDATE fs_meta SET value = 2 WHERE key = 'next_space'")
            try conn.run("UPDATE fs_meta SET value = ? WHERE key = 'last_commit'", [base + 2000])
            for (i, (path, fields)) in documents.enumerated() {
                let segments = path.split(separator: "/").map(String.init)
                let key = oldKey(path), parent = oldKey(segments.dropLast().joined(separator: "/"))
                try conn.run("INSERT INTO fs_documents VALUES (1, ?, ?, ?, ?, ?, ?)",
                             [key, parent, segments[segments.count - 2], StoredValueCodec.encodeFields(fields), base + Int64(i), base + 1000 + Int64(i)])
                var scopes = [parent]
                if segments[segments.count - 2] == "sub" || path == "c/A" { scopes.append(IndexEntry.groupScope(segments[segments.count - 2])) }
                for entry in IndexEntry.entries(of: fields) {
                    let value: [UInt8]
                    if case .reference = fields[ExactString(entry.field)] { value = oldValue(fields[ExactString(entry.field)]!) } else if case .array(let refs)? = fields[ExactString(entry.field)] {
                        value = entry.kind == IndexEntry.elementKind ? oldValue(refs[0]) : [OrderedEncoding.tagArray] + oldValue(refs[0]) + [0]
                    } else { value = entry.value }
                    for scope in scopes {
                        try conn.run("INSERT INTO fs_index VALUES (1, ?, ?, ?, ?, ?)", [scope, entry.field, Int64(entry.kind), value, key])
                    }
                }
            }
            try conn.run("INSERT INTO fs_group_indexes VALUES (1, 'sub', NULL), (1, 'c', ?)", [oldKey("c/A")])
            try conn.run("INSERT INTO fs_history VALUES (1, ?, ?, ?, ?, ?)",
                         [oldKey("c/__id5__"), base + 500, StoredValueCodec.encodeFields(["n": .integer(-4)]), base - 100, base - 50])
            if let extraKey {
                try conn.run("INSERT INTO fs_documents VALUES (1, ?, ?, 'c', ?, ?, ?)", [extraKey, oldKey("c"), StoredValueCodec.encodeFields([:]), base, base])
            }
        }
        return (db, path)
    }

    static func ref(_ path: String) -> JSON { .object(["referenceValue": .string(root + "/" + path)]) }

    /// Every row of the Firestore tables, to compare a file before and after.
    static func dump(_ db: Database) throws -> [String] {
        try db.read { conn in
            var out: [String] = []
            for table in ["fs_documents", "fs_index", "fs_history", "fs_group_indexes", "fs_meta", "fs_spaces"] {
                out += try conn.rows("SELECT * FROM \(table) ORDER BY 1, 2") { row in
                    table + " " + (0..<row.columnCount).map { "\(row.value($0))" }.joined(separator: " | ")
                }
            }
            return out
        }
    }

    @Test func queriesOnAnOldFileAnswerInFirestoreOrder() throws {
        let (db, path) = try Self.oldFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try db.migrate(FirestoreService.migrations)
        let h = try TestHarness(database: db)

        #expect(h.query(sq("c", orderBy: [order("__name__")])).ids == ["__id-3__", "__id5__", "0", "A", "Zed"])
        #expect(h.query(sq("c", orderBy: [order("__name__", "DESCENDING")])).ids == ["Zed", "A", "0", "__id5__", "__id-3__"])
        #expect(h.query(sq("c", where: ff("__name__", "LESS_THAN", Self.ref("c/0")))).ids == ["__id-3__", "__id5__"])
        #expect(h.call("GET", h.api("/c/__id5__")).json["fields"]?["n"] == int(4))
        // The Python client's recursive bounds.
        let recursive = h.query(.object(["from": .array([.object(["allDescendants": .bool(true)])]),
                                         "where": composite("AND", [
                                             ff("__name__", "GREATER_THAN_OR_EQUAL", Self.ref("c/__id-9223372036854775808__")),
                                             ff("__name__", "LESS_THAN", Self.ref("c\u{0}/__id-9223372036854775808__")),
                                         ])]))
        #expect(recursive.ids == ["__id-3__", "__id5__", "x", "0", "A", "__id7__", "Zed"])
        // Index values holding references were re-encoded: seeks and ranges find them.
        #expect(h.query(sq("r", where: ff("ref", "EQUAL", Self.ref("c/__id5__")))).ids == ["d1"])
        #expect(h.query(sq("r", where: ff("refs", "ARRAY_CONTAINS", Self.ref("c/__id5__/sub/x")))).ids == ["d3"])
        #expect(h.query(sq("r", orderBy: [order("ref")])).ids == ["d3", "d1", "d2"])
        #expect(h.query(sq("r", where: ff("ref", "LESS_THAN", Self.ref("c/0")))).ids == ["d3", "d1"])
        #expect(h.query(sq("c", where: ff("note", "EQUAL", str("__id-3__")))).ids == ["__id-3__"])
        // Collection groups: the complete index re-encoded, the half-built one started over.
        #expect(h.query(sq("sub", allDescendants: true, orderBy: [order("__name__")])).ids == ["x", "__id7__"])
        #expect(h.query(sq("sub", allDescendants: true, where: ff("n", "GREATER_THAN", int(0)))).ids == ["x", "__id7__"])
        #expect(try db.read { try $0.scalarInt("SELECT count(*) FROM fs_group_indexes WHERE collection_id = 'c'") } == 0)
        // The replaced version moved with its document.
        let old = h.call("GET", h.api("/c/__id5__?readTime=2026-01-02T03:03:55.123856Z"))
        #expect(old.json["fields"]?["n"] == int(-4))
        // Nothing is left in the old encoding.
        let leftovers = try db.read { conn in
            try conn.scalarInt("SELECT count(*) FROM fs_documents WHERE key = ? OR key = ?", [Self.oldKey("c/__id5__"), Self.oldKey("c/__id5__/sub/x")])
        }
        #expect(leftovers == 0)
        // Writes go on in the new encoding: a new numeric id sorts among the old ones.
        h.put("c/__id1__", ["n": int(8)])
        #expect(h.query(sq("c", orderBy: [order("__name__")])).ids == ["__id-3__", "__id1__", "__id5__", "0", "A", "Zed"])
        #expect(h.query(sq("c", where: ff("n", "GREATER_THAN", int(3)))).ids.sorted() == ["__id-3__", "__id1__", "__id5__"])
    }

    /// The index rows after the migration are exactly those a fresh write of the same documents makes.
    @Test func indexRowsEqualThoseOfAFreshFile() throws {
        let (db, path) = try Self.oldFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try db.migrate(FirestoreService.migrations)
        let fresh = try TestHarness()
        for (p, fields) in Self.documents {
            fresh.put(p, Dictionary(uniqueKeysWithValues: fields.map { ($0.key.string, ValueJSON.encode($0.value)) }))
        }
        try fresh.indexFields(like: db)
        let rows = "SELECT quote(scope), field, kind, quote(value), quote(doc_key) FROM fs_index WHERE scope <> ? ORDER BY 1, 2, 3, 4, 5"
        let migrated = try db.read { try $0.rows(rows, [IndexEntry.groupScope("sub")]) { "\($0.text(0)) \($0.text(1)) \($0.int64(2)) \($0.text(3)) \($0.text(4))" } }
        let written = try fresh.database.read { try $0.rows(rows, [IndexEntry.groupScope("sub")]) { "\($0.text(0)) \($0.text(1)) \($0.int64(2)) \($0.text(3)) \($0.text(4))" } }
        #expect(migrated == written)
    }

    @Test func aFailedMigrationLeavesTheFileAsItWas() throws {
        // A key no Hearth wrote (a segment without its end): the migration cannot read it.
        let (db, path) = try Self.oldFile(extraKey: Self.oldKey("c") + Array("__id9__".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let before = try Self.dump(db)
        #expect(throws: DatabaseOpenError.self) { try db.migrate(FirestoreService.migrations) }
        #expect(try Self.dump(db) == before)
        let applied = try db.read { try $0.rows("SELECT id FROM hearth_migrations ORDER BY id") { $0.text(0) } }
        #expect(applied == ["firestore.1", "firestore.2", "firestore.3", "firestore.4"])
    }
}
