import HearthCore
@testable import FirestoreEmulator

/// Differential: Firestore's order-preserving index encoding (`OrderedEncoding`, what SQLite
/// sorts and `FirestoreValue.compare` uses) against Firestore's value order written out
/// semantically, type by type. The sign of the semantic comparison must be the byte order of the
/// encodings, equality must agree with `firestoreEquals`, and stored documents must decode back
/// to values that encode the same.
extension FuzzTargets {
    static func valueOrder(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        var input = FuzzInput(bytes)
        var values: [FirestoreValue] = []
        while values.count < 6 {
            values.append(ValueGenerator.value(&input, depth: 0))
            if input.isAtEnd { break }
        }
        for a in values {
            for b in values {
                let semantic = SemanticOrder.compare(a, b)
                let encoded = OrderedEncoding.compare(OrderedEncoding.encode(a), OrderedEncoding.encode(b))
                guard semantic.signum() == encoded.signum() else {
                    throw FuzzFailure("order of \(a) and \(b): semantic \(semantic), encoded \(encoded)")
                }
                guard a.firestoreEquals(b) == (semantic == 0) else {
                    throw FuzzFailure("equality of \(a) and \(b): firestoreEquals \(a.firestoreEquals(b)), semantic \(semantic)")
                }
            }
        }
        FuzzChecks.count("value-order", values.count * values.count)
        // Stored form: what a write persists reads back as the same value.
        var fields: [ExactString: FirestoreValue] = [:]
        for (i, v) in values.enumerated() { fields[ExactString("f\(i)")] = v }
        let decoded: [ExactString: FirestoreValue]
        do { decoded = try StoredValueCodec.decodeFields(StoredValueCodec.encodeFields(fields)) } catch {
            throw FuzzFailure("stored fields \(fields) do not decode: \(error)")
        }
        guard OrderedEncoding.encode(.map(decoded)) == OrderedEncoding.encode(.map(fields)) else {
            throw FuzzFailure("stored fields \(fields) decode as \(decoded)")
        }
    }
}

/// Firestore values built from fuzz bytes, biased toward the edges of each type's order.
enum ValueGenerator {
    static let doubles: [Double] = [0, -0.0, 1, -1, 0.5, -0.5, 2.5, -2.5, .nan, .infinity, -.infinity,
                                    9_007_199_254_740_992, 9_007_199_254_740_994, 9_007_199_254_740_996,
                                    9.223372036854775807e18, 9.223372036854775808e18, -9.223372036854775808e18,
                                    -9.223372036854777e18, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
                                    .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1e-300, 3.0]
    static let integers: [Int64] = [0, 1, -1, 2, 3, -3, 9_007_199_254_740_992, 9_007_199_254_740_993,
                                    9_007_199_254_740_995, -9_007_199_254_740_993, .max, .min, .max - 1, .min + 1,
                                    4_611_686_018_427_387_904, -4_611_686_018_427_387_905]
    static let strings: [String] = ["", "a", "b", "ab", "a\u{0}", "a\u{1}", "\u{0}", "\u{7F}", "é", "e\u{301}",
                                    "\u{FFFF}", "😀", "\u{10FFFF}", "A", "aa", "/"]
    static let segments: [String] = ["projects", "p", "databases", "(default)", "documents", "c", "d", "", "a\u{0}", "é", "c2",
                                     "__id1__", "__id-1__", "__id9223372036854775807__", "__id-9223372036854775808__", "__id01__",
                                     "__id0__", "A", "_"]

    static func double(_ input: inout FuzzInput) -> Double {
        input.below(3) == 0 ? Double(bitPattern: input.uint64()) : input.pick(doubles)
    }

    static func value(_ input: inout FuzzInput, depth: Int) -> FirestoreValue {
        switch input.below(depth < 3 ? 11 : 9) {
        case 0: return .null
        case 1: return .boolean(input.bool())
        case 2: return .integer(input.below(3) == 0 ? Int64(bitPattern: input.uint64()) : input.pick(integers))
        case 3: return .double(double(&input))
        case 4:
            let micros = input.below(3) == 0 ? Int64(bitPattern: input.uint64()) : Int64(input.below(7)) - 3
            return .timestamp(Instant(unixMicros: micros))
        case 5:
            var s = input.pick(strings)
            if input.bool() { s += input.pick(strings) }
            return .string(s)
        case 6: return .bytes(input.raw(max: 6))
        case 7:
            var segments: [String] = []
            for _ in 0..<(1 + input.below(5)) { segments.append(input.pick(Self.segments)) }
            return .reference(segments.joined(separator: "/"))
        case 8:
            // Coordinates are finite and in range (the decoders refuse the rest).
            func coordinate(_ limit: Double) -> Double {
                let d = double(&input)
                return d.isFinite && abs(d) <= limit ? d : Double(input.below(5)) - 2
            }
            return .geoPoint(latitude: coordinate(90), longitude: coordinate(180))
        case 9:
            var elements: [FirestoreValue] = []
            for _ in 0..<input.below(4) { elements.append(value(&input, depth: depth + 1)) }
            return .array(elements)
        default:
            var members: [ExactString: FirestoreValue] = [:]
            for _ in 0..<input.below(4) { members[ExactString(input.pick(strings))] = value(&input, depth: depth + 1) }
            return .map(members)
        }
    }
}

/// Firestore's documented value order, written type by type without any byte encoding: the
/// reference the encoding is checked against.
enum SemanticOrder {
    static func compare(_ a: FirestoreValue, _ b: FirestoreValue) -> Int {
        if a.typeOrder != b.typeOrder { return a.typeOrder < b.typeOrder ? -1 : 1 }
        switch (a, b) {
        case (.boolean(let x), .boolean(let y)): return x == y ? 0 : (x ? 1 : -1)
        case (.integer(let x), .integer(let y)): return three(x, y)
        case (.double(let x), .double(let y)): return doubles(x, y)
        case (.integer(let x), .double(let y)): return -doubleAgainstInteger(y, x)
        case (.double(let x), .integer(let y)): return doubleAgainstInteger(x, y)
        case (.timestamp(let x), .timestamp(let y)): return three(x.unixMicros, y.unixMicros)
        case (.string(let x), .string(let y)): return bytes(Array(x.utf8), Array(y.utf8))
        case (.bytes(let x), .bytes(let y)): return bytes(x, y)
        case (.reference(let x), .reference(let y)):
            let xs = x.split(separator: "/", omittingEmptySubsequences: false)
            let ys = y.split(separator: "/", omittingEmptySubsequences: false)
            for (a, b) in zip(xs, ys) {
                let c = segments(a, b)
                if c != 0 { return c }
            }
            return three(xs.count, ys.count)
        case (.geoPoint(let xa, let xo), .geoPoint(let ya, let yo)):
            let c = doubles(xa, ya)
            return c != 0 ? c : doubles(xo, yo)
        case (.array(let x), .array(let y)): return sequences(x, y)
        case (.map(let x), .map(let y)):
            let xk = x.keys.sorted { $0.string.utf8.lexicographicallyPrecedes($1.string.utf8) }
            let yk = y.keys.sorted { $0.string.utf8.lexicographicallyPrecedes($1.string.utf8) }
            for (k, l) in zip(xk, yk) {
                let c = bytes(Array(k.string.utf8), Array(l.string.utf8))
                if c != 0 { return c }
                let v = compare(x[k]!, y[l]!)
                if v != 0 { return v }
            }
            return three(xk.count, yk.count)
        default: return 0  // null against null
        }
    }

    static func three<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x > y ? 1 : 0) }

    /// Name segments: numeric ids (`__id<N>__`, N written canonically) before string ids and by N;
    /// strings by UTF-8 bytes. An empty segment (in no valid name) sorts before numeric ids, as the
    /// encoding has it.
    static func segments(_ x: Substring, _ y: Substring) -> Int {
        func number(_ s: Substring) -> Int64? {
            guard s.hasPrefix("__id"), s.hasSuffix("__"), s.count > 6 else { return nil }
            let inner = s.dropFirst(4).dropLast(2)
            guard let n = Int64(inner), n != 0, String(n) == inner else { return nil }
            return n
        }
        switch (number(x), number(y)) {
        case (let a?, let b?): return three(a, b)
        case (_?, nil): return y.isEmpty ? 1 : -1
        case (nil, _?): return x.isEmpty ? -1 : 1
        default: return bytes(Array(x.utf8), Array(y.utf8))
        }
    }

    /// NaN equals NaN and sorts before every other number; -0.0 equals 0.0.
    static func doubles(_ x: Double, _ y: Double) -> Int {
        switch (x.isNaN, y.isNaN) {
        case (true, true): 0
        case (true, false): -1
        case (false, true): 1
        default: three(x, y)
        }
    }

    /// The exact comparison of a double with an integer (no rounding of either).
    static func doubleAgainstInteger(_ d: Double, _ i: Int64) -> Int {
        if d.isNaN { return -1 }
        if d < -9.223372036854775808e18 { return -1 }
        if d >= 9.223372036854775808e18 { return 1 }
        let whole = d.rounded(.towardZero)
        let w = Int64(whole)
        if w != i { return w < i ? -1 : 1 }
        let fraction = d - whole
        return fraction > 0 ? 1 : (fraction < 0 ? -1 : 0)
    }

    static func bytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        for (a, b) in zip(x, y) where a != b { return a < b ? -1 : 1 }
        return three(x.count, y.count)
    }

    static func sequences(_ x: [FirestoreValue], _ y: [FirestoreValue]) -> Int {
        for (a, b) in zip(x, y) {
            let c = compare(a, b)
            if c != 0 { return c }
        }
        return three(x.count, y.count)
    }
}
