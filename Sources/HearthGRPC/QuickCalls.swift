import Foundation
import HearthHTTP

/// A unary call whose `quick` handler may answer it on the loop thread.
struct QuickCall: @unchecked Sendable {
    let call: GRPCCall
    let quick: @Sendable (_ request: [UInt8], _ context: GRPCContext) throws(GRPCStatus) -> [UInt8]?
    let run: @Sendable (_ request: [UInt8], _ context: GRPCContext) throws(GRPCStatus) -> [UInt8]
    let request: [UInt8]
}

/// The quick calls one read of a connection completed, answered together once the read is handled.
///
/// One call (a client waiting for each answer) is answered on the loop thread: no thread is woken,
/// the answer goes out in the same write as any other. Several (a client with many calls in
/// flight) would keep only the loop's core busy, so the second half goes to a worker as one job —
/// one wake-up for the lot — and both halves run at once on two cores. The loop answers at most
/// `loopShare` of a batch, so a flood of calls never holds it from every other connection: the
/// rest go to workers in jobs of `jobSize`.
final class QuickCalls: @unchecked Sendable {
    /// A batch at least this large is shared with workers.
    static let shareFrom = 4
    static let loopShare = 8
    static let jobSize = 16
    private let pool: WorkerPool
    private let lock = NSLock()
    private var pending: [QuickCall] = []

    init(pool: WorkerPool) { self.pool = pool }

    /// Queues `q` (loop thread): the first of a read schedules the batch after that read.
    func add(_ q: QuickCall, stream: HTTP2Stream) {
        lock.lock()
        pending.append(q)
        let first = pending.count == 1
        lock.unlock()
        if first && !stream.afterCurrentRead({ [self] in answerPending() }) { answerPending() }
    }

    private func answerPending() {
        lock.lock()
        let batch = pending
        pending = []
        lock.unlock()
        let here = batch.count < Self.shareFrom ? batch.count : min(batch.count / 2, Self.loopShare)
        var start = here
        while start < batch.count {
            let job = Array(batch[start..<min(batch.count, start + Self.jobSize)])
            pool.submit { for q in job { q.call.answer(q) } }
            start += Self.jobSize
        }
        for q in batch[..<here] { q.call.answer(q) }
    }
}
