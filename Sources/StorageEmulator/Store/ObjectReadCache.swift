import HearthHTTP
import HearthSQLite

/// Objects as a download last read them, labelled with the database's write generation
/// (`GenerationCache`: any write at all empties it, as for S3's bucket settings and small objects).
///
/// Two kinds of entry:
/// - **Small objects (≤ `bytesLimit`) with their bytes.** A hit at the current generation is the
///   live object — no write has happened since it was read — so the download answers from it with
///   no read transaction at all, as S3's GetObject does. At 16 connections the transaction, not its
///   instructions, was what set the download URL behind S3's presigned GET: every read took a pooled
///   SQLite connection and its WAL read lock (shared-memory locks under one process-wide mutex).
/// - **Larger objects (≤ one chunk row) with their slices only.** A candidate: the read transaction
///   still looks the row up and uses the entry only when generation, metageneration and blob match
///   in that snapshot, so the bytes it reads belong to the metadata it answers with. It saves
///   decoding the row (its metadata JSON) and reading the slices.
///
/// Either kind carries the object's media headers, built once (they depend on the object only).
typealias ObjectReadCache = GenerationCache<ObjectKey, ObjectReadEntry>

extension ObjectReadCache {
    /// Largest object kept with its bytes (S3's limit for its object cache).
    static let bytesLimit: Int64 = 64 << 10

    /// The download cache: bytes bounded to 4 MiB in all, as S3's.
    static func make() -> ObjectReadCache {
        ObjectReadCache(capacity: 1024, maxCost: 4 << 20) { $0.bytes?.count ?? 0 }
    }
}

/// An object's bucket and name.
struct ObjectKey: Hashable, Sendable {
    let bucket: String
    let name: String
}

/// What `ObjectReadCache` holds for one object.
struct ObjectReadEntry: Sendable {
    let object: StoredObject
    /// The slices of the whole blob.
    let segments: [StorageBlobs.Segment]
    /// The whole object's bytes, for objects up to `ObjectReadCache.bytesLimit`.
    let bytes: [UInt8]?
    /// The headers GCS sends with the object's bytes (`StorageService.mediaHeaders`).
    let headers: HTTPHeaders
}
