import HearthCore
import HearthSQLite

/// Runs the buckets' lifecycle rules against the emulator clock.
///
/// Related: "Lifecycle configuration elements" and "Expiring objects". S3 acts on rules
/// asynchronously, once a day; Hearth acts as soon as a request arrives after the clock passed the
/// moment an action became due, so `PUT /emulator/v1/clock {"advanceSeconds": 2592000}` on the
/// hub shows what 30 days do. As in S3, a rule of N days is due at the first midnight UTC at least
/// N days after the object's creation (for noncurrent versions: after it became noncurrent).
/// Expiration deletes an unversioned object and puts a delete marker on a versioned one;
/// NoncurrentVersionExpiration deletes noncurrent versions (beyond `NewerNoncurrentVersions`);
/// ExpiredObjectDeleteMarker removes a delete marker that is all that is left of a key;
/// AbortIncompleteMultipartUpload aborts uploads. Transitions are recorded as the object's (or
/// version's) new storage class; there is no other tier to move bytes to.
struct LifecycleRunner {
    let store: S3Store
    let now: Instant
    let newVersionID: () -> String

    /// What one pass did (for the log and tests).
    struct Outcome: Sendable, Equatable {
        var expired = 0
        var noncurrentExpired = 0
        var markersRemoved = 0
        var transitioned = 0
        var uploadsAborted = 0
        var isEmpty: Bool { self == Outcome() }
    }

    /// The moment an action of `days` days is due for something that started at `start`; at most
    /// the end of year 9999 (a rule's days are any 32-bit number, up to ~5.9 million years, and
    /// the due date is written as an HTTP date in `x-amz-expiration`).
    static func due(_ start: Instant, days: Int64) -> Instant {
        let day: Int64 = 86_400
        let seconds = start.unixSeconds + days * day
        let midnight = (seconds + day - 1) / day * day
        return Instant(clampingUnixSeconds: midnight)
    }

    /// Applies every enabled rule of every bucket that has a lifecycle configuration.
    func run() throws -> Outcome {
        var outcome = Outcome()
        let configured = try store.database.read { c in
            try c.rows("SELECT bucket, document FROM s3_bucket_config WHERE kind = 'lifecycle' AND document IS NOT NULL", []) {
                ($0.text(0), $0.text(1))
            }
        }
        for (bucket, text) in configured {
            guard let stored = StoredLifecycle(text),
                  case .success(let config) = LifecycleConfiguration.parse(Array(stored.document.utf8), newID: { "" }) else { continue }
            for rule in config.rules where rule.status == "Enabled" {
                try store.database.write { c in try apply(rule, bucket: bucket, c, &outcome) }
            }
        }
        return outcome
    }

    private func apply(_ rule: LifecycleConfiguration.Rule, bucket: String, _ c: Connection, _ outcome: inout Outcome) throws {
        guard let bucketRecord = try S3Store.bucket(c, bucket) else { return }
        let prefix = rule.legacyPrefix ?? rule.filter?.predicates.compactMap { p -> String? in
            if case .prefix(let s) = p { return s }
            return nil
        }.first ?? ""
        let (filter, args) = S3Store.keyFilter(bucket: bucket, prefix: prefix)
        // Current versions: expiration and transitions.
        if rule.expiration?.days != nil || rule.expiration?.date != nil || !rule.transitions.isEmpty {
            let current = try c.rows("SELECT \(S3Store.objectColumns) FROM s3_objects WHERE \(filter) ORDER BY key", args, S3Store.objectRecord)
            for object in current where matches(rule, object) {
                if let e = rule.expiration, isDue(days: e.days, date: e.date, since: object.lastModified) {
                    let extra = object.metadata.extra
                    if extra.legalHold || extra.unreadable != nil || extra.lockMode != nil && bucketRecord.versioning == nil { continue }
                    _ = try S3Store.deleteCurrent(c, bucket: bucketRecord, key: object.key, owner: object.owner, now: now,
                                                  newVersionID: newVersionID)
                    outcome.expired += 1
                    continue
                }
                if let t = rule.transitions.last(where: { isDue(days: $0.days, date: $0.date, since: object.lastModified) }),
                   object.metadata.storageClass != t.storageClass {
                    try c.run("UPDATE s3_objects SET storage_class = ? WHERE bucket = ? AND key = ?", [t.storageClass, bucket, object.key])
                    outcome.transitioned += 1
                }
            }
        }
        // Noncurrent versions: each became noncurrent when the next newer entry of its key was made.
        if rule.noncurrentExpiration != nil || !rule.noncurrentTransitions.isEmpty || rule.expiration?.expiredObjectDeleteMarker == true {
            let rows = try c.rows("SELECT \(S3Store.versionColumns) FROM s3_object_versions WHERE \(filter) ORDER BY key, seq",
                                  args, S3Store.versionEntry)
            var byKey: [(String, [(entry: S3Store.VersionEntry, seq: Int64)])] = []
            for row in rows {
                if byKey.last?.0 == row.entry.record.key { byKey[byKey.count - 1].1.append(row) } else { byKey.append((row.entry.record.key, [row])) }
            }
            for (key, entries) in byKey {
                let current = try S3Store.object(c, bucket: bucket, key: key)
                var newerTime = current?.lastModified
                var noncurrentSeen: Int64 = 0
                for (entry, seq) in entries {
                    defer { newerTime = entry.record.lastModified }
                    if entry.isDeleteMarker { continue }
                    guard let since = newerTime, matches(rule, entry.record) else { continue }
                    noncurrentSeen += 1
                    if let e = rule.noncurrentExpiration, let days = e.noncurrentDays, now.unixMicros >= LifecycleRunner.due(since, days: days).unixMicros,
                       noncurrentSeen > (e.newerNoncurrentVersions ?? 0) {
                        if ObjectLock.keeps(entry.record.metadata.extra, now: now) { continue }
                        try c.run("DELETE FROM s3_object_versions WHERE bucket = ? AND key = ? AND seq = ?", [bucket, key, seq])
                        try BlobStore.delete(c, blobID: entry.record.blobID)
                        outcome.noncurrentExpired += 1
                        continue
                    }
                    if let t = rule.noncurrentTransitions.last(where: { t in
                        t.noncurrentDays.map { now.unixMicros >= LifecycleRunner.due(since, days: $0).unixMicros } ?? false
                    }), entry.record.metadata.storageClass != t.storageClass {
                        try c.run("UPDATE s3_object_versions SET storage_class = ? WHERE bucket = ? AND key = ? AND seq = ?",
                                  [t.storageClass, bucket, key, seq])
                        outcome.transitioned += 1
                    }
                }
                // A delete marker with nothing behind it.
                if rule.expiration?.expiredObjectDeleteMarker == true, current == nil {
                    let left = try c.rows("SELECT delete_marker, seq FROM s3_object_versions WHERE bucket = ? AND key = ?", [bucket, key]) {
                        ($0.bool(0), $0.int64(1))
                    }
                    if left.count == 1, left[0].0 {
                        try c.run("DELETE FROM s3_object_versions WHERE bucket = ? AND key = ? AND seq = ?", [bucket, key, left[0].1])
                        outcome.markersRemoved += 1
                    }
                }
            }
        }
        // Incomplete multipart uploads.
        if let days = rule.abortDaysAfterInitiation, rule.filter?.hasTags != true {
            var sql = "SELECT upload_id, key, initiated FROM s3_uploads WHERE bucket = ?"
            var a: [any SQLBindable] = [bucket]
            if !prefix.isEmpty {
                sql += " AND key >= ?"
                a.append(prefix)
            }
            let uploads = try c.rows(sql, a) { ($0.text(0), $0.text(1), Instant(unixMicros: $0.int64(2))) }
            for (id, key, initiated) in uploads where key.hasPrefix(prefix) && now.unixMicros >= LifecycleRunner.due(initiated, days: days).unixMicros {
                try S3Store.deleteUpload(c, id)
                outcome.uploadsAborted += 1
            }
        }
    }

    /// Whether an action of `days` after `since`, or on `date`, is due now.
    private func isDue(days: Int64?, date: Instant?, since: Instant) -> Bool {
        if let days { return now.unixMicros >= LifecycleRunner.due(since, days: days).unixMicros }
        if let date { return now.unixMicros >= date.unixMicros }
        return false
    }

    /// Whether the rule's filter takes the object (prefix, tags, size).
    func matches(_ rule: LifecycleConfiguration.Rule, _ object: ObjectRecord) -> Bool { LifecycleRunner.matches(rule, object) }

    static func matches(_ rule: LifecycleConfiguration.Rule, _ object: ObjectRecord) -> Bool {
        if let p = rule.legacyPrefix { return object.key.hasPrefix(p) }
        guard let filter = rule.filter else { return true }
        let tags = S3Service.tags(object.metadata.tagging)
        return filter.predicates.allSatisfy { p in
            switch p {
            case .prefix(let s): object.key.hasPrefix(s)
            case .tag(let k, let v): tags.contains { $0.0 == k && $0.1 == v }
            case .sizeGreaterThan(let n): object.size > n
            case .sizeLessThan(let n): object.size < n
            }
        }
    }
}
