import HearthCore
import HearthSQLite

extension S3Store {
    static let uploadColumns = "upload_id, bucket, key, initiated, owner, metadata, checksum_algorithm, checksum_type"

    static func uploadRecord(_ s: Statement) -> UploadRecord {
        let metadata = (try? JSON.parse(s.text(5))).map(ObjectMetadata.init(json:)) ?? ObjectMetadata()
        return UploadRecord(uploadID: s.text(0), bucket: s.text(1), key: s.text(2), initiated: Instant(unixMicros: s.int64(3)),
                            owner: s.text(4), metadata: metadata, checksumAlgorithm: s.optionalText(6).flatMap(ChecksumAlgorithm.init(name:)),
                            checksumType: s.optionalText(7))
    }

    static func partRecord(_ s: Statement) -> PartRecord {
        PartRecord(partNumber: s.int(0), blobID: s.int64(1), size: s.int64(2), etag: s.text(3),
                   lastModified: Instant(unixMicros: s.int64(4)), checksumValue: s.optionalText(5))
    }

    /// Starts a multipart upload.
    func createUpload(_ upload: UploadRecord) throws {
        try database.write { c in
            guard try S3Store.bucket(c, upload.bucket) != nil else { throw S3Error.noSuchBucket(bucket: upload.bucket) }
            try c.run("INSERT INTO s3_uploads (\(S3Store.uploadColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
                upload.uploadID, upload.bucket, upload.key, upload.initiated.unixMicros, upload.owner,
                upload.metadata.json.serialized(), upload.checksumAlgorithm?.displayName, upload.checksumType,
            ])
        }
    }

    /// The upload when it exists for this bucket and key.
    func upload(bucket: String, key: String, uploadID: String) throws -> UploadRecord? {
        try database.read { c in try S3Store.upload(c, bucket: bucket, key: key, uploadID: uploadID) }
    }

    static func upload(_ c: Connection, bucket: String, key: String, uploadID: String) throws -> UploadRecord? {
        try c.first("SELECT \(uploadColumns) FROM s3_uploads WHERE upload_id = ? AND bucket = ? AND key = ?",
                    [uploadID, bucket, key], uploadRecord)
    }

    /// Inside a write transaction: records a part (replacing a previous upload of the same number).
    static func storePart(_ c: Connection, uploadID: String, bucket: String, key: String, part: PartRecord) throws {
        guard try upload(c, bucket: bucket, key: key, uploadID: uploadID) != nil else { throw S3Error.noSuchUpload(uploadID: uploadID) }
        if let old = try c.first("SELECT blob_id FROM s3_parts WHERE upload_id = ? AND part_number = ?", [uploadID, part.partNumber], { $0.int64(0) }) {
            try BlobStore.delete(c, blobID: old)
        }
        try c.run("""
            INSERT OR REPLACE INTO s3_parts (upload_id, part_number, blob_id, size, etag, last_modified, checksum_value)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [uploadID, part.partNumber, part.blobID, part.size, part.etag, part.lastModified.unixMicros, part.checksumValue])
    }

    /// Up to `limit` parts numbered above `after`, in order.
    func parts(uploadID: String, after: Int, limit: Int) throws -> [PartRecord] {
        try database.read { c in
            try c.rows("""
                SELECT part_number, blob_id, size, etag, last_modified, checksum_value FROM s3_parts
                WHERE upload_id = ? AND part_number > ? ORDER BY part_number LIMIT ?
                """, [uploadID, after, limit], S3Store.partRecord)
        }
    }

    static func allParts(_ c: Connection, uploadID: String) throws -> [PartRecord] {
        try c.rows("""
            SELECT part_number, blob_id, size, etag, last_modified, checksum_value FROM s3_parts
            WHERE upload_id = ? ORDER BY part_number
            """, [uploadID], partRecord)
    }

    /// Deletes an upload, its parts and their blobs.
    static func deleteUpload(_ c: Connection, _ uploadID: String) throws {
        let blobs = try c.rows("SELECT blob_id FROM s3_parts WHERE upload_id = ?", [uploadID]) { $0.int64(0) }
        for b in blobs { try BlobStore.delete(c, blobID: b) }
        try c.run("DELETE FROM s3_parts WHERE upload_id = ?", [uploadID])
        try c.run("DELETE FROM s3_uploads WHERE upload_id = ?", [uploadID])
    }

    /// Aborts an upload.
    func abortUpload(bucket: String, key: String, uploadID: String) throws {
        try database.write { c in
            guard try S3Store.bucket(c, bucket) != nil else { throw S3Error.noSuchBucket(bucket: bucket) }
            guard try S3Store.upload(c, bucket: bucket, key: key, uploadID: uploadID) != nil else {
                throw S3Error.noSuchUpload(uploadID: uploadID)
            }
            try S3Store.deleteUpload(c, uploadID)
        }
    }

    /// Up to `limit` uploads of `bucket` with keys starting with `prefix`, ordered by key then
    /// initiation, after (`keyMarker`, `uploadIDMarker`).
    func uploads(bucket: String, prefix: String, keyMarker: String?, uploadIDMarker: String?, limit: Int) throws -> [UploadRecord] {
        try database.read { c in
            var sql = "SELECT \(S3Store.uploadColumns) FROM s3_uploads WHERE bucket = ?"
            var args: [any SQLBindable] = [bucket]
            if !prefix.isEmpty {
                sql += " AND substr(key, 1, ?) = ?"
                args.append(prefix.unicodeScalars.count)
                args.append(prefix)
            }
            if let keyMarker {
                if let uploadIDMarker, !uploadIDMarker.isEmpty {
                    sql += " AND (key > ? OR (key = ? AND upload_id > ?))"
                    args += [keyMarker, keyMarker, uploadIDMarker]
                } else {
                    sql += " AND key > ?"
                    args.append(keyMarker)
                }
            }
            sql += " ORDER BY key, initiated, upload_id LIMIT ?"
            args.append(limit)
            return try c.rows(sql, args, S3Store.uploadRecord)
        }
    }

    /// What a completed upload answered, kept for a day so a retried completion answers the same.
    struct CompletedUpload: Sendable {
        var uploadID: String
        var bucket: String
        var key: String
        var etag: String
        var versionID: String?
        var checksum: ObjectChecksum?
        var extra: ObjectExtra
    }

    /// How long a completion is remembered (S3 answers retries for a while, not forever).
    static let completedUploadMemory: Int64 = 86_400 * 1_000_000

    static func rememberCompleted(_ c: Connection, _ done: CompletedUpload, now: Instant) throws {
        try c.run("DELETE FROM s3_completed_uploads WHERE completed_at < ?", [now.unixMicros - completedUploadMemory])
        var o = JSONObject()
        if let cs = done.checksum {
            o["algorithm"] = .string(cs.algorithm.displayName)
            o["value"] = .string(cs.value)
            o["type"] = .string(cs.type)
        }
        if !done.extra.isEmpty { o["extra"] = .string(done.extra.serialized) }
        try c.run("""
            INSERT OR REPLACE INTO s3_completed_uploads (upload_id, bucket, key, etag, version_id, checksum, completed_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [done.uploadID, done.bucket, done.key, done.etag, done.versionID, JSON.object(o).serialized(), now.unixMicros])
    }

    /// The completion of `uploadID` for this bucket and key, if it is remembered.
    func completedUpload(bucket: String, key: String, uploadID: String) throws -> CompletedUpload? {
        try database.read { c in
            try c.first("SELECT etag, version_id, checksum FROM s3_completed_uploads WHERE upload_id = ? AND bucket = ? AND key = ?",
                        [uploadID, bucket, key]) { row in
                let json = (try? JSON.parse(row.optionalText(2) ?? "{}")) ?? .object(JSONObject())
                var checksum: ObjectChecksum?
                if let name = json["algorithm"]?.stringValue, let a = ChecksumAlgorithm(name: name), let v = json["value"]?.stringValue {
                    checksum = ObjectChecksum(algorithm: a, value: v, type: json["type"]?.stringValue ?? "COMPOSITE")
                }
                return CompletedUpload(uploadID: uploadID, bucket: bucket, key: key, etag: row.text(0), versionID: row.optionalText(1),
                                       checksum: checksum, extra: ObjectExtra(json["extra"]?.stringValue))
            }
        }
    }
}
