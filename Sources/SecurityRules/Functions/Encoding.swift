// Base64 and time formatting shared by values, methods and the test runner.

import Foundation
import HearthCore

enum Base64 {
    static func standard(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// base64url with padding: `Bytes.toBase64()` is specified as base64url.
    static func url(_ bytes: [UInt8]) -> String {
        standard(bytes).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    static func decodeStandard(_ s: String) -> [UInt8]? {
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.count % 4 != 0 { t += "=" }
        return Data(base64Encoded: t).map { [UInt8]($0) }
    }
}

/// Calendar arithmetic on (seconds, nanos) pairs, proleptic Gregorian, UTC.
enum Timestamps {
    /// Firestore's timestamp range: 0001-01-01T00:00:00Z ... 9999-12-31T23:59:59.999999999Z.
    static let minSeconds: Int64 = -62_135_596_800
    static let maxSeconds: Int64 = 253_402_300_799

    /// a / b rounded down (b > 0), for every a: `(a - b + 1) / b` overflowed near Int64.min.
    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return a % b < 0 ? q - 1 : q
    }

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) { CivilDate.civil(fromDays: days) }
    static func days(fromCivil y: Int64, _ m: Int64, _ d: Int64) -> Int64 { CivilDate.days(fromCivil: y, m, d) }
    static func isLeap(_ y: Int64) -> Bool { CivilDate.isLeapYear(y) }
    static func daysInMonth(_ y: Int64, _ m: Int64) -> Int64 { CivilDate.daysIn(month: m, year: y) }

    /// RFC 3339 in UTC; the fraction has 0, 3, 6 or 9 digits as needed.
    static func format(seconds: Int64, nanos: Int32) -> String {
        let days = floorDiv(seconds, 86_400)
        let sod = seconds - days * 86_400
        let (y, mo, d) = civil(fromDays: days)
        func pad(_ v: Int64, _ w: Int) -> String {
            let s = String(v)
            return s.count >= w ? s : String(repeating: "0", count: w - s.count) + s
        }
        var text = "\(pad(y, 4))-\(pad(mo, 2))-\(pad(d, 2))T\(pad(sod / 3600, 2)):\(pad(sod / 60 % 60, 2)):\(pad(sod % 60, 2))"
        if nanos != 0 {
            var frac = pad(Int64(nanos), 9)
            if frac.hasSuffix("000000") { frac = String(frac.prefix(3)) } else if frac.hasSuffix("000") { frac = String(frac.prefix(6)) }
            text += "." + frac
        }
        return text + "Z"
    }

    /// Parses RFC 3339 with up to nine fraction digits and `Z` or a numeric offset.
    static func parse(_ text: String) -> (seconds: Int64, nanos: Int32)? {
        let c = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= c.count else { return nil }
            var v: Int64 = 0
            for i in from..<from + count {
                guard c[i] >= 48, c[i] <= 57 else { return nil }
                v = v * 10 + Int64(c[i] - 48)
            }
            return v
        }
        guard c.count >= 20, let y = num(0, 4), c[4] == 45, let mo = num(5, 2), c[7] == 45, let d = num(8, 2),
              c[10] == 84 || c[10] == 116, let h = num(11, 2), c[13] == 58, let mi = num(14, 2), c[16] == 58,
              let s = num(17, 2), (1...12).contains(mo), d >= 1, d <= daysInMonth(y, mo), h < 24, mi < 60, s < 60
        else { return nil }
        var i = 19
        var nanos: Int64 = 0
        if i < c.count, c[i] == 46 {
            i += 1
            var digits = 0
            while i < c.count, c[i] >= 48, c[i] <= 57 {
                guard digits < 9 else { return nil }
                nanos = nanos * 10 + Int64(c[i] - 48)
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanos *= 10 }
        }
        var offset: Int64 = 0
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
        let seconds = days(fromCivil: y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset
        return (seconds, Int32(nanos))
    }

    /// Duration as Google's JSON form: seconds with up to nine fraction digits and an `s` suffix.
    static func formatDuration(seconds: Int64, nanos: Int32) -> String {
        if nanos == 0 { return "\(seconds)s" }
        let negative = seconds < 0 || nanos < 0
        let s = abs(seconds), n = abs(Int64(nanos))
        var frac = String(n)
        frac = String(repeating: "0", count: 9 - frac.count) + frac
        while frac.hasSuffix("0") { frac.removeLast() }
        return (negative ? "-" : "") + "\(s).\(frac)s"
    }
}
