import Foundation
import Testing
@testable import HearthClient

@Suite struct TimestampTests {
    @Test(arguments: [
        (Timestamp(seconds: 0), "1970-01-01T00:00:00Z"),
        (Timestamp(seconds: 1_735_787_045, nanos: 120_000_000), "2025-01-02T03:04:05.120Z"),
        (Timestamp(seconds: 1_735_787_045, nanos: 123_456_000), "2025-01-02T03:04:05.123456Z"),
        (Timestamp(seconds: 1_735_787_045, nanos: 123_456_789), "2025-01-02T03:04:05.123456789Z"),
        (Timestamp(seconds: -1, nanos: 500_000_000), "1969-12-31T23:59:59.500Z"),
        (Timestamp(seconds: 951_782_400), "2000-02-29T00:00:00Z"),
        (Timestamp(seconds: 253_402_300_799), "9999-12-31T23:59:59Z"),
    ])
    func formatsAndParses(_ t: Timestamp, _ text: String) {
        #expect(t.rfc3339 == text)
        #expect(Timestamp(rfc3339: text) == t)
    }

    @Test(arguments: ["", "2025-01-02", "2025-13-01T00:00:00Z", "2025-01-02T03:04:05", "2025-01-02T03:04:05.Z", "2025-01-02T03:04:05Zjunk",
                      "2025-01-02 03:04:05Z", "2025-01-02T25:00:00Z"])
    func refusesMalformedText(_ text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test func offsetsAndLowerCaseAreAccepted() {
        #expect(Timestamp(rfc3339: "2025-01-02T04:04:05+01:00") == Timestamp(rfc3339: "2025-01-02T03:04:05Z"))
        #expect(Timestamp(rfc3339: "2025-01-02t03:04:05z") == Timestamp(rfc3339: "2025-01-02T03:04:05Z"))
    }

    @Test func nanosAreNormalised() {
        #expect(Timestamp(seconds: 1, nanos: -1) == Timestamp(seconds: 0, nanos: 999_999_999))
        #expect(Timestamp(seconds: 1, nanos: 2_000_000_001) == Timestamp(seconds: 3, nanos: 1))
    }

    @Test func datesKeepMicroseconds() {
        let d = Date(timeIntervalSince1970: 1_700_000_000.654321)
        #expect(Timestamp(date: d).nanos == 654_321_000)
        #expect(abs(Timestamp(date: d).dateValue.timeIntervalSince1970 - d.timeIntervalSince1970) < 1e-6)
    }
}
