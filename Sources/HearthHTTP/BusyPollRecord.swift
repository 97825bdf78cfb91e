import Foundation
import Synchronization

/// What one `BusyPoll` (an HTTP/2 loop's, a REST worker's) has done, readable from any thread: the
/// hub's `GET /emulator/v1/stats` lists every live one, so a benchmark run shows whether a loop
/// polled. A loop once stopped polling for good in a full `make bench` and only its CPU share
/// hinted at it (docs/benchmarks.md, h2poll).
///
/// Written by its owner's thread only, once per pause and once per trial, with relaxed loads and
/// stores (one writer: no read-modify-write, no locked instruction on the loop's path); a reader
/// may see one pause's counts a moment late.
public final class BusyPollRecord: Sendable {
    /// The loop's or worker's name (`firestore-h2-0`, `http1-worker-3`).
    public let name: String
    let window = Atomic<UInt64>(0)
    let polling = Atomic<Bool>(true)
    /// Pauses that ended while the loop polled (the event came within the window).
    let pausesPolled = Atomic<Int>(0)
    /// Pauses that ended in a sleep: polling off, the window shut, or the window ran out.
    let pausesSlept = Atomic<Int>(0)
    let trialsKeptPolling = Atomic<Int>(0)
    let trialsKeptSleeping = Atomic<Int>(0)

    /// One record's figures at one moment.
    public struct Snapshot: Sendable {
        public let name: String
        /// Whether the loop polls now, and with what window (0: it sleeps at once).
        public let polling: Bool
        public let windowNanoseconds: UInt64
        public let pausesPolled: Int
        public let pausesSlept: Int
        /// Trials whose verdict was polling, and those whose verdict was sleeping.
        public let trialsKeptPolling: Int
        public let trialsKeptSleeping: Int
    }

    private init(name: String) { self.name = name }

    /// A record for `name`, listed by `all()` while its owner keeps it.
    static func register(_ name: String) -> BusyPollRecord {
        let made = BusyPollRecord(name: name)
        registryLock.lock()
        // Records of stopped loops (tests make many) are dropped as new ones come.
        registry.removeAll { $0.record == nil }
        registry.append(WeakRecord(record: made))
        registryLock.unlock()
        return made
    }

    /// Every live record, in the order they were made.
    public static func all() -> [Snapshot] {
        registryLock.lock()
        let records = registry.compactMap(\.record)
        registryLock.unlock()
        return records.map(\.snapshot)
    }

    var snapshot: Snapshot {
        Snapshot(name: name, polling: polling.load(ordering: .relaxed), windowNanoseconds: window.load(ordering: .relaxed),
                 pausesPolled: pausesPolled.load(ordering: .relaxed), pausesSlept: pausesSlept.load(ordering: .relaxed),
                 trialsKeptPolling: trialsKeptPolling.load(ordering: .relaxed),
                 trialsKeptSleeping: trialsKeptSleeping.load(ordering: .relaxed))
    }

    /// A pause ended (owner's thread): the state it left and which way it ended.
    func pauseEnded(whilePolling: Bool, window: UInt64, polling: Bool) {
        if whilePolling { Self.bump(pausesPolled) } else { Self.bump(pausesSlept) }
        self.window.store(window, ordering: .relaxed)
        self.polling.store(polling, ordering: .relaxed)
    }

    /// A trial's verdict (owner's thread).
    func trialEnded(keptPolling: Bool) {
        if keptPolling { Self.bump(trialsKeptPolling) } else { Self.bump(trialsKeptSleeping) }
    }

    /// One more, by the counter's only writer.
    private static func bump(_ counter: borrowing Atomic<Int>) {
        counter.store(counter.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    private struct WeakRecord {
        weak var record: BusyPollRecord?
    }
    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [WeakRecord] = []
}
