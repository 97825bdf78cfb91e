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
final class ChangeFeed: @unchecked Sendable {
    /// A place in commit order, taken on the writer.
    struct Ticket: Sendable, Hashable {
        let sequence: UInt64
    }

    // `next`, `nextToDeliver` and `ready` are guarded by `lock`.
    private let lock = NSLock()
    private var next: UInt64 = 0
    private var nextToDeliver: UInt64 = 0
    /// Settled tickets waiting for an earlier one: the change, or nil when withdrawn.
    private var ready: [UInt64: CommittedChange?] = [:]
    private let queue: DispatchQueue
    private let deliver: @Sendable (CommittedChange) -> Void
    /// Watchers outside the Listen engine (the UI), called after `deliver`; guarded by `lock`.
    private var taps: [@Sendable (CommittedChange) -> Void] = []

    /// - Parameters:
    ///   - queue: a serial queue; `deliver` runs on it, one change at a time.
    ///   - deliver: receives every published change, in commit order.
    init(queue: DispatchQueue, deliver: @escaping @Sendable (CommittedChange) -> Void) {
        self.queue = queue
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

    /// Tickets taken and not yet delivered or withdrawn (tests wait for it to reach zero).
    var outstanding: Int {
        lock.lock()
        defer { lock.unlock() }
        return Int(next - nextToDeliver)
    }

    /// Also hands every change published from now on to `tap`, on the delivery queue after `deliver`.
    func tap(_ tap: @escaping @Sendable (CommittedChange) -> Void) {
        lock.withLock { taps.append(tap) }
    }

    /// Runs `body` on the delivery queue after every change published so far has been delivered.
    func afterDelivered(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    private func settle(_ ticket: Ticket, _ change: CommittedChange?) {
        lock.lock()
        ready[ticket.sequence] = .some(change)
        var due: [CommittedChange] = []
        while let entry = ready.removeValue(forKey: nextToDeliver) {
            nextToDeliver += 1
            if let entry { due.append(entry) }
        }
        // Enqueued under the lock: two threads settling at once cannot swap their batches.
        if !due.isEmpty {
            let deliver = self.deliver
            let batch = due
            let taps = self.taps
            queue.async {
                for c in batch {
                    deliver(c)
                    for t in taps { t(c) }
                }
            }
        }
        lock.unlock()
    }
}
