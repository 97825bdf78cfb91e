import HearthCore
import HearthSQLite

/// Blob bookkeeping inside a transaction the caller holds.
///
/// A blob is an ordered list of slices (`offset`, `length`, `chunk_id`, `chunk_start`) of chunk
/// rows. Staging blobs are being written; every blob that an object or part refers to is final.
enum BlobStore {
    /// One slice of a chunk that makes up part of a blob.
    struct Segment: Sendable, Equatable {
        /// Where the slice starts in the blob.
        var offset: Int64
        var length: Int64
        var chunkID: Int64
        /// Where the slice starts in the chunk.
        var chunkStart: Int64
    }

    /// Creates an empty staging blob.
    static func createStaging(_ c: Connection, now: Instant) throws -> Int64 {
        try c.run("INSERT INTO s3_blobs (size, staging, created_at) VALUES (0, 1, ?)", [now.unixMicros])
        return c.lastInsertRowID
    }

    /// Creates a final blob of `size` bytes whose chunks the same transaction adds (with
    /// `appendChunk(…, updateSize: false)`): a body that fits one chunk is written in its commit
    /// transaction, so it needs no staging row — and skipping it leaves the staging index untouched.
    static func createFinal(_ c: Connection, size: Int64, now: Instant) throws -> Int64 {
        try c.run("INSERT INTO s3_blobs (size, staging, created_at) VALUES (?, 0, ?)", [size, now.unixMicros])
        return c.lastInsertRowID
    }

    /// Appends one chunk of body bytes at `offset` of the staging blob `blobID` (and records the
    /// blob's new size unless `updateSize` is false: its row already has it).
    static func appendChunk(_ c: Connection, blobID: Int64, offset: Int64, bytes: UnsafeRawBufferPointer, updateSize: Bool = true) throws {
        let insert = try c.prepare("INSERT INTO s3_chunks (data) VALUES (?)")
        try insert.bind([])
        try insert.bindBlob(bytes, at: 1)
        while try insert.step() {}
        let chunkID = c.lastInsertRowID
        try c.run("INSERT INTO s3_blob_chunks (blob_id, offset, length, chunk_id, chunk_start) VALUES (?, ?, ?, ?, 0)",
                  [blobID, offset, Int64(bytes.count), chunkID])
        if updateSize { try c.run("UPDATE s3_blobs SET size = ? WHERE id = ?", [offset + Int64(bytes.count), blobID]) }
    }

    /// Marks a blob final (an object or part now refers to it).
    static func promote(_ c: Connection, blobID: Int64) throws {
        try c.run("UPDATE s3_blobs SET staging = 0 WHERE id = ?", [blobID])
    }

    /// Deletes a blob and every chunk no other blob shares.
    static func delete(_ c: Connection, blobID: Int64) throws {
        try c.run("""
            DELETE FROM s3_chunks WHERE id IN (SELECT chunk_id FROM s3_blob_chunks WHERE blob_id = ?1)
              AND NOT EXISTS (SELECT 1 FROM s3_blob_chunks m WHERE m.chunk_id = s3_chunks.id AND m.blob_id != ?1)
            """, [blobID])
        try c.run("DELETE FROM s3_blob_chunks WHERE blob_id = ?", [blobID])
        try c.run("DELETE FROM s3_blobs WHERE id = ?", [blobID])
    }

    /// A new final blob holding `length` bytes of `source` from `start`, sharing its chunks.
    static func copyRange(_ c: Connection, from source: Int64, start: Int64, length: Int64, now: Instant) throws -> Int64 {
        try c.run("INSERT INTO s3_blobs (size, staging, created_at) VALUES (?, 0, ?)", [length, now.unixMicros])
        let blob = c.lastInsertRowID
        guard length > 0 else { return blob }
        for s in try segments(c, blobID: source, start: start, end: start + length) {
            let from = max(s.offset, start)
            let to = min(s.offset + s.length, start + length)
            try c.run("INSERT INTO s3_blob_chunks (blob_id, offset, length, chunk_id, chunk_start) VALUES (?, ?, ?, ?, ?)",
                      [blob, from - start, to - from, s.chunkID, s.chunkStart + (from - s.offset)])
        }
        return blob
    }

    /// A new final blob that is the concatenation of `blobs` (sharing their chunks).
    static func concatenate(_ c: Connection, _ blobs: [(id: Int64, size: Int64)], now: Instant) throws -> Int64 {
        let total = blobs.reduce(Int64(0)) { $0 + $1.size }
        try c.run("INSERT INTO s3_blobs (size, staging, created_at) VALUES (?, 0, ?)", [total, now.unixMicros])
        let blob = c.lastInsertRowID
        var base: Int64 = 0
        for part in blobs {
            try c.run("""
                INSERT INTO s3_blob_chunks (blob_id, offset, length, chunk_id, chunk_start)
                SELECT ?, offset + ?, length, chunk_id, chunk_start FROM s3_blob_chunks WHERE blob_id = ?
                """, [blob, base, part.id])
            base += part.size
        }
        return blob
    }

    /// The slices covering bytes `start..<end` of a blob, in order.
    static func segments(_ c: Connection, blobID: Int64, start: Int64, end: Int64) throws -> [Segment] {
        guard end > start else { return [] }
        let first = try c.scalarInt("SELECT max(offset) FROM s3_blob_chunks WHERE blob_id = ? AND offset <= ?", [blobID, start]) ?? 0
        return try c.rows("""
            SELECT offset, length, chunk_id, chunk_start FROM s3_blob_chunks
            WHERE blob_id = ? AND offset >= ? AND offset < ? ORDER BY offset
            """, [blobID, first, end]) { s in
            Segment(offset: s.int64(0), length: s.int64(1), chunkID: s.int64(2), chunkStart: s.int64(3))
        }.filter { $0.offset + $0.length > start }
    }

    /// Deletes staging blobs left by a previous run (a crash or kill during an upload).
    static func deleteOrphans(_ c: Connection) throws -> Int {
        let ids = try c.rows("SELECT id FROM s3_blobs WHERE staging = 1") { $0.int64(0) }
        for id in ids { try delete(c, blobID: id) }
        // Chunks whose mapping row never committed cannot exist (both are written in one
        // transaction), but a stray one would only waste space: sweep it too.
        try c.run("DELETE FROM s3_chunks WHERE NOT EXISTS (SELECT 1 FROM s3_blob_chunks m WHERE m.chunk_id = s3_chunks.id)")
        return ids.count
    }
}
