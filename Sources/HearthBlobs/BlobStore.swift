import HearthCore
import HearthSQLite

/// Blob bookkeeping inside a transaction the caller holds, in the tables of `Namespace`.
///
/// A blob is an ordered list of slices (`offset`, `length`, `chunk_id`, `chunk_start`) of chunk
/// rows — or, for a small body written whole in its commit transaction, its bytes in the blob's
/// own row (`data`, at most `inlineLimit` bytes as stored; no chunk or slice rows). An inline blob
/// reads as one slice (`Segment.isInline`), so readers need not know which form a blob has; an
/// operation that shares chunks between blobs (`copyRange`, `concatenate`) first moves an inline
/// source's bytes into a chunk row of its own (`materialize`). Staging blobs are being written
/// (never inline); every blob that an object or part refers to is final.
///
/// A chunk of `ChunkFiles.threshold` bytes or more (a full chunk) in a database on disk keeps its
/// bytes in a file of its own, named by the row's `file` column (`ChunkFiles`): readers go through
/// `chunkBytes`/`storedBytes`, which read either form.
public enum BlobStore<Namespace: BlobNamespace> {
    /// One slice of a chunk that makes up part of a blob.
    public struct Segment: Sendable, Equatable {
        /// Where the slice starts in the blob.
        public var offset: Int64
        public var length: Int64
        /// The chunk row; for an inline blob, minus the blob's id (its row holds the bytes).
        public var chunkID: Int64
        /// Where the slice starts in the chunk.
        public var chunkStart: Int64

        /// Whether the bytes are the blob row's own (`data`) rather than a chunk row's.
        public var isInline: Bool { chunkID < 0 }
    }

    /// Largest body (as stored: sealed bodies are longer) kept in its blob's row. Overwriting a
    /// small object then changes one blob row instead of three rows in three tables and their
    /// index, and deleting it is one row: at 16 KiB pages two such rows still share a leaf page,
    /// with no overflow page.
    public static var inlineLimit: Int { blobInlineLimit }

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

    /// Creates a final blob of `size` bytes (plaintext) whose bytes as stored (`bytes`, at most
    /// `inlineLimit`) are its own row's: a small body in its commit transaction.
    public static func createInline(_ c: Connection, size: Int64, bytes: UnsafeRawBufferPointer, now: Instant) throws -> Int64 {
        let insert = try c.prepare("INSERT INTO \(blobsTable) (size, staging, created_at, data) VALUES (?, 0, ?, ?)")
        try insert.bind([size, now.unixMicros])
        try insert.bindBlob(bytes, at: 3)
        while try insert.step() {}
        return c.lastInsertRowID
    }

    /// The size (plaintext) of an inline blob, or nil when its bytes are chunk rows (or it does not exist).
    private static func inlineSize(_ c: Connection, blobID: Int64) throws -> Int64? {
        try c.scalarInt("SELECT size FROM \(blobsTable) WHERE id = ? AND data IS NOT NULL", [blobID])
    }

    /// The stored bytes of an inline blob (sealed as written), or nil when the blob's bytes are
    /// chunk rows (or it does not exist).
    public static func inlineBytes(_ c: Connection, blobID: Int64) throws -> [UInt8]? {
        try c.first("SELECT data FROM \(blobsTable) WHERE id = ? AND data IS NOT NULL", [blobID]) { $0.blob(0) }
    }

    /// The stored bytes of an inline blob, read by a transaction after the one that found its
    /// slice: if `materialize` moved them into a chunk row meanwhile, that row's (the same bytes).
    static var inlineRowSQL: String {
        """
        SELECT data, NULL FROM \(blobsTable) WHERE id = ?1 AND data IS NOT NULL UNION ALL
        SELECT k.data, k.file FROM \(blobChunksTable) m JOIN \(chunksTable) k ON k.id = m.chunk_id WHERE m.blob_id = ?1 AND m.offset = 0
        LIMIT 1
        """
    }

    /// The stored bytes (sealed as written) of the row a slice reads: its chunk, or its inline blob.
    /// - Returns: nil when the row is gone.
    public static func storedBytes(_ c: Connection, of segment: Segment) throws -> [UInt8]? {
        try chunkRow(c, chunkID: segment.chunkID) { stored in
            switch stored {
            case .row(let bytes): [UInt8](bytes)
            case .file(let number, let files): files.read(number, range: nil)
            }
        }
    }

    /// Where a chunk's stored bytes are: in its row, or in a chunk file.
    enum Stored {
        case row(UnsafeRawBufferPointer)
        case file(Int64, ChunkFiles)
    }

    /// Calls `body` with where the stored bytes of chunk `chunkID` are (a negative id: the inline
    /// blob's row); nil when the row is gone.
    static func chunkRow<T>(_ c: Connection, chunkID: Int64, _ body: (Stored) throws -> T?) throws -> T? {
        let sql = chunkID < 0 ? inlineRowSQL : chunkSQL
        return try c.first(sql, [chunkID < 0 ? -chunkID : chunkID]) { row -> T? in
            if !row.isNull(1) {
                guard let files = ChunkFiles.of(c, Namespace.tables) else { return nil }
                return try body(.file(row.int64(1), files))
            }
            return try row.withBlob(0) { try body(.row($0)) }
        } ?? nil
    }

    private static var chunkSQL: String { "SELECT data, file FROM \(chunksTable) WHERE id = ?" }

    /// Moves an inline blob's bytes into a chunk row and one slice, so other blobs can share them
    /// (`copyRange`, `concatenate`); a chunked blob is left as it is. Inside the caller's transaction,
    /// so readers see one form or the other.
    public static func materialize(_ c: Connection, blobID: Int64) throws {
        guard let size = try inlineSize(c, blobID: blobID) else { return }
        try c.run("INSERT INTO \(chunksTable) (data) SELECT data FROM \(blobsTable) WHERE id = ?", [blobID])
        try c.run("INSERT INTO \(blobChunksTable) (blob_id, offset, length, chunk_id, chunk_start) VALUES (?, 0, ?, ?, 0)",
                  [blobID, size, c.lastInsertRowID])
        try c.run("UPDATE \(blobsTable) SET data = NULL WHERE id = ?", [blobID])
    }

    /// Appends one chunk row holding `bytes` at `offset` of the staging blob `blobID` (and records
    /// the blob's new size unless `updateSize` is false: its row already has it). `length` is the
    /// plaintext length the slice covers: the row is longer when it is sealed (`BlobDataKey`).
    public static func appendChunk(_ c: Connection, blobID: Int64, offset: Int64, bytes: UnsafeRawBufferPointer,
                                   length: Int64? = nil, chunkStart: Int64 = 0, updateSize: Bool = true) throws {
        let length = length ?? Int64(bytes.count)
        let chunkID: Int64
        if bytes.count >= ChunkFiles.threshold, let files = ChunkFiles.of(c, Namespace.tables) {
            // The file first, complete, then its row: the COMMIT that makes the row visible
            // comes after the bytes are in the file.
            let file = try files.write(bytes, c)
            chunkID = try insertFileChunk(c, file: file, files: files)
        } else {
            try c.prepare("INSERT INTO \(chunksTable) (data) VALUES (?)").runBorrowing(bytes, at: 1)
            chunkID = c.lastInsertRowID
        }
        try c.run("INSERT INTO \(blobChunksTable) (blob_id, offset, length, chunk_id, chunk_start) VALUES (?, ?, ?, ?, ?)",
                  [blobID, offset, length, chunkID, chunkStart])
        if updateSize { try c.run("UPDATE \(blobsTable) SET size = ? WHERE id = ?", [offset + length, blobID]) }
    }

    /// Appends a chunk whose bytes are the complete file `file` (`ChunkFiles.writeLater`), as
    /// `appendChunk` appends one held in memory.
    static func appendFileChunk(_ c: Connection, blobID: Int64, offset: Int64, length: Int64, file: Int64, files: ChunkFiles,
                                updateSize: Bool = true) throws {
        let chunkID = try insertFileChunk(c, file: file, files: files)
        try c.run("INSERT INTO \(blobChunksTable) (blob_id, offset, length, chunk_id, chunk_start) VALUES (?, ?, ?, ?, 0)",
                  [blobID, offset, length, chunkID])
        if updateSize { try c.run("UPDATE \(blobsTable) SET size = ? WHERE id = ?", [offset + length, blobID]) }
    }

    /// Inserts the row of the complete chunk file `file`; returns its id.
    private static func insertFileChunk(_ c: Connection, file: Int64, files: ChunkFiles) throws -> Int64 {
        // From here the transaction's end decides: its row, or the file goes (`reconcile`).
        files.settle(file)
        do {
            try c.run("INSERT INTO \(chunksTable) (data, file) VALUES (x'', ?)", [file])
        } catch {
            files.remove(file)
            throw error
        }
        let chunkID = c.lastInsertRowID
        // Removed again if this row does not outlive the transaction (rolled back).
        files.reconcile(after: c, [(chunkID, file)])
        return chunkID
    }

    /// Marks a blob final (an object or part now refers to it).
    public static func promote(_ c: Connection, blobID: Int64) throws {
        try c.run("UPDATE \(blobsTable) SET staging = 0 WHERE id = ?", [blobID])
    }

    /// Deletes a blob and every chunk no other blob shares.
    public static func delete(_ c: Connection, blobID: Int64) throws {
        // An inline blob is its one row: nothing else refers to it (sharing materializes first).
        try c.run("DELETE FROM \(blobsTable) WHERE id = ? AND data IS NOT NULL", [blobID])
        if c.changes == 1 { return }
        let files = try c.rows("""
            DELETE FROM \(chunksTable) WHERE id IN (SELECT chunk_id FROM \(blobChunksTable) WHERE blob_id = ?1)
              AND NOT EXISTS (SELECT 1 FROM \(blobChunksTable) m WHERE m.chunk_id = \(chunksTable).id AND m.blob_id != ?1)
            RETURNING id, file
            """, [blobID]) { row in row.isNull(1) ? nil : (chunk: row.int64(0), file: row.int64(1)) }.compactMap { $0 }
        // The files go once the deletion has committed (and stay if it is rolled back).
        if !files.isEmpty { ChunkFiles.of(c, Namespace.tables)?.reconcile(after: c, files) }
        try c.run("DELETE FROM \(blobChunksTable) WHERE blob_id = ?", [blobID])
        try c.run("DELETE FROM \(blobsTable) WHERE id = ?", [blobID])
    }

    /// A new final blob holding `length` bytes of `source` from `start`, sharing its chunks.
    public static func copyRange(_ c: Connection, from source: Int64, start: Int64, length: Int64, now: Instant) throws -> Int64 {
        try c.run("INSERT INTO \(blobsTable) (size, staging, created_at) VALUES (?, 0, ?)", [length, now.unixMicros])
        let blob = c.lastInsertRowID
        guard length > 0 else { return blob }
        try materialize(c, blobID: source)
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
            try materialize(c, blobID: part.id)
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
        if let size = try inlineSize(c, blobID: blobID) {
            return start < size ? [Segment(offset: 0, length: size, chunkID: -blobID, chunkStart: 0)] : []
        }
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
        sweepFiles(c)
        return ids.count
    }

    /// Once the transaction on `c` (the writer) ends, removes every chunk file no row names: for
    /// start-up (files of a transaction a crash cut short) and after deleting every row (a reset).
    public static func sweepFiles(_ c: Connection) {
        ChunkFiles.of(c, Namespace.tables)?.sweep(after: c)
    }
}

/// `BlobStore.inlineLimit` (a global: static stored properties cannot live in generic types).
let blobInlineLimit = 8 << 10
