import Testing
@testable import SecurityRules

/// `timestamp.value(string)` as the official emulator reads it (protobuf-java-util's
/// `Timestamps.parse` over a lenient `SimpleDateFormat`): each answer recorded from the emulator in
/// Tests/CompatTests/firestore/differential/rulesrtcases.py (`tsp_*`, faith39).
struct TimestampTextTests {
    /// 2020-01-01T00:00:00Z.
    static let newYear: Int64 = 1_577_836_800

    static let read: [(String, Int64, Int32)] = [
        ("2020-01-01T00:00:00Z", newYear, 0),
        ("2020-01-01T00:00:00.5Z", newYear, 500_000_000),
        // Nine places read, the rest never looked at.
        ("2020-01-01T00:00:00.1234567891Z", newYear, 123_456_789),
        ("2020-01-01T00:00:00.123456789xyzZ", newYear, 123_456_789),
        ("2020-01-01T00:00:00.Z", newYear, 0),
        // Lenient fields roll over.
        ("2020-02-30T00:00:00Z", newYear + 60 * 86_400, 0),
        ("2020-01-01T24:00:00Z", newYear + 86_400, 0),
        ("2020-01-01T00:60:00Z", newYear + 3600, 0),
        ("2020-01-01T00:00:3600Z", newYear + 3600, 0),
        ("2016-12-31T23:59:60Z", 1_483_228_800, 0),
        ("2020-13-01T00:00:00Z", newYear + 366 * 86_400, 0),
        ("2020-01-00T00:00:00Z", newYear - 86_400, 0),
        ("2020-00-01T00:00:00Z", newYear - 31 * 86_400, 0),
        // Any width, blanks and a minus before a field, other scripts' digits.
        ("2020-1-1T0:0:0Z", newYear, 0),
        ("2020-001-01T00:00:00Z", newYear, 0),
        (" 2020-01-01T00:00:00Z", newYear, 0),
        ("2020-01-01T 1:00:00Z", newYear + 3600, 0),
        ("2020-01-01T\t1:00:00Z", newYear + 3600, 0),
        ("2020-01-02T-1:00:00Z", newYear + 23 * 3600, 0),
        ("\u{0662}\u{0660}\u{0662}\u{0660}-01-01T00:00:00Z", newYear, 0),
        // Text after the seconds is not read.
        ("2020-01-01T00:00:00abcZ", newYear, 0),
        ("2020-01-01T00:00:00abc.5Z", newYear, 500_000_000),
        // Offsets: hours and minutes, each a Java long.
        ("2020-01-01T01:00:00+01:00", newYear, 0),
        ("2020-01-01T00:00:00-01:00", newYear + 3600, 0),
        ("2020-01-01T00:00:00+-01:00", newYear + 3600, 0),
        ("2020-01-01T00:00:00+01:60", newYear - 7200, 0),
        ("2020-01-01T00:00:00+99:00", newYear - 99 * 3600, 0),
        // A zone after text the date format skips.
        ("2020-01-01T00:00:00z+00:00", newYear, 0),
    ]

    @Test(arguments: read)
    func reads(_ text: String, _ seconds: Int64, _ nanos: Int32) throws {
        let t = try #require(TimestampText.parse(text), "\(text)")
        #expect(t.seconds == seconds, "\(text)")
        #expect(t.nanos == nanos, "\(text)")
    }

    static let refused = [
        "2020-01-01", "2020-01-01t00:00:00Z", "2020-01-01T00:00:00z", "2020-01-01 00:00:00Z",
        "2020-01-01T00:00:00", "2020-01-01T00:00:00Zx", "2020-01-01T00:00:00.5xZ",
        "2020-01-01T00:00:00.+5Z", "2020-01-01T00:00:00.5.5Z", "+2020-01-01T00:00:00Z",
        "2020-01-01T00:00Z", "2020-01-01T", "2020-01-01T00:00:00+0100", "2020-01-01T00:00:00+01:00:00",
        "2020-01-01T00:00:00+ 1:00", "2020-01-01T00:00:00+01:00.5", "2020-01-01.5T00:00:00Z", "",
    ]

    @Test(arguments: refused)
    func refuses(_ text: String) {
        #expect(TimestampText.parse(text) == nil, "\(text)")
    }

    /// Out of range after the offset, not before: 10000-01-01T00:30+01:00 is 9999-12-31T23:30Z.
    @Test func rangeIsTheCallers() {
        ExpressionTests.expectValue("timestamp.value('10000-01-01T00:30:00+01:00') == timestamp.value('9999-12-31T23:30:00Z')", .bool(true))
        ExpressionTests.expectError("timestamp.value('0001-01-01T00:00:00+01:00')",
                                    "Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. Nanos must be in range [0, +999,999,999].")
        ExpressionTests.expectValue("timestamp.value('0001-01-01T00:00:00.5Z').nanos() == 500000000", .bool(true))
    }
}
