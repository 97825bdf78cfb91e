import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// `fs_documents_group` exists only once a collection-group query needed it (`GroupScanIndex`):
/// answers are the same before and after, later writes are found through it, old files lose it,
/// and a snapshot opened before it was built scans without naming it.
@Suite struct GroupScanIndexTests {
    private let db = DatabaseID(project: "demo-test", database: "(default)")

    private static func hasIndex(_ database: Database) throws -> Bool {
        try database.read { try $0.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'fs_documents_group'") } == 1
    }

    private static func tempPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("fs-groupscan-\(UUID().uuidString).sqlite").path
    }

    /// Documents of `items` at the root and under other documents, and of other collection ids.
    private static func seed(_ h: TestHarness) {
        for i in 0..<30 {
            h.put(i % 3 == 0 ? "items/d\(i)" : "rooms/r\(i % 3)/items/d\(i)", ["n": int(Int64(i)), "s": str(i % 2 == 0 ? "a" : "b")])
            h.put("rooms/r\(i % 3)/other/o\(i)", ["n": int(Int64(i))])
        }
    }

    /// `seed`'s documents, as paths and stored fields (for old files written by SQL).
    private static let seedDocuments: [(path: [String], fields: [ExactString: FirestoreValue])] = {
        var out: [(path: [String], fields: [ExactString: FirestoreValue])] = []
        for i in 0..<30 {
            let item = i % 3 == 0 ? ["items", "d\(i)"] : ["rooms", "r\(i % 3)", "items", "d\(i)"]
            let fields: [ExactString: FirestoreValue] = ["n": .integer(Int64(i)), "s": .string(i % 2 == 0 ? "a" : "b")]
            out.append((item, fields))
            out.append((["rooms", "r\(i % 3)", "other", "o\(i)"], ["n": .integer(Int64(i))]))
        }
        return out
    }()

    /// The ids of every `items` document (of any parent) in name order, as a group scan returns them.
    private static func expectedItems(_ h: TestHarness, under prefix: String = "") throws -> [String] {
        let rows = try h.database.read { conn in
            try conn.rows("SELECT key FROM fs_documents WHERE collection_id = 'items' ORDER BY key") {
                OrderedEncoding.segments(ofKey: $0.blob(0))!
            }
        }
        return rows.filter { $0.joined(separator: "/").hasPrefix(prefix) }.map { $0.last! }
    }

    private static let groupQuery = sq("items", allDescendants: true)

    @Test func aFreshDatabaseHasNone() throws {
        let h = try TestHarness()
        Self.seed(h)
        #expect(try !Self.hasIndex(h.database))
        #expect(!h.service.storage.groupScans.isBuilt)
        // Plain collection queries, field queries (their builds included) and listings do not need it.
        #expect(h.query(sq("items", where: ff("s", "EQUAL", str("a"))), parent: "/rooms/r1").status == 200)
        #expect(h.query(sq("items", orderBy: [order("n")])).status == 200)
        #expect(h.call("GET", h.api("/rooms/r1/items")).status == 200)
        #expect(try !Self.hasIndex(h.database))
    }

    @Test func theFirstGroupQueryBuildsItAndAnswersTheSame() throws {
        let h = try TestHarness()
        Self.seed(h)
        let expected = try Self.expectedItems(h)
        #expect(expected.count == 30)
        let first = h.query(Self.groupQuery)
        #expect(first.status == 200 && first.ids == expected)
        #expect(try Self.hasIndex(h.database))
        #expect(h.service.storage.groupScans.isBuilt)
        #expect(h.query(Self.groupQuery).ids == expected)
        // Later writes are kept in it and found: creates, a delete, an update.
        h.put("zoo/z/items/new1", ["n": int(100)])
        h.put("items/new2", ["n": int(101)])
        #expect(h.call("DELETE", h.api("/rooms/r1/items/d1")).status == 200)
        h.put("rooms/r2/items/d2", ["n": int(-2)])
        let after = try Self.expectedItems(h)
        #expect(after.contains("new1") && after.contains("new2") && !after.contains("d1"))
        #expect(h.query(Self.groupQuery).ids == after)
        // Descending, under a document, with a filter and a limit: the same as by the documents.
        let under = h.query(sq("items", allDescendants: true, orderBy: [order("__name__", "DESCENDING")], limit: 4), parent: "/rooms/r2")
        #expect(under.ids == Array(try Self.expectedItems(h, under: "rooms/r2").reversed().prefix(4)))
        let filtered = h.query(sq("items", allDescendants: true, where: ff("s", "EQUAL", str("b"))))
        #expect(filtered.ids.count == 14)  // 15 odd ids, d1 deleted
        // The index agrees with the table row for row.
        let byIndex = try h.database.read { conn in
            try conn.rows("SELECT key FROM fs_documents INDEXED BY fs_documents_group WHERE space = 1 AND collection_id = 'items' ORDER BY key") {
                $0.blob(0)
            }
        }
        #expect(byIndex.count == after.count)
    }

    @Test func answersWithoutTheIndexEqualThoseWithIt() throws {
        let queries: [(JSON, String)] = [
            (Self.groupQuery, ""),
            (sq("items", allDescendants: true, orderBy: [order("__name__", "DESCENDING")], limit: 5), ""),
            (sq("items", allDescendants: true, where: ff("n", "GREATER_THAN", int(10)), orderBy: [order("n")]), ""),
            (sq("items", allDescendants: true), "/rooms/r1"),
            (sq("other", allDescendants: true, limit: 3), ""),
        ]
        let h = try TestHarness()
        Self.seed(h)
        // Without it: the space's documents, walked and filtered. The background build these runs
        // schedule waits behind a held collector queue meanwhile.
        let hold = DispatchSemaphore(value: 0)
        h.service.storage.collector.async { hold.wait() }
        let without = try queries.map { q, parent in try run(h, q, parent: parent) }
        #expect(try !Self.hasIndex(h.database))
        hold.signal()
        try h.service.storage.groupScans.build(h.database)
        let with = try queries.map { q, parent in try run(h, q, parent: parent) }
        #expect(without == with)
        #expect(with[0].count == 30 && with[3].count == 10 && with[4].count == 3)
    }

    /// Runs `q` through an executor of its own, which has no caller to report a missing index to
    /// (it schedules the build, as a Listen target's does).
    private func run(_ h: TestHarness, _ q: JSON, parent: String) throws -> [String] {
        let parentPath = parent.isEmpty ? ResourcePath.root : ResourcePath(parent.split(separator: "/").map(String.init))
        let query = try QueryParser(database: db, parent: parentPath).parse(ProtoObject(json: q, path: "structured_query"))
        let executor = QueryExecutor(storage: h.service.storage, database: db)
        return try h.database.read { conn in
            try executor.run(query, space: try h.service.storage.space(of: db, conn), conn).documents.map { $0.path.segments.last! }
        }
    }

    @Test func aReaderWithoutACallerBuildsInTheBackground() throws {
        let h = try TestHarness()
        Self.seed(h)
        #expect(try run(h, Self.groupQuery, parent: "") == (try Self.expectedItems(h)))
        h.service.storage.collector.sync {}
        #expect(try Self.hasIndex(h.database))
        #expect(h.service.storage.groupScans.isBuilt)
    }

    @Test func aSnapshotOpenedBeforeTheBuildScansWithoutIt() throws {
        let path = Self.tempPath()
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        let h = try TestHarness(databasePath: path)
        Self.seed(h)
        let expected = try Self.expectedItems(h)
        let query = try QueryParser(database: db, parent: .root).parse(ProtoObject(json: Self.groupQuery, path: "structured_query"))
        let ids = try h.database.read { conn -> [String] in
            let space = try h.service.storage.space(of: db, conn)
            _ = try conn.scalarInt("SELECT count(*) FROM fs_documents")  // opens the snapshot
            // Built and committed now, while this snapshot stays as it was.
            let built = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                try? h.service.storage.groupScans.build(h.database)
                built.signal()
            }
            built.wait()
            #expect(h.service.storage.groupScans.isBuilt)
            #expect(try !h.service.storage.groupScans.isVisible(conn))
            return try QueryExecutor(storage: h.service.storage, database: db).run(query, space: space, conn).documents.map { $0.path.segments.last! }
        }
        #expect(ids == expected)
        #expect(try Self.hasIndex(h.database))
        #expect(h.query(Self.groupQuery).ids == expected)
    }

    @Test func anOldFileLosesItAndAnswersTheSame() throws {
        let path = Self.tempPath()
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        var expected: [String] = []
        do {
            // A file as the binaries before `firestore.8` left it: the index kept by every write (here
            // by SQLite, as the rows are written by SQL with the old `parent` column: `OldFirestoreFile`).
            let old = try OldFirestoreFile.create(path: path, migrations: 7)
            try OldFirestoreFile.insert(old, Self.seedDocuments)
            #expect(try Self.hasIndex(old))
            expected = try old.read { conn in
                try conn.rows("SELECT key FROM fs_documents INDEXED BY fs_documents_group WHERE space = 1 AND collection_id = 'items' ORDER BY key") {
                    OrderedEncoding.segments(ofKey: $0.blob(0))!.last!
                }
            }
            #expect(expected.count == 30)
        }
        let reopened = try Database(path: path, layout: FirestoreService.databaseLayout)
        try reopened.migrate(FirestoreService.migrations)
        #expect(try !Self.hasIndex(reopened))
        let h = try TestHarness(database: reopened)
        #expect(!h.service.storage.groupScans.isBuilt)
        #expect(h.query(Self.groupQuery).ids == expected)
        #expect(try Self.hasIndex(reopened))
        // Built, it survives a restart of the file (and is known at open).
        let again = try Database(path: path, layout: FirestoreService.databaseLayout)
        try again.migrate(FirestoreService.migrations)
        #expect(try TestHarness(database: again).service.storage.groupScans.isBuilt)
    }
}
