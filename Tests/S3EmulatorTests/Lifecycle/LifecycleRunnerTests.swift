import HearthCore
import Testing
@testable import S3Emulator

@Suite struct LifecycleRunnerTests {
    @Test func dueAtTheNextMidnightAfterTheDays() throws {
        let created = try #require(Instant(rfc3339: "2026-01-01T10:30:00Z"))
        #expect(LifecycleRunner.due(created, days: 1).rfc3339(fractionDigits: 0) == "2026-01-03T00:00:00Z")
        let midnight = try #require(Instant(rfc3339: "2026-01-01T00:00:00Z"))
        #expect(LifecycleRunner.due(midnight, days: 1).rfc3339(fractionDigits: 0) == "2026-01-02T00:00:00Z")
    }

    @Test func objectLockConfiguration() throws {
        func parse(_ s: String) -> Result<ObjectLock.Configuration, S3Error> { ObjectLock.Configuration.parse(Array(s.utf8)) }
        let ok = try parse("<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
                           + "<Mode>GOVERNANCE</Mode><Days>2</Days></DefaultRetention></Rule></ObjectLockConfiguration>").get()
        let now = try #require(Instant(rfc3339: "2026-01-01T00:00:00Z"))
        #expect(ok.defaultRetention(now: now)?.until.rfc3339(fractionDigits: 0) == "2026-01-03T00:00:00Z")
        let both = parse("<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
                         + "<Mode>GOVERNANCE</Mode><Days>2</Days><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>")
        #expect(both.failureCode == "MalformedXML")
        let zero = parse("<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
                         + "<Mode>GOVERNANCE</Mode><Days>0</Days></DefaultRetention></Rule></ObjectLockConfiguration>")
        #expect(zero.failureCode == "InvalidRetentionPeriod")
        #expect(parse("<ObjectLockConfiguration><ObjectLockEnabled>On</ObjectLockEnabled></ObjectLockConfiguration>").failureCode == "MalformedXML")
    }

    @Test func lockedVersionsCannotBeDeleted() throws {
        let now = try #require(Instant(rfc3339: "2026-01-01T00:00:00Z"))
        var extra = ObjectExtra()
        extra.lockMode = "GOVERNANCE"
        extra.lockRetainUntil = "2026-01-02T00:00:00.000Z"
        #expect(throws: S3Error.self) { try ObjectLock.checkDeletable(extra, now: now, bypassGovernance: false) }
        try ObjectLock.checkDeletable(extra, now: now, bypassGovernance: true)
        extra.lockMode = "COMPLIANCE"
        #expect(throws: S3Error.self) { try ObjectLock.checkDeletable(extra, now: now, bypassGovernance: true) }
        try ObjectLock.checkDeletable(extra, now: Instant(unixSeconds: now.unixSeconds + 2 * 86_400), bypassGovernance: false)
        var held = ObjectExtra()
        held.legalHold = true
        #expect(throws: S3Error.self) { try ObjectLock.checkDeletable(held, now: now, bypassGovernance: true) }
        #expect(ObjectExtra(held.serialized) == held)
    }
}

private extension Result where Failure == S3Error {
    var failureCode: String? {
        if case .failure(let e) = self { return e.code }
        return nil
    }
}
