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
        // The text is written into a buffer on the stack and appended once: appended byte by byte,
        // every byte checked the array's capacity and uniqueness (~1.5k instructions a timestamp,
        // five of them in a REST transaction's answers). At most 27 bytes:
        // `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            let p = buffer.baseAddress!
            digits(Int(y64), 4, p)
            p[4] = 0x2D
            digits(Int(m64), 2, p + 5)
            p[7] = 0x2D
            digits(Int(d64), 2, p + 8)
            p[10] = 0x54
            digits(secondOfDay / 3600, 2, p + 11)
            p[13] = 0x3A
            digits(secondOfDay / 60 % 60, 2, p + 14)
            p[16] = 0x3A
            digits(secondOfDay % 60, 2, p + 17)
            var n = 19
            if fraction != 0 {
                p[19] = 0x2E
                if fraction % 1000 == 0 {
                    digits(fraction / 1000, 3, p + 20)
                    n = 23
                } else {
                    digits(fraction, 6, p + 20)
                    n = 26
                }
            }
            p[n] = 0x5A
            out.append(contentsOf: UnsafeBufferPointer(start: p, count: n + 1))
        }
    }

    static func string(_ t: Instant) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(27)
        append(t, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The last `width` decimal digits of `|v|` (zeros in front) at `p`.
    private static func digits(_ v: Int, _ width: Int, _ p: UnsafeMutablePointer<UInt8>) {
        var n = abs(v)
        var i = width - 1
        while i >= 0 {
            p[i] = UInt8(truncatingIfNeeded: 0x30 + n % 10)
            n /= 10
            i -= 1
        }
    }
}
