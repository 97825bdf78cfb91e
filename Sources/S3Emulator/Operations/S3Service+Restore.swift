import HearthCore
import HearthHTTP

/// RestoreObject, and what an archived object's storage class means for reads.
///
/// S3 keeps GLACIER and DEEP_ARCHIVE objects archived: GetObject and copies refuse them with 403
/// `InvalidObjectState` until RestoreObject makes a temporary copy, which lasts the days the
/// restore asked for. By default Hearth has no retrieval delay, so a restore completes when it is
/// accepted (202, or 200 for an object already restored, as S3 answers that) and HEAD/GET report
/// it at once with `x-amz-restore: ongoing-request="false", expiry-date="…"`. With
/// `--s3-restore-time` (`RestoreTiming`) a restore takes time on the emulator clock: until then
/// HEAD says `ongoing-request="true"`, reads stay refused, listings say `IsRestoreInProgress`
/// true, and another restore is 409 `RestoreAlreadyInProgress` unless it asks for a faster tier
/// (S3's way to speed one up). Objects of every other class — INTELLIGENT_TIERING among them, as
/// Hearth has no archive access tiers — cannot be restored (403 `InvalidObjectState`). Decided
/// and documented in docs/s3.md (RestoreObject).
extension S3Service {
    /// The storage classes whose objects are archived until restored.
    static let archiveStorageClasses: Set<String> = ["GLACIER", "DEEP_ARCHIVE"]

    /// The object's storage class when it is archived and has no unexpired restored copy at `now`
    /// (what reads and copies refuse), else nil.
    static func archivedClass(_ record: ObjectRecord, now: Instant) -> String? {
        guard let storageClass = record.metadata.storageClass, archiveStorageClasses.contains(storageClass) else { return nil }
        if restoredUntil(record.metadata.extra, now: now) != nil { return nil }
        return storageClass
    }

    /// When the object's restored copy expires, if it has one readable and unexpired at `now`.
    static func restoredUntil(_ extra: ObjectExtra, now: Instant) -> Instant? {
        guard !restoreInProgress(extra, now: now), let expiry = extra.restoreExpiry, expiry > now.unixSeconds else { return nil }
        // Clamped: an expiry stored before `restoreExpiry` capped it may lie past year 9999.
        return Instant(clampingUnixSeconds: expiry)
    }

    /// Whether a restore was accepted and has not completed by `now`.
    static func restoreInProgress(_ extra: ObjectExtra, now: Instant) -> Bool {
        guard let ready = extra.restoreReadyAt else { return false }
        return ready > now.unixSeconds
    }

    /// `x-amz-restore` for an object being restored or with an unexpired restored copy at `now`, else nil.
    static func restoreHeader(_ extra: ObjectExtra, now: Instant) -> String? {
        if restoreInProgress(extra, now: now) { return "ongoing-request=\"true\"" }
        guard let expiry = restoredUntil(extra, now: now) else { return nil }
        return "ongoing-request=\"false\", expiry-date=\"\(expiry.httpDate)\""
    }

    /// The optional attributes a listing may ask for in `x-amz-optional-object-attributes`.
    static let optionalObjectAttributeNames: Set<String> = ["RestoreStatus"]

    /// Whether a listing (ListObjects, ListObjectsV2, ListObjectVersions) asks for `RestoreStatus`;
    /// another name in the header is InvalidArgument (S3's answer, `attributeNames`).
    static func listingWantsRestoreStatus(_ ctx: S3Context) -> Result<Bool, S3Error> {
        let header = "x-amz-optional-object-attributes"
        return attributeNames(ctx.header(header), header: header, allowed: optionalObjectAttributeNames, required: false)
            .map { $0.contains("RestoreStatus") }
    }

    /// A listing entry's `<RestoreStatus>`, which S3 gives only to an object restored or being
    /// restored (the state `x-amz-restore` reports on HEAD), so only where the header has a value:
    /// in progress without an expiry date, restored with it.
    static func writeRestoreStatus(_ x: inout XMLWriter, _ extra: ObjectExtra, now: Instant) {
        if restoreInProgress(extra, now: now) {
            x.group("RestoreStatus") { x in x.element("IsRestoreInProgress", "true") }
            return
        }
        guard let expiry = restoredUntil(extra, now: now) else { return }
        x.group("RestoreStatus") { x in
            x.element("IsRestoreInProgress", "false")
            x.element("RestoreExpiryDate", expiry.rfc3339(fractionDigits: 3))
        }
    }

    /// When a copy restored at `completed` (unix seconds) for `days` expires: S3 adds the days to
    /// the time the restore completed and rounds up to the next midnight UTC. At most the last
    /// second of year 9999, the last an HTTP date (`x-amz-restore`'s expiry-date) can write: `Days`
    /// may be any positive 32-bit number, ~5.9 million years.
    static func restoreExpiry(completed: Int64, days: Int) -> Int64 {
        let end = completed + Int64(days) * 86_400
        return min((end / 86_400 + 1) * 86_400, Instant.latest.unixSeconds)
    }

    /// RestoreObject (`POST /bucket/key?restore`).
    func restoreObject(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        let request: RestoreRequest
        switch RestoreRequest.parse(body) {
        case .failure(let e): return .failure(e)
        case .success(let r): request = r
        }
        return requireObject(ctx).flatMap { found in
            let record = found.record
            guard let storageClass = record.metadata.storageClass, S3Service.archiveStorageClasses.contains(storageClass) else {
                return .failure(.invalidObjectState(message: "Restore is not allowed for the object's current storage class", storageClass: nil))
            }
            if request.isSelect { return .failure(.notImplemented(header: nil)) }
            // A restore of an archived object says how long the copy lasts.
            guard let days = request.days else { return .failure(.malformedXML) }
            let tier = request.tier ?? RestoreTiming.defaultTier
            let now = ctx.now.unixSeconds
            var extra = record.metadata.extra
            let alreadyRestored: Bool
            if S3Service.restoreInProgress(extra, now: ctx.now) {
                // S3 speeds a restore under way up when asked again at a faster tier; any other
                // request while it runs is a conflict.
                let running = extra.restoreTier ?? RestoreTiming.defaultTier
                guard RestoreTiming.rank(tier) < RestoreTiming.rank(running), let ready = extra.restoreReadyAt else {
                    return .failure(.restoreAlreadyInProgress)
                }
                let sooner = min(ready, now + configuration.restoreTiming.delay(storageClass: storageClass, tier: tier))
                extra.restoreReadyAt = sooner
                extra.restoreTier = tier
                extra.restoreExpiry = S3Service.restoreExpiry(completed: sooner, days: days)
                alreadyRestored = false
            } else if S3Service.restoreHeader(extra, now: ctx.now) != nil {
                // A restored copy's expiry is set anew from now; no retrieval happens.
                extra.restoreExpiry = S3Service.restoreExpiry(completed: now, days: days)
                alreadyRestored = true
            } else {
                let delay = configuration.restoreTiming.delay(storageClass: storageClass, tier: tier)
                extra.restoreReadyAt = delay > 0 ? now + delay : nil
                extra.restoreTier = delay > 0 ? tier : nil
                extra.restoreExpiry = S3Service.restoreExpiry(completed: now + delay, days: days)
                alreadyRestored = false
            }
            let updated = extra
            return attempt(ctx) {
                try database.write { c in
                    try S3Store.updateExtra(c, bucket: ctx.bucket, key: ctx.key, versionID: record.versionName) {
                        $0.restoreExpiry = updated.restoreExpiry
                        $0.restoreReadyAt = updated.restoreReadyAt
                        $0.restoreTier = updated.restoreTier
                    }
                }
                // 202: a restore started; 200: the object already had a restored copy, whose expiry
                // this request sets anew.
                return Response(status: alreadyRestored ? 200 : 202, headers: S3Service.versionHeader(record, versioned: found.versioned))
            }
        }
    }
}
