import Foundation

/// A point in time with microsecond precision, the unit every Hearth service keeps.
///
/// Firestore keeps microseconds in `updateTime`, S3 keeps seconds, tokens keep seconds; one
/// integer type makes "strictly increasing" and comparisons exact where `Date` would round.
public struct Instant: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var unixMicros: Int64

    /// An instant from microseconds since the Unix epoch.
    public init(unixMicros: Int64) { self.unixMicros = unixMicros }

    /// An instant from whole seconds since the Unix epoch.
    public init(unixSeconds: Int64) { self.unixMicros = unixSeconds * 1_000_000 }

    /// The first and the last instant RFC 3339 and HTTP dates can write (0001-01-01T00:00:00Z,
    /// 9999-12-31T23:59:59.999999Z).
    public static let earliest = Instant(unixMicros: -62_135_596_800_000_000)
    public static let latest = Instant(unixMicros: 253_402_300_799_999_999)

    /// An instant from whole seconds, held within `earliest...latest`: for times a client's numbers
    /// decide (a restore's days, a lifecycle rule's days, a SigV2 `Expires`), which may lie past any
    /// date that can be written and past what `init(unixSeconds:)` can hold without trapping.
    public init(clampingUnixSeconds seconds: Int64) {
        self.init(unixSeconds: min(max(seconds, Self.earliest.unixSeconds), Self.latest.unixSeconds))
    }

    /// An instant from a `Date`, rounded to the microsecond.
    public init(_ date: Date) { self.unixMicros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }

    /// Whole seconds since the epoch (floor).
    public var unixSeconds: Int64 { unixMicros >= 0 ? unixMicros / 1_000_000 : (unixMicros - 999_999) / 1_000_000 }
    /// Milliseconds since the epoch (floor).
    public var unixMillis: Int64 { unixMicros >= 0 ? unixMicros / 1_000 : (unixMicros - 999) / 1_000 }
    /// Sub-second part in nanoseconds.
    public var nanos: Int32 { Int32((unixMicros - unixSeconds * 1_000_000) * 1_000) }
    /// As a Foundation date.
    public var date: Date { Date(timeIntervalSince1970: Double(unixMicros) / 1_000_000) }

    /// This instant moved by `seconds`.
    public func adding(seconds: Double) -> Instant { Instant(unixMicros: unixMicros + Int64((seconds * 1_000_000).rounded())) }

    public static func < (a: Instant, b: Instant) -> Bool { a.unixMicros < b.unixMicros }

    public var description: String { rfc3339(fractionDigits: 6) }

    /// RFC 3339 in UTC with the given number of fraction digits (0, 3, 6 or 9).
    public func rfc3339(fractionDigits: Int = 6) -> String {
        let seconds = unixSeconds
        let micros = Int(unixMicros - seconds * 1_000_000)
        let days = Int(floorDiv(seconds, 86_400))
        let (y, mo, d) = Self.civil(fromDays: days)
        let secOfDay = Int(seconds - Int64(days) * 86_400)
        // Digits are written by hand: String(format:) dominated the cost of serialising documents.
        var out: [UInt8] = []
        out.reserveCapacity(32)
        Self.digits(y, 4, &out); out.append(UInt8(ascii: "-"))
        Self.digits(mo, 2, &out); out.append(UInt8(ascii: "-"))
        Self.digits(d, 2, &out); out.append(UInt8(ascii: "T"))
        Self.digits(secOfDay / 3600, 2, &out); out.append(UInt8(ascii: ":"))
        Self.digits(secOfDay / 60 % 60, 2, &out); out.append(UInt8(ascii: ":"))
        Self.digits(secOfDay % 60, 2, &out)
        switch fractionDigits {
        case 3: out.append(UInt8(ascii: ".")); Self.digits(micros / 1000, 3, &out)
        case 6: out.append(UInt8(ascii: ".")); Self.digits(micros, 6, &out)
        case 9: out.append(UInt8(ascii: ".")); Self.digits(micros, 6, &out); out.append(contentsOf: [48, 48, 48])
        default: break
        }
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `value` as exactly `width` decimal digits (zero-padded; a negative year gets a sign).
    private static func digits(_ value: Int, _ width: Int, _ out: inout [UInt8]) {
        var v = value
        if v < 0 {
            out.append(UInt8(ascii: "-"))
            v = -v
        }
        var buffer = [UInt8](repeating: 48, count: width)
        var i = width - 1
        while i >= 0 && v > 0 {
            buffer[i] = UInt8(48 + v % 10)
            v /= 10
            i -= 1
        }
        out.append(contentsOf: buffer)
    }

    /// The `YYYYMMDD'T'HHMMSS'Z'` form SigV4 uses.
    public var amzDate: String {
        rfc3339(fractionDigits: 0).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
    }

    /// The RFC 7231 HTTP date (`Mon, 30 Nov 2026 06:33:14 GMT`).
    public var httpDate: String {
        let seconds = unixSeconds
        let days = Int(floorDiv(seconds, 86_400))
        let (y, mo, d) = Self.civil(fromDays: days)
        let secOfDay = Int(seconds - Int64(days) * 86_400)
        var out: [UInt8] = []
        out.reserveCapacity(29)
        out.append(contentsOf: Self.weekdays[((days % 7) + 7) % 7].utf8)
        out.append(contentsOf: [44, 32])  // ", "
        Self.digits(d, 2, &out); out.append(32)
        out.append(contentsOf: Self.months[mo - 1].utf8); out.append(32)
        Self.digits(y, 4, &out); out.append(32)
        Self.digits(secOfDay / 3600, 2, &out); out.append(58)
        Self.digits(secOfDay / 60 % 60, 2, &out); out.append(58)
        Self.digits(secOfDay % 60, 2, &out)
        out.append(contentsOf: " GMT".utf8)
        return String(decoding: out, as: UTF8.self)
    }

    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Parses RFC 3339 (`2026-11-30T06:33:14.123456Z`, any fraction up to nanoseconds, `Z` or `±hh:mm`).
    public init?(rfc3339 text: String) {
        let c = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= c.count else { return nil }
            var v = 0
            for i in from..<from + count {
                guard c[i] >= 48, c[i] <= 57 else { return nil }
                v = v * 10 + Int(c[i] - 48)
            }
            return v
        }
        guard c.count >= 20, let y = num(0, 4), c[4] == 45, let mo = num(5, 2), c[7] == 45, let d = num(8, 2),
              c[10] == 84 || c[10] == 116, let h = num(11, 2), c[13] == 58, let mi = num(14, 2), c[16] == 58,
              let s = num(17, 2), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
        else { return nil }
        var i = 19
        var micros = 0
        if i < c.count, c[i] == 46 {
            i += 1
            var digits = 0
            while i < c.count, c[i] >= 48, c[i] <= 57 {
                if digits < 6 { micros = micros * 10 + Int(c[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0, digits <= 9 else { return nil }
            if digits < 6 { for _ in digits..<6 { micros *= 10 } }
        }
        var offset = 0
        guard i < c.count else { return nil }
        if c[i] == 90 || c[i] == 122 {
            i += 1
        } else if c[i] == 43 || c[i] == 45, let oh = num(i + 1, 2), c.count > i + 3, c[i + 3] == 58, let om = num(i + 4, 2) {
            offset = (oh * 60 + om) * 60 * (c[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == c.count else { return nil }
        let days = Self.days(fromCivil: y, mo, d)
        let seconds = Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + min(s, 59)) - Int64(offset)
        self.unixMicros = seconds * 1_000_000 + Int64(micros)
    }

    /// Parses the SigV4 `YYYYMMDD'T'HHMMSS'Z'` form.
    public init?(amzDate text: String) {
        let c = Array(text.utf8)
        guard c.count == 16, c[8] == 84, c[15] == 90 else { return nil }
        let s = String(decoding: c[0..<4], as: UTF8.self) + "-" + String(decoding: c[4..<6], as: UTF8.self) + "-"
            + String(decoding: c[6..<8], as: UTF8.self) + "T" + String(decoding: c[9..<11], as: UTF8.self) + ":"
            + String(decoding: c[11..<13], as: UTF8.self) + ":" + String(decoding: c[13..<15], as: UTF8.self) + "Z"
        self.init(rfc3339: s)
    }

    private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : (a - b + 1) / b }

    static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let (y, m, d) = CivilDate.civil(fromDays: Int64(days))
        return (Int(y), Int(m), Int(d))
    }

    static func days(fromCivil y: Int, _ m: Int, _ d: Int) -> Int {
        Int(CivilDate.days(fromCivil: Int64(y), Int64(m), Int64(d)))
    }
}
