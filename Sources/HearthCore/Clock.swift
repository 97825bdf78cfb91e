import Foundation
import Synchronization

/// The one clock every time-dependent behaviour of every service reads.
///
/// It follows the system clock, optionally shifted, or stands frozen at an instant. The hub's
/// `/emulator/v1/clock` endpoint freezes, advances and releases it, so token expiry, presigned-URL
/// expiry and `request.time` can be tested without sleeping.
public final class Clock: @unchecked Sendable {
    /// How the clock currently runs.
    public enum Mode: Sendable, Equatable {
        /// System time plus `offsetMicros`.
        case system(offsetMicros: Int64)
        /// Stopped at an instant.
        case frozen(Instant)
    }

    /// Taken by the changes (`freeze`, `advance`, `useSystemTime`) and by `mode`, not by `now`.
    private let lock = NSLock()
    private var _mode: Mode
    private let systemNow: @Sendable () -> Instant
    /// The mode as `now` reads it without the lock (an `NSLock` pair, ~0.13k instructions, was
    /// most of a `now`, read twice on every gRPC get): the frozen instant's microseconds, or
    /// `Int64.min` (outside `Instant.earliest...Instant.latest`) when the clock follows the system
    /// clock, plus `offsetMicros`. Written only under `lock`, together with `_mode`; a change back
    /// to the system clock stores the offset before it clears the frozen instant (releasing, read
    /// acquiring), so a `now` that sees the clock unfrozen sees that offset or a later one.
    private let frozenMicros: Atomic<Int64>
    private let offsetMicros = Atomic<Int64>(0)
    private static let notFrozen = Int64.min

    /// A clock that follows the system clock, or starts frozen at `frozenAt`.
    public init(frozenAt: Instant? = nil, systemNow: @escaping @Sendable () -> Instant = Clock.systemTime) {
        self.systemNow = systemNow
        _mode = frozenAt.map { .frozen($0) } ?? .system(offsetMicros: 0)
        frozenMicros = Atomic(frozenAt?.unixMicros ?? Self.notFrozen)
    }

    /// `_mode` made what `now` reads (under `lock`).
    private func publish() {
        switch _mode {
        case .system(let offset):
            offsetMicros.store(offset, ordering: .releasing)
            frozenMicros.store(Self.notFrozen, ordering: .releasing)
        case .frozen(let at):
            frozenMicros.store(at.unixMicros, ordering: .releasing)
        }
    }

    /// The system's time, read from `CLOCK_REALTIME` (what `Date()` reads) to the microsecond,
    /// rounded as `Instant(Date())` rounds: without Foundation's conversion to a `Double` of
    /// seconds since 2001 and back, ~0.1k instructions of each `now()` on a gRPC get's path.
    @Sendable public static func systemTime() -> Instant {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Instant(unixMicros: Int64(ts.tv_sec) &* 1_000_000 &+ (Int64(ts.tv_nsec) &+ 500) / 1_000)
    }

    /// Nanoseconds of `CLOCK_MONOTONIC`, the clock `DispatchTime.now()` reads on Linux, for
    /// durations only (the difference of two readings; never the emulator's time, which `now()`
    /// gives): without libdispatch's conversions, ~0.1k instructions fewer a reading — the HTTP/2
    /// loop reads it at every pause, the request log twice a recorded gRPC call.
    @inlinable
    public static func monotonicNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// The current emulator time.
    public func now() -> Instant {
        let frozen = frozenMicros.load(ordering: .acquiring)
        if frozen != Self.notFrozen { return Instant(unixMicros: frozen) }
        return Instant(unixMicros: systemNow().unixMicros + offsetMicros.load(ordering: .acquiring))
    }

    /// The current mode.
    public var mode: Mode {
        lock.lock()
        defer { lock.unlock() }
        return _mode
    }

    /// Stops the clock at `instant`.
    public func freeze(at instant: Instant) {
        lock.lock()
        _mode = .frozen(instant)
        publish()
        lock.unlock()
    }

    /// Moves the clock by `seconds` (negative goes back), frozen or not. Refused — false, the
    /// clock unchanged — when `seconds` is not finite or the clock would leave
    /// `Instant.earliest...Instant.latest` (years 1 to 9999): the amount comes from a client (the
    /// hub's endpoint), and past that range the conversion to microseconds traps and no date of
    /// any service's wire format could be written.
    @discardableResult
    public func advance(seconds: Double) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let now: Int64
        switch _mode {
        case .system(let offset): now = systemNow().unixMicros + offset
        case .frozen(let at): now = at.unixMicros
        }
        // Roughly first (no conversion of a huge or infinite double can trap), then exactly.
        let micros = (seconds * 1_000_000).rounded()
        guard micros.isFinite, micros.magnitude < 1e18 else { return false }
        let delta = Int64(micros)
        guard (Instant.earliest.unixMicros...Instant.latest.unixMicros).contains(now + delta) else { return false }
        switch _mode {
        case .system(let offset): _mode = .system(offsetMicros: offset + delta)
        case .frozen(let at): _mode = .frozen(Instant(unixMicros: at.unixMicros + delta))
        }
        publish()
        return true
    }

    /// Follows the system clock again, with no offset.
    public func useSystemTime() {
        lock.lock()
        _mode = .system(offsetMicros: 0)
        publish()
        lock.unlock()
    }
}
