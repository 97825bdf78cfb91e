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
