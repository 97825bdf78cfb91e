import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// `firestore.10`: `fs_documents` loses its `parent` column (the parent's key, which the document's
/// key holds: every reader takes it from there). A fresh file ends without it; an old file keeps
/// every other column of every row, answers as a fresh file with the same documents does, builds
/// the same index rows, and is refused by a binary that does not know the migration.
@Suite struct ParentColumnMigrationTests {
    static let columns = ["space", "key", "collection_id", "fields", "create_time", "update_time"]

    /// Documents at the root and below, with ids that escape a zero byte, are numeric (whose 8 bytes
    /// hold `00 01`) or non-ASCII; `sub` under several parents, one existing only through it.
    static let documents: [(path: [String], fields: [ExactString: FirestoreValue])] = {
        let paths = [["c", "a"], ["c", "b"], ["c", "__id1__"], ["c", "__id256__"], ["c", "a\u{0}b"], ["c", "é"],
                     ["c", "a", "sub", "x"], ["c", "a", "sub", "y"], ["c", "__id1__", "sub", "z"], ["c", "a\u{0}b", "sub", "w"],
                     ["c", "missing", "sub", "v"], ["c", "a", "sub", "x", "sub", "deep"], ["other", "o"]]
        return paths.enumerated().map { i, p in (p, ["n": .integer(Int64(i % 4)), "s": .string(i % 2 == 0 ? "even" : "odd")]) }
    }()

    static func tempPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("fs-parentcol-\(UUID().uuidString).sqlite").path
    }

    static func remove(_ path: String) {
        for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) }
    }

    /// A fresh harness with the same documents, written through the current code.
    static func fresh() -> TestHarness {
        let h = try! TestHarness()
        let writes: [JSON] = documents.map { d in
            .object(["update": .object(["name": .string(h.root + "/" + d.path.joined(separator: "/")),
                                        "fields": .object(JSONObject(d.fields.map { ($0.key.string, ValueJSON.encode($0.value)) }))])])
        }
        #expect(h.call("POST", h.api(":commit"), .object(["writes": .array(writes)])).status == 200)
        return h
    }

    static func rows(_ database: Database) throws -> [String] {
        try database.read { conn in
            try conn.rows("SELECT space, quote(key), collection_id, quote(fields), create_time, update_time FROM fs_documents ORDER BY space, key") {
                "\($0.int64(0)) \($0.text(1)) \($0.text(2)) \($0.text(3)) \($0.int64(4)) \($0.int64(5))"
            }
        }
    }

    static func indexRows(_ database: Database) throws -> [String] {
        try RelativeDocKeyMigrationTests.indexRows(database)
    }

    @Test func aFreshFileHasNoParentColumn() throws {
        let h = Self.fresh()
        #expect(try OldFirestoreFile.columns(h.database) == Self.columns)
        #expect(h.query(sq("sub", where: ff("s", "EQUAL", str("even"))), parent: "/c/a").ids == ["x"])
    }

    @Test func anOldFileLosesTheColumnKeepsEveryRowAndAnswersTheSame() throws {
        let path = Self.tempPath()
        defer { Self.remove(path) }
        let before: [String]
        do {
            let old = try OldFirestoreFile.create(path: path, migrations: 9)
            #expect(FirestoreService.migrations[8].id == "firestore.9")
            try OldFirestoreFile.insert(old, Self.documents)
            // The group scan index, as a collection-group query of such a binary built it.
            try old.write { try $0.execute("CREATE INDEX \(GroupScanIndex.name) ON fs_documents (space, collection_id, key)") }
            #expect(try OldFirestoreFile.columns(old).contains("parent"))
            before = try Self.rows(old)
        }
        let database = try Database(path: path, layout: FirestoreService.databaseLayout)
        try database.migrate(FirestoreService.migrations)
        #expect(try OldFirestoreFile.columns(database) == Self.columns)
        #expect(try Self.rows(database) == before)
        #expect(try database.read { try $0.first("PRAGMA integrity_check") { $0.text(0) } } == "ok")
        let old = try TestHarness(database: database)
        #expect(old.service.storage.groupScans.isBuilt)
        let fresh = Self.fresh()
        // Listings, collection scans and field queries (building their index rows from the keys).
        let queries: [(JSON, String, [String])] = [
            (sq("c"), "", ["__id1__", "__id256__", "a", "a\u{0}b", "b", "é"]),
            (sq("c", where: ff("s", "EQUAL", str("even"))), "", ["__id1__", "a", "a\u{0}b"]),
            (sq("sub", where: ff("n", "GREATER_THAN_OR_EQUAL", int(0))), "/c/a", ["x", "y"]),
            (sq("sub", where: ff("s", "EQUAL", str("even"))), "/c/__id1__", ["z"]),
            (sq("sub", where: ff("s", "EQUAL", str("odd"))), "/c/__id1__", []),
            (sq("sub", where: ff("n", "EQUAL", int(1))), "/c/a%00b", ["w"]),
            (sq("sub", allDescendants: true, where: ff("s", "EQUAL", str("even"))), "", ["z", "x", "v"]),
            (sq("sub", allDescendants: true, where: ff("n", "GREATER_THAN", int(0))), "/c/a", ["x", "deep", "y"]),
        ]
        for (q, parent, ids) in queries {
            #expect(old.query(q, parent: parent).ids == ids, "\(q) \(parent)")
            #expect(fresh.query(q, parent: parent).ids == ids, "\(q) \(parent)")
        }
        for listing in ["/c", "/c/a/sub", "/c/missing/sub", "/c?showMissing=true"] {
            let a = old.call("GET", old.api(listing)), b = fresh.call("GET", fresh.api(listing))
            #expect(a.status == 200 && Self.names(a.json) == Self.names(b.json), "\(listing)")
        }
        #expect(old.call("POST", old.api("/c/a:listCollectionIds"), .object([:])).json == fresh.call("POST", fresh.api("/c/a:listCollectionIds"), .object([:])).json)
        // The group queries above started `sub`'s collection-group build in the background
        // (`scheduleGroupIndex`); the rows are compared once it has run, not while it runs.
        for h in [old, fresh] { h.service.storage.collector.sync {} }
        // The same registered fields build the same rows (`buildFields` takes each parent from the key).
        try fresh.indexFields(like: database)
        #expect(try Self.indexRows(database) == (try Self.indexRows(fresh.database)))
        #expect(try !Self.indexRows(database).isEmpty)
        // Writes go on: an update, a create and a delete keep the rows a fresh file keeps.
        for h in [old, fresh] {
            h.put("c/a/sub/x", ["n": int(9), "s": str("odd")])
            h.put("c/__id1__/sub/new", ["n": int(2), "s": str("even")])
            #expect(h.call("DELETE", h.api("/c/a/sub/y")).status == 200)
        }
        #expect(try Self.indexRows(database) == (try Self.indexRows(fresh.database)))
        #expect(old.query(sq("sub", allDescendants: true, where: ff("s", "EQUAL", str("even")))).ids == ["new", "z", "v"])
        // A binary before `firestore.10` refuses the file and changes nothing.
        let again = try Database(path: path, layout: FirestoreService.databaseLayout)
        let refused = #expect(throws: DatabaseOpenError.self) { try again.migrate(Array(FirestoreService.migrations.prefix(9))) }
        if case .newerThanBinary(_, let unknown)? = refused {
            #expect(unknown == ["firestore.10"])
        } else {
            Issue.record("\(String(describing: refused))")
        }
        #expect(try OldFirestoreFile.columns(again) == Self.columns)
    }

    static func names(_ json: JSON) -> [String] {
        (json["documents"]?.arrayValue ?? []).map { $0["name"]?.stringValue ?? "" }
    }

    /// The parent's key taken from a document's (or collection's) key equals the one built from its path.
    @Test func theParentKeyComesFromTheKey() {
        let ids = ["a", "a.", "a\u{0}", "\u{0}", "a\u{0}b", "__id1__", "__id256__", "__id-1__", "__id0__", "é", "日本", "", "__id__"]
        var checked = 0
        for a in ids where !a.isEmpty {
            for b in ids where !b.isEmpty {
                for path in [[a], [a, b], ["c", a, "s", b], [a, b, a, b], ["c", a, b]] {
                    let p = ResourcePath(path)
                    #expect(OrderedEncoding.parentKey(ofKey: p.key) == p.parent.key, "\(path)")
                    checked += 1
                }
            }
        }
        #expect(checked > 500)
        #expect(OrderedEncoding.parentKey(ofKey: []) == nil)
        #expect(OrderedEncoding.parentKey(ofKey: Array("a".utf8)) == nil)
        #expect(OrderedEncoding.parentKey(ofKey: Array(ResourcePath(["c", "a"]).key.dropLast())) == nil)
    }
}
