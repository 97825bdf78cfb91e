import HearthCore
import HearthSQLite

/// The bucket configurations kept in `s3_bucket_config`, one row per bucket and kind.
enum BucketConfigKind: String, Sendable, CaseIterable {
    case policy, lifecycle, encryption, publicAccessBlock, ownershipControls, tagging
}

extension S3Store {
    /// A bucket's configuration of one kind.
    enum StoredConfig: Sendable, Equatable {
        /// Never set: S3's default for a new bucket applies (if the kind has one).
        case absent
        /// Explicitly removed (DeletePublicAccessBlock, DeleteBucketOwnershipControls), so not even
        /// the default applies.
        case removed
        /// The stored document.
        case document(String)
    }

    /// The bucket's configuration of `kind`.
    /// - Throws: `NoSuchBucket`.
    func bucketConfig(_ bucket: String, _ kind: BucketConfigKind) throws -> StoredConfig {
        try database.read { c in
            guard try S3Store.bucket(c, bucket) != nil else { throw S3Error.noSuchBucket(bucket: bucket) }
            return try S3Store.bucketConfig(c, bucket, kind)
        }
    }

    static func bucketConfig(_ c: Connection, _ bucket: String, _ kind: BucketConfigKind) throws -> StoredConfig {
        try c.first("SELECT document FROM s3_bucket_config WHERE bucket = ? AND kind = ?", [bucket, kind.rawValue]) { row in
            row.optionalText(0).map(StoredConfig.document) ?? .removed
        } ?? .absent
    }

    /// Stores `document` (nil: removed) as the bucket's configuration of `kind`.
    /// - Throws: `NoSuchBucket`.
    func setBucketConfig(_ bucket: String, _ kind: BucketConfigKind, _ document: String?, now: Instant) throws {
        try writeBuckets { c in
            guard try S3Store.bucket(c, bucket) != nil else { throw S3Error.noSuchBucket(bucket: bucket) }
            try c.run("INSERT OR REPLACE INTO s3_bucket_config (bucket, kind, document, updated_at) VALUES (?, ?, ?, ?)",
                      [bucket, kind.rawValue, document, now.unixMicros])
        }
    }

    /// Forgets the bucket's configuration of `kind` (back to `absent`).
    /// - Throws: `NoSuchBucket`.
    func clearBucketConfig(_ bucket: String, _ kind: BucketConfigKind) throws {
        try writeBuckets { c in
            guard try S3Store.bucket(c, bucket) != nil else { throw S3Error.noSuchBucket(bucket: bucket) }
            try c.run("DELETE FROM s3_bucket_config WHERE bucket = ? AND kind = ?", [bucket, kind.rawValue])
        }
    }

    /// The policy and public access block of a bucket, read together (anonymous requests), or nil
    /// when the bucket does not exist.
    func accessConfig(_ bucket: String) throws -> (policy: StoredConfig, publicAccessBlock: StoredConfig)? {
        try database.read { c in
            guard try S3Store.bucket(c, bucket) != nil else { return nil }
            return (try S3Store.bucketConfig(c, bucket, .policy), try S3Store.bucketConfig(c, bucket, .publicAccessBlock))
        }
    }
}
