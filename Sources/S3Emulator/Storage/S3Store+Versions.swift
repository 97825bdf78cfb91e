import HearthCore
import HearthSQLite

/// Object versions and delete markers.
///
/// A key's current version is its `s3_objects` row (when the newest entry of its history is an
/// object); every other version and every delete marker is a row of `s3_object_versions`, whose
/// `seq` orders a key's entries from the newest (smallest) up. Invariant: a key has an
/// `s3_objects` row exactly when the newest entry of its history is not a delete marker, and that
/// row is that entry. Versions keep their blobs: demoting a version moves its row, never its bytes.
extension S3Store {
    /// One entry of a key's history: an object version or a delete marker.
    struct VersionEntry: Sendable, Equatable {
        /// The object (for a delete marker: key, owner, time and version id, no body).
        var record: ObjectRecord
        var isDeleteMarker: Bool
        /// Whether it is the newest entry of its key.
        var isLatest: Bool
    }

    /// What a delete did, for `x-amz-version-id` / `x-amz-delete-marker` and DeleteObjects.
    struct DeleteOutcome: Sendable, Equatable {
        /// The version id the answer names (nil for a bucket that never had versioning).
        var versionID: String?
        /// Whether a delete marker was created or removed.
        var deleteMarker: Bool
    }

    /// The columns of an `s3_object_versions` row, in `objectRecord` order plus marker and seq.
    static let versionColumns = objectColumns + ", delete_marker, seq"

    static func versionEntry(_ s: Statement) -> (entry: VersionEntry, seq: Int64) {
        var record = objectRecord(s)
        if record.versionID == "null" { record.versionID = nil }
        return (VersionEntry(record: record, isDeleteMarker: s.bool(23), isLatest: false), s.int64(24))
    }

    // MARK: Reads

    /// The entry named `versionID` (`null` for the null version), or nil.
    static func version(_ c: Connection, bucket: String, key: String, versionID: String) throws -> VersionEntry? {
        if let current = try object(c, bucket: bucket, key: key), current.versionName == versionID {
            return VersionEntry(record: current, isDeleteMarker: false, isLatest: true)
        }
        guard var found = try c.first("SELECT \(versionColumns) FROM s3_object_versions WHERE bucket = ? AND key = ? AND version_id = ?",
                                      [bucket, key, versionID], versionEntry) else { return nil }
        found.entry.isLatest = try object(c, bucket: bucket, key: key) == nil && newestSeq(c, bucket: bucket, key: key) == found.seq
        return found.entry
    }

    /// The newest noncurrent entry of a key (a delete marker when the key has no current version).
    static func newestNoncurrent(_ c: Connection, bucket: String, key: String) throws -> VersionEntry? {
        try c.first("SELECT \(versionColumns) FROM s3_object_versions WHERE bucket = ? AND key = ? ORDER BY seq LIMIT 1",
                    [bucket, key], versionEntry)?.entry
    }

    /// The delete marker that is the key's newest entry, when the key has no current version.
    static func currentDeleteMarker(_ c: Connection, bucket: String, key: String) throws -> ObjectRecord? {
        guard let newest = try newestNoncurrent(c, bucket: bucket, key: key), newest.isDeleteMarker else { return nil }
        return newest.record
    }

    private static func newestSeq(_ c: Connection, bucket: String, key: String) throws -> Int64? {
        try c.scalarInt("SELECT min(seq) FROM s3_object_versions WHERE bucket = ? AND key = ?", [bucket, key])
    }

    /// The entry a request names — the newest for nil, else the version `versionID` — and whether
    /// the bucket has (or had) versioning.
    func entry(bucket: String, key: String, versionID: String?) throws -> (versioned: Bool, entry: VersionEntry?) {
        try database.read { c in
            guard let record = try S3Store.bucket(c, bucket) else { throw S3Error.noSuchBucket(bucket: bucket) }
            let versioned = record.versioning != nil
            if let versionID { return (versioned, try S3Store.version(c, bucket: bucket, key: key, versionID: versionID)) }
            if let current = try S3Store.object(c, bucket: bucket, key: key) {
                return (versioned, VersionEntry(record: current, isDeleteMarker: false, isLatest: true))
            }
            return (versioned, try S3Store.currentDeleteMarker(c, bucket: bucket, key: key)
                .map { VersionEntry(record: $0, isDeleteMarker: true, isLatest: true) })
        }
    }

    // MARK: Writes (inside the caller's write transaction)

    /// Moves the key's current version into its history as the newest noncurrent entry.
    static func demoteCurrent(_ c: Connection, bucket: String, key: String) throws {
        try c.run("""
            INSERT INTO s3_object_versions (bucket, key, seq, version_id, delete_marker, blob_id, size, etag, last_modified,
                content_type, content_disposition, content_encoding, content_language, cache_control, expires, user_metadata,
                storage_class, website_redirect, tagging, checksum_algorithm, checksum_value, checksum_type, part_sizes, owner, extra)
            SELECT bucket, key, coalesce(seq, (SELECT coalesce(min(seq), 0) - 1 FROM s3_object_versions WHERE bucket = ?1 AND key = ?2)),
                coalesce(version_id, 'null'), 0, blob_id, size, etag, last_modified,
                content_type, content_disposition, content_encoding, content_language, cache_control, expires, user_metadata,
                storage_class, website_redirect, tagging, checksum_algorithm, checksum_value, checksum_type, part_sizes, owner, extra
            FROM s3_objects WHERE bucket = ?1 AND key = ?2
            """, [bucket, key])
        try c.run("DELETE FROM s3_objects WHERE bucket = ? AND key = ?", [bucket, key])
    }

    /// Adds a delete marker as the key's newest entry (the caller has demoted the current version).
    static func insertDeleteMarker(_ c: Connection, bucket: String, key: String, versionID: String, owner: String, now: Instant) throws {
        try c.run("""
            INSERT INTO s3_object_versions (bucket, key, seq, version_id, delete_marker, last_modified, owner)
            VALUES (?1, ?2, (SELECT coalesce(min(seq), 0) - 1 FROM s3_object_versions WHERE bucket = ?1 AND key = ?2), ?3, 1, ?4, ?5)
            """, [bucket, key, versionID, now.unixMicros, owner])
    }

    /// Removes the noncurrent entry `versionID` (and its blob); returns it, or nil when there is none.
    @discardableResult
    static func deleteNoncurrent(_ c: Connection, bucket: String, key: String, versionID: String) throws -> VersionEntry? {
        guard let found = try c.first("SELECT \(versionColumns) FROM s3_object_versions WHERE bucket = ? AND key = ? AND version_id = ?",
                                      [bucket, key, versionID], versionEntry) else { return nil }
        try c.run("DELETE FROM s3_object_versions WHERE bucket = ? AND key = ? AND seq = ?", [bucket, key, found.seq])
        if !found.entry.isDeleteMarker { try BlobStore.delete(c, blobID: found.entry.record.blobID) }
        return found.entry
    }

    /// Restores the invariant after an entry went: with no current version, the newest remaining
    /// entry becomes current when it is an object (a delete marker stays where it is).
    static func promoteNewest(_ c: Connection, bucket: String, key: String) throws {
        guard try object(c, bucket: bucket, key: key) == nil,
              let newest = try c.first("SELECT \(versionColumns) FROM s3_object_versions WHERE bucket = ? AND key = ? ORDER BY seq LIMIT 1",
                                       [bucket, key], versionEntry),
              !newest.entry.isDeleteMarker else { return }
        try c.run("DELETE FROM s3_object_versions WHERE bucket = ? AND key = ? AND seq = ?", [bucket, key, newest.seq])
        try insertCurrent(c, newest.entry.record, replace: false)
        try c.run("UPDATE s3_objects SET seq = ? WHERE bucket = ? AND key = ?", [newest.seq, bucket, key])
    }

    /// DeleteObject without a version id: removes the object of a bucket that never had versioning;
    /// with versioning enabled, demotes the current version and adds a delete marker with a new id;
    /// suspended, removes the null version (current or not) and adds a delete marker as `null`.
    static func deleteCurrent(_ c: Connection, bucket: BucketRecord, key: String, owner: String, now: Instant,
                              newVersionID: () -> String) throws -> DeleteOutcome {
        guard let versioning = bucket.versioning else {
            try deleteObject(c, bucket: bucket.name, key: key)
            return DeleteOutcome(versionID: nil, deleteMarker: false)
        }
        let markerID: String
        if versioning == "Enabled" {
            markerID = newVersionID()
            if try object(c, bucket: bucket.name, key: key) != nil { try demoteCurrent(c, bucket: bucket.name, key: key) }
        } else {
            markerID = "null"
            if let current = try object(c, bucket: bucket.name, key: key) {
                if current.versionID == nil {
                    try deleteObject(c, bucket: bucket.name, key: key)
                } else {
                    try demoteCurrent(c, bucket: bucket.name, key: key)
                }
            }
            try deleteNoncurrent(c, bucket: bucket.name, key: key, versionID: "null")
        }
        try insertDeleteMarker(c, bucket: bucket.name, key: key, versionID: markerID, owner: owner, now: now)
        return DeleteOutcome(versionID: markerID, deleteMarker: true)
    }

    /// DeleteObject with a version id: removes that version or delete marker for good (nothing,
    /// and no error, when the key has no such version, as in S3).
    static func deleteVersion(_ c: Connection, bucket: String, key: String, versionID: String) throws -> DeleteOutcome {
        if let current = try object(c, bucket: bucket, key: key), current.versionName == versionID {
            let ordinal = try c.scalarInt("SELECT coalesce(seq, \(currentOrdinal)) FROM s3_objects WHERE bucket = ? AND key = ?", [bucket, key])
            try deleteObject(c, bucket: bucket, key: key)
            try rememberGone(c, bucket: bucket, key: key, versionID: versionID, ordinal: ordinal ?? currentOrdinal)
            try promoteNewest(c, bucket: bucket, key: key)
            return DeleteOutcome(versionID: versionID, deleteMarker: false)
        }
        let seq = try c.scalarInt("SELECT seq FROM s3_object_versions WHERE bucket = ? AND key = ? AND version_id = ?", [bucket, key, versionID])
        guard let removed = try deleteNoncurrent(c, bucket: bucket, key: key, versionID: versionID) else {
            return DeleteOutcome(versionID: versionID, deleteMarker: false)
        }
        if let seq { try rememberGone(c, bucket: bucket, key: key, versionID: versionID, ordinal: seq) }
        try promoteNewest(c, bucket: bucket, key: key)
        return DeleteOutcome(versionID: versionID, deleteMarker: removed.isDeleteMarker)
    }

    /// Keeps where a version deleted for good sorted, so a listing whose `version-id-marker` names
    /// it (a client deleting each page it lists, as boto3's `object_versions.delete()` does) goes on
    /// from there, as S3 does, instead of refusing the marker.
    static func rememberGone(_ c: Connection, bucket: String, key: String, versionID: String, ordinal: Int64) throws {
        try c.run("INSERT OR REPLACE INTO s3_gone_versions (bucket, key, version_id, seq) VALUES (?, ?, ?, ?)",
                  [bucket, key, versionID, ordinal])
    }

    /// Sets the tag set of the version `versionID` (`null` for the null version).
    /// - Throws: `NoSuchVersion` when it went meanwhile.
    static func setTagging(_ c: Connection, bucket: String, key: String, versionID: String, tagging: String?) throws {
        if let current = try object(c, bucket: bucket, key: key), current.versionName == versionID {
            try c.run("UPDATE s3_objects SET tagging = ? WHERE bucket = ? AND key = ?", [tagging, bucket, key])
            return
        }
        try c.run("UPDATE s3_object_versions SET tagging = ? WHERE bucket = ? AND key = ? AND version_id = ? AND delete_marker = 0",
                  [tagging, bucket, key, versionID])
        if c.changes == 0 { throw S3Error.noSuchVersion(key: key, versionID: versionID) }
    }

    // MARK: Bucket versioning

    /// Sets a bucket's versioning status (`Enabled` or `Suspended`).
    func setVersioning(_ bucket: String, status: String) throws {
        try writeBuckets { c in
            try c.run("UPDATE s3_buckets SET versioning = ? WHERE name = ?", [status, bucket])
            if c.changes == 0 { throw S3Error.noSuchBucket(bucket: bucket) }
        }
    }

    // MARK: Listing

    /// One row of a version listing: an entry and where it sorts within its key.
    struct ListedVersion: Sendable {
        var entry: VersionEntry
        /// Position within the key: `currentOrdinal` for the current version, else its seq.
        var ordinal: Int64
    }

    /// The ordinal of a current version: before every seq of its key.
    static let currentOrdinal = Int64.min + 1

    /// Up to `limit` entries of `bucket`, keys starting with `prefix`, in key (UTF-8 byte) order and
    /// newest first within a key, strictly after (`afterKey`, `afterOrdinal`) — or, when
    /// `afterOrdinal` is nil, after every entry of `afterKey` (or at/after it when `inclusive`).
    func versions(bucket: String, prefix: String, afterKey: [UInt8]?, afterOrdinal: Int64?, inclusive: Bool,
                  limit: Int) throws -> [ListedVersion] {
        try database.read { c in
            // Each arm is bounded on its own index (bucket, key[, seq]) and the compound ORDER BY is
            // a merge of two ordered scans, so a page costs its own rows, not the bucket's.
            func arm(_ table: String, ordinal: String, marker: String) -> (String, [any SQLBindable]) {
                var (filter, args) = S3Store.keyFilter(bucket: bucket, prefix: prefix)
                if let afterKey {
                    if let afterOrdinal {
                        filter += " AND key >= CAST(? AS TEXT) AND (key > CAST(? AS TEXT) OR \(ordinal) > ?)"
                        args += [afterKey, afterKey, afterOrdinal]
                    } else {
                        filter += inclusive ? " AND key >= CAST(? AS TEXT)" : " AND key > CAST(? AS TEXT)"
                        args.append(afterKey)
                    }
                }
                return ("SELECT \(S3Store.objectColumns), \(marker), \(ordinal) FROM \(table) WHERE \(filter)", args)
            }
            // `marker` is 2 for a current version, else whether the entry is a delete marker.
            let current = arm("s3_objects", ordinal: "coalesce(seq, \(S3Store.currentOrdinal))", marker: "2")
            let history = arm("s3_object_versions", ordinal: "seq", marker: "delete_marker")
            let sql = current.0 + " UNION ALL " + history.0 + " ORDER BY 2, 25 LIMIT ?"
            let args = current.1 + history.1 + [limit]
            var rows = try c.rows(sql, args) { s -> ListedVersion in
                var record = S3Store.objectRecord(s)
                if record.versionID == "null" { record.versionID = nil }
                let marker = s.int64(23)
                return ListedVersion(entry: VersionEntry(record: record, isDeleteMarker: marker == 1, isLatest: marker == 2), ordinal: s.int64(24))
            }
            // The newest entry of a key is its latest; the first row of a key on this page is not
            // necessarily its newest (a page can start inside a key).
            var newestByKey: [String: Int64] = [:]
            for i in rows.indices {
                let key = rows[i].entry.record.key
                if rows[i].entry.isLatest { continue }
                if newestByKey[key] == nil {
                    let hasCurrent = try S3Store.object(c, bucket: bucket, key: key) != nil
                    newestByKey[key] = hasCurrent ? Int64.min : (try S3Store.newestSeq(c, bucket: bucket, key: key) ?? 0)
                }
                rows[i].entry.isLatest = newestByKey[key] == rows[i].ordinal
            }
            return rows
        }
    }

    /// The listing position of `versionID` of `key` (for `version-id-marker`), or nil when the key
    /// has no such version.
    func versionOrdinal(bucket: String, key: String, versionID: String) throws -> Int64? {
        try database.read { c in
            if let current = try S3Store.object(c, bucket: bucket, key: key), current.versionName == versionID {
                return try c.scalarInt("SELECT coalesce(seq, \(S3Store.currentOrdinal)) FROM s3_objects WHERE bucket = ? AND key = ?", [bucket, key])
            }
            if let seq = try c.scalarInt("SELECT seq FROM s3_object_versions WHERE bucket = ? AND key = ? AND version_id = ?",
                                         [bucket, key, versionID]) { return seq }
            return try c.scalarInt("SELECT seq FROM s3_gone_versions WHERE bucket = ? AND key = ? AND version_id = ?",
                                   [bucket, key, versionID])
        }
    }
}
