import HearthCore
import HearthCrypto
import HearthSQLite

/// Writes an incoming body into a staging blob in chunk-sized rows, one short write transaction
/// per chunk, while computing its MD5 and any requested checksums.
///
/// Memory stays at one chunk however large the body. Nothing is visible until the caller's
/// commit transaction calls `commit(_:)` (which also writes the final partial chunk, so a small
/// object costs a single transaction); on any failure `discard()` removes what was staged.
/// `Checksum` is the service's own set of checksum algorithms (S3's `x-amz-checksum-*`, GCS's crc32c).
public final class BlobWriter<Namespace: BlobNamespace, Checksum: BlobChecksumAlgorithm> {
    private typealias Store = BlobStore<Namespace>

    /// Size of a chunk row.
    public static var chunkSize: Int { blobChunkSize }

    private let database: Database
    private let now: Instant
    /// The staging blob, once a full chunk has been flushed.
    private var stagedBlobID: Int64?
    private var buffer: [UInt8]
    /// Bytes appended so far (flushed and buffered).
    public private(set) var size: Int64 = 0
    private var flushedSize: Int64 = 0
    private var md5: StreamingDigest? = StreamingDigest(.md5)
    private var checksums: [(algorithm: Checksum, running: Checksum.Accumulator)]
    private var finished = false
    /// Seals each chunk at rest (nil: stored as sent).
    private let dataKey: BlobDataKey?
    /// Where full chunks go (nil: in rows; an in-memory database), found at the first full chunk.
    private var files: ChunkFiles??
    /// The full chunk being written to its file on the writer thread; its row is inserted once it
    /// is complete (at the next full chunk, or in `commit`).
    private var pending: (write: ChunkFiles.PendingWrite, offset: Int64, length: Int64)?
    /// The buffer the pending write was made from, once it is done: the next chunk's.
    private var spare: [UInt8] = []

    /// A writer computing `checksums` besides the MD5, sealing chunks with `dataKey` when given.
    public init(database: Database, now: Instant, checksums: [Checksum], dataKey: BlobDataKey? = nil) {
        self.database = database
        self.now = now
        self.dataKey = dataKey
        self.checksums = checksums.map { ($0, $0.makeAccumulator()) }
        buffer = []
        buffer.reserveCapacity(blobChunkSize)
    }

    /// Adds decoded body bytes, flushing a chunk row whenever one is full.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        md5?.update(bytes)
        for c in checksums { c.running.update(bytes) }
        size += Int64(bytes.count)
        var rest = bytes
        while !rest.isEmpty {
            let room = blobChunkSize - buffer.count
            let take = min(room, rest.count)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[0..<take]))
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            if buffer.count == blobChunkSize { try flush() }
        }
    }

    private func flush() throws {
        if let files = try chunkFiles() { return try flushToFile(files) }
        let offset = flushedSize
        let existing = stagedBlobID
        let id: Int64 = try database.write { c in
            let id = try existing ?? Store.createStaging(c, now: now)
            try store(c, blobID: id, offset: offset)
            return id
        }
        stagedBlobID = id
        flushedSize += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// The chunk files of this writer's database, or nil when chunks stay in rows.
    private func chunkFiles() throws -> ChunkFiles? {
        if let files { return files }
        let found = try database.read { c in ChunkFiles.of(c, Namespace.tables) }
        files = .some(found)
        return found
    }

    /// Hands the full buffer to the file writer thread and goes on with an empty one; the chunk
    /// before it, now complete in its file, gets its row first.
    private func flushToFile(_ files: ChunkFiles) throws {
        try finishPending()
        let length = Int64(buffer.count)
        let stored: [UInt8]
        if let dataKey {
            stored = buffer.withUnsafeBytes { dataKey.seal($0) }
            buffer.removeAll(keepingCapacity: true)
        } else {
            // The full buffer goes to the writer thread as it is; the next chunk fills the one the
            // previous write handed back (a second MiB per upload, never a copy).
            stored = buffer
            buffer = spare
            spare = []
            buffer.removeAll(keepingCapacity: true)
            buffer.reserveCapacity(blobChunkSize)
        }
        let number = try files.reserve(inFlight: true) { try database.read { c in try files.maxInTable(c) } }
        pending = (files.writeLater(number, stored), flushedSize, length)
        flushedSize += length
    }

    /// Waits for the pending file write and inserts its chunk row: in its own write transaction,
    /// or in `c`'s (the commit's, which then owns the staging blob it may create).
    /// - Returns: the blob the row went into.
    @discardableResult
    private func finishPending(in c: Connection? = nil) throws -> Int64? {
        guard let p = pending else { return stagedBlobID }
        pending = nil
        let written = try p.write.wait()
        if dataKey == nil { spare = written }
        let existing = stagedBlobID
        let insert = { [now] (c: Connection) throws -> Int64 in
            let id = try existing ?? Store.createStaging(c, now: now)
            try Store.appendFileChunk(c, blobID: id, offset: p.offset, length: p.length, file: p.write.number, files: p.write.files)
            return id
        }
        do {
            if let c { return try insert(c) }
            stagedBlobID = try database.write(insert)
            return stagedBlobID
        } catch {
            // Its row is not there, or goes with the transaction this error rolls back.
            p.write.files.remove(p.write.number)
            p.write.files.settle(p.write.number)
            throw error
        }
    }

    /// Writes the buffer as one chunk row, sealed when the writer has a data key.
    private func store(_ c: Connection, blobID: Int64, offset: Int64, updateSize: Bool = true) throws {
        let length = Int64(buffer.count)
        if let dataKey {
            let sealed = buffer.withUnsafeBytes { dataKey.seal($0) }
            try sealed.withUnsafeBytes { try Store.appendChunk(c, blobID: blobID, offset: offset, bytes: $0, length: length, updateSize: updateSize) }
        } else {
            try buffer.withUnsafeBytes { try Store.appendChunk(c, blobID: blobID, offset: offset, bytes: $0, length: length, updateSize: updateSize) }
        }
    }

    /// Writes the buffer as an inline blob (sealed when the writer has a data key) unless its
    /// stored form is larger than `BlobStore.inlineLimit`; nil when it is.
    private func storeInline(_ c: Connection) throws -> Int64? {
        let size = Int64(buffer.count)
        if let dataKey {
            let sealed = buffer.withUnsafeBytes { dataKey.seal($0) }
            guard sealed.count <= Store.inlineLimit else { return nil }
            return try sealed.withUnsafeBytes { try Store.createInline(c, size: size, bytes: $0, now: now) }
        }
        guard buffer.count <= Store.inlineLimit else { return nil }
        return try buffer.withUnsafeBytes { try Store.createInline(c, size: size, bytes: $0, now: now) }
    }

    /// The MD5 of the body (call once, after the last `append`).
    public func finalizeDigests() -> (md5: [UInt8], checksums: [Checksum: [UInt8]]) {
        let digest = md5?.finalize() ?? []
        md5 = nil
        var out: [Checksum: [UInt8]] = [:]
        for c in checksums { out[c.algorithm] = c.running.finalize() }
        checksums = []
        return (digest, out)
    }

    /// Inside the caller's write transaction: writes the buffered tail and makes the blob final.
    /// - Returns: the blob id. If the transaction rolls back, call `discard()`.
    public func commit(_ c: Connection) throws -> Int64 {
        // A staging blob this creates is the commit transaction's: if it rolls back, the blob and
        // the chunk's row go with it (and `reconcile` its file), and `discard` has nothing of it to delete.
        guard let id = try finishPending(in: c) else {
            // Nothing flushed: the whole body is the buffer, stored final in this transaction —
            // in the blob's own row when it is small (`BlobStore.inlineLimit`).
            if !buffer.isEmpty, let id = try storeInline(c) { return id }
            let id = try Store.createFinal(c, size: Int64(buffer.count), now: now)
            if !buffer.isEmpty {
                try store(c, blobID: id, offset: 0, updateSize: false)
            }
            return id
        }
        if !buffer.isEmpty { try store(c, blobID: id, offset: flushedSize) }
        try Store.promote(c, blobID: id)
        return id
    }

    /// The commit transaction succeeded: the blob now belongs to its object or part.
    public func committed() {
        finished = true
        stagedBlobID = nil
        buffer = []
    }

    /// Removes everything staged (failed verification, client gone, precondition failed).
    public func discard() {
        guard !finished else { return }
        finished = true
        buffer = []
        if let p = pending {
            pending = nil
            p.write.abandon()
        }
        if let id = stagedBlobID {
            stagedBlobID = nil
            // A failure here leaves a staging blob that the next start sweeps away.
            _ = try? database.write { c in try Store.delete(c, blobID: id) }
        }
    }

    /// Computes no digest at all (`finalizeDigests()` then returns an empty MD5 and no
    /// checksums): for a caller that digests the bytes itself, e.g. across the chunks of a
    /// resumable upload, where hashing each chunk again would only double the cost per byte.
    @discardableResult
    public func withoutDigests() -> Self {
        md5 = nil
        checksums = []
        return self
    }
}

/// Size of a chunk row (1 MiB): large enough that a GiB is a thousand rows, small enough that a
/// writer or a download holds one in memory. A global because static stored properties cannot
/// live in generic types.
let blobChunkSize = 1 << 20

/// A checksum algorithm a service asks `BlobWriter` to compute while the bytes stream past.
public protocol BlobChecksumAlgorithm: Hashable {
    /// The running state of one computation.
    associatedtype Accumulator: BlobChecksumAccumulator
    /// A fresh running computation.
    func makeAccumulator() -> Accumulator
}

/// A checksum being computed over bytes as they arrive.
public protocol BlobChecksumAccumulator: AnyObject {
    /// Adds bytes.
    func update(_ bytes: UnsafeRawBufferPointer)
    /// The checksum bytes; called once.
    func finalize() -> [UInt8]
}
