import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// RFC 3339 text of instants, against Foundation's calendar arithmetic (UTC): every field's digits,
/// the fraction as milliseconds or microseconds (or none), years before 1970 (from 1582, where
/// Foundation's calendar stops being Julian) and far ahead.
struct TimestampFormatTests {
    static func reference(_ micros: Int64) -> String {
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let fraction = Int(micros - seconds * 1_000_000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                        from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        func pad(_ v: Int, _ w: Int) -> String { String(repeating: "0", count: max(0, w - String(v).count)) + String(v) }
        var s = "\(pad(c.year!, 4))-\(pad(c.month!, 2))-\(pad(c.day!, 2))T\(pad(c.hour!, 2)):\(pad(c.minute!, 2)):\(pad(c.second!, 2))"
        if fraction != 0 { s += "." + (fraction % 1000 == 0 ? pad(fraction / 1000, 3) : pad(fraction, 6)) }
        return s + "Z"
    }

    @Test func matchesTheCalendar() {
        var micros: [Int64] = [0, 1, 999, 1_000, 999_999, 1_000_000, -1, -1_000_000, -86_400_000_000 - 1,
                               1_709_210_096_123_456, 1_709_210_096_123_000, 253_402_300_799_999_999, -12_219_292_800_000_000]
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2_000 {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            micros.append(Int64(x % 253_402_300_800_000_000))
        }
        for m in micros {
            #expect(TimestampFormat.string(Instant(unixMicros: m)) == Self.reference(m), "\(m)")
        }
    }
}
