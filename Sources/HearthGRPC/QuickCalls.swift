import Foundation
import HearthHTTP

/// A call whose `quick` handler (`GRPCHandler.unaryQuick` or `.serverStreamingQuick`, read from
/// the call's route when it is answered) may answer it on the loop thread.
struct QuickCall: @unchecked Sendable {
    let call: GRPCCall
    let request: [UInt8]
}

/// The quick calls one read of a connection completed, answered together once the read is handled.
///
/// They are answered on the loop thread that read them: no thread is woken, and the answers leave
/// in the same write. Handing part of a batch to a worker so that both cores work on one
/// connection was measured to lose (docs/benchmarks.md, grpcget): at 16 streams on one connection
/// the split ran 23–25k calls/s and this 55–60k, with half the CPU per call — every hand-off cost
/// a worker's futex wake-up, lock traffic with the loop, an eventfd wake-up of the loop to send
/// the worker's answers in a write of their own, and answers arriving in two waves, so the client
/// sent its next requests in waves too and both sides idled between them. Only a read that
/// completed more than `loopShare` calls (a client with hundreds in flight and small requests)
/// hands the rest to workers, in jobs of `jobSize`, so a flood never holds the loop from the
/// other connections it serves for more than `loopShare` calls (well under a millisecond). The
/// answers leave every `answersPerWrite` calls, not only once the batch is done.
final class QuickCalls: EventLoopTask, @unchecked Sendable {
    /// The most calls of one read the loop answers itself.
    static let loopShare = 64
    static let jobSize = 16
    /// The loop writes the answers of a batch as each `answersPerWrite` of them are ready, not all
    /// at the end: a client with its own core (h2load at 16 streams in `make bench`) reads the
    /// first answers and sends its next calls while the loop computes the rest, so the two work at
    /// the same time instead of by turns, and the loop finds its next read waiting instead of
    /// sleeping until it comes. Measured (docs/benchmarks.md, grpcget3): 8 the best of 1, 2, 4, 8
    /// and "the first 4 only"; each write costs the loop a `sendto` and the client a wake-up, so
    /// on a machine with no core free for the client every early write is a small loss.
    static let answersPerWrite = 8
    private let pool: WorkerPool
    private let lock = InlineLock()
    // Under `lock` (unchecked: the lock keeps accesses apart).
    @exclusivity(unchecked) private var pending: [QuickCall] = []
    /// An emptied batch's buffer, kept for `pending` (under `lock`): emptied with `= []`, `pending`
    /// was allocated again by the next call's `add` and the batch freed, once per unary call. The
    /// loops sharing this object take turns with it: one finding it taken uses a new array.
    @exclusivity(unchecked) private var spare: [QuickCall] = []

    init(pool: WorkerPool) { self.pool = pool }

    /// Queues `q` (loop thread): the first of a read schedules the batch after that read.
    func add(_ q: QuickCall, stream: HTTP2Stream) {
        lock.lock()
        pending.append(q)
        let first = pending.count == 1
        lock.unlock()
        // Queued as this object: no closure allocated per read.
        if first && !stream.afterCurrentRead(self) { answerPending() }
    }

    /// The batch, after the read that completed its first call.
    func runOnLoop() { answerPending() }

    private func answerPending() {
        lock.lock()
        var batch = spare
        spare = []
        swap(&batch, &pending)
        lock.unlock()
        defer {
            // Emptied from the end, keeping the buffer: `removeAll(keepingCapacity:)` went through
            // the general `replaceSubrange` (~0.2k instructions a batch of one).
            while batch.popLast() != nil {}
            lock.lock()
            if spare.capacity == 0 { swap(&batch, &spare) }
            lock.unlock()
        }
        let here = min(batch.count, Self.loopShare)
        var start = here
        while start < batch.count {
            let job = Array(batch[start..<min(batch.count, start + Self.jobSize)])
            pool.submit { for q in job { q.call.answer(q) } }
            start += Self.jobSize
        }
        // By index: a slice of the batch, enumerated, retained the buffer and stepped generically.
        var i = 0
        while i < here {
            let q = batch[i]
            q.call.answer(q)
            i += 1
            if i % Self.answersPerWrite == 0 && i < here { q.call.stream.sendQueued() }
        }
    }
}
