// Operations every rules value supports: type names, equality, ordering and rendering.

import HearthCore

extension RulesValue {
    /// The type name error messages and `is` use.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .string: "string"
        case .bytes: "bytes"
        case .timestamp: "timestamp"
        case .duration: "duration"
        case .latlng: "latlng"
        case .path: "path"
        case .list: "list"
        case .map: "map"
        case .set: "set"
        case .mapDiff: "map_diff"
        case .vector: "vector"
        case .constraint(let c): c.typeName
        }
    }

    /// Rules equality: values of different types are unequal, except int and float, which compare
    /// numerically (the int as a double, as the official emulator compares them:
    /// `9007199254740993 == 9007199254740992.0`); NaN equals nothing; sets compare as sets. A
    /// constraint equals nothing here: `Operators` proves what it can of one before trusting a false.
    ///
    /// Inside a list or a map (`[1] == [1.0]`, `{'a': 1} == {'a': 1.0}`, `1.0 in [1]`) an int and a
    /// float are unequal, as the emulator answers; a set's elements compare numerically again
    /// (`[1].toSet() == [1.0].toSet()`, `1.0 in [1].toSet()`). `strict` asks for the former.
    static func rulesEqual(_ a: RulesValue, _ b: RulesValue, strict: Bool = false) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.float(let x), .float(let y)): return x == y
        case (.int(let i), .float(let d)), (.float(let d), .int(let i)): return !strict && Double(i) == d
        // Strings (and path segments) by their bytes, as Google's evaluator: "é" precomposed and
        // decomposed are unequal there, where Swift's `==` calls them canonically equivalent.
        case (.string(let x), .string(let y)): return ExactString.equal(x, y)
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.timestamp(let s1, let n1), .timestamp(let s2, let n2)): return s1 == s2 && n1 == n2
        case (.duration(let s1, let n1), .duration(let s2, let n2)): return s1 == s2 && n1 == n2
        case (.latlng(let a1, let o1), .latlng(let a2, let o2)): return a1 == a2 && o1 == o2
        // A path with an unbound `{name}` segment (`path('/a/{x}')`) equals nothing, itself included,
        // as on the official emulator (`!=` is true).
        case (.path(let x, _), .path(let y, _)): return ExactString.equal(x, y) && unboundVariable(x) == nil
        case (.list, .list), (.map, .map): return itemsEqual(a, b, by: itemEqual)
        case (.set(let x), .set(let y)):
            guard x.count == y.count else { return false }
            return x.allSatisfy { e in y.contains { setEqual($0, e) } }
        case (.mapDiff(let l1, let r1), .mapDiff(let l2, let r2)):
            return rulesEqual(.map(l1), .map(l2)) && rulesEqual(.map(r1), .map(r2))
        case (.vector(let x), .vector(let y)): return x == y
        default: return false
        }
    }

    /// Two items of lists or maps compared by `==`: strictly (an int is no float), and 0.0 is not
    /// -0.0 there (`[0.0] == [-0.0]` and `{'a': 0.0} == {'a': -0.0}` are false on the official
    /// emulator, where `-0.0 in [0.0]` and `[0.0].hasAny([-0.0])` are true).
    private static func itemEqual(_ a: RulesValue, _ b: RulesValue) -> Bool {
        if case .float(let x) = a, case .float(let y) = b { return x == y && x.sign == y.sign }
        return rulesEqual(a, b, strict: true)
    }

    /// Ordering for `<`, `<=`, `>`, `>=`; nil when the pair is not ordered (NaN) and an error for
    /// types that have no ordering.
    ///
    /// The rules order (`queryOrder` false) is the official emulator's: an int against a float is
    /// the int converted to a double (`9007199254740993 > 9007199254740992.0` is false, as `==` is
    /// true), and strings order by UTF-16 code units (`'\u{FFFF}' < '😀'` is false there: Java's
    /// `String.compareTo`). A list request's proofs compare a filter's value with a rule's in the
    /// order the query runs in (`queryOrder` true): Firestore's, ints and doubles exactly and
    /// strings by their UTF-8 bytes.
    static func compare(_ a: RulesValue, _ b: RulesValue, op: String, queryOrder: Bool = false) throws(EvalError) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.float(let x), .float(let y)):
            if x.isNaN || y.isNaN { return nil }
            return x < y ? -1 : (x == y ? 0 : 1)
        case (.int(let x), .float(let y)):
            if y.isNaN { return nil }
            if !queryOrder { let d = Double(x); return d < y ? -1 : (d == y ? 0 : 1) }
            return compareIntDouble(x, y)
        case (.float(let x), .int(let y)):
            if x.isNaN { return nil }
            if !queryOrder { let d = Double(y); return x < d ? -1 : (x == d ? 0 : 1) }
            return -compareIntDouble(y, x)
        case (.string(let x), .string(let y)):
            let order = ExactString.compare(x, y)
            return queryOrder ? order : utf16Order(x, y, utf8Order: order)
        case (.bytes(let x), .bytes(let y)):
            if x == y { return 0 }
            return x.lexicographicallyPrecedes(y) ? -1 : 1
        case (.timestamp(let s1, let n1), .timestamp(let s2, let n2)),
             (.duration(let s1, let n1), .duration(let s2, let n2)):
            if s1 != s2 { return s1 < s2 ? -1 : 1 }
            return n1 == n2 ? 0 : (n1 < n2 ? -1 : 1)
        default:
            throw EvalError.unsupported(a, op, b)
        }
    }

    /// A path template's variable: `path('/a/{x}')` makes the segment `{x}` one, kept as
    /// `templateMark` + `{x}` so that it is told apart from a segment that only reads `{x}` (a
    /// document id, an interpolated string: `$('{x}')` is a plain segment on the emulator too).
    static let templateMark: Character = "\u{0}"

    static func templateSegment(_ seg: Substring) -> String {
        let u = seg.utf8
        guard u.count > 2, u.first == UInt8(ascii: "{"), u.last == UInt8(ascii: "}") else { return String(seg) }
        return String(templateMark) + seg
    }

    /// Segments as a trace or report shows them: a template's variable as it was written, `{x}`.
    static func shown(_ segments: [String]) -> [String] {
        segments.map { $0.utf8.first == 0 ? String($0.dropFirst()) : $0 }
    }

    /// The variable's name of a template segment (a `{name=**}`'s without `=**`), or nil.
    static func templateName(_ seg: String) -> Substring? {
        let u = seg.utf8
        guard u.count > 3, u.first == 0, u.last == UInt8(ascii: "}") else { return nil }
        let rest = seg.dropFirst()
        guard rest.utf8.first == UInt8(ascii: "{") else { return nil }
        let inner = rest.dropFirst().dropLast()
        return inner.hasSuffix("=**") ? inner.dropLast(3) : inner
    }

    /// Whether a template segment is a `{name=**}` variable, which binds a path (segments spliced
    /// in) where `{name}` binds a string.
    static func isGlobTemplate(_ seg: String) -> Bool {
        seg.utf8.first == 0 && seg.hasSuffix("=**}")
    }

    /// The name of the first variable of a path template that no `bind` has bound
    /// (`path('/a/{x}')`), if any. Reading such a path (an index, a slice, `get()`) is the
    /// emulator's `Variable x is not bound in path template.`
    static func unboundVariable(_ segments: [String]) -> Substring? {
        for seg in segments where seg.utf8.first == 0 {
            if let name = templateName(seg) { return name }
        }
        return nil
    }

    static func requireBound(_ segments: [String]) throws(EvalError) {
        if let name = unboundVariable(segments) { throw EvalError("Variable \(name) is not bound in path template.") }
    }

    /// UTF-16 code unit order from UTF-8 byte order: the two differ only where one string has a
    /// supplementary character (a 4-byte sequence, lead byte 0xF0–0xF4; a surrogate pair in UTF-16)
    /// where the other has U+E000–U+FFFF (lead byte 0xEE or 0xEF): UTF-8 puts the supplementary
    /// character after, UTF-16's surrogates (0xD800–0xDFFF) before. Strings without a 4-byte
    /// sequence are answered from the byte order alone.
    static func utf16Order(_ x: String, _ y: String, utf8Order: Int) -> Int {
        if utf8Order == 0 { return 0 }
        func supplementary(_ s: String) -> Bool { s.utf8.contains { $0 >= 0xF0 } }
        guard supplementary(x) || supplementary(y) else { return utf8Order }
        if x.utf16.elementsEqual(y.utf16) { return 0 }
        return x.utf16.lexicographicallyPrecedes(y.utf16) ? -1 : 1
    }

    /// Equality inside a set (`toSet()`, `in` a set, `hasAll` of a set, `union`, `difference`) and of a
    /// map diff's values, as the official emulator answers: numbers compare numerically at every
    /// depth (`[[1], [1.0]].toSet().size() == 1`; `{'a': [1]}.diff({'a': [1.0]})` changes nothing) and
    /// NaN is equal to NaN (`[0.0 / 0.0, 0.0 / 0.0].toSet().size() == 1`), where `==` of lists and
    /// maps is strict and NaN equals nothing.
    static func setEqual(_ a: RulesValue, _ b: RulesValue) -> Bool {
        switch (a, b) {
        case (.float(let x), .float(let y)): return x == y || x.isNaN && y.isNaN
        case (.list, .list), (.map, .map): return itemsEqual(a, b, by: setEqual)
        default: return rulesEqual(a, b)
        }
    }

    /// Two lists item by item, or two maps key by key, their items compared by `equal`.
    private static func itemsEqual(_ a: RulesValue, _ b: RulesValue, by equal: (RulesValue, RulesValue) -> Bool) -> Bool {
        switch (a, b) {
        case (.list(let x), .list(let y)):
            guard x.count == y.count else { return false }
            for i in x.indices where !equal(x[i], y[i]) { return false }
            return true
        case (.map(let x), .map(let y)):
            guard x.count == y.count else { return false }
            for (k, v) in x {
                guard let w = y[k], equal(v, w) else { return false }
            }
            return true
        default: return false
        }
    }

    private static func compareIntDouble(_ i: Int64, _ d: Double) -> Int {
        if d >= 9.223372036854775808e18 { return -1 }
        if d < -9.223372036854775808e18 { return 1 }
        let t = d.rounded(.down)
        let ti = Int64(t)
        if i != ti { return i < ti ? -1 : 1 }
        return t == d ? 0 : -1
    }

    /// The value written as rules source (used in traces and messages).
    var rendered: String {
        var out = ""
        render(into: &out, budget: 300)
        return out
    }

    private func render(into out: inout String, budget: Int) {
        if out.utf8.count > budget { out += "…"; return }
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .float(let d): out += RulesValue.formatDouble(d)
        case .string(let s): out += RulesValue.quote(s)
        case .bytes(let b):
            out += "b'"
            for byte in b.prefix(64) {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
            out += b.count > 64 ? "…'" : "'"
        case .timestamp(let s, let n): out += "timestamp(\"\(Timestamps.format(seconds: s, nanos: n))\")"
        case .duration(let s, let n): out += "duration(\"\(Timestamps.formatDuration(seconds: s, nanos: n))\")"
        case .latlng(let lat, let lng): out += "latlng(\(RulesValue.formatDouble(lat)), \(RulesValue.formatDouble(lng)))"
        case .path(let segs, _): out += segs.isEmpty ? "/" : "/" + RulesValue.shown(segs).joined(separator: "/")
        case .list(let items):
            out += "["
            for (i, v) in items.enumerated() {
                if i > 0 { out += ", " }
                v.render(into: &out, budget: budget)
            }
            out += "]"
        case .set(let items):
            out += "set(["
            for (i, v) in items.enumerated() {
                if i > 0 { out += ", " }
                v.render(into: &out, budget: budget)
            }
            out += "])"
        case .vector(let elements):
            out += "vector(["
            for (i, d) in elements.enumerated() {
                if i > 0 { out += ", " }
                if out.utf8.count > budget { out += "…"; break }
                out += RulesValue.formatDouble(d)
            }
            out += "])"
        case .map(let m):
            out += "{"
            for (i, k) in m.keys.enumerated() {  // in key order already
                if i > 0 { out += ", " }
                out += RulesValue.quote(k) + ": "
                m[k]!.render(into: &out, budget: budget)
            }
            out += "}"
        case .mapDiff(let l, let r):
            out += "map_diff("
            RulesValue.map(l).render(into: &out, budget: budget)
            out += ", "
            RulesValue.map(r).render(into: &out, budget: budget)
            out += ")"
        case .constraint(let c):
            out += c.render { $0.rendered }
        }
    }

    static func formatDouble(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        if d == d.rounded(), abs(d) < 1e16 { return String(Int64(d)) + ".0" }
        return "\(d)"
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 { out += "\\x" + String(format2(u.value)) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }

    private static func format2(_ v: UInt32) -> String {
        let h = String(v, radix: 16, uppercase: true)
        return h.count == 1 ? "0" + h : h
    }
}

// MARK: JSON

extension RulesValue {
    /// The value as plain JSON, as the Rules API reports values (timestamps as RFC 3339 strings,
    /// bytes as base64, paths as strings).
    var json: JSON {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let d): return d.isFinite ? .double(d) : .string(RulesValue.formatDouble(d))
        case .string(let s): return .string(s)
        case .bytes(let b): return .string(Base64.standard(b))
        case .timestamp(let s, let n): return .string(Timestamps.format(seconds: s, nanos: n))
        case .duration(let s, let n): return .string(Timestamps.formatDuration(seconds: s, nanos: n))
        case .latlng(let lat, let lng): return .object(JSONObject([("latitude", .double(lat)), ("longitude", .double(lng))]))
        case .path(let segs, _): return .string("/" + RulesValue.shown(segs).joined(separator: "/"))
        case .list(let items), .set(let items): return .array(items.map(\.json))
        case .map(let m): return .object(JSONObject(m.map { ($0.key, $0.value.json) }))  // in key order
        case .mapDiff(let l, let r): return .object(JSONObject([("left", RulesValue.map(l).json), ("right", RulesValue.map(r).json)]))
        // Firestore's wire form of a vector.
        case .vector(let elements):
            return .object(JSONObject([("__type__", .string("__vector__")), ("value", .array(elements.map { RulesValue.float($0).json }))]))
        case .constraint: return .string(rendered)
        }
    }

    /// A value from test-suite JSON. Integral JSON numbers are ints, others floats. A one-member
    /// object in Firestore's typed-value form (`timestampValue`, `bytesValue`, `geoPointValue`,
    /// `referenceValue`) becomes that type, since plain JSON has no way to say "timestamp".
    init(json: JSON) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .float(d)
        case .string(let s): self = .string(s)
        case .array(let a): self = .list(a.map(RulesValue.init(json:)))
        case .object(let o):
            if o.count == 1, let (k, v) = o.members.first {
                switch (k, v) {
                case ("timestampValue", .string(let s)):
                    if let t = Timestamps.parse(s) { self = .timestamp(seconds: t.seconds, nanos: t.nanos); return }
                case ("bytesValue", .string(let s)):
                    if let b = Base64.decodeStandard(s) { self = .bytes(b); return }
                case ("geoPointValue", .object(let g)):
                    if let lat = g["latitude"]?.doubleValue, let lng = g["longitude"]?.doubleValue {
                        self = .latlng(latitude: lat, longitude: lng); return
                    }
                case ("referenceValue", .string(let s)):
                    self = .path(RulesValue.pathSegments(s)); return
                default: break
                }
            }
            self = .map(RulesMap(o.members.map { ($0.0, RulesValue(json: $0.1)) }))
        }
    }

    /// Segments of a slash-separated path; `projects/p/databases/…` is shortened to `databases/…`.
    static func pathSegments(_ s: String) -> [String] {
        var segs = s.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if segs.count >= 2, segs[0] == "projects", segs.count > 2, segs[2] == "databases" { segs.removeFirst(2) }
        return segs
    }
}
