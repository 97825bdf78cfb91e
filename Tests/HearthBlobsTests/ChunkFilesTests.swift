import Foundation
import HearthBlobs
import HearthCore
import HearthSQLite
import Testing

private enum Files: BlobNamespace { static let tables = BlobTables(prefix: "files") }

/// Full chunks of a database on disk keep their bytes in files under `blobs/<prefix>/`.
@Suite struct ChunkFilesTests {
    private typealias Store = BlobStore<Files>
    private static let now = Instant(unixSeconds: 0)
    private static let allMigrations = [Migration("files.1", Files.tables.createStatements + Files.tables.inlineDataStatement),
                                        Migration("files.2", Files.tables.chunkFileStatement)]

    /// A fresh data directory with the namespace's tables.
    private func open(_ dir: String, migrations: [Migration] = allMigrations) throws -> Database {
        let db = try Database(path: dir + "/hearth.sqlite")
        try db.migrate(migrations)
        return db
    }

    private func tempDir() -> String {
        let dir = NSTemporaryDirectory() + "hearth-chunkfiles-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Runs `body` with a fresh data directory and its database, removed after.
    private func withDataDir(_ body: (String, Database) throws -> Void) throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try body(dir, try open(dir))
    }

    private func files(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/blobs/files")) ?? []).sorted()
    }

    private func write(_ db: Database, _ bytes: [UInt8], key: BlobDataKey? = nil) throws -> Int64 {
        let writer = BlobWriter<Files, NoChecksum>(database: db, now: Self.now, checksums: [], dataKey: key)
        try bytes.withUnsafeBytes { try writer.append($0) }
        let blob = try db.write { c in try writer.commit(c) }
        writer.committed()
        return blob
    }

    private func read(_ db: Database, blob: Int64, _ range: Range<Int64>, key: BlobDataKey? = nil) throws -> [UInt8] {
        let segments = try db.read { c in try Store.segments(c, blobID: blob, start: range.lowerBound, end: range.upperBound) }
        let source = BlobBodySource<Files>(database: db, segments: segments, start: range.lowerBound, end: range.upperBound, dataKey: key)
        var out = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 300_000)
        while case let n = try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), n > 0 { out += buffer[0..<n] }
        return out
    }

    private func body(_ count: Int, _ seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ ($0 >> 11) &+ seed) }
    }

    @Test func largeBodyRoundTripsThroughFiles() throws {
        try withDataDir { dir, db in
            let bytes = body((3 << 20) + 4321, 5)
            let blob = try write(db, bytes)
            // Three full chunks in files (their rows empty), the tail in its row.
            let rows = try db.read { c in try c.rows("SELECT length(data), file FROM files_chunks ORDER BY id") { ($0.int64(0), $0.isNull(1) ? nil : $0.int64(1)) } }
            #expect(rows.map(\.0) == [0, 0, 0, 4321])
            #expect(rows.compactMap(\.1).count == 3 && rows[3].1 == nil)
            #expect(files(dir) == rows.compactMap(\.1).map(String.init).sorted())
            #expect(try read(db, blob: blob, 0..<Int64(bytes.count)) == bytes)
            let across = Int64((2 << 20) - 9)..<Int64((3 << 20) + 17)
            #expect(try read(db, blob: blob, across) == Array(bytes[Int(across.lowerBound)..<Int(across.upperBound)]))
            // A copy shares the files; a whole read in one transaction sees the same bytes.
            let copy = try db.write { c in try Store.copyRange(c, from: blob, start: 100, length: 2 << 20, now: Self.now) }
            let whole = try db.read { c in
                try BlobBodySource<Files>.bytes(c, segments: Store.segments(c, blobID: copy, start: 0, end: 2 << 20), start: 0, end: 2 << 20)
            }
            #expect(whole == Array(bytes[100..<(100 + (2 << 20))]))
            // Sealed: the file holds ciphertext and opens with the key.
            let key = BlobDataKey.random()
            let sealed = try write(db, bytes, key: key)
            #expect(try read(db, blob: sealed, 0..<Int64(bytes.count), key: key) == bytes)
            let stored = try db.read { c in try Store.storedBytes(c, of: Store.segments(c, blobID: sealed, start: 0, end: 1)[0]) }
            #expect(stored?.count == (1 << 20) + BlobDataKey.overhead)
            #expect(stored.map { !$0.dropFirst(12).prefix(64).elementsEqual(bytes.prefix(64)) } == true)
        }
    }

    @Test func deleteRemovesFilesOnceCommittedAndARollbackKeepsThem() throws {
        try withDataDir { dir, db in
            let bytes = body((2 << 20) + 10, 9)
            let blob = try write(db, bytes)
            let copy = try db.write { c in try Store.copyRange(c, from: blob, start: 0, length: 1 << 20, now: Self.now) }
            #expect(files(dir).count == 2)
            // A delete rolled back keeps every file.
            struct Abort: Error {}
            #expect(throws: Abort.self) { try db.write { c in try Store.delete(c, blobID: blob); throw Abort() } }
            #expect(files(dir).count == 2)
            #expect(try read(db, blob: blob, 0..<Int64(bytes.count)) == bytes)
            // Deleting the original keeps the chunk the copy still uses, and removes the other's file.
            try db.write { c in try Store.delete(c, blobID: blob) }
            #expect(files(dir).count == 1)
            #expect(try read(db, blob: copy, 0..<(1 << 20)) == Array(bytes[0..<(1 << 20)]))
            try db.write { c in try Store.delete(c, blobID: copy) }
            #expect(files(dir).isEmpty)
        }
    }

    @Test func aRolledBackWriteLeavesNoFileAndNumbersAreNotReused() throws {
        try withDataDir { dir, db in
            let bytes = body(1 << 20, 3)
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try db.write { c in
                    let id = try Store.createStaging(c, now: Self.now)
                    try bytes.withUnsafeBytes { try Store.appendChunk(c, blobID: id, offset: 0, bytes: $0) }
                    throw Abort()
                }
            }
            #expect(files(dir).isEmpty)
            let first = try write(db, bytes)
            try db.write { c in try Store.delete(c, blobID: first) }
            let second = try write(db, bytes)
            let numbers = try db.read { c in try c.rows("SELECT file FROM files_chunks") { $0.int64(0) } }
            // The deleted chunk's number (and the rolled-back one's) are not handed out again.
            #expect(numbers == [3])
            #expect(try read(db, blob: second, 0..<(1 << 20)) == bytes)
        }
    }

    /// Files a crash left behind (written, their row never committed) go at start-up with the
    /// staging blobs; files rows name stay, and so does a file still being written for an upload
    /// in progress (its row comes once it is complete).
    @Test func sweepRemovesFilesNoRowNamesButNotOneInFlight() throws {
        try withDataDir { dir, db in
            let bytes = body((1 << 20) + 1, 1)
            let kept = try write(db, bytes)
            // An upload cut short after two chunks: the first one's row is in its staging blob, the
            // second is handed to the writer thread (in flight, no row yet).
            let staging = BlobWriter<Files, NoChecksum>(database: db, now: Self.now, checksums: [])
            let twice = body(2 << 20, 4)
            try twice.withUnsafeBytes { try staging.append($0) }
            // A file whose row never committed (the process died between the two).
            FileManager.default.createFile(atPath: dir + "/blobs/files/999", contents: Data([1, 2, 3]))
            // The writer thread creates the fourth file in its own time: wait for it (not a timing claim).
            for _ in 0..<3000 where files(dir).count < 4 { usleep(10_000) }
            #expect(files(dir).count == 4)
            #expect(try db.write { c in try Store.deleteOrphans(c) } == 1)
            #expect(files(dir).count == 2, "the staging blob's file and the stray one go, the one in flight stays")
            staging.discard()
            #expect(files(dir) == (try db.read { c in try c.rows("SELECT file FROM files_chunks WHERE file IS NOT NULL") { String($0.int64(0)) } }))
            #expect(try read(db, blob: kept, 0..<Int64(bytes.count)) == bytes)
        }
    }

    /// A body of several chunks committed while its last full chunk is still in flight: the commit
    /// waits for the file and inserts its row; a discarded writer leaves no file.
    @Test func commitAndDiscardWaitForTheFileInFlight() throws {
        try withDataDir { dir, db in
            let bytes = body(2 << 20, 6)
            let blob = try write(db, bytes)
            #expect(files(dir).count == 2)
            #expect(try read(db, blob: blob, 0..<Int64(bytes.count)) == bytes)
            let dropped = BlobWriter<Files, NoChecksum>(database: db, now: Self.now, checksums: [])
            try bytes.withUnsafeBytes { try dropped.append($0) }
            dropped.discard()
            #expect(files(dir).count == 2)
            #expect(try db.read { c in try c.scalarInt("SELECT count(*) FROM files_blobs") } == 1)
        }
    }

    /// A data directory written before chunk files (its chunk rows hold their bytes) reads the same
    /// after the migration that adds the column, and its new writes use files.
    @Test func anOldFormatDataDirectoryStillReads() throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bytes = body((2 << 20) + 99, 7)
        // The old layout, filled as the old code did: chunk rows with the bytes in `data`.
        do {
            let old = try Database(path: dir + "/hearth.sqlite")
            try old.migrate([Self.allMigrations[0]])
            try old.write { c in
                let blob = try Store.createFinal(c, size: Int64(bytes.count), now: Self.now)
                var offset = 0
                while offset < bytes.count {
                    let n = min(1 << 20, bytes.count - offset)
                    try c.run("INSERT INTO files_chunks (data) VALUES (?)", [Array(bytes[offset..<(offset + n)])])
                    try c.run("INSERT INTO files_blob_chunks (blob_id, offset, length, chunk_id, chunk_start) VALUES (?, ?, ?, ?, 0)",
                              [blob, Int64(offset), Int64(n), c.lastInsertRowID])
                    offset += n
                }
            }
        }
        let db = try open(dir)
        #expect(try read(db, blob: 1, 0..<Int64(bytes.count)) == bytes)
        #expect(files(dir).isEmpty)
        let fresh = try write(db, bytes)
        #expect(files(dir).count == 2)
        #expect(try read(db, blob: fresh, 0..<Int64(bytes.count)) == bytes)
        // Deleting the old blob removes its rows (no files to remove) and leaves the new one's.
        try db.write { c in try Store.delete(c, blobID: 1) }
        #expect(files(dir).count == 2)
    }

    /// An in-memory database keeps every chunk in its row.
    @Test func inMemoryDatabaseKeepsChunksInRows() throws {
        let db = try Database(path: nil)
        try db.migrate(Self.allMigrations)
        let bytes = body((1 << 20) + 5, 2)
        let blob = try write(db, bytes)
        #expect(try db.read { c in try c.scalarInt("SELECT count(*) FROM files_chunks WHERE file IS NOT NULL") } == 0)
        #expect(try read(db, blob: blob, 0..<Int64(bytes.count)) == bytes)
    }
}
