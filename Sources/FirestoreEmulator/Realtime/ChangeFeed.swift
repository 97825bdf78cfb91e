import Foundation
import HearthCore

/// Delivers committed changes to listeners in commit order, off the writer.
///
/// Group commit runs several writers' bodies in one SQLite transaction and wakes their callers in
/// any order, so the order callers return in is not commit order. Each body therefore takes a
/// `Ticket` while it runs on the single writer (right after it took its commit time, so ticket
/// order is commit order), and after its COMMIT returns it publishes the change under that ticket,
/// or withdraws the ticket when the body or the COMMIT failed. The feed hands changes to `deliver`
/// strictly in ticket order, on one serial queue, waiting for any earlier ticket still out; so
/// publishing costs a lock and a dictionary entry, and never runs listener code on the writer.
///
/// A feed made with `catchUp` also skips changes nobody listens to: while no listener is open
/// (`listenerOpened` / `listenerClosed`) and no tap wants them, a change that comes due is not
/// queued at all (each commit's hand-over to the queue and the wake-ups behind it were most of the
/// futex calls of a commit with nobody listening); only the newest skipped commit time is kept.
/// The next listener to open has `catchUp` run with it first, on the queue, ahead of anything
/// queued after the open: what that listener reads first is read at or after every skipped commit,
/// and every later commit is delivered, because whether a change is skipped is decided under the
/// same lock, in commit order, as the open.
final class ChangeFeed: @unchecked Sendable {
    /// A place in commit order, taken on the writer.
    struct Ticket: Sendable, Hashable {
        let sequence: UInt64
    }

    /// A watcher outside the Listen engine (the UI).
    private struct Tap {
        let wanted: @Sendable () -> Bool
        let handler: @Sendable (CommittedChange) -> Void
    }

    // Everything below `lock` is guarded by it.
    private let lock = NSLock()
    private var next: UInt64 = 0
    private var nextToDeliver: UInt64 = 0
    /// Settled tickets waiting for an earlier one: the change, or nil when withdrawn.
    private var ready: [UInt64: CommittedChange?] = [:]
    private var taps: [Tap] = []
    /// Listeners open now (only counted with `catchUp`).
    private var listening = 0
    /// The newest commit time of the changes skipped since `catchUp` last ran; nil: none.
    private var skipped: Instant?
    private let queue: ListenQueue
    private let deliver: @Sendable (CommittedChange) -> Void
    private let catchUp: (@Sendable (Instant) -> Void)?

    /// - Parameters:
    ///   - queue: a serial queue; `deliver` runs on it, one change at a time.
    ///   - catchUp: nil: every change is delivered. Otherwise changes that come due while no
    ///     listener is open are skipped, and `catchUp` runs on the queue with the newest skipped
    ///     commit time before anything queued after the next `listenerOpened`.
    ///   - deliver: receives every published change (not skipped), in commit order.
    init(queue: ListenQueue, catchUp: (@Sendable (Instant) -> Void)? = nil,
         deliver: @escaping @Sendable (CommittedChange) -> Void) {
        self.queue = queue
        self.catchUp = catchUp
        self.deliver = deliver
    }

    /// Takes the next place in commit order. Call on the single writer, once the commit time is known.
    func reserve() -> Ticket {
        lock.lock()
        defer { lock.unlock() }
        next += 1
        return Ticket(sequence: next - 1)
    }

    /// Publishes what the ticket's commit did (after its COMMIT succeeded).
    func publish(_ ticket: Ticket, _ change: CommittedChange) {
        settle(ticket, change)
    }

    /// Gives the ticket up (its transaction rolled back): later changes no longer wait for it.
    func withdraw(_ ticket: Ticket) {
        settle(ticket, nil)
    }

    /// Tickets taken and not yet delivered, skipped or withdrawn (tests wait for it to reach zero).
    var outstanding: Int {
        lock.lock()
        defer { lock.unlock() }
        return Int(next - nextToDeliver)
    }

    /// A listener opened: every change that comes due from now on is delivered. Call before the
    /// listener queues anything on the feed's queue (its first read must come after `catchUp`).
    func listenerOpened() {
        lock.lock()
        defer { lock.unlock() }
        listening += 1
        // Under the lock: no change can come due between the count and the catch-up, so the
        // catch-up is queued after every skipped change and before every delivered one.
        if let time = skipped, let catchUp {
            skipped = nil
            queue.async { catchUp(time) }
        }
    }

    /// A listener closed (once per `listenerOpened`): it needs no change that comes due from now on.
    func listenerClosed() {
        lock.withLock { listening -= 1 }
    }

    /// Also hands every change published from now on during which `wanted` is true to `handler`,
    /// on the delivery queue after `deliver`. `wanted` is asked once per change, or with nobody
    /// listening once per run of changes that come due together, under the feed's lock: it must
    /// be quick and must not call the feed.
    func tap(when wanted: @escaping @Sendable () -> Bool = { true },
             _ handler: @escaping @Sendable (CommittedChange) -> Void) {
        lock.withLock { taps.append(Tap(wanted: wanted, handler: handler)) }
    }

    /// Runs `body` on the delivery queue after every change published so far has been delivered.
    func afterDelivered(_ body: @escaping @Sendable () -> Void) {
        queue.async(body)
    }

    private func settle(_ ticket: Ticket, _ change: CommittedChange?) {
        lock.lock()
        defer { lock.unlock() }
        if ticket.sequence == nextToDeliver, ready.isEmpty, listening == 0, catchUp != nil {
            // The usual commit with nobody listening: it alone comes due (no later ticket waits for
            // it) and is skipped — the path below without its dictionary entry and arrays.
            nextToDeliver += 1
            guard let change else { return }
            skipped = max(skipped ?? change.commitTime, change.commitTime)
            let wanting = taps.filter { $0.wanted() }
            guard !wanting.isEmpty else { return }
            queue.async {
                for t in wanting { t.handler(change) }
            }
            return
        }
        ready[ticket.sequence] = .some(change)
        var due: [CommittedChange] = []
        while let entry = ready.removeValue(forKey: nextToDeliver) {
            nextToDeliver += 1
            if let entry { due.append(entry) }
        }
        guard !due.isEmpty else { return }
        // Enqueued under the lock: two threads settling at once cannot swap their batches.
        if listening == 0, catchUp != nil {
            // Nobody listens: nothing for the Listen engine but the time (see `listenerOpened`).
            var newest = skipped ?? due[0].commitTime
            for c in due { newest = max(newest, c.commitTime) }
            skipped = newest
            let wanting = taps.filter { $0.wanted() }
            guard !wanting.isEmpty else { return }
            let batch = due
            queue.async {
                for c in batch {
                    for t in wanting { t.handler(c) }
                }
            }
            return
        }
        let deliver = self.deliver
        let batch = due
        let taps = self.taps
        queue.async {
            for c in batch {
                deliver(c)
                for t in taps where t.wanted() { t.handler(c) }
            }
        }
    }
}
