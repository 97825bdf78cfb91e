import HearthCore
import HearthSQLite

extension S3Store {
    /// The bucket's CORS configuration, or nil when it has none.
    func corsConfiguration(_ bucket: String) throws -> CORSConfiguration? {
        try database.read { c in
            try c.first("SELECT rules FROM s3_bucket_cors WHERE bucket = ?", [bucket]) { row in
                (try? JSON.parse(row.text(0))).flatMap(CORSConfiguration.init(json:))
            } ?? nil
        }
    }

    /// Stores (replaces) the bucket's CORS configuration.
    /// - Throws: `NoSuchBucket`.
    func putCorsConfiguration(_ bucket: String, _ configuration: CORSConfiguration, now: Instant) throws {
        try database.write { c in
            guard try S3Store.bucket(c, bucket) != nil else { throw S3Error.noSuchBucket(bucket: bucket) }
            try c.run("INSERT OR REPLACE INTO s3_bucket_cors (bucket, rules, updated_at) VALUES (?, ?, ?)",
                      [bucket, configuration.json.serialized(), now.unixMicros])
        }
    }

    /// Deletes the bucket's CORS configuration (none is not an error).
    /// - Throws: `NoSuchBucket`.
    func deleteCorsConfiguration(_ bucket: String) throws {
        try database.write { c in
            guard try S3Store.bucket(c, bucket) != nil else { throw S3Error.noSuchBucket(bucket: bucket) }
            try c.run("DELETE FROM s3_bucket_cors WHERE bucket = ?", [bucket])
        }
    }
}
