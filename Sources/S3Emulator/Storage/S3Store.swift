import HearthCore
import HearthSQLite
import Synchronization

/// Buckets and objects in SQLite.
///
/// Methods throw `S3Error` for conditions S3 reports (missing bucket, failed precondition) and
/// pass SQLite errors through; callers turn the latter into `InternalError`.
final class S3Store: Sendable {
    let database: Database
    /// Every request reads its bucket's access settings (five rows) and record; they change rarely.
    /// Absent buckets are cached too (as nil). Labelled with `bucketGeneration`, not the database's
    /// write generation: a PUT's write changes no bucket, so the next request's authorization
    /// need not read the bucket's pages again (which that write's commit had just changed).
    let bucketCache = GenerationCache<String, BucketAccess?>(capacity: 1024)
    /// Grows after every write transaction that may change a bucket's row or settings ends
    /// (`writeBuckets`), committed or not.
    private let bucketWrites = Atomic<Int>(0)
    /// Small objects as last read whole (record and bytes), so a GET repeated between writes needs
    /// no read transaction. Bounded to `cachedObjectLimit` bytes each and 4 MiB in all.
    let objectCache = GenerationCache<ObjectCacheKey, CachedObject>(capacity: 1024, maxCost: 4 << 20) { $0.bytes.count }

    /// Largest object `objectCache` holds.
    static let cachedObjectLimit = 64 << 10

    /// An object's bucket and key, compared as bytes (as SQLite compares them).
    struct ObjectCacheKey: Hashable, Sendable {
        let bucket: ExactText
        let key: ExactText
    }

    /// An object a read found: its record and whether its bucket has (or had) versioning (which
    /// decides whether answers carry `x-amz-version-id`).
    /// A class, handed from the cache to GetObject as one reference: as a struct in `ReadOutcome`
    /// the record was copied out of the cache (its ~20 strings and arrays retained) and destroyed
    /// at the end of the request (~2.6k instructions a presigned GET; docs/benchmarks.md, *s3c133*).
    final class FoundObject: Sendable {
        let record: ObjectRecord
        let versioned: Bool

        init(record: ObjectRecord, versioned: Bool) {
            self.record = record
            self.versioned = versioned
        }
    }

    /// A current (unversioned-read) object read whole: what the read found and its bytes.
    /// A class: a cache hit is one reference retained, where the struct was copied out of the cache
    /// field by field (every string and array of the record retained, then released: ~0.6k
    /// instructions and 18 lines of code a presigned GET, callgrind; docs/benchmarks.md, *s3get30*).
    final class CachedObject: Sendable {
        let object: FoundObject
        let bytes: [UInt8]

        init(object: FoundObject, bytes: [UInt8]) {
            self.object = object
            self.bytes = bytes
        }

        /// The body plan `bodyPlan` would give for `range`; nil when the range is not within the bytes.
        func plan(_ range: (Int64, Int64)?) -> BodyPlan? {
            guard let (start, end) = range else { return BodyPlan.none }
            guard start >= 0, start <= end, end <= Int64(bytes.count) else { return nil }
            if start == 0 && end == Int64(bytes.count) { return .inline(bytes) }
            return .inline(Array(bytes[Int(start)..<Int(end)]))
        }
    }

    init(database: Database) {
        self.database = database
    }

    /// The generation `bucketCache` entries are labelled with: read it *before* the read
    /// transaction that fills the cache (as `Database.writeGeneration`).
    var bucketGeneration: Int { bucketWrites.load(ordering: .acquiring) }

    /// Runs `body` as one write transaction, then moves `bucketGeneration`: the one way to write
    /// `s3_buckets` or `s3_bucket_config` (every `INSERT`, `UPDATE` or `DELETE` of them is inside
    /// one), so a cached bucket never outlives a change to it that was acknowledged — the
    /// generation moves after the commit and before the caller answers.
    func writeBuckets<T>(_ body: (Connection) throws -> T) throws -> T {
        defer { bucketWrites.add(1, ordering: .releasing) }
        return try database.write(body)
    }

    static let objectColumns = """
        bucket, key, blob_id, size, etag, last_modified, content_type, content_disposition, content_encoding, \
        content_language, cache_control, expires, user_metadata, storage_class, website_redirect, tagging, \
        checksum_algorithm, checksum_value, checksum_type, part_sizes, owner, version_id, extra
        """

    static func objectRecord(_ s: Statement) -> ObjectRecord {
        var m = ObjectMetadata()
        m.contentType = s.optionalText(6)
        m.contentDisposition = s.optionalText(7)
        m.contentEncoding = s.optionalText(8)
        m.contentLanguage = s.optionalText(9)
        m.cacheControl = s.optionalText(10)
        m.expires = s.optionalText(11)
        m.userMetadata = ObjectMetadata.parseUserMetadata(s.text(12))
        m.storageClass = s.optionalText(13)
        m.websiteRedirect = s.optionalText(14)
        m.tagging = s.optionalText(15)
        m.extra = ObjectExtra(s.optionalText(22))
        var checksum: ObjectChecksum?
        if let name = s.optionalText(16), let algorithm = ChecksumAlgorithm(name: name), let value = s.optionalText(17) {
            checksum = ObjectChecksum(algorithm: algorithm, value: value, type: s.optionalText(18) ?? "FULL_OBJECT")
        }
        let parts = s.optionalText(19).map { $0.split(separator: ",").compactMap { Int64($0) } }
        return ObjectRecord(bucket: s.text(0), key: s.text(1), blobID: s.int64(2), size: s.int64(3), etag: s.text(4),
                            lastModified: Instant(unixMicros: s.int64(5)), metadata: m, checksum: checksum,
                            partSizes: parts, owner: s.text(20), versionID: s.optionalText(21))
    }

    // MARK: Buckets

    static func bucketRecord(_ s: Statement) -> BucketRecord {
        BucketRecord(name: s.text(0), region: s.text(1), owner: s.text(2), createdAt: Instant(unixMicros: s.int64(3)),
                     versioning: s.optionalText(4))
    }

    /// The bucket, or nil.
    func bucket(_ name: String) throws -> BucketRecord? {
        try database.read { c in try S3Store.bucket(c, name) }
    }

    static func bucket(_ c: Connection, _ name: String) throws -> BucketRecord? {
        try c.first("SELECT name, region, owner, created_at, versioning FROM s3_buckets WHERE name = ?", [name], bucketRecord)
    }

    /// Every bucket, by name.
    func buckets() throws -> [BucketRecord] {
        try database.read { c in
            try c.rows("SELECT name, region, owner, created_at, versioning FROM s3_buckets ORDER BY name", [], S3Store.bucketRecord)
        }
    }

    /// What a new bucket starts with besides its name.
    struct NewBucketSettings: Sendable {
        /// Its `ownershipControls` document (nil: S3's default, BucketOwnerEnforced).
        var ownershipControls: String?
        /// Its ACL (`AccessControlList.serialized`; nil: private).
        var acl: String?
        /// Its Object Lock configuration document (Object Lock also turns versioning on).
        var objectLock: String?
    }

    /// Creates a bucket. In us-east-1 creating a bucket the caller already owns succeeds again
    /// and changes nothing, as S3 answers there; elsewhere it is `BucketAlreadyOwnedByYou`.
    /// - Throws: `BucketAlreadyOwnedByYou` / `BucketAlreadyExists` when the name is taken.
    func createBucket(_ name: String, region: String, owner: String, now: Instant, settings: NewBucketSettings = NewBucketSettings()) throws {
        try writeBuckets { c in
            if let existing = try S3Store.bucket(c, name) {
                if existing.owner == owner && region == "us-east-1" { return }
                throw existing.owner == owner ? S3Error.bucketAlreadyOwnedByYou(bucket: name) : S3Error.bucketAlreadyExists(bucket: name)
            }
            try c.run("INSERT INTO s3_buckets (name, region, owner, created_at, versioning) VALUES (?, ?, ?, ?, ?)",
                      [name, region, owner, now.unixSeconds * 1_000_000, settings.objectLock == nil ? nil : "Enabled"])
            if let o = settings.ownershipControls {
                try c.run("INSERT INTO s3_bucket_config (bucket, kind, document, updated_at) VALUES (?, ?, ?, ?)",
                          [name, BucketConfigKind.ownershipControls.rawValue, o, now.unixMicros])
            }
            try S3Store.setSetting(c, name, kind: "acl", settings.acl, now: now)
            try S3Store.setSetting(c, name, kind: "objectLock", settings.objectLock, now: now)
        }
    }

    /// Creates the bucket unless it exists (start-up buckets, the uploads API).
    func ensureBucket(_ name: String, region: String, owner: String, now: Instant) throws {
        try writeBuckets { c in
            try c.run("INSERT OR IGNORE INTO s3_buckets (name, region, owner, created_at) VALUES (?, ?, ?, ?)",
                      [name, region, owner, now.unixSeconds * 1_000_000])
        }
    }

    /// Deletes an empty bucket (and any multipart uploads left in it).
    func deleteBucket(_ name: String) throws {
        try writeBuckets { c in
            guard try S3Store.bucket(c, name) != nil else { throw S3Error.noSuchBucket(bucket: name) }
            // Noncurrent versions and delete markers keep a bucket from being empty, as in S3.
            if try c.scalarInt("SELECT 1 FROM s3_objects WHERE bucket = ? LIMIT 1", [name]) != nil
                || c.scalarInt("SELECT 1 FROM s3_object_versions WHERE bucket = ? LIMIT 1", [name]) != nil {
                throw S3Error.bucketNotEmpty(bucket: name)
            }
            let uploads = try c.rows("SELECT upload_id FROM s3_uploads WHERE bucket = ?", [name]) { $0.text(0) }
            for u in uploads { try S3Store.deleteUpload(c, u) }
            try c.run("DELETE FROM s3_buckets WHERE name = ?", [name])
        }
    }

    // MARK: Objects

    /// The object's record, or nil.
    func object(bucket: String, key: String) throws -> ObjectRecord? {
        try database.read { c in try S3Store.object(c, bucket: bucket, key: key) }
    }

    static func object(_ c: Connection, bucket: String, key: String) throws -> ObjectRecord? {
        try c.first(selectObject, [bucket, key], objectRecord)
    }

    /// Built once: interpolating the column list on every read cost an allocation and a copy.
    private static let selectObject = "SELECT \(objectColumns) FROM s3_objects WHERE bucket = ? AND key = ?"

    /// How a response body will be produced.
    enum BodyPlan {
        /// No body (HEAD, 304, errors).
        case none
        /// Small enough to have been read with the metadata.
        case inline([UInt8])
        /// Streamed chunk by chunk.
        case segments([BlobStore.Segment])
    }

    /// Largest range read together with the metadata rather than streamed.
    static let inlineReadLimit = Int64(BlobWriter.chunkSize)

    /// What a read found.
    enum ReadOutcome {
        /// The object (its record and whether its bucket has or had versioning) and its body plan.
        case found(FoundObject, BodyPlan)
        /// The key's newest entry is a delete marker (read without a version id).
        case deleted(marker: ObjectRecord)
        /// A delete marker was named by its version id.
        case deleteMarker(ObjectRecord)
        /// No such key (without a version id) or no such version.
        case missing
    }

    /// The object — the current version, or the version `versionID` — and its body for the byte
    /// range `range` picks (`start..<end`, nil for no body), read in one snapshot so metadata and
    /// bytes belong to the same version.
    func objectForRead(bucket: String, key: String, versionID: String? = nil,
                       range: (ObjectRecord) -> (Int64, Int64)?) throws -> ReadOutcome {
        // A bucket record at least as new as this transaction's snapshot start (see `cachedAccess`).
        let generation = database.writeGeneration, bucketGeneration = self.bucketGeneration
        let cacheKey = ObjectCacheKey(bucket: ExactText(bucket), key: ExactText(key))
        if versionID == nil, let hit = objectCache.lookup(cacheKey, generation: generation), let plan = hit.plan(range(hit.object.record)) {
            return .found(hit.object, plan)
        }
        return try database.read { c in
            guard let bucketRecord = try cachedAccess(c, bucket, generation: bucketGeneration)?.bucket else {
                throw S3Error.noSuchBucket(bucket: bucket)
            }
            let record: ObjectRecord
            if let versionID {
                guard let entry = try S3Store.version(c, bucket: bucket, key: key, versionID: versionID) else { return .missing }
                if entry.isDeleteMarker { return .deleteMarker(entry.record) }
                record = entry.record
            } else if let current = try S3Store.object(c, bucket: bucket, key: key) {
                record = current
            } else {
                // Only a bucket that has had versioning can hold delete markers.
                guard bucketRecord.versioning != nil, let marker = try S3Store.currentDeleteMarker(c, bucket: bucket, key: key) else {
                    return .missing
                }
                return .deleted(marker: marker)
            }
            let found = FoundObject(record: record, versioned: bucketRecord.versioning != nil)
            let plan = try S3Store.bodyPlan(c, record, range: range(record))
            // Only a whole, unsealed, small current object (the bytes then are the object).
            if versionID == nil, case .inline(let bytes) = plan, Int64(bytes.count) == record.size, bytes.count <= S3Store.cachedObjectLimit,
               record.metadata.extra.dataKey == nil {
                objectCache.store(cacheKey, CachedObject(object: found, bytes: bytes), generation: generation)
            }
            return .found(found, plan)
        }
    }

    /// How the bytes `start..<end` of `record` will be sent: nothing, read now, or streamed.
    static func bodyPlan(_ c: Connection, _ record: ObjectRecord, range: (Int64, Int64)?) throws -> BodyPlan {
        guard let (start, end) = range else { return .none }
        // An inline body is read with its blob row: one lookup instead of the slices and a chunk.
        if record.size <= BlobStore.inlineLimit, record.metadata.extra.dataKey == nil, end > start,
           let stored = try BlobStore.inlineBytes(c, blobID: record.blobID) {
            guard start >= 0, end <= stored.count else { throw BlobBodySource.ChunkMissing() }
            return .inline(start == 0 && end == stored.count ? stored : Array(stored[Int(start)..<Int(end)]))
        }
        let segments = try BlobStore.segments(c, blobID: record.blobID, start: start, end: end)
        // Sealed chunks open only with the data key, which the request's key (SSE-C) unwraps later.
        guard end - start <= S3Store.inlineReadLimit, record.metadata.extra.dataKey == nil else { return .segments(segments) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(Int(end - start))
        for s in segments {
            let from = max(s.offset, start), to = min(s.offset + s.length, end)
            let lo = Int(s.chunkStart + (from - s.offset)), hi = lo + Int(to - from)
            bytes += try BlobBodySource.chunkBytes(c, chunkID: s.chunkID, range: lo..<hi, dataKey: nil)
        }
        return .inline(bytes)
    }

    /// What a conditional delete requires of the object it deletes.
    struct DeleteCondition: Sendable, Equatable {
        var ifMatch: String?
        var lastModified: Instant?
        var size: Int64?

        var isEmpty: Bool { ifMatch == nil && lastModified == nil && size == nil }

        /// Throws `PreconditionFailed` when `record` does not meet the condition.
        func check(_ record: ObjectRecord) throws {
            if let ifMatch, !ETag.matches(ifMatch, record.etag) { throw S3Error.preconditionFailed(condition: "If-Match") }
            if let lastModified, lastModified.unixSeconds != record.lastModified.unixSeconds {
                throw S3Error.preconditionFailed(condition: "x-amz-if-match-last-modified-time")
            }
            if let size, size != record.size { throw S3Error.preconditionFailed(condition: "x-amz-if-match-size") }
        }
    }

    /// What a conditional write requires of the current object.
    struct WriteCondition: Sendable, Equatable {
        /// `If-None-Match: *`: the key must not exist.
        var mustNotExist = false
        /// `If-Match: <etag>`: the current object must have this ETag.
        var ifMatch: String?
    }

    /// Inside a write transaction: checks `condition`, stores `record` (pointing at its blob) as the
    /// key's current version and deals with the one it replaces as the bucket's versioning says:
    /// never versioned, its blob is deleted; enabled, it becomes a noncurrent version and `record`
    /// gets a fresh version id; suspended, `record` is the null version, replacing any other.
    /// - Returns: the new version's id for `x-amz-version-id` (`null` when suspended), or nil for a
    ///   bucket that never had versioning.
    @discardableResult
    static func storeObject(_ c: Connection, _ record: ObjectRecord, condition: WriteCondition,
                            newVersionID: () -> String) throws -> String? {
        let target = try storeTarget(c, bucket: record.bucket, key: record.key, condition: condition)
        return try storeObject(c, record, into: target, newVersionID: newVersionID)
    }

    /// What a write of one key found before writing anything: its bucket and its current object.
    struct StoreTarget {
        let bucket: BucketRecord
        let old: ObjectRecord?
    }

    /// Inside a write transaction, before its first write: reads the bucket and the key's current
    /// object and checks `condition` — every check `storeObject` makes. A caller that runs this
    /// before writing its blob throws only before its first write, so its batched commit needs no
    /// savepoint (`GroupCommit.perform(savepoint: false)`).
    static func storeTarget(_ c: Connection, bucket name: String, key: String, condition: WriteCondition) throws -> StoreTarget {
        guard let bucket = try bucket(c, name) else { throw S3Error.noSuchBucket(bucket: name) }
        let old = try object(c, bucket: name, key: key)
        if condition.mustNotExist, old != nil { throw S3Error.preconditionFailed(condition: "If-None-Match") }
        if let expected = condition.ifMatch {
            guard let old else { throw S3Error.noSuchKey(key: key) }
            if !ETag.matches(expected, old.etag) { throw S3Error.preconditionFailed(condition: "If-Match") }
        }
        return StoreTarget(bucket: bucket, old: old)
    }

    /// `storeObject` after `storeTarget` checked `target` in the same transaction: writes only.
    @discardableResult
    static func storeObject(_ c: Connection, _ record: ObjectRecord, into target: StoreTarget,
                            newVersionID: () -> String) throws -> String? {
        let old = target.old
        guard let versioning = target.bucket.versioning else {
            try insertCurrent(c, record, replace: true)
            if let old, old.blobID != record.blobID { try BlobStore.delete(c, blobID: old.blobID) }
            return nil
        }
        var stored = record
        if versioning == "Enabled" {
            stored.versionID = newVersionID()
            if old != nil { try demoteCurrent(c, bucket: record.bucket, key: record.key) }
        } else {
            stored.versionID = nil
            if let old {
                if old.versionID == nil {
                    try c.run("DELETE FROM s3_objects WHERE bucket = ? AND key = ?", [record.bucket, record.key])
                    if old.blobID != record.blobID { try BlobStore.delete(c, blobID: old.blobID) }
                } else {
                    try demoteCurrent(c, bucket: record.bucket, key: record.key)
                }
            }
            try deleteNoncurrent(c, bucket: record.bucket, key: record.key, versionID: "null")
        }
        try insertCurrent(c, stored, replace: false)
        return stored.versionName
    }

    /// Writes `record` as the key's row in `s3_objects`.
    static func insertCurrent(_ c: Connection, _ record: ObjectRecord, replace: Bool) throws {
        try c.run("""
            \(replace ? "INSERT OR REPLACE" : "INSERT") INTO s3_objects (\(objectColumns))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [
                record.bucket, record.key, record.blobID, record.size, record.etag, record.lastModified.unixMicros,
                record.metadata.contentType, record.metadata.contentDisposition, record.metadata.contentEncoding,
                record.metadata.contentLanguage, record.metadata.cacheControl, record.metadata.expires,
                record.metadata.userMetadataJSON, record.metadata.storageClass, record.metadata.websiteRedirect,
                record.metadata.tagging, record.checksum?.algorithm.displayName, record.checksum?.value, record.checksum?.type,
                record.partSizes.map { $0.map(String.init).joined(separator: ",") }, record.owner, record.versionID,
                record.metadata.extra.isEmpty ? nil : record.metadata.extra.serialized,
            ])
    }

    /// Deletes an object if it exists; true when it did.
    @discardableResult
    static func deleteObject(_ c: Connection, bucket: String, key: String) throws -> Bool {
        guard let old = try object(c, bucket: bucket, key: key) else { return false }
        try c.run("DELETE FROM s3_objects WHERE bucket = ? AND key = ?", [bucket, key])
        try BlobStore.delete(c, blobID: old.blobID)
        return true
    }

    /// DeleteObject: the current version (a missing key is not an error, as in S3), or the version
    /// `versionID` for good. See `deleteCurrent` and `deleteVersion` for what versioning changes.
    func deleteObject(bucket: String, key: String, versionID: String?, owner: String, condition: DeleteCondition = DeleteCondition(),
                      bypassGovernance: Bool = false, now: Instant, lockTime: Instant? = nil,
                      newVersionID: () -> String) throws -> DeleteOutcome {
        try database.write { c in
            guard let record = try S3Store.bucket(c, bucket) else { throw S3Error.noSuchBucket(bucket: bucket) }
            if !condition.isEmpty {
                let target = try versionID.map { try S3Store.version(c, bucket: bucket, key: key, versionID: $0) }
                    ?? S3Store.object(c, bucket: bucket, key: key).map { VersionEntry(record: $0, isDeleteMarker: false, isLatest: true) }
                guard let target, !target.isDeleteMarker else { throw S3Error.noSuchKey(key: key) }
                try condition.check(target.record)
            }
            if let versionID {
                if let entry = try S3Store.version(c, bucket: bucket, key: key, versionID: versionID), !entry.isDeleteMarker {
                    try ObjectLock.checkDeletable(entry.record.metadata.extra, now: lockTime ?? now, bypassGovernance: bypassGovernance)
                }
                var outcome = try S3Store.deleteVersion(c, bucket: bucket, key: key, versionID: versionID)
                // A bucket that never had versioning names no version in its answers.
                if record.versioning == nil { outcome.versionID = nil }
                return outcome
            }
            return try S3Store.deleteCurrent(c, bucket: record, key: key, owner: owner, now: now, newVersionID: newVersionID)
        }
    }

    /// Up to `limit` objects of `bucket` whose keys start with `prefix` and sort after `after`
    /// (bytes; exclusive) — or at/after it when `inclusive`. Key order is UTF-8 byte order.
    func objects(bucket: String, prefix: String, after: [UInt8]?, inclusive: Bool, limit: Int) throws -> [ObjectRecord] {
        try database.read { c in
            let (filter, filterArgs) = S3Store.keyFilter(bucket: bucket, prefix: prefix)
            var sql = "SELECT \(S3Store.objectColumns) FROM s3_objects WHERE \(filter)"
            var args = filterArgs
            if let after {
                // A blob cast to text compares bytewise even when `after` is not valid UTF-8
                // (a seek key just past a common prefix).
                sql += inclusive ? " AND key >= CAST(? AS TEXT)" : " AND key > CAST(? AS TEXT)"
                args.append(after)
            }
            sql += " ORDER BY key LIMIT ?"
            args.append(limit)
            return try c.rows(sql, args, S3Store.objectRecord)
        }
    }

    /// `bucket = ?` and, for a prefix, the key range it spans (an index range scan).
    static func keyFilter(bucket: String, prefix: String) -> (String, [any SQLBindable]) {
        var sql = "bucket = ?"
        var args: [any SQLBindable] = [bucket]
        if !prefix.isEmpty {
            sql += " AND key >= ?"
            args.append(prefix)
            if let upper = successor(ofPrefix: Array(prefix.utf8)) {
                sql += " AND key < CAST(? AS TEXT)"
                args.append(upper)
            }
        }
        return (sql, args)
    }

    /// The smallest byte string greater than every string starting with `prefix` (nil if none).
    static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        var p = prefix
        while let last = p.last {
            if last < 0xFF {
                p[p.count - 1] = last + 1
                return p
            }
            p.removeLast()
        }
        return nil
    }

    // MARK: Reset and start-up

    /// Deletes every S3 row.
    func wipe() throws {
        try writeBuckets { c in
            for table in ["s3_parts", "s3_uploads", "s3_completed_uploads", "s3_gone_versions", "s3_objects", "s3_object_versions", "s3_blob_chunks", "s3_chunks", "s3_blobs",
                          "s3_bucket_config", "s3_buckets"] {
                try c.run("DELETE FROM \(table)")
            }
            // The chunk files go with their rows, once the reset commits.
            BlobStore.sweepFiles(c)
        }
    }

    /// Removes staging blobs of uploads interrupted by a crash; returns how many.
    func cleanOrphans() throws -> Int {
        try database.write { c in try BlobStore.deleteOrphans(c) }
    }
}
