import Foundation
import HearthCore

extension S3Service {
    /// How much emulator time passes between lifecycle passes while the clock runs normally; a
    /// jump of the clock (either way) triggers a pass at the next request.
    static let lifecyclePassInterval: Int64 = 60

    /// Runs the lifecycle rules when the emulator clock has moved on enough since the last pass.
    /// Called at the start of every request, so what became due is applied before it is answered.
    func runLifecycleIfDue(_ now: Instant) {
        let seconds = now.unixSeconds
        guard lifecycleLastPass.claim({ last in
            guard let last else { return true }
            return seconds >= last + S3Service.lifecyclePassInterval || seconds < last
        }, next: seconds) else { return }
        do {
            let outcome = try LifecycleRunner(store: store, now: now, newVersionID: newVersionID).run()
            if !outcome.isEmpty {
                logger.info("s3 lifecycle: \(outcome.expired) expired, \(outcome.noncurrentExpired) noncurrent versions expired, "
                            + "\(outcome.markersRemoved) delete markers removed, \(outcome.transitioned) transitioned, "
                            + "\(outcome.uploadsAborted) uploads aborted")
            }
        } catch {
            logger.error("s3 lifecycle pass failed", [("error", .string("\(error)"))])
        }
    }
}

/// The time of the last lifecycle pass; `claim` decides and records a new pass atomically, so
/// concurrent requests run one pass, not one each.
final class LifecyclePassClock: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var last: Int64?

    func claim(_ due: (Int64?) -> Bool, next: Int64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard due(last) else { return false }
        last = next
        return true
    }

    func reset() {
        lock.lock()
        last = nil
        lock.unlock()
    }
}

extension S3Service {
    /// `x-amz-expiration` for an object a lifecycle Expiration rule will delete: when, and by which
    /// rule (`expiry-date="Fri, 02 Jan 2026 00:00:00 GMT", rule-id="tmp"`), the earliest if several.
    func expirationHeader(_ record: ObjectRecord) -> String? {
        guard let config = lifecycleRules.get(record.bucket) else { return nil }
        var best: (Instant, String)?
        for rule in config.rules where rule.status == "Enabled" && LifecycleRunner.matches(rule, record) {
            guard let e = rule.expiration else { continue }
            let due: Instant
            if let days = e.days { due = LifecycleRunner.due(record.lastModified, days: days) } else if let date = e.date { due = date } else { continue }
            if best == nil || due.unixMicros < best!.0.unixMicros { best = (due, rule.id) }
        }
        return best.map { "expiry-date=\"\($0.0.httpDate)\", rule-id=\"\($0.1)\"" }
    }
}

/// The buckets' lifecycle configurations in memory: loaded at start, replaced by every
/// Put/DeleteBucketLifecycle and DeleteBucket (this service is the only writer).
final class LifecycleRuleCache: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var rules: [String: LifecycleConfiguration] = [:]

    func load(from store: S3Store) throws {
        let rows = try store.database.read { c in
            try c.rows("SELECT bucket, document FROM s3_bucket_config WHERE kind = 'lifecycle' AND document IS NOT NULL", []) {
                ($0.text(0), $0.text(1))
            }
        }
        var loaded: [String: LifecycleConfiguration] = [:]
        for (bucket, text) in rows {
            if let stored = StoredLifecycle(text), case .success(let c) = LifecycleConfiguration.parse(Array(stored.document.utf8), newID: { "" }) {
                loaded[bucket] = c
            }
        }
        lock.lock()
        rules = loaded
        lock.unlock()
    }

    func get(_ bucket: String) -> LifecycleConfiguration? {
        lock.lock()
        defer { lock.unlock() }
        return rules[bucket]
    }

    func set(_ bucket: String, _ configuration: LifecycleConfiguration?) {
        lock.lock()
        rules[bucket] = configuration
        lock.unlock()
    }
}
