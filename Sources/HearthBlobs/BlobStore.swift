import HearthCore
import HearthSQLite

/// Blob bookkeeping inside a transaction the caller holds, in the tables of `Namespace`.
///
/// A blob is an ordered list of slices (`offset`, `length`, `chunk_id`, `chunk_start`) of chunk
/// rows. Staging blobs are being written; every blob that an object or part refers to is final.
public enum BlobStore<Namespace: BlobNamespace> {
    /// One slice of a chunk that makes up part of a blob.
    public struct Segment: Sendable, Equatable {
        /// Where the slice starts in the blob.
        public var offset: Int64
        public var length: Int64
        public var chunkID: Int64
        /// Where the slice starts in the chunk.
        public var chunkStart: Int64
    }

    private static var blobsTable: String { Namespace.tables.blobs }
    private static var chunksTable: String { Namespace.tables.chunks }
    private static var blobChunksTable: String { Namespace.tables.blobChunks }

    /// Creates an empty staging blob.
    public static func createStaging(_ c: Connection, now: Instant) throws -> Int64 {
        try c.run("INSERT INTO \(blobsTable) (size, staging, created_at) VALUES (0, 1, ?)", [now.unixMicros])
        return c.lastInsertRowID
    }

    /// Creates a final blob of `size` bytes whose chunks the same transaction adds (with
    /// `appendChunk(…, updateSize: false)`): a body that fits one chunk is written in its commit
    /// transaction, so it needs no staging row — and skipping it leaves the staging index untouched.
    public static func createFinal(_ c: Connection, size: Int64, now: Instant) throws -> Int64 {
        try c.run("INSERT INTO \(blobsTable) (size, staging, created_at) VALUES (?, 0, ?)", [size, now.unixMicros])
        return c.lastInsertRowID
    }

    /// Appends one chunk row holding `bytes` at `offset` of the staging blob `blobID` (and records
    /// the blob's new size unless `updateSize` is false: its row already has it). `length` is the
    /// plaintext length the slice covers: the row is longer when it is sealed (`BlobDataKey`).
    public static func appendChunk(_ c: Connection, blobID: Int64, offset: Int64, bytes: UnsafeRawBufferPointer,
                                   length: Int64? = nil, chunkStart: Int64 = 0, updateSize: Bool = true) throws {
        let length = length ?? Int64(bytes.count)
        let insert = try c.prepare("INSERT INTO \(chunksTable) (data) VALUES (?)")
        try insert.bind([])
        try insert.bindBlob(bytes, at: 1)
        while try insert.step() {}
        let chunkID = c.lastInsertRowID
        try c.run("INSERT INTO \(blobChunksTable) (blob_id, offset, length, chunk_id, chunk_start) VALUES (?, ?, ?, ?, ?)",
                  [blobID, offset, length, chunkID, chunkStart])
        if updateSize { try c.run("UPDATE \(blobsTable) SET size = ? WHERE id = ?", [offset + length, blobID]) }
    }

    /// Marks a blob final (an object or part now refers to it).
    public static func promote(_ c: Connection, blobID: Int64) throws {
        try c.run("UPDATE \(blobsTable) SET staging = 0 WHERE id = ?", [blobID])
    }

    /// Deletes a blob and every chunk no other blob shares.
    public static func delete(_ c: Connection, blobID: Int64) throws {
        try c.run("""
            DELETE FROM \(chunksTable) WHERE id IN (SELECT chunk_id FROM \(blobChunksTable) WHERE blob_id = ?1)
              AND NOT EXISTS (SELECT 1 FROM \(blobChunksTable) m WHERE m.chunk_id = \(chunksTable).id AND m.blob_id != ?1)
            """, [blobID])
        try c.run("DELETE FROM \(blobChunksTable) WHERE blob_id = ?", [blobID])
        try c.run("DELETE FROM \(blobsTable) WHERE id = ?", [blobID])
    }

    /// A new final blob holding `length` bytes of `source` from `start`, sharing its chunks.
    public static func copyRange(_ c: Connection, from source: Int64, start: Int64, length: Int64, now: Instant) throws -> Int64 {
        try c.run("INSERT INTO \(blobsTable) (size, staging, created_at) VALUES (?, 0, ?)", [length, now.unixMicros])
        let blob = c.lastInsertRowID
        guard length > 0 else { return blob }
        for s in try segments(c, blobID: source, start: start, end: start + length) {
            let from = max(s.offset, start)
            let to = min(s.offset + s.length, start + length)
            try c.run("INSERT INTO \(blobChunksTable) (blob_id, offset, length, chunk_id, chunk_start) VALUES (?, ?, ?, ?, ?)",
                      [blob, from - start, to - from, s.chunkID, s.chunkStart + (from - s.offset)])
        }
        return blob
    }

    /// A new final blob that is the concatenation of `blobs` (sharing their chunks).
    public static func concatenate(_ c: Connection, _ blobs: [(id: Int64, size: Int64)], now: Instant) throws -> Int64 {
        let total = blobs.reduce(Int64(0)) { $0 + $1.size }
        try c.run("INSERT INTO \(blobsTable) (size, staging, created_at) VALUES (?, 0, ?)", [total, now.unixMicros])
        let blob = c.lastInsertRowID
        var base: Int64 = 0
        for part in blobs {
            try c.run("""
                INSERT INTO \(blobChunksTable) (blob_id, offset, length, chunk_id, chunk_start)
                SELECT ?, offset + ?, length, chunk_id, chunk_start FROM \(blobChunksTable) WHERE blob_id = ?
                """, [blob, base, part.id])
            base += part.size
        }
        return blob
    }

    /// The slices covering bytes `start..<end` of a blob, in order.
    public static func segments(_ c: Connection, blobID: Int64, start: Int64, end: Int64) throws -> [Segment] {
        guard end > start else { return [] }
        let first = try c.scalarInt("SELECT max(offset) FROM \(blobChunksTable) WHERE blob_id = ? AND offset <= ?", [blobID, start]) ?? 0
        return try c.rows("""
            SELECT offset, length, chunk_id, chunk_start FROM \(blobChunksTable)
            WHERE blob_id = ? AND offset >= ? AND offset < ? ORDER BY offset
            """, [blobID, first, end]) { s in
            Segment(offset: s.int64(0), length: s.int64(1), chunkID: s.int64(2), chunkStart: s.int64(3))
        }.filter { $0.offset + $0.length > start }
    }

    /// Deletes staging blobs left by a previous run (a crash or kill during an upload).
    public static func deleteOrphans(_ c: Connection) throws -> Int {
        let ids = try c.rows("SELECT id FROM \(blobsTable) WHERE staging = 1") { $0.int64(0) }
        for id in ids { try delete(c, blobID: id) }
        // Chunks whose mapping row never committed cannot exist (both are written in one
        // transaction), but a stray one would only waste space: sweep it too.
        try c.run("DELETE FROM \(chunksTable) WHERE NOT EXISTS (SELECT 1 FROM \(blobChunksTable) m WHERE m.chunk_id = \(chunksTable).id)")
        return ids.count
    }
}
