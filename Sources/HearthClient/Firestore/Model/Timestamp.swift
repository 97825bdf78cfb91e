import Foundation

/// A Firestore timestamp: seconds and nanoseconds since the Unix epoch (UTC).
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let seconds: Int64
    /// 0 ..< 1_000_000_000.
    public let nanos: Int32

    public init(seconds: Int64, nanos: Int32 = 0) {
        // Normalise so that nanos is always in range, as google.protobuf.Timestamp requires.
        let extra = Int64(nanos) / 1_000_000_000
        var s = seconds + extra
        var n = Int64(nanos) % 1_000_000_000
        if n < 0 { n += 1_000_000_000; s -= 1 }
        self.seconds = s
        self.nanos = Int32(n)
    }

    /// The instant of `date`, to the microsecond (Firestore's precision).
    public init(date: Date) {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let s = Int64((micros / 1_000_000).rounded(.down))
        self.init(seconds: s, nanos: Int32((Int64(micros) - s * 1_000_000) * 1_000))
    }

    /// Now.
    public static func now() -> Timestamp { Timestamp(date: Date()) }

    /// As a Date (sub-microsecond precision may be lost).
    public var dateValue: Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9) }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { (a.seconds, a.nanos) < (b.seconds, b.nanos) }

    /// RFC 3339 in UTC with as many fraction digits as needed (0, 3, 6 or 9), as the REST API writes it.
    public var rfc3339: String {
        var days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secOfDay = seconds - days * 86_400
        // Civil from days (Howard Hinnant).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        var text = String(format: "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", y, m, d, secOfDay / 3600, (secOfDay % 3600) / 60, secOfDay % 60)
        if nanos != 0 {
            if nanos % 1_000_000 == 0 {
                text += String(format: ".%03d", nanos / 1_000_000)
            } else if nanos % 1_000 == 0 {
                text += String(format: ".%06d", nanos / 1_000)
            } else {
                text += String(format: ".%09d", nanos)
            }
        }
        return text + "Z"
    }

    /// Parses RFC 3339 (`2024-05-01T12:00:00.123456Z`, any fraction length up to 9, `Z` or an offset).
    public init?(rfc3339 text: String) {
        let b = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int64(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, let y = num(0, 4), b[4] == 45, let mo = num(5, 2), b[7] == 45, let d = num(8, 2),
              b[10] == 84 || b[10] == 116, let h = num(11, 2), b[13] == 58, let mi = num(14, 2), b[16] == 58, let s = num(17, 2),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        var i = 19
        var nanos: Int64 = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 9 { nanos = nanos * 10 + Int64(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in 0..<max(0, 9 - digits) { nanos *= 10 }
        }
        guard i < b.count else { return nil }
        var offset: Int64 = 0
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45, let oh = num(i + 1, 2), i + 3 < b.count, b[i + 3] == 58, let om = num(i + 4, 2) {
            offset = (oh * 3600 + om * 60) * (b[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        // Days from civil (Howard Hinnant).
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let doy = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        self.init(seconds: days * 86_400 + h * 3600 + mi * 60 + s - offset, nanos: Int32(nanos))
    }

    public var description: String { rfc3339 }

    /// Outside the Firestore coders (e.g. JSONEncoder) a timestamp is its RFC 3339 text.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let t = Timestamp(rfc3339: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an RFC 3339 timestamp: \(text)"))
        }
        self = t
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rfc3339)
    }
}
