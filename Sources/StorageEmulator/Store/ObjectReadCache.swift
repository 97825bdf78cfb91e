import HearthSQLite

/// Small objects as a download last read them (the row, decoded, and its blob's slices), labelled
/// with the database's write generation (`GenerationCache`: any write at all empties it, as for
/// S3's bucket settings).
///
/// An entry is only a candidate: the download's read transaction still looks the object's row up
/// and uses the entry only when the row has the same generation, metageneration and blob in that
/// snapshot, so the bytes it reads belong to the metadata it answers with. What it saves is decoding
/// the row (its metadata JSON) and reading the slices.
typealias ObjectReadCache = GenerationCache<ObjectKey, ObjectReadEntry>

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
}
