// `timestamp.value(string)` as the official emulator reads it. Its evaluator hands the string to
// protobuf-java-util's `Timestamps.parse`, which splits off the fraction and the offset itself and
// reads the rest with a *lenient* `SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss")` on a proleptic
// Gregorian calendar. Lenient means fields past their range roll over (`2020-02-30` is March 1st,
// `T24:00:00` the next day, a leap second `23:59:60` the next minute), a field may have any number of
// digits, a sign or blanks before it (`T 1:00`, `T-1:00`), any decimal digits Java knows (`٢٠٢٠`),
// and text after the seconds is ignored. Recorded against the emulator: rulesrtcases.py `tsp_*`.
// Related: protobuf-java-util `Timestamps.parse`, java.text `SimpleDateFormat.subParse`.

import HearthCore

enum TimestampText {
    /// (seconds, nanos) since the epoch of `text`, or nil where `Timestamps.parse` throws. The range
    /// (years 1–9999) is the caller's to check, after the offset is applied, as Java checks it.
    static func parse(_ text: String) -> (seconds: Int64, nanos: Int32)? {
        // Java indexes UTF-16 code units, and so does every position below.
        let u = Array(text.utf16)
        guard let day = u.firstIndex(of: ascii("T")) else { return nil }
        // The zone: the first `Z` after the `T`, else the first `+`, else the first `-`.
        guard let zone = first(ascii("Z"), in: u, from: day) ?? first(ascii("+"), in: u, from: day)
                ?? first(ascii("-"), in: u, from: day) else { return nil }
        var secondsPart = u[0..<zone]
        var fraction = u[zone..<zone]
        if let dot = secondsPart.firstIndex(of: ascii(".")) {
            fraction = u[(dot + 1)..<zone]
            secondsPart = u[0..<dot]
        }
        guard var seconds = lenientSeconds(Array(secondsPart)) else { return nil }
        var nanos: Int32 = 0
        if !fraction.isEmpty {
            // Nine places, ASCII digits only, anything after the ninth unread (`parseNanos`).
            for i in 0..<9 {
                nanos *= 10
                guard i < fraction.count else { continue }
                let c = fraction[fraction.startIndex + i]
                guard c >= ascii("0"), c <= ascii("9") else { return nil }
                nanos += Int32(c - ascii("0"))
            }
        }
        if u[zone] == ascii("Z") {
            guard zone + 1 == u.count else { return nil }
        } else {
            // `hours:minutes`, each a Java long (`Long.parseLong`: a sign, then digits).
            let offsetText = u[(zone + 1)...]
            guard let colon = offsetText.firstIndex(of: ascii(":")),
                  let hours = JavaText.parseLong(offsetText[..<colon]), let minutes = JavaText.parseLong(offsetText[(colon + 1)...])
            else { return nil }
            // Java's long arithmetic wraps; so does this.
            let offset = (hours &* 60 &+ minutes) &* 60
            seconds = u[zone] == ascii("+") ? seconds &- offset : seconds &+ offset
        }
        return (seconds, nanos)
    }

    /// `yyyy-MM-dd'T'HH:mm:ss` read leniently: seconds since the epoch, or nil.
    private static func lenientSeconds(_ u: [UInt16]) -> Int64? {
        var i = 0
        var fields: [Int64] = []
        let separators: [UInt16] = [ascii("-"), ascii("-"), ascii("T"), ascii(":"), ascii(":")]
        for k in 0..<6 {
            if k > 0 {
                guard i < u.count, u[i] == separators[k - 1] else { return nil }
                i += 1
            }
            guard let v = number(u, &i) else { return nil }
            fields.append(v)
        }
        // Text after the seconds is not read (`DateFormat.parse(String)` need not use it all).
        var (year, month) = (fields[0], fields[1] - 1)
        year += month >= 0 ? month / 12 : (month - 11) / 12
        month -= (month >= 0 ? month / 12 : (month - 11) / 12) * 12
        let days = CivilDate.days(fromCivil: year, month + 1, 1) + fields[2] - 1
        return days * 86_400 + fields[3] * 3600 + fields[4] * 60 + fields[5]
    }

    /// One numeric field as `SimpleDateFormat` reads it without a count: blanks and tabs skipped,
    /// then `DecimalFormat`'s integer (an optional `-`, decimal digits of any script), taken as a Java
    /// `int` (`Number.intValue()`: a long truncated, a double — past a long — saturated).
    private static func number(_ u: [UInt16], _ i: inout Int) -> Int64? {
        while i < u.count, u[i] == ascii(" ") || u[i] == ascii("\t") { i += 1 }
        var negative = false
        if i < u.count, u[i] == ascii("-") { negative = true; i += 1 }
        var value: Int64 = 0
        var digits = 0
        var overflow = false
        while i < u.count, let d = JavaText.digit(u[i]) {
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int64(d))
            if o1 || o2 { overflow = true } else { value = a }
            digits += 1
            i += 1
        }
        guard digits > 0 else { return nil }
        if overflow { return negative ? Int64(Int32.min) : Int64(Int32.max) }
        return Int64(Int32(truncatingIfNeeded: negative ? -value : value))
    }

    private static func first(_ c: UInt16, in u: [UInt16], from: Int) -> Int? {
        u[from...].firstIndex(of: c)
    }

    private static func ascii(_ s: Unicode.Scalar) -> UInt16 { UInt16(s.value) }
}
