import Foundation
import Testing
@testable import HearthHTTP

/// The HTTP/2 loops' adaptive polling (`BusyPoll`, docs/benchmarks.md grpcspin): it grows only
/// while events come soon after the loop runs out of work, falls back to sleeping when they stop
/// coming, and an idle loop costs no CPU.
@Suite struct BusyPollTests {
    @Test func shortPausesGrowTheWindowToTheCeilingAndNoFurther() {
        var p = BusyPoll(ceilingMicroseconds: 100)
        #expect(p.window == 0)
        var seen: [UInt64] = []
        for _ in 0..<6 {
            p.slept(pause: 30_000)
            seen.append(p.window)
        }
        #expect(seen == [10_000, 20_000, 40_000, 80_000, 100_000, 100_000])
    }

    @Test func longPausesHalveItThenTurnItOff() {
        var p = BusyPoll(ceilingMicroseconds: 100)
        for _ in 0..<5 { p.slept(pause: 1_000) }
        #expect(p.window == 100_000)
        var seen: [UInt64] = []
        for _ in 0..<4 {
            p.slept(pause: 5_000_000)
            seen.append(p.window)
        }
        #expect(seen == [50_000, 25_000, 12_500, 0])
    }

    /// Waiting for the process's own threads (the eventfd) is not a client's round trip.
    @Test func pausesEndedByTheLoopsOwnThreadsShrinkIt() {
        var p = BusyPoll(ceilingMicroseconds: 100)
        for _ in 0..<3 { p.slept(pause: 1_000) }
        #expect(p.window == 40_000)
        var seen: [UInt64] = []
        for _ in 0..<3 {
            p.slept(pause: 1_000, bySocket: false)
            seen.append(p.window)
        }
        #expect(seen == [20_000, 10_000, 0])
    }

    @Test func offStaysOffAndTheCeilingIsCapped() {
        var off = BusyPoll(ceilingMicroseconds: 0)
        for _ in 0..<10 { off.slept(pause: 1_000) }
        #expect(off.isOff && off.window == 0)
        #expect(BusyPoll(ceilingMicroseconds: 1_000_000).ceiling == UInt64(BusyPoll.maximumCeilingMicroseconds) * 1000)
    }

    /// One client round trip as the loop sees it: `pollingTakes` ns when the loop polls for it
    /// (ended while polling if within the window), `sleepingTakes` ns when it sleeps.
    static func roundTrip(_ p: inout BusyPoll, pollingTakes: UInt64, sleepingTakes: UInt64) {
        let window = p.beginPause()
        if window > 0 && pollingTakes <= window {
            p.endPause(after: pollingTakes, bySocket: true, whilePolling: true)
        } else {
            p.endPause(after: window > 0 ? pollingTakes : sleepingTakes, bySocket: true, whilePolling: false)
        }
    }

    /// Where polling shortens the round trip (an idle vCPU slow to wake), the trial keeps it.
    @Test func aTrialKeepsPollingWhereItShortensTheRoundTrip() {
        var p = BusyPoll(ceilingMicroseconds: 200)
        for _ in 0..<(2 * BusyPoll.trialLength + 2) {
            Self.roundTrip(&p, pollingTakes: 5_000, sleepingTakes: 150_000)
        }
        #expect(p.polling)
        #expect(p.beginPause() > 0)
    }

    /// Where sleeping is faster (idle vCPUs wake cheaply, and a polling CPU keeps the client's
    /// wake-up off it), the loop stops polling until the next trial, which starts with the
    /// sleeping half; the window is neither grown nor shrunk meanwhile.
    @Test func aTrialStopsPollingWhereSleepingIsFasterUntilTheNextTrial() {
        var p = BusyPoll(ceilingMicroseconds: 200)
        // Open the window, then run a trial: polling 68 µs, sleeping 45 µs.
        for _ in 0..<3 { p.slept(pause: 1_000) }
        for _ in 0..<(2 * BusyPoll.trialLength) {
            Self.roundTrip(&p, pollingTakes: 68_000, sleepingTakes: 45_000)
        }
        #expect(!p.polling)
        let window = p.window
        #expect(window > 0)
        #expect(p.beginPause() == 0)
        p.endPause(after: 900_000, bySocket: true, whilePolling: false)
        #expect(p.window == window)
        // Kept for keepLength round trips (one done above), then the next trial starts sleeping.
        for _ in 0..<(BusyPoll.keepLength - 1) {
            Self.roundTrip(&p, pollingTakes: 68_000, sleepingTakes: 45_000)
        }
        #expect(!p.polling)
        // Now polling is the faster: after the trial's two halves the loop polls again.
        for _ in 0..<(2 * BusyPoll.trialLength) {
            Self.roundTrip(&p, pollingTakes: 5_000, sleepingTakes: 150_000)
        }
        #expect(p.polling)
    }

    /// A trial counts only round trips polling could have taken: not pauses with the window shut,
    /// not waits for the process's own threads (the eventfd), not idleness past a millisecond.
    @Test func aTrialCountsOnlyRoundTrips() {
        var p = BusyPoll(ceilingMicroseconds: 200)
        for _ in 0..<3 { p.slept(pause: 1_000) }
        // The polling half, measured at 5 µs, then pauses that must not count.
        for _ in 0..<BusyPoll.trialLength {
            Self.roundTrip(&p, pollingTakes: 5_000, sleepingTakes: 5_000)
        }
        #expect(!p.polling)
        for _ in 0..<100 {
            _ = p.beginPause()
            p.endPause(after: 1_000, bySocket: false, whilePolling: false)
            _ = p.beginPause()
            p.endPause(after: 2_000_000, bySocket: true, whilePolling: false)
        }
        #expect(!p.polling)
        // 32 sleeping round trips of 100 µs finish the trial: polling (5 µs) wins.
        for _ in 0..<BusyPoll.trialLength {
            _ = p.beginPause()
            p.endPause(after: 100_000, bySocket: true, whilePolling: false)
        }
        #expect(p.polling)
        // With polling off the ceiling at 0, nothing is ever measured or polled.
        var off = BusyPoll(ceilingMicroseconds: 0)
        for _ in 0..<200 { Self.roundTrip(&off, pollingTakes: 1_000, sleepingTakes: 1_000) }
        #expect(off.beginPause() == 0)
    }

    /// A trial's polling half that ended on the pause that shut the window (past the ceiling, the
    /// window at its smallest) left the loop sleeping with the window at 0; only pauses begun with
    /// the window open counted, and a sleeping loop's window never changes, so no trial ever ended
    /// and the loop never polled again (the full `make bench` of 5 December 05:07; docs/benchmarks.md,
    /// h2poll). The sleeping half counts every round trip, whatever the window.
    @Test func aHalfEndingAsTheWindowShutsDoesNotStopPollingForGood() {
        var p = BusyPoll(ceilingMicroseconds: 200)
        p.slept(pause: 1_000)
        #expect(p.window == BusyPoll.start)
        for _ in 0..<(BusyPoll.trialLength - 1) {
            Self.roundTrip(&p, pollingTakes: 5_000, sleepingTakes: 150_000)
        }
        // The half's last round trip: 500 µs, past the ceiling, shuts the window.
        Self.roundTrip(&p, pollingTakes: 500_000, sleepingTakes: 500_000)
        #expect(!p.polling && p.window == 0)
        // The sleeping half's round trips (150 µs: a slow wake-up) end the trial; polling (5 µs) wins
        // and the window opens again at the next short round trip.
        for _ in 0..<BusyPoll.trialLength {
            Self.roundTrip(&p, pollingTakes: 5_000, sleepingTakes: 150_000)
        }
        #expect(p.polling)
        Self.roundTrip(&p, pollingTakes: 5_000, sleepingTakes: 150_000)
        #expect(p.beginPause() > 0)
    }

    /// Trials that keep choosing polling keep it longer each time (1,024, 2,048, … round trips, at
    /// most `longestPollingKeep`): fewer trials, so fewer sleeping halves where polling wins and
    /// fewer chances for noise to choose sleeping (docs/benchmarks.md, grpcs134). A verdict for
    /// sleeping is kept `keepLength` round trips as before, and the next verdict for polling starts
    /// again at `keepLength`; idleness past `roundTripLimit` cuts a longer keep to `keepLength`.
    @Test func trialsThatKeepChoosingPollingKeepItLonger() {
        let name = "busy-poll-keep-\(UInt64.random(in: 0...UInt64.max))"
        var p = BusyPoll(ceilingMicroseconds: 200, name: name)
        func verdicts() -> (polling: Int, sleeping: Int) {
            let r = BusyPollRecord.all().first { $0.name == name }
            return (r?.trialsKeptPolling ?? -1, r?.trialsKeptSleeping ?? -1)
        }
        for _ in 0..<3 { p.slept(pause: 1_000) }
        let fast = (poll: UInt64(5_000), sleep: UInt64(150_000))
        /// Round trips polled until the loop next sleeps, then through that sleep, polling winning.
        func polledBeforeASleep() -> Int {
            var n = 0
            while p.polling {
                Self.roundTrip(&p, pollingTakes: fast.poll, sleepingTakes: fast.sleep)
                n += 1
            }
            while !p.polling { Self.roundTrip(&p, pollingTakes: fast.poll, sleepingTakes: fast.sleep) }
            return n
        }
        let t = BusyPoll.trialLength, k = BusyPoll.keepLength
        // The first trial (polling half first), then keeps of 1,024, 2,048, 4,096 and 8,192 round
        // trips, the trials alternating which half leads (a leading polling half adds its round
        // trips and the previous trial's to the polling before the next sleep).
        #expect(polledBeforeASleep() == t)
        var polled: [Int] = []
        for _ in 0..<6 { polled.append(polledBeforeASleep()) }
        #expect(polled == [k, 2 * k + 2 * t, 4 * k, 8 * k + 2 * t, 8 * k, 8 * k + 2 * t])
        #expect(p.pollingKeep == BusyPoll.longestPollingKeep)
        #expect(verdicts() == (7, 0))
        // Sleeping now wins (polling 68 µs, sleeping 45 µs): kept no longer than before.
        while verdicts().sleeping == 0 { Self.roundTrip(&p, pollingTakes: 68_000, sleepingTakes: 45_000) }
        var asleep = 0
        while !p.polling {
            Self.roundTrip(&p, pollingTakes: 68_000, sleepingTakes: 45_000)
            asleep += 1
        }
        #expect(asleep <= k + t)
        // Polling wins again: its first keep is `keepLength` again, then 2,048.
        let before = verdicts().polling
        while verdicts().polling == before { Self.roundTrip(&p, pollingTakes: fast.poll, sleepingTakes: fast.sleep) }
        #expect(p.pollingKeep == k)
        while verdicts().polling == before + 1 { Self.roundTrip(&p, pollingTakes: fast.poll, sleepingTakes: fast.sleep) }
        #expect(p.polling && p.pollingKeep == 2 * k)
        // Idleness during that keep: cut to `keepLength`.
        _ = p.beginPause()
        p.endPause(after: 5_000_000, bySocket: true, whilePolling: false)
        #expect(p.pollingKeep == k)
        #expect(polledBeforeASleep() <= k + t)
    }

    /// A seeded generator (Knuth's MMIX LCG, its high bits), so a failure repeats.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
    }

    /// Whatever mix of pauses comes (short round trips, ones past the ceiling, idleness past a
    /// millisecond), the loop sleeps through at most one keep and the sleeping halves of the trials
    /// around it before it tries polling again: noise can make a trial choose sleeping, never keep it.
    @Test func noMixOfPausesKeepsTheLoopSleepingPastAKeep() {
        for seed in [UInt64(1), 20, 300] {
            var rng = Seeded(state: seed)
            var p = BusyPoll(ceilingMicroseconds: 200)
            var asleep = 0, longest = 0
            for _ in 0..<100_000 {
                let r = UInt64.random(in: 0..<100, using: &rng)
                let pause = r < 70 ? UInt64.random(in: 2_000...40_000, using: &rng)
                    : r < 95 ? UInt64.random(in: 200_001...1_000_000, using: &rng) : UInt64(3_000_000)
                // A sleeping loop sees the pause and the wake-up (30 µs): a round trip while within the limit.
                let counts = pause + 30_000 <= BusyPoll.roundTripLimit
                if !p.polling && counts { asleep += 1 } else if p.polling { asleep = 0 }
                longest = max(longest, asleep)
                Self.roundTrip(&p, pollingTakes: pause, sleepingTakes: pause + 30_000)
            }
            #expect(longest <= BusyPoll.keepLength + 2 * BusyPoll.trialLength + 1, "seed \(seed)")
        }
    }

    /// A named loop's polling is listed for `/emulator/v1/stats`: its state, window, pauses polled
    /// and slept, and trials' verdicts.
    @Test func aNamedLoopsPollingIsRecorded() {
        let name = "busy-poll-record-\(UInt64.random(in: 0...UInt64.max))"
        var p = BusyPoll(ceilingMicroseconds: 200, name: name)
        for _ in 0..<3 { p.slept(pause: 1_000) }
        for _ in 0..<(2 * BusyPoll.trialLength) {
            Self.roundTrip(&p, pollingTakes: 5_000, sleepingTakes: 150_000)
        }
        let mine = BusyPollRecord.all().filter { $0.name == name }
        #expect(mine.count == 1)
        if let r = mine.first {
            #expect(r.polling && r.windowNanoseconds == p.window)
            #expect(r.pausesPolled == BusyPoll.trialLength && r.pausesSlept == BusyPoll.trialLength)
            #expect(r.trialsKeptPolling == 1 && r.trialsKeptSleeping == 0)
        }
        _ = p
    }

    /// CPU seconds the calling thread has run.
    static func threadCPU() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Runs `body` on the loop's thread and waits for its result.
    static func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        loop.execute {
            box.value = body()
            done.signal()
        }
        done.wait()
        return box.value!
    }

    final class ResultBox<T>: @unchecked Sendable { var value: T? }

    /// A client's sequential calls (a byte sent on a socket the loop watches, the echo awaited
    /// before the next) are all answered, and the loop learns to poll for them; once they stop,
    /// the loop goes back to sleeping: over a second of idleness its thread spends at most about
    /// one window.
    @Test func aLoopPollsWhileCallsKeepComingAndSleepsWhenTheyStop() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let (client, server) = (fds[0], fds[1])
        defer { close(client); close(server) }
        let loop = try EventLoop(name: "busy-poll-test")
        loop.busyPoll = BusyPoll(ceilingMicroseconds: 1000)
        loop.start()
        defer { loop.stop() }
        _ = Self.onLoop(loop) {
            loop.register(server, events: 1 /* EPOLLIN */) { _ in
                var byte: UInt8 = 0
                if read(server, &byte, 1) == 1 { _ = write(server, &byte, 1) }
            }
            return true
        }
        // Under a heavy load (make test's parallel suites on two cores) pauses past the ceiling
        // come in runs, each halving the window, and a run at the end of 200 round trips can shut
        // it: up to five rounds of 200, of which one must end with the window open. A loop that
        // never polls ends every round shut.
        var echoed = 0, open = false
        for _ in 0..<5 where !open {
            for i in 0..<200 {
                var byte = UInt8(i & 0xFF)
                _ = write(client, &byte, 1)
                var back: UInt8 = 0
                if read(client, &back, 1) == 1 && back == UInt8(i & 0xFF) { echoed += 1 }
            }
            open = Self.onLoop(loop) { loop.busyPoll.window } > 0
        }
        #expect(echoed % 200 == 0 && echoed > 0)
        #expect(open)
        let before = Self.onLoop(loop) { Self.threadCPU() }
        Thread.sleep(forTimeInterval: 1)
        let after = Self.onLoop(loop) { Self.threadCPU() }
        // One window (1 ms) of polling after the first task, plus the tasks; a loop that kept
        // polling would have spent most of the second.
        #expect(after - before < 0.05)
        // The second's sleep, ended by the task (the eventfd), halved it at least.
        #expect(Self.onLoop(loop) { loop.busyPoll.window } < 1_000_000)
        _ = Self.onLoop(loop) { loop.unregister(server); return true }
    }

    /// An HTTP/2 loop polls by default (and `--http2-busy-poll-us` sets how long); the accept loop never does.
    @Test func onlyTheHTTP2LoopsPoll() throws {
        let engine = try HTTP2Engine(name: "t", handler: LoopRecorder())
        #expect(engine.loopsBusyPoll.allSatisfy { $0.ceiling == UInt64(BusyPoll.defaultCeilingMicroseconds) * 1000 })
        var limits = HTTP2Engine.Limits()
        limits.busyPollMicroseconds = 0
        #expect(try HTTP2Engine(name: "t", handler: LoopRecorder(), limits: limits).loopsBusyPoll.allSatisfy(\.isOff))
        #expect(try EventLoop(name: "accept").busyPoll.isOff)
    }
}
