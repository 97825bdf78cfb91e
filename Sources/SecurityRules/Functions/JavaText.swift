// Java's readings of text that the official emulator's built-ins inherit: `Long.parseLong` (`int()`
// and a timestamp's offset) and `Character.digit` (decimal digits of any script, BMP only).

enum JavaText {
    /// `Long.parseLong(s)`, or nil where it throws.
    static func parseLong(_ s: String) -> Int64? { parseLong(Array(s.utf16)[...]) }

    /// `Long.parseLong`: an optional sign and at least one decimal digit, nothing else, within a long.
    static func parseLong(_ u: ArraySlice<UInt16>) -> Int64? {
        var i = u.startIndex
        var negative = false
        if i < u.endIndex, u[i] == 0x2D || u[i] == 0x2B { negative = u[i] == 0x2D; i += 1 }
        guard i < u.endIndex else { return nil }
        var value: Int64 = 0
        while i < u.endIndex {
            guard let d = digit(u[i]) else { return nil }
            // Accumulated negatively, as Java does, so the minimum long parses too (0x2D is `-`, 0x2B `+`).
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.subtractingReportingOverflow(Int64(d))
            guard !o1, !o2 else { return nil }
            value = a
            i += 1
        }
        if negative { return value }
        return value == Int64.min ? nil : -value
    }

    /// A decimal digit's value as `Character.digit(char, 10)` gives it: any script's, BMP only (a
    /// surrogate is no digit).
    static func digit(_ c: UInt16) -> Int? {
        if c >= 0x30, c <= 0x39 { return Int(c - 0x30) }
        guard c >= 0x80, let scalar = Unicode.Scalar(c), scalar.properties.numericType == .decimal,
              let v = scalar.properties.numericValue else { return nil }
        return Int(v)
    }
}
