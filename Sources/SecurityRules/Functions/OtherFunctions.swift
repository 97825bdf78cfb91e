// latlng, bytes and path methods; conversions; the `math` and `hashing` namespaces.

import Foundation
import HearthCore
import HearthCrypto

enum OtherFunctions {
    /// Mean Earth radius used by S2, which Google's geo code uses.
    static let earthRadiusMeters = 6_371_010.0

    static func latlng(_ m: Method, _ lat: Double, _ lng: Double, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch m {
        case .latitude: return .float(lat)
        case .longitude: return .float(lng)
        case .distance:
            guard case .latlng(let lat2, let lng2) = args[0] else { throw EvalError.signature("latlng.distance", args, expected: ["latlng"]) }
            // Haversine great-circle distance.
            let p1 = lat * .pi / 180, p2 = lat2 * .pi / 180
            let dp = (lat2 - lat) * .pi / 180, dl = (lng2 - lng) * .pi / 180
            let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
            return .float(2 * earthRadiusMeters * asin(min(1, sqrt(h))))
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func bytes(_ m: Method, _ b: [UInt8]) throws(EvalError) -> RulesValue {
        switch m {
        case .size: return .int(Int64(b.count))
        case .toBase64: return .string(Base64.url(b))
        case .toHexString: return .string(Hex.encode(b).uppercased())
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    static func path(_ m: Method, _ p: [String], _ bound: RulesPathNames?, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch m {
        case .bind:
            guard case .map(let bindings) = args[0] else { throw EvalError.signature("path.bind", args, expected: ["map"]) }
            return try bind(p, bound, bindings)
        // No `size()`: the rules reference gives a path only `bind`, and the emulator has no other
        // method (`Function not found error: Name: [size].`).
        default: throw EvalError.noFunction(m.rawValue)
        }
    }

    /// `p.bind(map)` as the official emulator binds: each `{name}` segment becomes the string its
    /// value converts to (`string()`'s conversion: `{'x': 1}` binds '1', a list is its error; 'a/b'
    /// stays one segment), remembered under its name for `p.x` (`RulesPathNames`); a variable the
    /// map leaves out is dropped with its segment (`path('/a/{x}/{y}').bind({'x': 'v'})` is
    /// `/a/v`). The result is a path, no longer a template: a second `bind` finds no variables, and
    /// one naming a variable bound before is `Variable x is already bound.`
    static func bind(_ p: [String], _ bound: RulesPathNames?, _ bindings: RulesMap) throws(EvalError) -> RulesValue {
        var names: [String] = []
        for seg in p {
            guard let name = RulesValue.templateName(seg).map(String.init) else { continue }
            if names.contains(where: { ExactString.equal($0, name) }) {
                throw EvalError("Variable \(name) already exists in the PathTemplate.")
            }
            names.append(name)
        }
        if let bound, let again = bindings.first(where: { bound.contains($0.key) }) {
            throw EvalError("Variable \(again.key) is already bound.")
        }
        // Every name bound must be a `{name}` of the path, as on the official emulator.
        let unknown = bindings.map(\.key).filter { key in !names.contains { ExactString.equal($0, key) } }
        if !unknown.isEmpty { throw EvalError("Variable(s) \(unknown.joined(separator: ", ")) do not exist in the path template.") }
        var out: [String] = []
        var made: [RulesPathNames.Entry] = []
        for seg in p {
            guard let name = RulesValue.templateName(seg).map(String.init) else {
                out.append(seg)
                continue
            }
            guard let v = bindings[name] else { continue }
            if RulesValue.isGlobTemplate(seg) {
                // `{x=**}` binds a path, spliced in segment by segment, as on the emulator, which
                // refuses anything else (`Type error. Received: [string] Expected: [path].`).
                guard case .path(let q, _) = v else { throw EvalError.typeError(received: v, expected: "path") }
                made.append(RulesPathNames.Entry(segment: out.count, name: name, span: q.count))
                out += q
                continue
            }
            guard case .string(let s) = try convert(.string, v) else { continue }
            if s.isEmpty { throw EvalError("Cannot bind empty value to path template variable \(name).") }
            made.append(RulesPathNames.Entry(segment: out.count, name: name))
            out.append(s)
        }
        return .path(out, names: made.isEmpty ? nil : RulesPathNames(made))
    }

    static func convert(_ b: Builtin, _ v: RulesValue) throws(EvalError) -> RulesValue {
        switch (b, v) {
        case (.int, .int): return v
        // Java's (long) cast, as the official emulator converts: NaN is 0, out-of-range values
        // saturate (`int(1.0 / 0.0)` is 9223372036854775807).
        case (.int, .float(let d)):
            if d.isNaN { return .int(0) }
            if d >= 9.223372036854775807e18 { return .int(.max) }
            if d <= -9.223372036854775808e18 { return .int(.min) }
            return .int(Int64(d.rounded(.towardZero)))
        case (.int, .string(let s)):
            // Java's Long.parseLong: a sign, then decimal digits of any script (`int('١٢')` is 12).
            guard let i = JavaText.parseLong(s) else { throw conversionError(s, to: "int") }
            return .int(i)
        case (.float, .float): return v
        case (.float, .int(let i)): return .float(Double(i))
        case (.float, .string(let s)):
            guard let d = javaParseDouble(s) else { throw conversionError(s, to: "float") }
            return .float(d)
        case (.string, .string): return v
        case (.string, .null): return .string("null")
        case (.string, .bool(let x)): return .string(x ? "true" : "false")
        case (.string, .int(let i)): return .string(String(i))
        case (.string, .float(let d)): return .string(javaString(d))
        // An unbound template variable is written as nothing (`string(path('/a/{x}'))` is '/a/').
        case (.string, .path(let p, _)):
            return .string("/" + p.map { RulesValue.templateName($0) == nil ? $0 : "" }.joined(separator: "/"))
        // A `{name}` segment is a template's variable (`path('/a/{x}').bind({'x': 'v'})`).
        case (.path, .string(let s)): return .path(try pathTemplateSegments(s))
        default:
            // The official emulator converts only these (`string(timestamp)`, `string(bytes)`,
            // `int(bool)` are errors there).
            let expected = switch b {
            case .int: ["int", "float", "string"]
            case .float: ["int", "float", "string"]
            case .path: ["string"]
            default: ["int", "float", "null", "string", "bool", "path"]
            }
            // null too: `int(null)` is `Received: int(null). Expected: int(int), …` there.
            throw EvalError.signature(b.rawValue, [v], expected: expected)
        }
    }

    /// `path(s)`'s segments, as the official emulator parses a path template: one leading `/` is
    /// optional; an empty string or segment (`'/a//b'`, `'/a/b/'`, `'/'`) is its error; a segment
    /// opening with `{` must close with `}` (`{x}b` is "The capture segment is not closed.") and
    /// name an ASCII identifier, blanks around it dropped (`{ x }` is `x`; `{x-y}`, `{1}`, `{a b}`
    /// are errors); a name twice is `Variable x already exists in the PathTemplate.` A `{x=**}`
    /// segment passes (the emulator fails it later, at `bind`).
    static func pathTemplateSegments(_ s: String) throws(EvalError) -> [String] {
        if s.isEmpty { throw EvalError("Empty Path Template is not allowed.") }
        let body = s.utf8.first == UInt8(ascii: "/") ? s.dropFirst() : Substring(s)
        let parts = body.split(separator: "/", omittingEmptySubsequences: false)
        if parts.contains(where: \.isEmpty) { throw EvalError("Invalid Path Template \(s). Empty segment is not allowed.") }
        var names: [Substring] = []
        return try parts.map { (part: Substring) throws(EvalError) -> String in
            guard part.utf8.first == UInt8(ascii: "{") else { return String(part) }
            guard part.utf8.last == UInt8(ascii: "}"), part.utf8.count >= 2 else {
                throw EvalError("Invalid Path Template \(s). The capture segment is not closed.")
            }
            let inner = part.dropFirst().dropLast()
            if inner.hasSuffix("=**") {
                let name = inner.dropLast(3).drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()
                return RulesValue.templateSegment(Substring("{" + String(name) + "=**}"))
            }
            let name = inner.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()
            let ident = Substring(String(name))
            guard let first = ident.utf8.first, Lexer.isIdentStart(first) || first == UInt8(ascii: "$"),
                  ident.utf8.allSatisfy({ Lexer.isIdentPart($0) || $0 == UInt8(ascii: "$") }) else {
                throw EvalError("Invalid Path Template \(s). [Identifier [\(inner)] should start with letter, dollar sign, or "
                    + "underscore and should not start with digit and must not contain spaces.")
            }
            if names.contains(ident) { throw EvalError("Variable \(ident) already exists in the PathTemplate.") }
            names.append(ident)
            return RulesValue.templateSegment(Substring("{" + ident + "}"))
        }
    }

    static func conversionError(_ s: String, to type: String) -> EvalError {
        EvalError("Type conversion error. Argument: [\(s)], From type: [string], To type: [\(type)].")
    }

    /// Java's Double.parseDouble, which the emulator's `float()` is: surrounding blanks (code
    /// points up to U+0020) ignored, an `f`/`F`/`d`/`D` suffix allowed, `NaN` and `Infinity`.
    static func javaParseDouble(_ s: String) -> Double? {
        let scalars = s.unicodeScalars
        guard let first = scalars.firstIndex(where: { $0.value > 0x20 }) else { return nil }
        let last = scalars.lastIndex(where: { $0.value > 0x20 })!
        var text = String(scalars[first...last])
        if let c = text.last, "fFdD".contains(c), text.count > 1, !text.hasSuffix("Infinity") { text.removeLast() }
        switch text {
        case "NaN", "+NaN", "-NaN": return .nan
        case "Infinity", "+Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: break
        }
        // Java's hexadecimal form: a sign, `0x`/`0X`, hex digits with at most one point and a
        // binary exponent that Java requires (`0x1p3` is 8.0, `0x1.8` no number; checked against
        // the emulator, rulesrtcases.py `float_hex_*`).
        if let hex = javaHexDouble(text) { return hex }
        // Swift also takes "nan", "inf", "infinity" and hexadecimal forms Java words otherwise.
        guard text.unicodeScalars.allSatisfy({ "0123456789.eE+-".unicodeScalars.contains($0) }) else { return nil }
        return Double(text)
    }

    private static func javaHexDouble(_ text: String) -> Double? {
        var body = Substring(text)
        if body.first == "+" || body.first == "-" { body = body.dropFirst() }
        guard body.hasPrefix("0x") || body.hasPrefix("0X") else { return nil }
        let digits = body.dropFirst(2)
        guard let p = digits.firstIndex(where: { $0 == "p" || $0 == "P" }) else { return nil }
        let mantissa = digits[..<p], exponent = digits[digits.index(after: p)...]
        guard mantissa.contains(where: \.isHexDigit), mantissa.filter({ $0 == "." }).count <= 1,
              mantissa.allSatisfy({ $0.isHexDigit || $0 == "." }),
              Int(exponent) != nil else { return nil }
        return Double(text)
    }

    /// Java's Double.toString, which the emulator's `string(float)` is: decimal notation from
    /// 10^-3 up to 10^7 (`1234567.0`, `0.001`), computerized scientific notation outside it
    /// (`1.0E7`, `1.0E-4`, `1.234567890125E11`), always a digit after the point; shortest digits.
    static func javaString(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        if d == 0 { return d.sign == .minus ? "-0.0" : "0.0" }
        // Swift's description holds the shortest digits that round-trip: take them and the
        // position of the point (value = 0.DIGITS × 10^point).
        let text = "\(abs(d))"
        var mantissa = Substring(text), exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            exponent = Int(text[text.index(after: e)...]) ?? 0
        }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let whole = parts[0], fraction = parts.count > 1 ? parts[1] : ""
        var digits = Array(whole + fraction)
        var point = whole.count + exponent
        while digits.first == "0" { digits.removeFirst(); point -= 1 }
        while digits.last == "0" { digits.removeLast() }
        let sign = d < 0 ? "-" : ""
        let scientific = point - 1
        if scientific >= -3 && scientific < 7 {
            if point <= 0 { return sign + "0." + String(repeating: "0", count: -point) + String(digits) }
            let intPart = digits.count >= point ? String(digits[..<point]) : String(digits) + String(repeating: "0", count: point - digits.count)
            let frac = digits.count > point ? String(digits[point...]) : "0"
            return sign + intPart + "." + frac
        }
        let rest = digits.count > 1 ? String(digits[1...]) : "0"
        return sign + String(digits[0]) + "." + rest + "E" + String(scientific)
    }

    static func math(_ b: Builtin, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        let v = args[0]
        switch (b, v) {
        // Java's Math.abs: the absolute value of Int64.min is Int64.min.
        case (.mathAbs, .int(let i)): return .int(i == .min ? i : abs(i))
        case (.mathAbs, .float(let d)): return .float(abs(d))
        // ceil and floor answer a float, of an int too, as the official emulator answers (the
        // reference says "returns rules.Integer"; its examples hold either way, and a rule asking
        // `is int` of one is denied rather than allowed: docs/rules.md). round answers an int,
        // Java's Math.round as the emulator's: half up, NaN 0, saturating.
        case (.mathCeil, _), (.mathFloor, _):
            guard let d = v.number else { break }
            return .float(d.rounded(b == .mathCeil ? .up : .down))
        case (.mathRound, .int): return v
        case (.mathRound, .float(let d)):
            if d.isNaN { return .int(0) }
            // floor(d + 0.5) without the addition's rounding (0.49999999999999994 rounds to 0):
            // d - floor(d) is exact.
            let down = d.rounded(.down)
            let rounded = d - down >= 0.5 ? down + 1 : down
            if rounded >= 9.223372036854775807e18 { return .int(.max) }
            if rounded <= -9.223372036854775808e18 { return .int(.min) }
            return .int(Int64(rounded))
        case (.mathSqrt, _):
            guard let d = v.number else { break }
            return .float(d.squareRoot())
        case (.mathPow, _):
            guard let x = v.number, let y = args[1].number else { break }
            return .float(Foundation.pow(x, y))
        case (.mathIsInfinite, .float(let d)): return .bool(d.isInfinite)
        case (.mathIsNaN, .float(let d)): return .bool(d.isNaN)
        case (.mathIsInfinite, .int), (.mathIsNaN, .int): return .bool(false)
        default: break
        }
        if case .null = v { throw EvalError.nullValue }
        let expected = switch b {
        case .mathAbs: ["int", "float"]
        case .mathPow: ["float, float"]
        default: ["float"]
        }
        throw EvalError.signature(b.rawValue, args, expected: expected)
    }

    static func hash(_ b: Builtin, _ v: RulesValue) throws(EvalError) -> RulesValue {
        let data: [UInt8]
        switch v {
        case .bytes(let x): data = x
        case .string(let s): data = Array(s.utf8)
        case .null: throw EvalError.nullValue
        default: throw EvalError.signature(b.rawValue, [v], expected: ["bytes", "string"])
        }
        switch b {
        case .hashingCrc32, .hashingCrc32c:
            var c = CRC32(b == .hashingCrc32 ? .ieee : .castagnoli)
            c.update(data)
            // Least significant byte first, as the official emulator gives them
            // (`hashing.crc32('abc').toHexString()` is 'C2412435' for the checksum 0x352441C2).
            return .bytes(c.bigEndianBytes.reversed())
        case .hashingMd5: return .bytes(Digest.md5(data))
        default: return .bytes(Digest.sha256(data))
        }
    }
}
