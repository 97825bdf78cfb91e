import Dispatch
import Foundation

/// Feeds an upload's bytes to hash functions on a thread of their own, so hashing (MD5, SHA-256 and
/// CRC32C are most of a large upload's user CPU) runs beside the request's thread, which meanwhile
/// stores the same bytes in SQLite, instead of before it.
///
/// Bytes are copied into batches handed over in order to one serial queue, where `sink` sees them;
/// at most `inFlight` batches wait, so a hasher slower than the network holds the request back
/// rather than buffering without bound (memory stays at `inFlight + 1` batches). A body no larger
/// than one batch is hashed on the caller's thread at `drain()` and never touches the queue. The
/// bytes stored and when the answer goes out do not change: the caller drains before it reads a
/// digest, and a digest is read before anything is acknowledged.
public final class BackgroundHasher: @unchecked Sendable {
    /// Large enough that the hand-over costs nothing per byte, small enough to overlap well.
    public static let batchSize = 256 << 10
    public static let inFlight = 4

    /// The queue runs one batch at a time and `drain` waits for it before the tail and before any
    /// reader: whatever the sink updates is touched by one thread at a time, hence unchecked.
    private struct Sink: @unchecked Sendable {
        let hash: (UnsafeRawBufferPointer) -> Void
    }

    private let sink: Sink

    /// A full batch on its way to the queue (a box, so the queue can take the only reference back).
    private final class Batch: @unchecked Sendable {
        var bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }
    private var batch: [UInt8] = []
    private var queue: DispatchQueue?
    /// Batches the queue has hashed, emptied for reuse (at most `inFlight + 1` ever exist).
    private var spare: [[UInt8]] = []
    private let spareLock = NSLock()
    // Created at 0 and raised to `inFlight`: libdispatch traps when a semaphore is released below
    // its initial value, which a consumer dropped mid-body could otherwise cause.
    private let slots = DispatchSemaphore(value: 0)

    /// - Parameter sink: hashes one piece; called with the bytes in order, never concurrently, on the
    ///   queue or (the tail, at `drain`) on the caller's thread. What it updates must be read only
    ///   after `drain()` returns.
    public init(_ sink: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.sink = Sink(hash: sink)
        for _ in 0..<Self.inFlight { slots.signal() }
    }

    /// Adds bytes; they are hashed later, in order. Called from one thread at a time.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        while !rest.isEmpty {
            let take = min(rest.count, Self.batchSize - batch.count)
            batch.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<take]))
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            if batch.count == Self.batchSize { handOver() }
        }
    }

    private func handOver() {
        let full = Batch(batch)
        // A body that fills one batch will likely fill more: take a whole batch at once, one the
        // queue has hashed already when there is one. (The first grows as it fills, so a small body
        // never allocates a batch it does not use.) Reusing batches matters: a fresh 256 KiB
        // allocation per batch came back from the allocator as fresh pages, and first-touch page
        // faults cost more system time than the hashing saved (measured on a 1 GiB upload).
        batch = takeSpare()
        let q = queue ?? DispatchQueue(label: "hearth.upload.hash")
        queue = q
        slots.wait()
        q.async { [self] in
            full.bytes.withUnsafeBytes { sink.hash($0) }
            var done = full.bytes
            full.bytes = []  // `done` is now the only reference: emptied, it keeps its buffer
            done.removeAll(keepingCapacity: true)
            spareLock.withLock { spare.append(done) }
            slots.signal()
        }
    }

    /// A hashed batch to fill again, or a new one.
    private func takeSpare() -> [UInt8] {
        if let reused = spareLock.withLock({ spare.popLast() }) { return reused }
        var fresh: [UInt8] = []
        fresh.reserveCapacity(Self.batchSize)
        return fresh
    }

    /// Returns once every byte added so far has gone through `sink`.
    public func drain() {
        queue?.sync {}
        if !batch.isEmpty { batch.withUnsafeBytes { sink.hash($0) } }
        batch = []
    }
}
