import HearthCore
import HearthSQLite

/// The Storage rows: buckets, objects (live generation only) and resumable upload sessions.
/// Every function runs inside a transaction its caller holds.
enum StorageStore {
    static let objectColumns = """
        bucket, name, generation, metageneration, blob_id, size, md5, crc32c, content_type, content_encoding,
        content_disposition, content_language, cache_control, metadata, time_created, updated, custom_time,
        component_count, acl
        """

    static func decode(_ s: Statement) -> StoredObject {
        let acl = decodeACL(s.optionalText(18))
        let meta: [(String, String)]
        if case .object(let o)? = try? JSON.parse(s.text(13)) {
            meta = o.compactMap { k, v in v.stringValue.map { (k, $0) } }
        } else {
            meta = []
        }
        return StoredObject(bucket: s.text(0), name: s.text(1), generation: s.int64(2), metageneration: s.int64(3),
                            blobID: s.int64(4), size: s.int64(5), md5: s.blob(6), crc32c: UInt32(truncatingIfNeeded: s.int64(7)),
                            contentType: s.optionalText(8), contentEncoding: s.optionalText(9), contentDisposition: s.optionalText(10),
                            contentLanguage: s.optionalText(11), cacheControl: s.optionalText(12), metadata: meta,
                            timeCreated: Instant(unixMicros: s.int64(14)), updated: Instant(unixMicros: s.int64(15)),
                            customTime: s.isNull(16) ? nil : Instant(unixMicros: s.int64(16)),
                            componentCount: s.isNull(17) ? nil : s.int64(17),
                            acl: acl.readable, unreadableACL: acl.unreadable)
    }

    /// A nullable ACL column: the list, or (text that does not decode) the text itself.
    private static func decodeACL(_ text: String?) -> (readable: [AccessControlEntry]?, unreadable: String?) {
        guard let text else { return (nil, nil) }
        guard let list = AccessControlEntry.decode(text) else { return (nil, text) }
        return (list, nil)
    }

    // MARK: Buckets

    static func bucketExists(_ c: Connection, _ name: String) throws -> Bool {
        try c.scalarInt("SELECT count(*) FROM storage_buckets WHERE name = ?", [name]) == 1
    }

    static let bucketColumns = "name, created_at, metageneration, updated_at, settings, acl, default_object_acl, iam_policy"

    /// A bucket row; a column that does not decode is kept as unreadable (`StoredBucket.unreadable`), never as its default.
    static func decodeBucket(_ s: Statement) -> StoredBucket {
        let created = Instant(unixMicros: s.int64(1))
        var unreadable: [StoredBucket.Column: String] = [:]
        let settingsText = s.text(4)
        let settings = StoredBucket.decodeSettings(settingsText)
        if settings == nil { unreadable[.settings] = settingsText }
        let acl = decodeACL(s.optionalText(5)), defaultObjectAcl = decodeACL(s.optionalText(6))
        unreadable[.acl] = acl.unreadable
        unreadable[.defaultObjectAcl] = defaultObjectAcl.unreadable
        let policyText = s.optionalText(7)
        let policy = policyText.flatMap(StoredBucket.decodeIAMPolicy)
        if policy == nil { unreadable[.iamPolicy] = policyText }
        return StoredBucket(name: s.text(0), created: created, updated: s.isNull(3) ? created : Instant(unixMicros: s.int64(3)),
                            metageneration: s.int64(2), settings: settings ?? JSONObject(), acl: acl.readable,
                            defaultObjectAcl: defaultObjectAcl.readable, iamPolicy: policy, unreadable: unreadable)
    }

    static func bucket(_ c: Connection, _ name: String) throws -> StoredBucket? {
        try c.first("SELECT \(bucketColumns) FROM storage_buckets WHERE name = ?", [name], decodeBucket)
    }

    static func buckets(_ c: Connection) throws -> [StoredBucket] {
        try c.rows("SELECT \(bucketColumns) FROM storage_buckets ORDER BY name", [], decodeBucket)
    }

    /// Writes a bucket's changeable columns (configuration, ACLs, IAM policy, metageneration, update
    /// time); an unreadable column gets its own text back.
    static func updateBucket(_ c: Connection, _ b: StoredBucket) throws {
        try c.run("""
            UPDATE storage_buckets SET metageneration = ?, updated_at = ?, settings = ?, acl = ?, default_object_acl = ?, iam_policy = ?
            WHERE name = ?
            """, [b.metageneration, b.updated.unixMicros, b.unreadable[.settings] ?? JSON.object(b.settings).serialized(),
                  b.unreadable[.acl] ?? b.acl.map(AccessControlEntry.serialize),
                  b.unreadable[.defaultObjectAcl] ?? b.defaultObjectAcl.map(AccessControlEntry.serialize),
                  b.unreadable[.iamPolicy] ?? b.iamPolicy?.serialized(), b.name])
    }

    /// Creates the bucket; false when it already existed.
    @discardableResult
    static func createBucket(_ c: Connection, _ name: String, now: Instant) throws -> Bool {
        if try bucketExists(c, name) { return false }
        try c.run("INSERT INTO storage_buckets (name, created_at) VALUES (?, ?)", [name, now.unixMicros])
        return true
    }

    // MARK: Objects

    static func object(_ c: Connection, bucket: String, name: String) throws -> StoredObject? {
        try c.first("SELECT \(objectColumns) FROM storage_objects WHERE bucket = ? AND name = ?", [bucket, name], decode)
    }

    /// The generation, metageneration and blob of the live object (what a cached copy is checked against).
    static func objectVersion(_ c: Connection, bucket: String, name: String) throws -> (generation: Int64, metageneration: Int64, blobID: Int64)? {
        try c.first("SELECT generation, metageneration, blob_id FROM storage_objects WHERE bucket = ? AND name = ?", [bucket, name]) {
            ($0.int64(0), $0.int64(1), $0.int64(2))
        }
    }

    /// Objects of `bucket` whose names start with `prefix`, sort after `after` and lie in
    /// [`atLeast`, `below`), in name order (SQLite's BINARY collation: UTF-8 byte order, as GCS's).
    static func objects(_ c: Connection, bucket: String, prefix: String, after: String?, limit: Int,
                        atLeast: String? = nil, below: String? = nil) throws -> [StoredObject] {
        var sql = "SELECT \(objectColumns) FROM storage_objects WHERE bucket = ?"
        var args: [any SQLBindable] = [bucket]
        if !prefix.isEmpty {
            // SQLite's substr counts code points; the range start lets the primary key seek.
            sql += " AND name >= ? AND substr(name, 1, ?) = ?"
            args += [prefix, prefix.unicodeScalars.count, prefix]
        }
        if let after {
            sql += " AND name > ?"
            args.append(after)
        }
        if let atLeast {
            sql += " AND name >= ?"
            args.append(atLeast)
        }
        if let below {
            sql += " AND name < ?"
            args.append(below)
        }
        sql += " ORDER BY name LIMIT ?"
        args.append(limit)
        return try c.rows(sql, args, decode)
    }

    /// Inserts or replaces the object row (the caller deletes the previous generation's blob).
    static func write(_ c: Connection, _ o: StoredObject) throws {
        let meta = JSON.object(JSONObject(o.metadata.map { ($0.0, JSON.string($0.1)) })).serialized()
        try c.run("""
            INSERT OR REPLACE INTO storage_objects (\(objectColumns))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [o.bucket, o.name, o.generation, o.metageneration, o.blobID, o.size, o.md5, Int64(o.crc32c),
                  o.contentType, o.contentEncoding, o.contentDisposition, o.contentLanguage, o.cacheControl, meta,
                  o.timeCreated.unixMicros, o.updated.unixMicros, o.customTime?.unixMicros, o.componentCount,
                  o.unreadableACL ?? o.acl.map(AccessControlEntry.serialize)])
    }

    /// Removes the object row and its blob.
    static func delete(_ c: Connection, _ o: StoredObject) throws {
        try c.run("DELETE FROM storage_objects WHERE bucket = ? AND name = ?", [o.bucket, o.name])
        try StorageBlobs.delete(c, blobID: o.blobID)
    }

    /// A new generation number: GCS's are microsecond timestamps, always increasing per object.
    static func nextGeneration(_ previous: StoredObject?, now: Instant) -> Int64 {
        max(now.unixMicros, (previous?.generation ?? 0) + 1)
    }

    // MARK: Uploads

    static func upload(_ c: Connection, _ id: String) throws -> ResumableUpload? {
        try c.first("SELECT id, bucket, name, api, resource, declared_size, received, conditions, final_generation FROM storage_uploads WHERE id = ?", [id]) { s in
            ResumableUpload(id: s.text(0), bucket: s.text(1), name: s.text(2), api: s.text(3),
                            resource: (try? JSON.parse(s.text(4))) ?? .object([:]),
                            declaredSize: s.isNull(5) ? nil : s.int64(5), received: s.int64(6),
                            conditions: (try? JSON.parse(s.text(7))) ?? .object([:]),
                            finalGeneration: s.isNull(8) ? nil : s.int64(8))
        }
    }

    static func createUpload(_ c: Connection, _ u: ResumableUpload, now: Instant) throws {
        try c.run("""
            INSERT INTO storage_uploads (id, bucket, name, api, resource, declared_size, received, conditions, created_at)
            VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)
            """, [u.id, u.bucket, u.name, u.api, u.resource.serialized(), u.declaredSize, u.conditions.serialized(), now.unixMicros])
    }

    /// The acknowledged chunks of an upload, in order.
    static func pieces(_ c: Connection, uploadID: String) throws -> [(blobID: Int64, size: Int64)] {
        try c.rows("SELECT blob_id, size FROM storage_upload_pieces WHERE upload_id = ? ORDER BY offset", [uploadID]) { ($0.int64(0), $0.int64(1)) }
    }

    /// Records an acknowledged chunk at the upload's current end.
    static func addPiece(_ c: Connection, uploadID: String, offset: Int64, blobID: Int64, size: Int64) throws {
        try c.run("INSERT INTO storage_upload_pieces (upload_id, offset, blob_id, size) VALUES (?, ?, ?, ?)", [uploadID, offset, blobID, size])
        try c.run("UPDATE storage_uploads SET received = ? WHERE id = ?", [offset + size, uploadID])
    }

    /// Marks the upload complete (its pieces' rows go; the object now holds their chunks).
    static func completeUpload(_ c: Connection, _ id: String, generation: Int64) throws {
        for p in try pieces(c, uploadID: id) { try StorageBlobs.delete(c, blobID: p.blobID) }
        try c.run("DELETE FROM storage_upload_pieces WHERE upload_id = ?", [id])
        try c.run("UPDATE storage_uploads SET final_generation = ? WHERE id = ?", [generation, id])
    }

    /// Deletes the upload and its pieces (their bytes too, unless a finalized object shares them).
    static func deleteUpload(_ c: Connection, _ id: String) throws {
        for p in try pieces(c, uploadID: id) { try StorageBlobs.delete(c, blobID: p.blobID) }
        try c.run("DELETE FROM storage_upload_pieces WHERE upload_id = ?", [id])
        try c.run("DELETE FROM storage_uploads WHERE id = ?", [id])
    }

    /// Deletes every Storage row.
    static func wipe(_ c: Connection) throws {
        for table in ["storage_upload_pieces", "storage_uploads", "storage_objects", "storage_buckets"] + [
            StorageBlobNamespace.tables.blobChunks, StorageBlobNamespace.tables.chunks, StorageBlobNamespace.tables.blobs,
        ] {
            try c.run("DELETE FROM \(table)")
        }
        // The chunk files go with their rows, once the reset commits.
        StorageBlobs.sweepFiles(c)
    }
}

/// A resumable upload session.
struct ResumableUpload: Sendable {
    var id: String
    var bucket: String
    var name: String
    /// `gcs` (JSON API, `Content-Range`) or `firebase` (`X-Goog-Upload-*`).
    var api: String
    /// The object metadata given at start (GCS object resource fields).
    var resource: JSON
    var declaredSize: Int64?
    var received: Int64
    /// Preconditions (`ifGenerationMatch`, …) given at start, checked at finalize.
    var conditions: JSON
    /// Set once the upload made its object: the generation it created.
    var finalGeneration: Int64? = nil
}
