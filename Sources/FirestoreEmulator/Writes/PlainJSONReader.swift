import HearthCore

/// A forward reader of JSON text for `WriteJSONDecoder`: it reads the bytes `JSON.parse`
/// (HearthCore) reads and gives the values it gives, without building the tree — but only in the
/// forms plain requests use. A string with an escape or a control character, a byte-order mark,
/// an object or array where a scalar is read, malformed text: each throws `Fallback`, and the
/// caller parses the whole body with `JSON.parse` as before, which words any error.
///
/// Member names are compared as bytes, never as `String`s: a name that is not byte for byte the
/// expected one falls back, so canonically equivalent spellings are left to the general path.
struct PlainJSONReader {
    typealias Fallback = PlainWrite.Fallback

    /// A member name's bytes (between its quotes) and whether they are all ASCII.
    struct Name {
        let start: Int
        let end: Int
        let ascii: Bool
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Skips the whitespace `JSON.parse` skips.
    private mutating func skipSpace() {
        while i < bytes.count {
            let c = bytes[i]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            i += 1
        }
    }

    /// Consumes `byte` after whitespace.
    private mutating func expect(_ byte: UInt8) throws(Fallback) {
        skipSpace()
        guard i < bytes.count, bytes[i] == byte else { throw Fallback() }
        i += 1
    }

    /// Opens an object: false when it is empty (its `}` consumed too), else read its members with
    /// `name()`, a value and `next(0x7D)`.
    mutating func openObject() throws(Fallback) -> Bool {
        try expect(0x7B)
        skipSpace()
        if i < bytes.count, bytes[i] == 0x7D { i += 1; return false }
        return true
    }

    /// Opens an array: false when it is empty (its `]` consumed too), else read its elements
    /// each followed by `next(0x5D)`.
    mutating func openArray() throws(Fallback) -> Bool {
        try expect(0x5B)
        skipSpace()
        if i < bytes.count, bytes[i] == 0x5D { i += 1; return false }
        return true
    }

    /// After a member or element: true at `,` (another follows), false at `close` (consumed).
    mutating func next(_ close: UInt8) throws(Fallback) -> Bool {
        skipSpace()
        guard i < bytes.count else { throw Fallback() }
        let c = bytes[i]
        i += 1
        if c == 0x2C { return true }
        guard c == close else { throw Fallback() }
        return false
    }

    /// A member's name and the `:` after it.
    mutating func name() throws(Fallback) -> Name {
        skipSpace()
        let (start, end, ascii) = try rawString()
        try expect(0x3A)
        return Name(start: start, end: end, ascii: ascii)
    }

    /// Whether `name` is exactly `expected`'s bytes.
    func isName(_ name: Name, _ expected: StaticString) -> Bool {
        let count = expected.utf8CodeUnitCount
        guard name.end - name.start == count else { return false }
        let e = expected.utf8Start
        for k in 0..<count where bytes[name.start + k] != e[k] { return false }
        return true
    }

    /// A member name as a `String` (a `fields` map's keys).
    func text(_ name: Name) throws(Fallback) -> String {
        try text(name.start, name.end, ascii: name.ascii)
    }

    /// A string value.
    mutating func string() throws(Fallback) -> String {
        skipSpace()
        let (start, end, ascii) = try rawString()
        return try text(start, end, ascii: ascii)
    }

    /// A string, number, `true`, `false` or `null`, as `JSON.parse` gives it.
    mutating func scalar() throws(Fallback) -> JSON {
        skipSpace()
        guard i < bytes.count else { throw Fallback() }
        switch bytes[i] {
        case 0x22: return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case 0x7B, 0x5B: throw Fallback()
        default: return try number()
        }
    }

    /// The end of the text: only whitespace may follow the value.
    mutating func end() throws(Fallback) {
        skipSpace()
        guard i == bytes.count else { throw Fallback() }
    }

    /// A whole body of the shape `{"<list>": [element, …], "transaction": "…"}` — each member at
    /// most once, `transaction` only where `transactionAllowed`, nothing else (a commit's and a
    /// batchGet's plain form) — with the list's elements read by `element`.
    mutating func listAndTransaction<T>(_ list: StaticString, transactionAllowed: Bool,
                                        element: (inout PlainJSONReader) throws(Fallback) -> T) throws(Fallback)
        -> (list: [T], transaction: String?) {
        var items: [T]?
        var transaction: String?
        if try openObject() {
            repeat {
                let member = try name()
                if isName(member, list) {
                    guard items == nil else { throw Fallback() }
                    var out: [T] = []
                    if try openArray() {
                        repeat { out.append(try element(&self)) } while try next(0x5D)
                    }
                    items = out
                } else if transactionAllowed, isName(member, "transaction") {
                    guard transaction == nil else { throw Fallback() }
                    transaction = try string()
                } else {
                    throw Fallback()
                }
            } while try next(0x7D)
        }
        try end()
        return (items ?? [], transaction)
    }

    // MARK: Tokens

    /// The bytes between a string's quotes (consumed with them), when it has no escape or
    /// control character (`JSON.parse` rejects an unescaped control character).
    private mutating func rawString() throws(Fallback) -> (start: Int, end: Int, ascii: Bool) {
        guard i < bytes.count, bytes[i] == 0x22 else { throw Fallback() }
        i += 1
        let start = i
        var high: UInt8 = 0
        // Eight bytes at a time while none of them is a quote, a backslash or a control character
        // (byte by byte this scan was ~7 instructions a byte of every string and name); the loop
        // below reads the rest, from the word that holds one.
        if let base = bytes.baseAddress {
            var wide: UInt64 = 0
            while i + 8 <= bytes.count {
                let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if Self.hasByte(w, 0x22) || Self.hasByte(w, 0x5C) || Self.hasByteBelow0x20(w) { break }
                wide |= w
                i += 8
            }
            if wide & 0x8080_8080_8080_8080 != 0 { high = 0x80 }
        }
        while i < bytes.count {
            let c = bytes[i]
            if c == 0x22 {
                i += 1
                return (start, i - 1, high < 0x80)
            }
            if c == 0x5C || c < 0x20 { throw Fallback() }
            high |= c
            i += 1
        }
        throw Fallback()
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether any byte of `w` is `b` (a zero byte of `w ^ b…b`; exact as a yes or no).
    private static func hasByte(_ w: UInt64, _ b: UInt8) -> Bool {
        let x = w ^ (ones &* UInt64(b))
        return (x &- ones) & ~x & highs != 0
    }

    /// Whether any byte of `w` is below 0x20 (exact as a yes or no for a bound up to 0x80).
    private static func hasByteBelow0x20(_ w: UInt64) -> Bool {
        (w &- ones &* 0x20) & ~w & highs != 0
    }

    /// The text of `start..<end`: ASCII as it stands, anything else only when valid UTF-8 (as
    /// `JSON.parse` decodes a string without escapes).
    private func text(_ start: Int, _ end: Int, ascii: Bool) throws(Fallback) -> String {
        let run = UnsafeBufferPointer(rebasing: bytes[start..<end])
        if ascii { return SmallASCII.string(run) }
        guard let s = String(validating: run, as: UTF8.self) else { throw Fallback() }
        return s
    }

    private mutating func literal(_ word: StaticString) throws(Fallback) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - i >= count else { throw Fallback() }
        let w = word.utf8Start
        for k in 0..<count where bytes[i + k] != w[k] { throw Fallback() }
        i += count
    }

    /// A number as `JSON.parse` reads it: an integer that fits `Int64` is `.int`, anything else
    /// (a fraction, an exponent, a larger integer) is the `Double` of its text.
    private mutating func number() throws(Fallback) -> JSON {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        let intStart = i
        skipDigits()
        guard i > intStart, bytes[intStart] != 0x30 || i - intStart == 1 else { throw Fallback() }
        var isInteger = true
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            let f = i
            skipDigits()
            guard i > f else { throw Fallback() }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let e = i
            skipDigits()
            guard i > e else { throw Fallback() }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        if isInteger, let v = Int64(text) { return .int(v) }
        // Past a double's range `JSON.parse` refuses the body; the general path words that.
        guard let d = Double(text), d.isFinite else { throw Fallback() }
        return .double(d)
    }

    private mutating func skipDigits() {
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
    }
}
