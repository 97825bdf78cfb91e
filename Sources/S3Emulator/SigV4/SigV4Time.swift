import HearthCore

/// The date forms signatures carry, parsed and printed without Foundation (this is on the hot path).
enum SigV4Time {
    /// Parses `yyyyMMdd'T'HHmmss'Z'` strictly (X-Amz-Date).
    static func parseAmzDate(_ text: String) -> Instant? {
        var text = text
        return text.withUTF8 { c -> Instant? in
            guard c.count == 16, c[8] == 0x54, c[15] == 0x5A else { return nil }
            func number(_ from: Int, _ count: Int) -> Int? {
                var v = 0
                for i in from..<(from + count) {
                    let d = c[i]
                    guard d >= 0x30, d <= 0x39 else { return nil }
                    v = v * 10 + Int(d - 0x30)
                }
                return v
            }
            guard let year = number(0, 4), let month = number(4, 2), let day = number(6, 2),
                  let hour = number(9, 2), let minute = number(11, 2), let second = number(13, 2) else { return nil }
            return instant(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        }
    }

    /// Whether `text` is a valid `yyyyMMdd` date (the credential scope's date).
    static func isValidScopeDate(_ text: String) -> Bool {
        let c = Array(text.utf8)
        guard c.count == 8, c.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
        let v = c.map { Int($0 - 0x30) }
        let year = v[0] * 1000 + v[1] * 100 + v[2] * 10 + v[3]
        return instant(year: year, month: v[4] * 10 + v[5], day: v[6] * 10 + v[7], hour: 0, minute: 0, second: 0) != nil
    }

    /// `yyyyMMdd'T'HHmmss'Z'` for `instant`.
    static func amzDate(_ instant: Instant) -> String {
        let (y, mo, d, h, mi, s) = components(instant)
        var out = [UInt8]()
        out.reserveCapacity(16)
        func put(_ v: Int, _ width: Int) {
            var digits = [UInt8](repeating: 0x30, count: width)
            var x = v
            for i in stride(from: width - 1, through: 0, by: -1) {
                digits[i] = UInt8(0x30 + x % 10)
                x /= 10
            }
            out.append(contentsOf: digits)
        }
        put(y, 4); put(mo, 2); put(d, 2)
        out.append(0x54)
        put(h, 2); put(mi, 2); put(s, 2)
        out.append(0x5A)
        return String(decoding: out, as: UTF8.self)
    }

    /// ISO 8601 to the second (`2016-09-08T10:09:44Z`), S3's form for `ServerTime` and `Expires`.
    static func iso8601(_ instant: Instant) -> String {
        Instant(unixSeconds: instant.unixSeconds).rfc3339(fractionDigits: 0)
    }

    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Parses an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`, also with `+0000`/`UTC`, and the
    /// obsolete RFC 850 and asctime forms); nil when it is none of them.
    static func parseHTTPDate(_ text: String) -> Instant? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," }).map { String($0) }
        func clock(_ s: String) -> (Int, Int, Int)? {
            let t = s.split(separator: ":").compactMap { Int($0) }
            guard t.count == 3 else { return nil }
            return (t[0], t[1], t[2])
        }
        func month(_ s: String) -> Int? { monthNames.firstIndex(of: s.lowercased()).map { $0 + 1 } }
        // RFC 1123: Sun, 06 Nov 1994 08:49:37 GMT
        if parts.count == 6, let d = Int(parts[1]), let mo = month(parts[2]), let y = Int(parts[3]),
           let (h, mi, s) = clock(parts[4]), ["gmt", "utc", "+0000", "-0000", "z"].contains(parts[5].lowercased()) {
            return instant(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
        }
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
        if parts.count == 4 {
            let dmy = parts[1].split(separator: "-").map(String.init)
            if dmy.count == 3, let d = Int(dmy[0]), let mo = month(dmy[1]), var y = Int(dmy[2]),
               let (h, mi, s) = clock(parts[2]), parts[3].uppercased() == "GMT" {
                if y < 100 { y += y < 70 ? 2000 : 1900 }
                return instant(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
            }
        }
        // asctime: Sun Nov  6 08:49:37 1994
        if parts.count == 5, let mo = month(parts[1]), let d = Int(parts[2]), let (h, mi, s) = clock(parts[3]), let y = Int(parts[4]) {
            return instant(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
        }
        return nil
    }

    /// The instant of a civil UTC date-time, or nil when a field is out of range.
    static func instant(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Instant? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        let days = daysFromCivil(year, month, day)
        return Instant(unixSeconds: Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59)))
    }

    private static func daysIn(month: Int, year: Int) -> Int { Int(CivilDate.daysIn(month: Int64(month), year: Int64(year))) }

    private static func daysFromCivil(_ y: Int, _ m: Int, _ d: Int) -> Int { Int(CivilDate.days(fromCivil: Int64(y), Int64(m), Int64(d))) }

    private static func components(_ instant: Instant) -> (Int, Int, Int, Int, Int, Int) {
        let seconds = instant.unixSeconds
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secOfDay = Int(seconds - Int64(days) * 86_400)
        let (y64, m64, d64) = CivilDate.civil(fromDays: Int64(days))
        let (y, m, d) = (Int(y64), Int(m64), Int(d64))
        return (y, m, d, secOfDay / 3600, secOfDay / 60 % 60, secOfDay % 60)
    }
}
