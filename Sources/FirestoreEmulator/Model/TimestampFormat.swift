import HearthCore

/// RFC 3339 timestamps without `String(format:)`.
enum TimestampFormat {
    static func append(_ t: Instant, to out: inout [UInt8]) {
        let micros = t.unixMicros
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let fraction = Int(micros - seconds * 1_000_000)
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        let (y64, m64, d64) = CivilDate.civil(fromDays: Int64(days))
        let (y, m, d) = (Int(y64), Int(m64), Int(d64))
        digits(y, 4, &out)
        out.append(0x2D)
        digits(m, 2, &out)
        out.append(0x2D)
        digits(d, 2, &out)
        out.append(0x54)
        digits(secondOfDay / 3600, 2, &out)
        out.append(0x3A)
        digits(secondOfDay / 60 % 60, 2, &out)
        out.append(0x3A)
        digits(secondOfDay % 60, 2, &out)
        if fraction != 0 {
            out.append(0x2E)
            if fraction % 1000 == 0 { digits(fraction / 1000, 3, &out) } else { digits(fraction, 6, &out) }
        }
        out.append(0x5A)
    }

    static func string(_ t: Instant) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(27)
        append(t, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func digits(_ v: Int, _ width: Int, _ out: inout [UInt8]) {
        if width == 2 {
            // Month, day, hour, minute, second: most of a timestamp's fields, written straight out
            // (the loop below appends zeros first and then overwrites them).
            let n = abs(v)
            out.append(UInt8(truncatingIfNeeded: 0x30 + n / 10 % 10))
            out.append(UInt8(truncatingIfNeeded: 0x30 + n % 10))
            return
        }
        let start = out.count
        for _ in 0..<width { out.append(0x30) }
        var n = abs(v)
        var i = start + width - 1
        while i >= start {
            out[i] = UInt8(0x30 + n % 10)
            n /= 10
            i -= 1
        }
    }
}
