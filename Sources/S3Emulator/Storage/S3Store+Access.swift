import HearthCore
import HearthSQLite

/// What deciding a request's access needs of its bucket, read in one snapshot, and the bucket ACL.
extension S3Store {
    /// A bucket's owner and access settings.
    struct BucketAccess: Sendable {
        var bucket: BucketRecord
        var policy: StoredConfig
        var publicAccessBlock: StoredConfig
        var ownership: StoredConfig
        /// The bucket ACL (`AccessControlList.serialized`); nil: the owner's FULL_CONTROL only.
        var acl: String?
        /// The Object Lock configuration document (nil: none) and the default encryption, which
        /// every write reads: read with the rest so a PutObject needs no read of its own for them.
        var objectLock: String? = nil
        var encryption: StoredConfig = .absent

        /// The Object Ownership setting in force (BucketOwnerEnforced unless set otherwise).
        var objectOwnership: String {
            if case .document(let text) = ownership, case .success(let o) = OwnershipControls.parse(Array(text.utf8)) {
                return o.objectOwnership
            }
            return "BucketOwnerEnforced"
        }

        /// Whether ACLs count (ObjectWriter, BucketOwnerPreferred).
        var aclsEnabled: Bool { objectOwnership != "BucketOwnerEnforced" }
    }

    /// The bucket's access settings, or nil when it does not exist.
    func bucketAccess(_ name: String) throws -> BucketAccess? {
        let generation = bucketGeneration
        if let hit = bucketCache.lookup(name, generation: generation) { return hit }
        return try database.read { c in try cachedAccess(c, name, generation: generation) }
    }

    /// `bucketAccess` inside a read transaction `c`, from the cache while no bucket write has ended
    /// since `generation` (`bucketGeneration`, read before `c`'s transaction began), else read in
    /// `c` and cached.
    func cachedAccess(_ c: Connection, _ name: String, generation: Int) throws -> BucketAccess? {
        if let hit = bucketCache.lookup(name, generation: generation) { return hit }
        let access = try S3Store.bucketAccess(c, name)
        bucketCache.store(name, access, generation: generation)
        return access
    }

    /// The bucket's access settings read in `c`, or nil when it does not exist.
    static func bucketAccess(_ c: Connection, _ name: String) throws -> BucketAccess? {
        guard let b = try S3Store.bucket(c, name) else { return nil }
        // Every setting in one statement (a range of the (bucket, kind) key) rather than one each:
        // after any write this read runs again, once per request that follows.
        let rows = try c.rows(accessSettingsSQL, [name]) { (kind: $0.text(0), document: $0.optionalText(1)) }
        func config(_ kind: String) -> StoredConfig {
            guard let row = rows.first(where: { $0.kind == kind }) else { return .absent }
            return row.document.map(StoredConfig.document) ?? .removed
        }
        func setting(_ kind: String) -> String? { rows.first(where: { $0.kind == kind })?.document }
        return BucketAccess(bucket: b, policy: config(BucketConfigKind.policy.rawValue),
                            publicAccessBlock: config(BucketConfigKind.publicAccessBlock.rawValue),
                            ownership: config(BucketConfigKind.ownershipControls.rawValue),
                            acl: setting("acl"), objectLock: setting("objectLock"),
                            encryption: config(BucketConfigKind.encryption.rawValue))
    }

    private static let accessSettingsSQL = """
        SELECT kind, document FROM s3_bucket_config WHERE bucket = ? \
        AND kind IN ('policy', 'publicAccessBlock', 'ownershipControls', 'acl', 'objectLock', 'encryption')
        """

    static func bucketACL(_ c: Connection, _ bucket: String) throws -> String? {
        try setting(c, bucket, kind: "acl")
    }

    /// A bucket setting without an S3 configuration sub-resource of its own shape (`acl`,
    /// `objectLock`), kept in `s3_bucket_config` beside the others.
    static func setting(_ c: Connection, _ bucket: String, kind: String) throws -> String? {
        try c.first("SELECT document FROM s3_bucket_config WHERE bucket = ? AND kind = ?", [bucket, kind]) { $0.optionalText(0) } ?? nil
    }

    /// The setting `kind` of a bucket (nil: not set).
    /// - Throws: `NoSuchBucket`.
    func setting(_ bucket: String, kind: String) throws -> String? {
        try database.read { c in
            guard try S3Store.bucket(c, bucket) != nil else { throw S3Error.noSuchBucket(bucket: bucket) }
            return try S3Store.setting(c, bucket, kind: kind)
        }
    }

    /// Stores (nil: removes) the setting `kind` of a bucket.
    func setSetting(_ bucket: String, kind: String, _ value: String?, now: Instant) throws {
        try writeBuckets { c in
            guard try S3Store.bucket(c, bucket) != nil else { throw S3Error.noSuchBucket(bucket: bucket) }
            try S3Store.setSetting(c, bucket, kind: kind, value, now: now)
        }
    }

    static func setSetting(_ c: Connection, _ bucket: String, kind: String, _ value: String?, now: Instant) throws {
        if let value {
            try c.run("INSERT OR REPLACE INTO s3_bucket_config (bucket, kind, document, updated_at) VALUES (?, ?, ?, ?)",
                      [bucket, kind, value, now.unixMicros])
        } else {
            try c.run("DELETE FROM s3_bucket_config WHERE bucket = ? AND kind = ?", [bucket, kind])
        }
    }

    /// Stores the bucket ACL (nil: back to private).
    func setBucketACL(_ bucket: String, _ acl: String?, now: Instant) throws {
        try setSetting(bucket, kind: "acl", acl, now: now)
    }

    /// Replaces the ACL of the version `versionID` (`null` for the null version) of a key.
    /// - Throws: `NoSuchVersion` when there is no such object version.
    func setObjectACL(bucket: String, key: String, versionID: String, acl: String?) throws {
        try database.write { c in
            try S3Store.updateExtra(c, bucket: bucket, key: key, versionID: versionID) { $0.acl = acl }
        }
    }

    /// Changes the `extra` settings of one object version in place.
    /// - Throws: `ObjectLock.Unreadable` when the stored settings cannot be read: rewriting them
    ///   would replace what was unreadable (a lock among it) with the defaults.
    static func updateExtra(_ c: Connection, bucket: String, key: String, versionID: String, _ change: (inout ObjectExtra) -> Void) throws {
        if let current = try object(c, bucket: bucket, key: key), current.versionName == versionID {
            var extra = current.metadata.extra
            if let why = extra.unreadable { throw ObjectLock.Unreadable(reason: why) }
            change(&extra)
            try c.run("UPDATE s3_objects SET extra = ? WHERE bucket = ? AND key = ?",
                      [extra.isEmpty ? nil : extra.serialized, bucket, key])
            return
        }
        guard let entry = try version(c, bucket: bucket, key: key, versionID: versionID), !entry.isDeleteMarker else {
            throw S3Error.noSuchVersion(key: key, versionID: versionID)
        }
        var extra = entry.record.metadata.extra
        if let why = extra.unreadable { throw ObjectLock.Unreadable(reason: why) }
        change(&extra)
        try c.run("UPDATE s3_object_versions SET extra = ? WHERE bucket = ? AND key = ? AND version_id = ?",
                  [extra.isEmpty ? nil : extra.serialized, bucket, key, versionID])
    }
}
