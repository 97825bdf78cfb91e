import HearthCore
import HearthSQLite
import Testing
@testable import S3Emulator

@Suite struct BlobStoreTests {
    func database() throws -> Database {
        let db = try Database(path: nil)
        try db.migrate(S3Service.migrations)
        return db
    }

    func write(_ db: Database, _ bytes: [UInt8]) throws -> Int64 {
        let w = BlobWriter(database: db, now: Instant(unixSeconds: 0), checksums: [])
        try bytes.withUnsafeBytes { try w.append($0) }
        let id = try db.write { c in try w.commit(c) }
        w.committed()
        return id
    }

    func read(_ db: Database, _ blob: Int64, _ start: Int64, _ end: Int64) throws -> [UInt8] {
        let segments = try db.read { c in try BlobStore.segments(c, blobID: blob, start: start, end: end) }
        let source = BlobBodySource(database: db, segments: segments, start: start, end: end)
        var out = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4099)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            out += buffer[0..<n]
        }
        return out
    }

    @Test(arguments: [(0, 10), (0, 3 << 20), (1 << 20, 2 << 20), ((1 << 20) - 1, (1 << 20) + 1), (5, 6)])
    func rangesReadBack(start: Int, end: Int) throws {
        let db = try database()
        let bytes = S3Harness.bytes(3 << 20)
        let blob = try write(db, bytes)
        #expect(try read(db, blob, Int64(start), Int64(end)) == Array(bytes[start..<end]))
    }

    @Test func copyRangeAndConcatenateShareChunks() throws {
        let db = try database()
        let a = S3Harness.bytes(3 << 20, seed: 1)
        let b = S3Harness.bytes(300, seed: 2)
        let blobA = try write(db, a)
        let blobB = try write(db, b)
        let slice = try db.write { c in try BlobStore.copyRange(c, from: blobA, start: 1_000_000, length: 1_200_000, now: Instant(unixSeconds: 0)) }
        #expect(try read(db, slice, 0, 1_200_000) == Array(a[1_000_000..<2_200_000]))
        let joined = try db.write { c in try BlobStore.concatenate(c, [(slice, 1_200_000), (blobB, 300)], now: Instant(unixSeconds: 0)) }
        #expect(try read(db, joined, 1_199_990, 1_200_010) == Array(a[2_199_990..<2_200_000] + b[0..<10]))
        try db.write { c in
            try BlobStore.delete(c, blobID: blobA)
            try BlobStore.delete(c, blobID: slice)
        }
        // The joined blob still needs two of A's chunks and B's chunk.
        #expect(try read(db, joined, 0, 1_200_300) == Array(a[1_000_000..<2_200_000] + b))
        try db.write { c in
            try BlobStore.delete(c, blobID: joined)
            try BlobStore.delete(c, blobID: blobB)
        }
        #expect(try db.read { c in try c.scalarInt("SELECT count(*) FROM s3_chunks") } == 0)
    }

    func rowCounts(_ db: Database) throws -> [Int64] {
        try db.read { c in
            try ["s3_blobs", "s3_chunks", "s3_blob_chunks"].map { try c.scalarInt("SELECT count(*) FROM \($0)") ?? -1 }
        }
    }

    /// A small body is one row (no chunk, no slice); it reads as one slice, whole or in ranges,
    /// streamed or read with its metadata, and deleting it leaves no row behind.
    @Test func smallBodyIsOneRowAndReadsAsOneSlice() throws {
        let db = try database()
        let bytes = S3Harness.bytes(4096, seed: 3)
        let blob = try write(db, bytes)
        #expect(try rowCounts(db) == [1, 0, 0])
        let segments = try db.read { c in try BlobStore.segments(c, blobID: blob, start: 10, end: 20) }
        #expect(segments.count == 1 && segments[0].isInline && segments[0].length == 4096)
        #expect(try db.read { c in try BlobStore.segments(c, blobID: blob, start: 4096, end: 5000) }.isEmpty)
        for (start, end) in [(0, 4096), (1, 2), (4000, 4096), (0, 1)] {
            #expect(try read(db, blob, Int64(start), Int64(end)) == Array(bytes[start..<end]))
            let whole = try db.read { c in
                try BlobBodySource.bytes(c, segments: BlobStore.segments(c, blobID: blob, start: Int64(start), end: Int64(end)),
                                         start: Int64(start), end: Int64(end))
            }
            #expect(whole == Array(bytes[start..<end]))
        }
        // A download that found the slice before the blob went is cut off, not given other bytes.
        let found = try db.read { c in try BlobStore.segments(c, blobID: blob, start: 0, end: 10) }
        try db.write { c in try BlobStore.delete(c, blobID: blob) }
        #expect(try rowCounts(db) == [0, 0, 0])
        let source = BlobBodySource(database: db, segments: found, start: 0, end: 10)
        var buffer = [UInt8](repeating: 0, count: 10)
        #expect(throws: BlobBodySource.ChunkMissing.self) { try buffer.withUnsafeMutableBytes { try source.read(into: $0) } }
    }

    /// Copying a range of a small blob or concatenating small blobs first moves each source's
    /// bytes into a chunk row the copies share; deleting the sources keeps the copies whole, and
    /// deleting everything leaves nothing.
    @Test func copiesOfSmallBlobsShareAMaterializedChunk() throws {
        let db = try database()
        let a = S3Harness.bytes(300, seed: 4), b = S3Harness.bytes(5000, seed: 5)
        let blobA = try write(db, a), blobB = try write(db, b)
        let now = Instant(unixSeconds: 0)
        let slice = try db.write { c in try BlobStore.copyRange(c, from: blobB, start: 100, length: 200, now: now) }
        let joined = try db.write { c in try BlobStore.concatenate(c, [(blobA, 300), (blobB, 5000)], now: now) }
        #expect(try db.read { c in try BlobStore.inlineBytes(c, blobID: blobB) } == nil)
        #expect(try read(db, blobA, 0, 300) == a)
        #expect(try read(db, blobB, 0, 5000) == b)
        #expect(try read(db, slice, 0, 200) == Array(b[100..<300]))
        #expect(try read(db, joined, 290, 310) == Array(a[290...] + b[0..<10]))
        try db.write { c in
            try BlobStore.delete(c, blobID: blobA)
            try BlobStore.delete(c, blobID: blobB)
        }
        #expect(try read(db, joined, 0, 5300) == a + b)
        #expect(try read(db, slice, 0, 200) == Array(b[100..<300]))
        try db.write { c in
            try BlobStore.delete(c, blobID: joined)
            try BlobStore.delete(c, blobID: slice)
        }
        #expect(try rowCounts(db) == [0, 0, 0])
    }

    /// A download that found a small blob's slice and reads its bytes in a later transaction still
    /// gets them when a copy moved them into a chunk row meanwhile.
    @Test func streamedSmallBlobSurvivesMaterializing() throws {
        let db = try database()
        let bytes = S3Harness.bytes(2000, seed: 6)
        let blob = try write(db, bytes)
        let segments = try db.read { c in try BlobStore.segments(c, blobID: blob, start: 0, end: 2000) }
        _ = try db.write { c in try BlobStore.copyRange(c, from: blob, start: 0, length: 2000, now: Instant(unixSeconds: 0)) }
        let source = BlobBodySource(database: db, segments: segments, start: 5, end: 2000)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
        #expect(Array(buffer[0..<n]) == Array(bytes[5...]))
        #expect(try db.read { c in try BlobStore.storedBytes(c, of: segments[0]) } == bytes)
    }

    @Test func successorOfPrefix() {
        #expect(S3Store.successor(ofPrefix: Array("a/".utf8)) == Array("a0".utf8))
        #expect(S3Store.successor(ofPrefix: [0x61, 0xFF]) == [0x62])
        #expect(S3Store.successor(ofPrefix: [0xFF, 0xFF]) == nil)
    }
}

@Suite struct BlobWriterCommitTests {
    /// A body that never filled a chunk is stored final in the commit transaction; a larger one
    /// was staged chunk by chunk and is promoted. Either way the row ends final with its size.
    @Test(arguments: [0, 1, 4096, 8192, 8193, (1 << 20) - 1, 1 << 20, (1 << 20) + 5])
    func committedBlobIsFinalWithItsSize(size: Int) throws {
        let db = try Database(path: nil)
        try db.migrate(S3Service.migrations)
        let bytes = S3Harness.bytes(size)
        let w = BlobWriter(database: db, now: Instant(unixSeconds: 42), checksums: [])
        try bytes.withUnsafeBytes { try w.append($0) }
        let id = try db.write { c in try w.commit(c) }
        w.committed()
        let row = try db.read { c in
            try c.first("SELECT size, staging, created_at FROM s3_blobs WHERE id = ?", [id]) { ($0.int64(0), $0.int64(1), $0.int64(2)) }
        }
        #expect(row?.0 == Int64(size))
        #expect(row?.1 == 0)
        #expect(row?.2 == Instant(unixSeconds: 42).unixMicros)
        let stored = try db.read { c in
            try c.rows("SELECT length FROM s3_blob_chunks WHERE blob_id = ? ORDER BY offset", [id]) { $0.int64(0) }
        }
        let inline = try db.read { c in try c.scalarInt("SELECT length(data) FROM s3_blobs WHERE id = ?", [id]) }
        // A small body is its blob row's `data`; a larger one is chunk rows and slices.
        if size > 0 && size <= BlobStore.inlineLimit {
            #expect(inline == Int64(size))
            #expect(stored.isEmpty)
        } else {
            #expect(inline == nil)
            #expect(stored.reduce(0, +) == Int64(size))
        }
        #expect(try db.read { c in try c.scalarInt("SELECT count(*) FROM s3_blobs WHERE staging = 1") } == 0)
    }
}
