import Foundation

/// How long an HTTP/2 event loop polls its sockets before it sleeps: an adaptive window, grown
/// while the next event keeps coming soon after the loop ran out of work and shrunk when it does
/// not (the policy of KVM's halt polling, `halt_poll_ns`).
///
/// Why: a client making one call at a time (a test suite) sends its next request tens of µs after
/// our answer. A loop asleep in `epoll_wait` by then is woken by the kernel, and on a virtual
/// machine whose idle vCPU halted that wake-up costs about as much as the whole call (the host
/// must run the vCPU again: docs/benchmarks.md, grpcs1 and grpcspin). Polling for that long
/// keeps the vCPU running and takes the request at once.
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
    /// The current window in nanoseconds (0: sleep at once).
    public private(set) var window: UInt64 = 0
    /// The first window after a short sleep.
    static let start: UInt64 = 10_000

    /// The ceiling an HTTP/2 listener polls with unless its configuration says otherwise
    /// (`HTTPServer.Configuration.http2BusyPollMicroseconds`, `hearth start --http2-busy-poll-us`).
    public static let defaultCeilingMicroseconds = 200
    /// The most `--http2-busy-poll-us` accepts: a window past a millisecond would poll through
    /// pauses that are not a client's round trip.
    public static let maximumCeilingMicroseconds = 1000

    public init(ceilingMicroseconds: Int) {
        ceiling = UInt64(max(0, min(ceilingMicroseconds, Self.maximumCeilingMicroseconds))) * 1000
    }

    public var isOff: Bool { ceiling == 0 }

    /// The pause ended in a sleep, `nanoseconds` after the loop ran out of work (the window's
    /// polling included); `bySocket`: a socket was ready, not only the loop's eventfd. Short
    /// pauses ended by a socket (a client's next request) grow the window toward the ceiling
    /// (double, from `start`); long ones halve it (below `start`: off), and so do pauses ended by
    /// the eventfd alone: then the loop was waiting for the process's own threads (a write's group
    /// commit), which its polling would take a CPU from. A pause that ended while polling leaves
    /// the window as it is.
    public mutating func slept(pause nanoseconds: UInt64, bySocket: Bool = true) {
        guard ceiling > 0 else { return }
        if nanoseconds > ceiling || !bySocket {
            window /= 2
            if window < Self.start { window = 0 }
        } else if window < ceiling {
            window = min(ceiling, window == 0 ? Self.start : window * 2)
        }
    }
}
