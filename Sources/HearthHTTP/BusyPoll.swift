import Foundation

/// How long an HTTP/2 event loop polls its sockets before it sleeps: an adaptive window, grown
/// while the next event keeps coming soon after the loop ran out of work and shrunk when it does
/// not (the policy of KVM's halt polling, `halt_poll_ns`) — and used only while polling is seen
/// to shorten the client's round trip, which the loop tries out by turns.
///
/// Why poll: a client making one call at a time (a test suite) sends its next request tens of µs
/// after our answer. A loop asleep in `epoll_wait` by then is woken by the kernel, and on a virtual
/// machine whose idle vCPU halted that wake-up costs about as much as the whole call (the host
/// must run the vCPU again: docs/benchmarks.md, grpcs1 and grpcspin). Polling for that long
/// keeps the vCPU running and takes the request at once.
///
/// Why try it out: the same machine at other times wakes an idle vCPU cheaply, and then polling
/// is a loss — the polling CPU is never free, so the client's wake-up can no longer run on it
/// and the round trip grew from ~45 to ~68 µs in `make bench` while the REST get, which never
/// polls, ran at 22k calls/s (docs/benchmarks.md, busypollab). Which case holds changes while the
/// process runs and no setting can know it beforehand, so the loop measures it: `trialLength`
/// round trips with its window and as many without, the median pause of each compared, and the
/// better kept for `keepLength` round trips before the next trial — polling, after trials that kept
/// choosing it, for longer (`longestPollingKeep`): each trial's sleeping half costs its round trips a
/// sleeping vCPU's wake-up where polling wins, and every trial is another chance for noise to choose
/// sleeping for a whole keep (docs/benchmarks.md, grpcs134). Only round trips count: pauses
/// ended by a socket, at most `roundTripLimit`, and while the loop polls only those begun with the
/// window open (a pause with the window shut is no polling round trip).
///
/// What it costs: nothing while the loop is idle — the window starts at 0 and only grows after
/// sleeps shorter than `ceiling`; a sleep longer than `ceiling` halves it, so a pause in traffic
/// burns at most about two ceilings before the loop sleeps at once again. While traffic flows, at
/// most one window (≤ `ceiling`) of polling per pause between events, and the polling yields the
/// CPU to any other runnable thread between polls (`sched_yield`), so it takes only time no other
/// thread on that CPU wanted. Not thread-safe: one per loop, used by its thread.
public struct BusyPoll: Sendable {
    /// The longest window in nanoseconds; 0 turns polling off.
    public let ceiling: UInt64
    /// The adaptive window in nanoseconds (0: sleep at once), whether or not polling is in use.
    public private(set) var window: UInt64 = 0
    /// Whether the loop polls now (a trial's polling half, or polling kept after a trial).
    public private(set) var polling = true
    /// The first window after a short sleep.
    static let start: UInt64 = 10_000
    /// Round trips measured each way in a trial.
    static let trialLength = 32
    /// Round trips the better way is kept before the next trial.
    static let keepLength = 1024
    /// The longest keep of polling: each trial that chooses polling after one that chose it doubles
    /// the keep, up to this (8,192 round trips: ~0.5–0.8 s at this machine's one-stream rates); a
    /// trial choosing sleeping goes back to `keepLength`. Sleeping is never kept longer than
    /// `keepLength`: wrongly kept, it costs every round trip a wake-up; wrongly kept polling costs
    /// a CPU that another thread could have used.
    static let longestPollingKeep = 8 * keepLength
    /// The longest pause that counts as a client's round trip in a trial; longer ones are idleness.
    static let roundTripLimit: UInt64 = 1_000_000

    /// The ceiling an HTTP/2 listener polls with unless its configuration says otherwise
    /// (`HTTPServer.Configuration.http2BusyPollMicroseconds`, `hearth start --http2-busy-poll-us`).
    public static let defaultCeilingMicroseconds = 200
    /// The most `--http2-busy-poll-us` accepts: a window past a millisecond would poll through
    /// pauses that are not a client's round trip.
    public static let maximumCeilingMicroseconds = 1000

    /// Where the trial stands: in its polling or its sleeping half (`measuring`, with the pauses
    /// measured so far and, in the second half, the first half's median), or keeping its verdict.
    private enum Phase: Sendable {
        case measuring(firstHalfMedian: UInt64?)
        case keeping(left: Int)
    }
    private var phase = Phase.measuring(firstHalfMedian: nil)
    private var samples: [UInt64] = []
    /// Which half a trial starts with; it alternates, so neither is always the first to run.
    private var trialsStartPolling = true
    /// How long the last verdict for polling is kept: `keepLength`, doubled by each trial that
    /// chooses polling after one that chose it (at most `longestPollingKeep`); idleness (a pause
    /// past `roundTripLimit`) ends the run of verdicts, as a new load may want the other way.
    private(set) var pollingKeep = keepLength
    /// Whether the last trial chose polling.
    private var lastVerdictPolling = false
    /// Whether the pause under way counts toward a trial or a keep if it is a round trip: begun
    /// with the window open, or while the loop sleeps.
    private var armed = false
    /// Where what it did is published for `/emulator/v1/stats` (nil: unnamed or off — tests).
    private let record: BusyPollRecord?
    /// Polls its whole window in every pause, the trials and the window's rule off (tests only:
    /// what the polling does must be testable on a machine too busy for a trial to keep it).
    private let fixed: Bool

    /// `name`: the loop or worker it serves, under which its record is listed.
    public init(ceilingMicroseconds: Int, name: String? = nil) {
        let ceiling = UInt64(max(0, min(ceilingMicroseconds, Self.maximumCeilingMicroseconds))) * 1000
        self.ceiling = ceiling
        record = ceiling > 0 ? name.map(BusyPollRecord.register) : nil
        fixed = false
    }

    /// Tests: a loop that polls `microseconds` in every pause whatever its round trips say.
    init(alwaysPollingMicroseconds microseconds: Int) {
        ceiling = UInt64(max(1, min(microseconds, Self.maximumCeilingMicroseconds))) * 1000
        window = ceiling
        record = nil
        fixed = true
    }

    public var isOff: Bool { ceiling == 0 }

    /// The loop ran out of work: how long to poll before sleeping (0: sleep at once).
    public mutating func beginPause() -> UInt64 {
        // While the loop sleeps (a trial's sleeping half, or sleeping kept after a trial) its window
        // is not in use and does not change, so it cannot say which pauses polling could have
        // taken: every pause counts there. Counting only those begun with the window open let a
        // half that ended on the pause that shut the window (one past the ceiling, with the window
        // at its smallest) leave the loop asleep for good: the window shut, no pause counted
        // toward the trial, and none reopened the window (the full `make bench` of 5 December
        // 05:07, its one-stream gRPC rows at 0.45 core; docs/benchmarks.md, h2poll).
        if fixed { return window }
        armed = ceiling > 0 && (window > 0 || !polling)
        return polling ? window : 0
    }

    /// The pause begun by `beginPause` ended `nanoseconds` after it began, by an event found while
    /// polling (`whilePolling`) or after a sleep; `bySocket`: a socket was ready, not only the
    /// loop's eventfd.
    public mutating func endPause(after nanoseconds: UInt64, bySocket: Bool, whilePolling: Bool) {
        guard ceiling > 0, !fixed else { return }
        defer { record?.pauseEnded(whilePolling: whilePolling, window: window, polling: polling) }
        // The window learns only from its own use: while the loop sleeps to see what sleeping
        // costs, a long round trip is what is being measured, not a reason to close the window.
        if !whilePolling && polling { slept(pause: nanoseconds, bySocket: bySocket) }
        // Idleness ends a run of verdicts for polling: whatever load comes next is tried within
        // `keepLength` round trips, as before keeps grew.
        if nanoseconds > Self.roundTripLimit && pollingKeep > Self.keepLength {
            pollingKeep = Self.keepLength
            lastVerdictPolling = false
            if case .keeping(let left) = phase, left > Self.keepLength { phase = .keeping(left: Self.keepLength) }
        }
        guard armed, bySocket, nanoseconds <= Self.roundTripLimit else { return }
        switch phase {
        case .keeping(let left):
            phase = left > 1 ? .keeping(left: left - 1) : .measuring(firstHalfMedian: nil)
            if left <= 1 { polling = trialsStartPolling }
        case .measuring(let first):
            samples.append(nanoseconds)
            guard samples.count == Self.trialLength else { return }
            let median = Self.median(&samples)
            samples.removeAll(keepingCapacity: true)
            guard let first else {
                phase = .measuring(firstHalfMedian: median)
                polling.toggle()
                return
            }
            let (whenPolling, whenSleeping) = polling ? (median, first) : (first, median)
            // Polling takes a CPU; keep it only when it shortens the round trip clearly.
            polling = whenPolling * 10 < whenSleeping * 9
            record?.trialEnded(keptPolling: polling)
            trialsStartPolling.toggle()
            if polling {
                pollingKeep = lastVerdictPolling ? min(pollingKeep * 2, Self.longestPollingKeep) : Self.keepLength
            }
            lastVerdictPolling = polling
            phase = .keeping(left: polling ? pollingKeep : Self.keepLength)
        }
    }

    /// The window's own rule, after a pause that ended in a sleep, `nanoseconds` after the loop
    /// ran out of work (the window's polling included). Short pauses ended by a socket (a client's
    /// next request) grow the window toward the ceiling (double, from `start`); long ones halve it
    /// (below `start`: off), and so do pauses ended by the eventfd alone: then the loop was waiting
    /// for the process's own threads (a write's group commit), which its polling would take a CPU
    /// from. A pause that ended while polling leaves the window as it is.
    public mutating func slept(pause nanoseconds: UInt64, bySocket: Bool = true) {
        guard ceiling > 0, !fixed else { return }
        if nanoseconds > ceiling || !bySocket {
            window /= 2
            if window < Self.start { window = 0 }
        } else if window < ceiling {
            window = min(ceiling, window == 0 ? Self.start : window * 2)
        }
    }

    private static func median(_ values: inout [UInt64]) -> UInt64 {
        values.sort()
        return values[values.count / 2]
    }
}
