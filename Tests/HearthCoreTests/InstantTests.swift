import Foundation
import Synchronization
import Testing
import HearthCore

@Suite struct InstantTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", Int64(0)),
        ("2026-11-30T06:33:14.123456Z", Int64(1_796_020_394_123_456)),
        ("2026-11-30T07:33:14.5+01:00", Int64(1_796_020_394_500_000)),
        ("1969-12-31T23:59:59.999999Z", Int64(-1)),
        ("2000-02-29T12:00:00.000000001Z", Int64(951_825_600_000_000)),
    ])
    func parsesRFC3339(text: String, micros: Int64) {
        #expect(Instant(rfc3339: text)?.unixMicros == micros)
    }

    @Test(arguments: ["", "2026-13-01T00:00:00Z", "2026-11-30 06:33:14Z", "2026-11-30T06:33:14", "2026-11-30T06:33:14.Z", "x"])
    func rejectsMalformed(text: String) {
        #expect(Instant(rfc3339: text) == nil)
    }

    @Test func formatsEveryForm() {
        let t = Instant(unixMicros: 1_796_020_394_123_456)
        #expect(t.rfc3339() == "2026-11-30T06:33:14.123456Z")
        #expect(t.rfc3339(fractionDigits: 0) == "2026-11-30T06:33:14Z")
        #expect(t.rfc3339(fractionDigits: 3) == "2026-11-30T06:33:14.123Z")
        #expect(t.amzDate == "20261130T063314Z")
        #expect(t.httpDate == "Mon, 30 Nov 2026 06:33:14 GMT")
        #expect(Instant(amzDate: "20150830T123600Z")?.rfc3339(fractionDigits: 0) == "2015-08-30T12:36:00Z")
        #expect(Instant(unixMicros: -1).rfc3339() == "1969-12-31T23:59:59.999999Z")
    }

    @Test func roundTripsAcrossCenturies() {
        for seconds in stride(from: Int64(-2_000_000_000), to: 4_000_000_000, by: 86_399_917) {
            let t = Instant(unixMicros: seconds * 1_000_000 + 123)
            #expect(Instant(rfc3339: t.rfc3339()) == t)
        }
    }
}

@Suite struct ClockTests {
    /// The system time read from `CLOCK_REALTIME` is `Date()`'s, to the microsecond: read between
    /// two dates, it lies between them (a microsecond's slack for the rounding of each).
    @Test func systemTimeIsDatesTime() {
        for _ in 0..<100 {
            let before = Instant(Date()), now = Clock.systemTime(), after = Instant(Date())
            #expect(before.unixMicros - 1 <= now.unixMicros && now.unixMicros <= after.unixMicros + 1,
                    "\(before.unixMicros) \(now.unixMicros) \(after.unixMicros)")
        }
        let clock = Clock()
        let d = clock.now().unixMicros - Instant(Date()).unixMicros
        #expect(abs(d) < 1_000_000)
    }

    @Test func freezeAdvanceAndReturnToSystem() {
        let base = Instant(unixSeconds: 1_000_000)
        let clock = Clock(systemNow: { base })
        #expect(clock.now() == base)
        clock.advance(seconds: 10)
        #expect(clock.now() == base.adding(seconds: 10))
        clock.freeze(at: Instant(unixSeconds: 5))
        #expect(clock.now() == Instant(unixSeconds: 5))
        clock.advance(seconds: -2.5)
        #expect(clock.now() == Instant(unixMicros: 2_500_000))
        #expect(clock.mode == .frozen(Instant(unixMicros: 2_500_000)))
        clock.useSystemTime()
        #expect(clock.now() == base)
    }

    /// The amount comes from a client (the hub's endpoint): one that leaves years 1–9999 or is no
    /// number is refused and changes nothing (1e300 trapped converting to microseconds before).
    @Test func anAdvancePastTheDatesItCanWriteIsRefused() {
        let base = Instant(unixSeconds: 1_000_000)
        let clock = Clock(systemNow: { base })
        for seconds in [1e300, -1e300, .infinity, -.infinity, .nan, 1e13, -1e12, Double(Instant.latest.unixSeconds)] {
            #expect(!clock.advance(seconds: seconds), "advanced by \(seconds)")
            #expect(clock.now() == base)
        }
        clock.freeze(at: Instant(unixSeconds: Instant.latest.unixSeconds - 10))
        #expect(!clock.advance(seconds: 11))
        #expect(clock.advance(seconds: 10))
        #expect(clock.now().rfc3339() == "9999-12-31T23:59:59.000000Z")
        clock.freeze(at: Instant.earliest)
        #expect(!clock.advance(seconds: -0.000001))
        #expect(clock.advance(seconds: 0))
    }

    @Test func clampingSecondsStayWithinTheWritableDates() {
        #expect(Instant(clampingUnixSeconds: .max).rfc3339(fractionDigits: 0) == "9999-12-31T23:59:59Z")
        #expect(Instant(clampingUnixSeconds: .min).rfc3339(fractionDigits: 0) == "0001-01-01T00:00:00Z")
        #expect(Instant(clampingUnixSeconds: 1_700_000_000) == Instant(unixSeconds: 1_700_000_000))
        #expect(Instant.latest.rfc3339() == "9999-12-31T23:59:59.999999Z")
        #expect(Instant.earliest.rfc3339() == "0001-01-01T00:00:00.000000Z")
    }

    /// `now` reads the mode without the lock the changes take: read on other threads while the
    /// clock is moved, frozen and let go again and again, every reading is one the clock showed
    /// (system time with either offset, or the frozen instant), never a mix of two modes.
    @Test func readingsWhileTheModeChangesAreEachAModesTime() async {
        let base = Instant(unixSeconds: 1_000_000)
        let frozen = Instant(unixSeconds: 5)
        let clock = Clock(systemNow: { base })
        let allowed: Set<Int64> = [base.unixMicros, base.adding(seconds: 10).unixMicros, frozen.unixMicros]
        final class Flag: Sendable { let done = Atomic<Bool>(false) }
        let flag = Flag()
        let readers = (0..<1).map { _ in
            Task.detached { () -> Int in
                var odd = 0
                while !flag.done.load(ordering: .relaxed) {
                    if !allowed.contains(clock.now().unixMicros) { odd += 1 }
                }
                return odd
            }
        }
        for _ in 0..<20_000 {
            clock.advance(seconds: 10)
            clock.freeze(at: frozen)
            clock.useSystemTime()
            #expect(clock.now() == base)
        }
        flag.done.store(true, ordering: .relaxed)
        for r in readers { #expect(await r.value == 0) }
    }

    @Test func startsFrozenWhenAsked() {
        let clock = Clock(frozenAt: Instant(unixSeconds: 42))
        #expect(clock.now() == Instant(unixSeconds: 42))
    }
}

@Suite struct IDGeneratorTests {
    @Test func sameSeedSameStream() {
        let a = IDGenerator(seed: 7), b = IDGenerator(seed: 7), c = IDGenerator(seed: 8)
        let sa = (0..<5).map { _ in a.alphanumeric(20) }
        let sb = (0..<5).map { _ in b.alphanumeric(20) }
        let sc = (0..<5).map { _ in c.alphanumeric(20) }
        #expect(sa == sb)
        #expect(sa != sc)
        #expect(Set(sa).count == 5)
    }

    @Test func shapes() {
        let g = IDGenerator(seed: 1)
        let id = g.alphanumeric(20)
        #expect(id.count == 20 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        let uuid = g.uuid()
        #expect(uuid.count == 36)
        #expect(Array(uuid)[14] == "4")
        #expect("89ab".contains(Array(uuid)[19]))
        #expect(g.hex(byteCount: 8).count == 16)
    }

    @Test func requestIDs() {
        // Seeded: the seeded stream's bytes, as hex upper-cased (reproducible runs keep their ids).
        let a = IDGenerator(seed: 5), b = IDGenerator(seed: 5)
        #expect(a.requestID() == b.hex(byteCount: 8).uppercased())
        // Unseeded: 16 upper-case hex digits, never repeating, even from an all-zero entropy source.
        let g = IDGenerator(entropy: { n in [UInt8](repeating: 0, count: n) })
        let ids = (0..<10_000).map { _ in g.requestID() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.utf8.count == 16 && $0.utf8.allSatisfy { (48...57).contains($0) || (65...70).contains($0) } })
        // The id as its bits spells the same text, most significant digit first; one given as text stays it.
        #expect(IDGenerator(seed: 5).nextRequestID().text == IDGenerator(seed: 5).requestID())
        #expect(RequestID.bits(0x0123_4567_89AB_CDEF).text == "0123456789ABCDEF")
        #expect(RequestID.bits(0xF).text == "000000000000000F")
        #expect(RequestID.text("r1").text == "r1")
        let u = IDGenerator(entropy: { n in [UInt8](repeating: 7, count: n) }), v = IDGenerator(entropy: { n in [UInt8](repeating: 7, count: n) })
        #expect(u.nextRequestID().text == v.requestID())
    }

    /// Unseeded request ids are one SplitMix64 stream stepped once per id: drawn from threads at
    /// once they are all distinct, and together exactly the ids one thread draws from the same entropy.
    @Test func requestIDsDrawnFromManyThreadsAreTheStreamOnce() async {
        let g = IDGenerator(entropy: { n in [UInt8](repeating: 3, count: n) })
        let one = IDGenerator(entropy: { n in [UInt8](repeating: 3, count: n) })
        let batches = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<4 { group.addTask { (0..<5_000).map { _ in g.nextRequestID().text } } }
            var all: [[String]] = []
            for await b in group { all.append(b) }
            return all
        }
        let drawn = batches.flatMap { $0 }
        #expect(Set(drawn).count == 20_000)
        #expect(Set(drawn) == Set((0..<20_000).map { _ in one.nextRequestID().text }))
        // The stream's first id from this entropy, as the lock-guarded steps made it.
        var z = UInt64(0x0303_0303_0303_0303) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        #expect(IDGenerator(entropy: { n in [UInt8](repeating: 3, count: n) }).nextRequestID().text == RequestID.bits(z).text)
    }

    @Test func unseededBytesComeFromEntropyEachOnce() {
        // A source that counts what it hands out: every byte it gave comes out once, in order.
        final class Source: @unchecked Sendable {
            let lock = NSLock()
            var next = 0
            var calls: [Int] = []
            func draw(_ n: Int) -> [UInt8] {
                lock.lock()
                defer { lock.unlock() }
                calls.append(n)
                defer { next += n }
                return (0..<n).map { UInt8(truncatingIfNeeded: next + $0) }
            }
        }
        let source = Source()
        let g = IDGenerator(entropy: { source.draw($0) })
        var seen: [UInt8] = []
        for _ in 0..<50 { seen += g.bytes(24) }
        // 512-byte draws, each used while 24 bytes are left (21 ids), the rest of it never handed out.
        #expect(source.calls == [512, 512, 512])
        let expected = (0..<3).flatMap { k in (0..<(k < 2 ? 21 : 8) * 24).map { UInt8(truncatingIfNeeded: k * 512 + $0) } }
        #expect(seen == expected)
        // Larger requests go to the source directly.
        #expect(g.bytes(65).count == 65)
        #expect(source.calls.last == 65)
        #expect(g.bytes(0).isEmpty)
    }

    @Test func unseededUsesEntropy() {
        let g = IDGenerator(entropy: { n in [UInt8](repeating: 0, count: n) })
        #expect(g.alphanumeric(3) == "AAA")
        #expect(!g.isSeeded)
    }
}
