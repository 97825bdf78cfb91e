import HearthCore
import Testing
@testable import S3Emulator

/// The pure parts of archived objects in listings: the attribute-list headers and `<RestoreStatus>`.
@Suite struct RestoreStatusTests {
    static let header = "x-amz-optional-object-attributes"

    func names(_ value: String?, required: Bool = false) -> Result<Set<String>, S3Error> {
        S3Service.attributeNames(value, header: Self.header, allowed: S3Service.optionalObjectAttributeNames, required: required)
    }

    @Test func listsOfKnownNames() throws {
        #expect(try names(nil).get().isEmpty)
        #expect(try names("").get().isEmpty)
        #expect(try names("RestoreStatus").get() == ["RestoreStatus"])
        // How SDKs join a list, blanks, and a repeated name (which counts once).
        #expect(try names(" RestoreStatus , RestoreStatus,").get() == ["RestoreStatus"])
    }

    @Test(arguments: ["restorestatus", "RestoreStatus,ETag", "x-amz-meta-colour"])
    func anUnknownNameIsInvalidArgumentNamingTheHeader(_ value: String) throws {
        guard case .failure(let e) = names(value) else { Issue.record("accepted \(value)"); return }
        #expect(e.code == "InvalidArgument")
        #expect(e.message == "Invalid attribute name specified.")
        #expect(e.details.map { "\($0.0)=\($0.1)" } == ["ArgumentName=\(Self.header)", "ArgumentValue=\(value)"])
    }

    @Test func aRequiredHeaderMustNameSomething() {
        for value in [nil, "", " , "] {
            guard case .failure(let e) = names(value, required: true) else { Issue.record("accepted \(String(describing: value))"); continue }
            #expect(e.code == "InvalidArgument")
        }
    }

    func restoreStatus(_ expiry: Int64?, now: Int64) -> String {
        var extra = ObjectExtra()
        extra.restoreExpiry = expiry
        var x = XMLWriter()
        S3Service.writeRestoreStatus(&x, extra, now: Instant(unixSeconds: now))
        return String(decoding: x.bytes, as: UTF8.self).split(separator: "\n").dropFirst().joined()
    }

    @Test func restoreStatusOnlyWhileARestoredCopyLasts() {
        let midnight: Int64 = 1_356_048_000  // 2012-12-21T00:00:00Z
        #expect(restoreStatus(nil, now: midnight - 10).isEmpty)
        #expect(restoreStatus(midnight, now: midnight - 10)
            == "<RestoreStatus><IsRestoreInProgress>false</IsRestoreInProgress><RestoreExpiryDate>2012-12-21T00:00:00.000Z</RestoreExpiryDate></RestoreStatus>")
        // At the expiry the copy is gone (HEAD's x-amz-restore goes at the same instant).
        #expect(restoreStatus(midnight, now: midnight).isEmpty)
        var extra = ObjectExtra()
        extra.restoreExpiry = midnight
        #expect(S3Service.restoreHeader(extra, now: Instant(unixSeconds: midnight)) == nil)
    }

    @Test func aRestoreUnderWayHasNoCopyYet() {
        let midnight: Int64 = 1_356_048_000
        var extra = ObjectExtra()
        extra.restoreReadyAt = midnight - 3_600
        extra.restoreExpiry = midnight
        extra.restoreTier = "Bulk"
        // Stored and read back as the `extra` column keeps it.
        #expect(ObjectExtra(extra.serialized) == extra)
        let during = Instant(unixSeconds: midnight - 3_601)
        #expect(S3Service.restoreHeader(extra, now: during) == "ongoing-request=\"true\"")
        #expect(S3Service.restoredUntil(extra, now: during) == nil)
        var x = XMLWriter()
        S3Service.writeRestoreStatus(&x, extra, now: during)
        #expect(String(decoding: x.bytes, as: UTF8.self).contains("<RestoreStatus><IsRestoreInProgress>true</IsRestoreInProgress></RestoreStatus>"))
        // From the completion time on, the copy reads until its expiry.
        let done = Instant(unixSeconds: midnight - 3_600)
        #expect(S3Service.restoreHeader(extra, now: done) == "ongoing-request=\"false\", expiry-date=\"Fri, 21 Dec 2012 00:00:00 GMT\"")
    }

    @Test func restoreTimes() {
        #expect(RestoreTiming(flag: "instant") == .instant)
        #expect(RestoreTiming(flag: "0") == .instant)
        #expect(RestoreTiming(flag: "90") == .seconds(90))
        #expect(RestoreTiming(flag: "later") == nil)
        #expect(RestoreTiming(flag: "-5") == nil)
        let aws = RestoreTiming.aws
        #expect(aws.delay(storageClass: "GLACIER", tier: "Expedited") == 300)
        #expect(aws.delay(storageClass: "GLACIER", tier: "Standard") == 5 * 3_600)
        #expect(aws.delay(storageClass: "GLACIER", tier: "Bulk") == 12 * 3_600)
        #expect(aws.delay(storageClass: "DEEP_ARCHIVE", tier: "Expedited") == 12 * 3_600)
        #expect(aws.delay(storageClass: "DEEP_ARCHIVE", tier: "Bulk") == 48 * 3_600)
        #expect(RestoreTiming.instant.delay(storageClass: "GLACIER", tier: "Bulk") == 0)
        #expect(RestoreTiming.rank("Expedited") < RestoreTiming.rank("Standard"))
        #expect(RestoreTiming.rank("Standard") < RestoreTiming.rank("Bulk"))
    }
}
