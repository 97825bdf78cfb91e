import Foundation
import Testing
import HearthSQLite

struct Boom: Error {}

func temporaryDatabasePath() -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-sqlite-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir.appendingPathComponent("test.sqlite").path
}

@Suite struct DatabaseTests {
    static let migrations = [
        Migration("t.1", "CREATE TABLE kv (k TEXT PRIMARY KEY, v BLOB NOT NULL)"),
        Migration("t.2", "ALTER TABLE kv ADD COLUMN n INTEGER NOT NULL DEFAULT 0"),
    ]

    @Test func migratesAnOldSchemaForward() throws {
        let path = temporaryDatabasePath()
        do {
            let db = try Database(path: path)
            try db.migrate(Array(Self.migrations.prefix(1)))
            try db.write { try $0.run("INSERT INTO kv (k, v) VALUES (?, ?)", ["a", [UInt8]([1, 2])]) }
        }
        let db = try Database(path: path)
        try db.migrate(Self.migrations)
        let row = try db.read { try $0.first("SELECT v, n FROM kv WHERE k = ?", ["a"]) { ($0.blob(0), $0.int(1)) } }
        #expect(row?.0 == [1, 2])
        #expect(row?.1 == 0)
        // Applying again is a no-op.
        try db.migrate(Self.migrations)
    }

    @Test func aNewFileGetsItsLayoutsPageSizeAndAnExistingOneKeepsItsOwn() throws {
        let small = temporaryDatabasePath()
        do {
            let db = try Database(path: small, layout: .small)
            try db.migrate(Self.migrations)
            #expect(try db.pageSize() == 4096)
            // 0: the checkpoint thread's WAL hook took the place of SQLite's automatic checkpoint.
            #expect(try db.withWriter { try $0.scalarInt("PRAGMA wal_autocheckpoint") } == 0)
        }
        // Reopened with another layout: the page size was fixed when the file was made.
        #expect(try Database(path: small, layout: .bulk).pageSize() == 4096)
        let bulk = try Database(path: temporaryDatabasePath())
        try bulk.migrate(Self.migrations)
        #expect(try bulk.pageSize() == 16384)
    }

    /// `wal_autocheckpoint` counts pages: a file made with other pages than its layout's (one created
    /// before the layout changed) is checkpointed after as many WAL bytes, not as many pages.
    @Test func theCheckpointComesAfterAsManyWALBytesWhateverTheFilesPageSize() throws {
        let oneKiB = Database.Layout(pageSize: 1024, autocheckpointPages: 400)
        let old = temporaryDatabasePath()
        do {
            let db = try Database(path: old, layout: Database.Layout(pageSize: 4096, autocheckpointPages: 100))
            try db.migrate(Self.migrations)
        }
        let reopened = try Database(path: old, layout: oneKiB)
        #expect(try reopened.pageSize() == 4096)
        #expect(try reopened.withWriter { try $0.scalarInt("PRAGMA wal_autocheckpoint") } == 100)
        let fresh = try Database(path: temporaryDatabasePath(), layout: oneKiB)
        try fresh.migrate(Self.migrations)
        #expect(try fresh.pageSize() == 1024)
        #expect(try fresh.withWriter { try $0.scalarInt("PRAGMA wal_autocheckpoint") } == 400)
        // The checkpoint thread's thresholds go through the same conversion.
        #expect(Database.Layout.small.walPages(6144, filePageSize: Database.Layout.small.pageSize) == 6144)
        #expect(oneKiB.walPages(6144, filePageSize: 4096) == 1536)
        #expect(oneKiB.walPages(1, filePageSize: 65536) == 1)
    }

    @Test func writeGenerationMovesOnWritesOnly() throws {
        let db = try Database(path: temporaryDatabasePath())
        try db.migrate(Self.migrations)
        let g0 = db.writeGeneration
        _ = try db.read { try $0.first("SELECT count(*) FROM kv") { $0.int(0) } }
        #expect(db.writeGeneration == g0)
        try db.write { try $0.run("INSERT INTO kv (k, v) VALUES (?, ?)", ["g", [UInt8]([1])]) }
        let g1 = db.writeGeneration
        #expect(g1 > g0)
        // A write that fails (and rolls back) still moves it: a cache may only ever be emptied too often.
        #expect(throws: Boom.self) { try db.write { _ in throw Boom() } }
        #expect(db.writeGeneration > g1)
    }

    @Test func refusesANewerDatabase() throws {
        let path = temporaryDatabasePath()
        do {
            let db = try Database(path: path)
            try db.migrate(Self.migrations + [Migration("t.3", "CREATE TABLE future (x)")])
        }
        let db = try Database(path: path)
        #expect(throws: DatabaseOpenError.self) { try db.migrate(Self.migrations) }
        do { try db.migrate(Self.migrations) } catch { #expect("\(error)".contains("newer Hearth")) }
    }

    @Test func refusesAnotherApplicationsDatabase() throws {
        let path = temporaryDatabasePath()
        do {
            let other = try Database(path: path)
            try other.withWriter { try $0.execute("CREATE TABLE theirs (x)") }
        }
        let db = try Database(path: path)
        do {
            try db.migrate(Self.migrations)
            Issue.record("expected notHearth")
        } catch {
            #expect("\(error)".contains("not a Hearth database"))
        }
        // A file that is not SQLite at all.
        let junk = temporaryDatabasePath()
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: junk))
        #expect(throws: DatabaseOpenError.self) {
            let d = try Database(path: junk)
            try d.migrate(Self.migrations)
        }
    }

    @Test(arguments: [true, false])
    func failedWriteRollsBackAndLeavesOldData(inMemory: Bool) throws {
        let db = try Database(path: inMemory ? nil : temporaryDatabasePath())
        try db.migrate(Self.migrations)
        try db.write { try $0.run("INSERT INTO kv (k, v) VALUES ('a', x'01')") }
        #expect(throws: Boom.self) {
            try db.write { c in
                try c.run("UPDATE kv SET v = x'02' WHERE k = 'a'")
                try c.run("INSERT INTO kv (k, v) VALUES ('b', x'03')")
                throw Boom()
            }
        }
        #expect(throws: SQLiteError.self) {
            try db.write { c in
                try c.run("INSERT INTO kv (k, v) VALUES ('c', x'04')")
                try c.run("INSERT INTO kv (k, v) VALUES ('a', x'05')")  // duplicate key
            }
        }
        let rows = try db.read { try $0.rows("SELECT k, hex(v) FROM kv ORDER BY k") { "\($0.text(0))=\($0.text(1))" } }
        #expect(rows == ["a=01"])
    }

    @Test func nestedTransactionsUseSavepoints() throws {
        let db = try Database(path: nil)
        try db.migrate(Self.migrations)
        try db.write { c in
            try c.run("INSERT INTO kv (k, v) VALUES ('outer', x'00')")
            _ = try? c.transaction { () throws -> Void in
                try c.run("INSERT INTO kv (k, v) VALUES ('inner', x'00')")
                throw Boom()
            }
        }
        let keys = try db.read { try $0.rows("SELECT k FROM kv") { $0.text(0) } }
        #expect(keys == ["outer"])
    }

    @Test func readersSeeCommittedStateWhileWritersWrite() throws {
        let db = try Database(path: temporaryDatabasePath())
        try db.migrate(Self.migrations)
        let group = DispatchGroup()
        let failures = Failures()
        for t in 0..<4 {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                do {
                    for i in 0..<50 {
                        try db.write { try $0.run("INSERT INTO kv (k, v) VALUES (?, x'00')", ["\(t)-\(i)"]) }
                        _ = try db.read { try $0.scalarInt("SELECT count(*) FROM kv") }
                    }
                } catch { failures.add("\(error)") }
            }
        }
        group.wait()
        #expect(failures.all.isEmpty)
        #expect(try db.read { try $0.scalarInt("SELECT count(*) FROM kv") } == 200)
    }

    @Test func valuesRoundTrip() throws {
        let db = try Database(path: nil)
        try db.withWriter { try $0.execute("CREATE TABLE v (a, b, c, d, e)") }
        try db.write { try $0.run("INSERT INTO v VALUES (?, ?, ?, ?, ?)", [Int64.max, 1.5, "té", [UInt8](), SQLValue.null]) }
        let row = try db.read { try $0.first("SELECT a, b, c, d, e FROM v") { s in (0..<5).map { s.value($0) } } }
        #expect(row == [.integer(Int64.max), .real(1.5), .text("té"), .blob([]), .null])
    }
}

final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}
