import Dispatch
import Foundation

/// Feeds an upload's bytes to an `ObjectDigest` on a thread of its own, so hashing (MD5 is the
/// largest CPU cost of a large upload, CRC32C the next) runs beside the request's thread, which
/// meanwhile stores the same bytes in SQLite, instead of before it.
///
/// Bytes are copied into batches handed over in order to one serial queue; at most `inFlight`
/// batches wait, so a hasher slower than the network holds the request back rather than buffering
/// without bound (memory stays at `inFlight + 1` batches). A body no larger than one batch is
/// hashed on the caller's thread at `drain()` and never touches the queue.
final class BackgroundDigest: @unchecked Sendable {
    /// Large enough that the hand-over costs nothing per byte, small enough to overlap well.
    static let batchSize = 256 << 10
    static let inFlight = 4

    private let digest: ObjectDigest
    private var batch: [UInt8] = []
    private var queue: DispatchQueue?
    // Created at 0 and raised to `inFlight`: libdispatch traps when a semaphore is released below
    // its initial value, which a consumer dropped mid-body could otherwise cause.
    private let slots = DispatchSemaphore(value: 0)

    init(_ digest: ObjectDigest) {
        self.digest = digest
        for _ in 0..<Self.inFlight { slots.signal() }
    }

    /// Adds bytes; they are hashed later, in order. Called from one thread at a time.
    func update(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        while !rest.isEmpty {
            let take = min(rest.count, Self.batchSize - batch.count)
            batch.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<take]))
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            if batch.count == Self.batchSize { handOver() }
        }
    }

    private func handOver() {
        let full = batch
        // A body that fills one batch will likely fill more: take the whole batch at once. (The
        // first grows as it fills, so a small body never allocates a batch it does not use.)
        batch = []
        batch.reserveCapacity(Self.batchSize)
        let q = queue ?? DispatchQueue(label: "hearth.storage.digest")
        queue = q
        slots.wait()
        q.async { [digest, slots] in
            full.withUnsafeBytes { digest.update($0) }
            slots.signal()
        }
    }

    /// Returns once every byte added so far has gone through the digest.
    func drain() {
        queue?.sync {}
        if !batch.isEmpty { batch.withUnsafeBytes { digest.update($0) } }
        batch = []
    }
}
