// String methods. Sizes and indexes count UTF-16 code units and lower()/upper() change ASCII
// letters only, as recorded from Google's evaluator (see docs/rules.md).

enum StringFunctions {
    static func call(_ m: Method, _ s: String, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch m {
        case .size: return .int(Int64(s.utf16.count))
        case .lower: return .string(lowered(s))
        case .upper: return .string(mapASCII(s, from: 0x61, to: 0x41))
        case .trim:
            // Java's trim(): strips code points up to U+0020 at both ends.
            let scalars = s.unicodeScalars
            guard let first = scalars.firstIndex(where: { $0.value > 0x20 }) else { return .string("") }
            let last = scalars.lastIndex(where: { $0.value > 0x20 })!
            return .string(String(scalars[first...last]))
        case .toUtf8: return .bytes(Array(s.utf8))
        case .matches:
            try strings(args, m)
            return .bool(try RegexCache.fullMatch(s, try string(args[0], m)))
        case .split:
            try strings(args, m)
            return .list(try RegexCache.split(s, try string(args[0], m)).map { .string($0) })
        case .replace:
            try strings(args, m)
            return .string(try RegexCache.replace(s, try string(args[0], m), try string(args[1], m)))
        default:
            throw EvalError.noFunction(m.rawValue)
        }
    }

    /// Every argument a string, or the emulator's `Received: string.replace(int, string). Expected: …`.
    static func strings(_ args: [RulesValue], _ m: Method) throws(EvalError) {
        for a in args {
            guard case .string = a else {
                if case .null = a { throw EvalError.nullValue }
                throw EvalError.signature("string.\(m.rawValue)", args, expected: [args.map { _ in "string" }.joined(separator: ", ")])
            }
        }
    }

    static func string(_ v: RulesValue, _ m: Method) throws(EvalError) -> String {
        guard case .string(let s) = v else { throw EvalError.invalidArgument(m.rawValue, "string expected, got \(v.typeName)") }
        return s
    }

    /// `s.lower()`'s string: A–Z to a–z, every other byte as it is.
    static func lowered(_ s: String) -> String { mapASCII(s, from: 0x41, to: 0x61) }

    /// Maps the 26 ASCII letters starting at `from` to those starting at `to`, leaving every other
    /// byte alone (so the bytes stay valid UTF-8), straight into the new string's storage.
    private static func mapASCII(_ s: String, from: UInt8, to: UInt8) -> String {
        var s = s
        return s.withUTF8 { source in
            String(unsafeUninitializedCapacity: source.count) { buffer in
                for i in 0..<source.count {
                    let b = source[i]
                    buffer[i] = b &- from < 26 ? b &- from &+ to : b
                }
                return source.count
            }
        }
    }

    /// Whether every byte is ASCII (then UTF-16 units are the UTF-8 bytes).
    static func isASCII(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { bytes in
            var any: UInt8 = 0
            for b in bytes { any |= b }
            return any < 0x80
        }
    }

    /// `s[i]`: the UTF-16 unit at i as a string.
    static func index(_ s: String, _ i: Int64) throws(EvalError) -> RulesValue {
        let units = Array(s.utf16)
        guard i >= 0, i < units.count else { throw EvalError.indexOutOfRange(i, units.count) }
        return .string(String(decoding: [units[Int(i)]], as: UTF16.self))
    }

    /// `s[i:j]`, j exclusive.
    static func slice(_ s: String, _ lo: Int64?, _ hi: Int64?) throws(EvalError) -> RulesValue {
        // ASCII (the usual key or id): UTF-16 units are the UTF-8 bytes, so slice bytes directly.
        if isASCII(s) {
            var s = s
            let (a, b) = try CollectionFunctions.bounds(lo, hi, s.utf8.count)
            // The bytes copied out of the contiguous storage (walking `utf8` indexes to the bounds
            // and through a Substring cost three times as much).
            return .string(s.withUTF8 { String(decoding: UnsafeBufferPointer(rebasing: $0[a..<b]), as: UTF8.self) })
        }
        let units = Array(s.utf16)
        let (a, b) = try CollectionFunctions.bounds(lo, hi, units.count)
        return .string(String(decoding: units[a..<b], as: UTF16.self))
    }
}
