import Foundation
import Testing
import HearthSQLite

/// The reader page-cache design rests on two things SQLite does, checked here on the real library:
/// a reader's cache is bounded by its layout's `readerCacheKiB` while the writer's is larger, and a
/// reader's cache is emptied when its next read finds the file changed by a commit.
@Suite struct ReaderCacheTests {
    static let migrations = [Migration("r.1", "CREATE TABLE rows (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")]

    /// A database with ~6 MiB of 4 KiB pages in `rows`, and a reader cache of 512 KiB.
    func filled() throws -> Database {
        let layout = Database.Layout(pageSize: 4096, autocheckpointPages: 4096, readerCacheKiB: 512)
        let db = try Database(path: temporaryDatabasePath(), layout: layout)
        try db.migrate(Self.migrations)
        try db.write { c in
            for i in 0..<6000 { try c.run("INSERT INTO rows (id, body) VALUES (?, randomblob(1000))", [Int64(i)]) }
        }
        return db
    }

    func readEverything(_ db: Database) throws -> Int64 {
        try db.read { try $0.scalarInt("SELECT sum(length(body)) FROM rows") ?? 0 }
    }

    @Test func aReadersCacheStaysWithinItsSizeAndTheWritersDoesNot() throws {
        let db = try filled()
        #expect(try readEverything(db) == 6_000_000)
        let use = db.cacheUse()
        #expect(use.readers == 1 && use.idleReaders == 1)
        // The whole table went through the reader; its cache kept at most its 512 KiB (SQLite counts
        // each page with its header, a few per cent more).
        #expect(use.idleReaderBytes > 256 * 1024 && use.idleReaderBytes < 600 * 1024, "reader cache \(use.idleReaderBytes)")
        // The writer wrote all 6 MiB and kept it: its cache_size (16 MB) is not reached.
        #expect(use.writerBytes > 5 * 1024 * 1024, "writer cache \(use.writerBytes)")
    }

    @Test func aCommitEmptiesAReadersCacheAtItsNextRead() throws {
        let db = try filled()
        _ = try readEverything(db)
        let warm = db.cacheUse().idleReaderBytes
        // Nothing written: the next read keeps (and reuses) what the last one cached.
        _ = try db.read { try $0.scalarInt("SELECT count(*) FROM rows WHERE id = 1") }
        #expect(db.cacheUse().idleReaderBytes >= warm)
        try db.write { try $0.run("UPDATE rows SET body = x'00' WHERE id = 1") }
        _ = try db.read { try $0.scalarInt("SELECT count(*) FROM rows WHERE id = 1") }
        // Only the few pages of that lookup are left.
        #expect(db.cacheUse().idleReaderBytes < warm / 4, "after a commit \(db.cacheUse().idleReaderBytes), before \(warm)")
    }
}
