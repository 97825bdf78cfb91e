import Foundation
import HearthCore

/// The open WebChannel sessions of one Firestore service, by SID, and the timer that keeps their
/// backchannels alive and reclaims the sessions their clients left.
///
/// Every interval (the no-op, the long poll's end, expiry) is measured on Hearth's clock (so a
/// test moves the clock with `PUT /emulator/v1/clock` instead of waiting; the next tick, within
/// `tickInterval`, acts) or on real time (a frozen clock does not keep dead clients' listeners
/// forever), whichever has gone further. A session without a backchannel for `expiry` is
/// terminated: its Listen targets or Write session are freed. The timer runs only while there
/// are sessions.
final class WebChannelSessions: @unchecked Sendable {
    /// A backchannel quiet this long gets a no-op (ns); the handshake announces 30 s and the client
    /// gives up on a silent backchannel after 45.
    static let noopInterval: UInt64 = 10_000_000_000
    /// A long poll with nothing to say ends after this long (ns), as the official emulator's does.
    static let longPollLimit: UInt64 = 30_000_000_000
    /// A streaming backchannel ends once this many bytes went through it: the client reopens it
    /// with a newer `AID`, acknowledging them, so what a session keeps for resending stays bounded.
    static let rotateBytes = 1 << 20
    /// Seconds without a backchannel after which a session is reclaimed.
    static let expiry: Int64 = 60
    /// Most sessions open at once (a client that opens without end is refused, not served out of memory).
    static let limit = 10_000
    /// How often the timer looks at the sessions.
    static let tickInterval: DispatchTimeInterval = .seconds(2)

    /// A point on both clocks the timers read: Hearth's (µs) and the monotonic one (ns).
    struct Moment: Sendable {
        let clock: Instant
        let wall: UInt64

        static func now(_ clock: Clock) -> Moment { Moment(clock: clock.now(), wall: Clock.monotonicNanos()) }

        /// Whether `interval` ns have passed since `since` on either clock (Hearth's set back:
        /// real time alone decides). `since` may be later than this moment — a sweep or a request
        /// reads the time, then another thread records a write — and then nothing has passed: a
        /// wrapping subtraction of the real times read that as ~584 years, and the session, in
        /// the middle of its traffic, was reclaimed as expired ("Unknown SID" to its next POST).
        func passed(_ interval: UInt64, since: Moment) -> Bool {
            let micros = clock.unixMicros &- since.clock.unixMicros
            return (micros >= 0 && UInt64(micros) >= interval / 1_000) || (wall >= since.wall && wall - since.wall >= interval)
        }
    }

    private let clock: Clock
    private let lock = NSLock()
    private var sessions: [String: WebChannelSession] = [:]
    private var timer: (any DispatchSourceTimer)?
    private let queue = DispatchQueue(label: "hearth.firestore.webchannel.timer")

    init(clock: Clock) {
        self.clock = clock
    }

    /// Number of open sessions.
    var count: Int { lock.withLock { sessions.count } }

    /// A new session (nil: `limit` reached).
    func open(_ rpc: WebChannelSession.RPC) -> WebChannelSession? {
        sweep()
        lock.lock()
        defer { lock.unlock() }
        guard sessions.count < Self.limit else { return nil }
        var sid: String
        repeat { sid = Self.newSID() } while sessions[sid] != nil
        let session = WebChannelSession(sid: sid, rpc: rpc, clock: clock)
        sessions[sid] = session
        if timer == nil {
            let t = DispatchSource.makeTimerSource(queue: queue)
            t.schedule(deadline: .now() + Self.tickInterval, repeating: Self.tickInterval)
            t.setEventHandler { [weak self] in self?.sweep() }
            t.resume()
            timer = t
        }
        return session
    }

    /// The session `sid` names, unless it is unknown or has expired (then it is reclaimed now).
    func session(_ sid: String, rpc: WebChannelSession.RPC) -> WebChannelSession? {
        guard let s = lock.withLock({ sessions[sid] }), s.rpc == rpc else { return nil }
        if s.expired(now: .now(clock), expiry: Self.expiry) {
            remove(s)
            return nil
        }
        return s
    }

    /// Terminates and forgets `session`.
    func remove(_ session: WebChannelSession) {
        lock.withLock {
            if sessions[session.sid] === session { sessions[session.sid] = nil }
            stopTimerIfIdle()
        }
        session.terminate()
    }

    /// Terminates every session (the service is reset or stopping).
    func removeAll() {
        let all = lock.withLock {
            let all = Array(sessions.values)
            sessions = [:]
            stopTimerIfIdle()
            return all
        }
        for s in all { s.terminate() }
    }

    /// No-ops, long polls' ends, expired sessions reclaimed.
    func sweep() {
        let now = Moment.now(clock)
        let all = lock.withLock { Array(sessions.values) }
        for s in all where s.tick(now: now, expiry: Self.expiry) { remove(s) }
    }

    private func stopTimerIfIdle() {
        guard sessions.isEmpty, let t = timer else { return }
        t.cancel()
        timer = nil
    }

    /// 16 random bytes, base64 (the official emulator's SIDs have this form): not guessable, so one
    /// page cannot read another's stream by naming its session.
    private static func newSID() -> String {
        var g = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }
        // The URL-safe alphabet, as the emulator's: the SID travels in every later URL.
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }
}
