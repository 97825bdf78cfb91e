import Foundation
import HearthCore
import Testing
@testable import S3Emulator

/// Dates a client's numbers put past year 9999 — a restore's or a lifecycle rule's days, a default
/// retention, a policy's epoch seconds — are held at `Instant.latest`'s second instead of
/// overflowing (each trapped before: docs/reliability.md, fourteenth session). The running-server
/// side is `Tests/CompatTests/s3/test_s3_far_dates.py` and `test_s3_restore.py`.
@Suite struct FarDatesTests {
    static let now = Instant(unixSeconds: 1_796_000_000)  // 2026-12-01
    static let lastSecond = Instant.latest.unixSeconds

    @Test func restoreDaysAreA32BitNumber() {
        func days(_ text: String) -> Int?? {
            guard case .success(let r) = RestoreRequest.parse(Array("<RestoreRequest><Days>\(text)</Days></RestoreRequest>".utf8)) else { return nil }
            return .some(r.days)
        }
        #expect(days("2147483647") == .some(2_147_483_647))
        #expect(days("2147483648") == nil)
        #expect(days("9223372036854775807") == nil)
    }

    @Test func aRestoreForMillionsOfYearsExpiresAtTheLastSecondOfYear9999() {
        #expect(S3Service.restoreExpiry(completed: Self.now.unixSeconds, days: Int(Int32.max)) == Self.lastSecond)
        #expect(S3Service.restoreExpiry(completed: Self.now.unixSeconds, days: 200_000_000) == Self.lastSecond)
        // Ordinary days as before: the completion plus the days, up to the next midnight.
        #expect(S3Service.restoreExpiry(completed: 86_400 * 10 + 5, days: 2) == 86_400 * 13)
        // An expiry stored before the cap (any 64-bit number) reads as that last second.
        var extra = ObjectExtra()
        extra.restoreExpiry = 200_000_000 * 86_400
        #expect(S3Service.restoredUntil(extra, now: Self.now)?.unixSeconds == Self.lastSecond)
        #expect(S3Service.restoreHeader(extra, now: Self.now) == "ongoing-request=\"false\", expiry-date=\"Fri, 31 Dec 9999 23:59:59 GMT\"")
    }

    @Test func lifecycleDaysPastYear9999AreDueAtItsLastSecond() {
        #expect(LifecycleRunner.due(Self.now, days: Int64(Int32.max)).unixSeconds == Self.lastSecond)
        #expect(LifecycleRunner.due(Self.now, days: Int64(Int32.min)).unixMicros == Instant.earliest.unixMicros)
        #expect(LifecycleRunner.due(Instant(unixSeconds: 86_400 * 10 + 5), days: 1) == Instant(unixSeconds: 86_400 * 12))
    }

    @Test(arguments: [(Int?.some(1_000_000_000_000_000), Int?.none), (nil, 1_000_000_000_000), (200_000_000, nil), (Int.max, nil), (nil, Int.max)])
    func aDefaultRetentionPastYear9999HoldsUntilItsEnd(_ days: Int?, _ years: Int?) {
        var config = ObjectLock.Configuration()
        config.defaultMode = "GOVERNANCE"
        config.days = days
        config.years = years
        let retention = config.defaultRetention(now: Self.now)
        #expect(retention?.mode == "GOVERNANCE")
        #expect(retention?.until == Instant.latest)
        #expect(retention.map { ObjectLock.format($0.until) } == "9999-12-31T23:59:59.999Z")
    }

    @Test func anOrdinaryDefaultRetentionIsUnchanged() {
        var config = ObjectLock.Configuration()
        config.defaultMode = "COMPLIANCE"
        config.years = 1
        #expect(config.defaultRetention(now: Self.now)?.until == Instant(unixSeconds: Self.now.unixSeconds + 365 * 86_400))
        config.years = nil
        config.days = 3
        #expect(config.defaultRetention(now: Self.now)?.until == Instant(unixSeconds: Self.now.unixSeconds + 3 * 86_400))
    }

    /// `Fuzz/regressions/xml/` holds these documents (the `xml` target computes their dates): each
    /// must still parse, or it would no longer reach the code that overflowed.
    @Test func theFuzzRegressionDocumentsStillParse() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/regressions/xml")
        func body(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: dir.appendingPathComponent(name))) }
        guard case .success(let restore) = RestoreRequest.parse(try body("restore-days-past-year-9999")) else {
            Issue.record("restore document refused"); return
        }
        #expect(restore.days == 200_000_000)
        guard case .success(let lifecycle) = LifecycleConfiguration.parse(try body("lifecycle-days-past-year-9999"), newID: { "id" }) else {
            Issue.record("lifecycle document refused"); return
        }
        #expect(lifecycle.rules.first?.expiration?.days == Int64(Int32.max))
        guard case .success(let lock) = ObjectLock.Configuration.parse(try body("object-lock-years-overflow")) else {
            Issue.record("object lock document refused"); return
        }
        #expect(lock.years == 1_000_000_000_000)
    }

    @Test func policyEpochSecondsFarFromNowKeepTheirOrder() {
        #expect(PolicyCondition.date("1e300") == Instant.latest.unixSeconds * 1_000_000)
        #expect(PolicyCondition.date("-1e300") == Instant.earliest.unixMicros)
        #expect(PolicyCondition.date("inf") == Instant.latest.unixSeconds * 1_000_000)
        #expect(PolicyCondition.date("nan") == nil)
        #expect(PolicyCondition.date("1700000000") == 1_700_000_000_000_000)
    }
}
