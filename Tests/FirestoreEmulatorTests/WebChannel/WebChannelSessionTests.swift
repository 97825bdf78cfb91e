import Foundation
import HearthCore
import HearthGRPC
import HearthHTTP
import HearthProtobuf
import Testing
@testable import FirestoreEmulator

/// A session's arrays: numbered, written to the open backchannel, kept until acknowledged and sent
/// again to the next backchannel; long polls end after data; the call sees each message once.
struct WebChannelSessionTests {
    /// Records what the session hands it, echoing each message back as a response.
    final class Echo: GRPCRequestStream, @unchecked Sendable {
        var received: [[UInt8]] = []
        var wasCancelled = false
        weak var session: WebChannelSession?
        func received(_ message: [UInt8]) {
            received.append(message)
            // A WriteResponse with a stream id: decoded back to JSON by the session.
            var w = ProtoWriter(capacity: 16)
            w.string(1, "s\(received.count)")
            session?.send(w.bytes)
        }
        func halfClosed() {}
        func cancelled() { wasCancelled = true }
    }

    /// Everything a push body has to give now.
    func drain(_ channel: WebChannelBackchannel) -> (text: String, ended: Bool) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let r = buffer.withUnsafeMutableBytes { channel.next(into: $0) }
            switch r {
            case .bytes(let n): out += buffer[..<n]
            case .wait: return (String(decoding: out, as: UTF8.self), false)
            case .end: return (String(decoding: out, as: UTF8.self), true)
            }
        }
    }

    let clock = Clock(frozenAt: Instant(unixSeconds: 1_000))

    /// What a push body gives once `done` holds of it (what the session hands a pool thread,
    /// such as a Write's end, comes a moment later); nil after 10 s.
    func drain(_ channel: WebChannelBackchannel, until done: (String) -> Bool) -> String? {
        var seen = ""
        for _ in 0..<1_000 {
            seen += drain(channel).text
            if done(seen) { return seen }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    func session() -> (WebChannelSession, Echo) {
        let s = WebChannelSession(sid: "S", rpc: .write, clock: clock)
        let echo = Echo()
        echo.session = s
        s.start(echo)
        return (s, echo)
    }

    func body(_ offset: Int, _ messages: [String]) -> WebChannelWire.ForwardBody {
        WebChannelWire.ForwardBody(offset: offset, messages: messages, headers: [])
    }

    @Test func arraysGoToTheBackchannelAndComeAgainUntilAcknowledged() {
        let (s, echo) = session()
        s.receive(body(0, [#"{"database":"projects/p/databases/(default)"}"#]))
        #expect(echo.received.count == 1)
        // No backchannel yet: the answer waits; a streaming GET gets it at once.
        let first = WebChannelBackchannel(longPoll: false, clock: clock) { _ in }
        s.attach(first, acknowledged: 0)
        #expect(drain(first).text == "25\n[[1,[{\"streamId\":\"s1\"}]]]")
        // A retried POST (same map id) is not handed to the call again; a new one is.
        s.receive(body(0, [#"{"database":"projects/p/databases/(default)"}"#]))
        s.receive(body(1, ["{}"]))
        #expect(echo.received.count == 2)
        #expect(drain(first).text == "10\n[[2,[{}]]]")
        #expect(s.forwardAnswer() == "[1,2,0]")
        // A new backchannel acknowledging 1 ends the old one and gets array 2 again.
        let second = WebChannelBackchannel(longPoll: false, clock: clock) { _ in }
        s.attach(second, acknowledged: 1)
        #expect(drain(first).ended)
        #expect(drain(second).text == "10\n[[2,[{}]]]")
        #expect(s.bufferedBytes > 0)
        s.acknowledge(2)
        #expect(s.bufferedBytes == 0)
    }

    @Test func aLongPollEndsAfterDataButNotAfterANoop() {
        let (s, _) = session()
        let poll = WebChannelBackchannel(longPoll: true, clock: clock) { _ in }
        s.attach(poll, acknowledged: 0)
        let opened = drain(poll)
        #expect(opened.text == "14\n[[1,[\"noop\"]]]" && !opened.ended)
        s.receive(body(0, ["{}"]))
        let answered = drain(poll)
        #expect(answered.text == "25\n[[2,[{\"streamId\":\"s1\"}]]]" && answered.ended)
        #expect(s.forwardAnswer() == "[0,2,0]")
    }

    @Test func endsAndErrors() {
        let (s, _) = session()
        let channel = WebChannelBackchannel(longPoll: false, clock: clock) { _ in }
        s.attach(channel, acknowledged: 0)
        _ = drain(channel)
        s.finish(GRPCStatus(.permissionDenied, "No"))
        s.finish(.ok)  // only the first end counts
        #expect(drain(channel).text == "82\n[[2,[{\"error\":{\"message\":\"PERMISSION_DENIED: No\",\"status\":\"PERMISSION_DENIED\"}}]]]")
        #expect(s.isClosed)
        #expect(!s.send([]))
    }

    @Test func badJSONEndsTheStream() {
        let (s, echo) = session()
        let channel = WebChannelBackchannel(longPoll: false, clock: clock) { _ in }
        s.attach(channel, acknowledged: 0)
        _ = drain(channel)
        s.receive(body(0, ["{}", "[1]", "{}"]))
        // The message before it is handed over, the one after it is not; the end comes after
        // the first one's answer.
        #expect(echo.received.count == 1)
        let text = drain(channel) { $0.contains("INVALID_ARGUMENT") }
        #expect(text?.hasPrefix("25\n[[2,[{\"streamId\":\"s1\"}]]]") == true)
        #expect(echo.received.count == 1)
    }

    @Test func theTimersRunOnHearthsClock() throws {
        // Real time alone would take 10 and 30 s: moving Hearth's clock does it at the next tick.
        let sessions = WebChannelSessions(clock: clock)
        let s = try #require(sessions.open(.listen))
        s.start(Echo())
        let stream = WebChannelBackchannel(longPoll: false, clock: clock) { _ in }
        s.attach(stream, acknowledged: 0)
        #expect(drain(stream).text == "14\n[[1,[\"noop\"]]]")
        clock.advance(seconds: 9)
        sessions.sweep()
        #expect(drain(stream).text == "")
        clock.advance(seconds: 1)
        sessions.sweep()
        #expect(drain(stream).text == "14\n[[2,[\"noop\"]]]")
        // A long poll with nothing to say: no-ops every 10 s keep it open, 30 s end it with one.
        let poll = WebChannelBackchannel(longPoll: true, clock: clock) { _ in }
        s.attach(poll, acknowledged: 2)
        #expect(drain(stream).ended)
        #expect(drain(poll).text == "14\n[[3,[\"noop\"]]]")
        clock.advance(seconds: 20)
        sessions.sweep()
        let kept = drain(poll)
        #expect(kept.text == "14\n[[4,[\"noop\"]]]" && !kept.ended)
        clock.advance(seconds: 10)
        sessions.sweep()
        let ended = drain(poll)
        #expect(ended.text == "14\n[[5,[\"noop\"]]]" && ended.ended)
        // Hearth's clock set back: real time alone decides (nothing is due).
        let again = WebChannelBackchannel(longPoll: false, clock: clock) { _ in }
        s.attach(again, acknowledged: 5)
        _ = drain(again)
        clock.advance(seconds: -3_600)
        sessions.sweep()
        #expect(drain(again).text == "")
        sessions.removeAll()
    }

    @Test func expiryOnHearthsClockAndTermination() {
        let clock = Clock(frozenAt: Instant(unixSeconds: 1_000))
        let sessions = WebChannelSessions(clock: clock)
        let s = sessions.open(.listen)!
        let echo = Echo()
        s.start(echo)
        #expect(sessions.session(s.sid, rpc: .listen) === s)
        #expect(sessions.session(s.sid, rpc: .write) == nil)
        clock.freeze(at: Instant(unixSeconds: 1_000 + WebChannelSessions.expiry - 1))
        #expect(sessions.session(s.sid, rpc: .listen) === s)
        // A backchannel open: not idle, however far the clock moves.
        let channel = WebChannelBackchannel(longPoll: false, clock: clock) { _ in }
        s.attach(channel, acknowledged: 0)
        clock.freeze(at: Instant(unixSeconds: 5_000))
        #expect(sessions.session(s.sid, rpc: .listen) === s)
        // Its connection gone: idle from now; past the expiry the session is reclaimed.
        s.detach(channel)
        clock.freeze(at: Instant(unixSeconds: 5_000 + WebChannelSessions.expiry))
        #expect(sessions.session(s.sid, rpc: .listen) == nil)
        #expect(echo.wasCancelled)
        #expect(sessions.count == 0)
    }
}

/// The timers' two clocks: a moment recorded after the one asking (another thread's write) is no
/// time passed on either, never a wrapped-around eternity that expires a busy session.
struct WebChannelMomentTests {
    @Test func aMomentLaterThanNowHasNotPassed() {
        let now = WebChannelSessions.Moment(clock: Instant(unixMicros: 1_000_000), wall: 5_000)
        let later = WebChannelSessions.Moment(clock: Instant(unixMicros: 1_000_001), wall: 5_001)
        #expect(!now.passed(60_000_000_000, since: later))
        #expect(!now.passed(1, since: later))
        let muchLater = WebChannelSessions.Moment(clock: Instant(unixMicros: 61_000_000), wall: 60_000_005_000)
        #expect(muchLater.passed(60_000_000_000, since: now))
        // Hearth's clock alone moved 60 s: passed; real time alone moved 60 s: passed.
        #expect(WebChannelSessions.Moment(clock: Instant(unixMicros: 61_000_000), wall: 5_000).passed(60_000_000_000, since: now))
        #expect(WebChannelSessions.Moment(clock: Instant(unixMicros: 1_000_000), wall: 60_000_005_000).passed(60_000_000_000, since: now))
    }
}
