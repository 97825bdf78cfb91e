import Foundation

/// A JSON value that keeps object member order and distinguishes integers from doubles.
///
/// Wire formats here care about both: Firebase ID-token payloads have a fixed member order, and
/// Google REST APIs carry 64-bit integers that a Double would round.
public enum JSON: Sendable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    // MARK: Access

    /// The member `key` of an object, or nil.
    public subscript(key: String) -> JSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// The element `index` of an array, or nil.
    public subscript(index: Int) -> JSON? {
        if case .array(let a) = self, index >= 0, index < a.count { return a[index] }
        return nil
    }

    /// The string, when this is a string.
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    /// The bool, when this is a bool.
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    /// The integer, when this is an integer (or a double with an integral value).
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }
    /// The number as a double, when this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    /// The elements, when this is an array.
    public var arrayValue: [JSON]? { if case .array(let a) = self { return a }; return nil }
    /// The members, when this is an object.
    public var objectValue: JSONObject? { if case .object(let o) = self { return o }; return nil }
    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// The JSON type's name as error messages say it.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    // MARK: Text

    public var description: String { serialized() }

    /// Compact JSON text (or indented with two spaces when `pretty`).
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: utf8Bytes(pretty: pretty), as: UTF8.self)
    }

    /// UTF-8 bytes of the compact JSON text.
    public var utf8Bytes: [UInt8] { utf8Bytes(pretty: false) }

    /// UTF-8 bytes of the JSON text; written straight into a byte buffer (responses are bytes anyway).
    public func utf8Bytes(pretty: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out, pretty: pretty, indent: 0)
        return out
    }

    private static func newline(_ out: inout [UInt8], _ indent: Int) {
        out.append(0x0A)
        for _ in 0..<indent { out.append(0x20); out.append(0x20) }
    }

    private func write(into out: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            if d.isNaN || d.isInfinite {
                out.append(contentsOf: "null".utf8)  // JSON has no NaN; callers that need it encode it as a string first.
            } else if d.rounded() == d && abs(d) < 1e16 {
                if d == 0 && d.sign == .minus { out.append(UInt8(ascii: "-")) }
                out.append(contentsOf: String(Int64(d)).utf8)
                out.append(contentsOf: ".0".utf8)
            } else {
                out.append(contentsOf: "\(d)".utf8)
            }
        case .string(let s): JSON.writeString(s, into: &out)
        case .array(let a):
            if a.isEmpty { out.append(contentsOf: "[]".utf8); return }
            out.append(UInt8(ascii: "["))
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { JSON.newline(&out, indent + 1) }
                v.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { JSON.newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            if o.isEmpty { out.append(contentsOf: "{}".utf8); return }
            out.append(UInt8(ascii: "{"))
            for (i, (k, v)) in o.members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { JSON.newline(&out, indent + 1) }
                JSON.writeString(k, into: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(0x20) }
                v.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { JSON.newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        for b in s.utf8 {
            switch b {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            case 0x08: out.append(0x5C); out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(0x5C); out.append(UInt8(ascii: "f"))
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hexDigits[Int(b >> 4)])
                out.append(hexDigits[Int(b & 0xF)])
            default: out.append(b)
            }
        }
        out.append(0x22)
    }

    // MARK: Parsing

    /// Parses JSON text; throws `JSONParseError` with a byte offset on malformed input.
    public static func parse<D: ContiguousBytes>(_ data: D, maxDepth: Int = 256) throws(JSONParseError) -> JSON {
        let bytes: [UInt8] = data.withUnsafeBytes { Array($0) }
        var p = JSONParser(bytes: bytes, maxDepth: maxDepth)
        return try p.parseDocument()
    }

    /// Parses JSON text from a string.
    public static func parse(_ text: String) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8))
    }
}

/// An ordered JSON object.
public struct JSONObject: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// Members in order.
    public private(set) var members: [(String, JSON)]

    /// An object with these members in this order.
    public init(_ members: [(String, JSON)] = []) { self.members = members }

    public init(dictionaryLiteral elements: (String, JSON)...) { self.members = elements }

    /// The value of `key`, or nil; setting replaces in place or appends, setting nil removes.
    /// Names match by their bytes (`ExactString`): JSON's names are sequences, and "é" precomposed
    /// and decomposed are two members, where `String`'s `==` calls them one.
    public subscript(key: String) -> JSON? {
        get { members.first(where: { ExactString.equal($0.0, key) })?.1 }
        set {
            if let i = members.firstIndex(where: { ExactString.equal($0.0, key) }) {
                if let newValue { members[i].1 = newValue } else { members.remove(at: i) }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    /// Member names in order.
    public var keys: [String] { members.map(\.0) }
    /// Number of members.
    public var count: Int { members.count }
    /// Whether there are no members.
    public var isEmpty: Bool { members.isEmpty }

    public func makeIterator() -> IndexingIterator<[(String, JSON)]> { members.makeIterator() }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.members.count == b.members.count else { return false }
        for (k, v) in a.members where b[k] != v { return false }
        return true
    }
}

/// Why JSON text did not parse.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    /// Byte offset of the problem.
    public let offset: Int
    /// What was wrong.
    public let reason: String
    public var description: String { "\(reason) at byte \(offset)" }

    /// The reason for a number past a double's range (`1e400`, `-1e999`), in the words of Google's
    /// JSON parser (protobuf's `JsonStreamParser`), which every Google API's front end answers with.
    public static let numberOutOfRange = "Number exceeds the range of double."

    /// Whether the text was well formed but held a number past a double's range: services whose
    /// emulator words that case apart (Firestore's "Payload isn't valid for request.") ask this.
    public var isNumberOutOfRange: Bool { reason == Self.numberOutOfRange }
}

private struct JSONParser {
    let bytes: [UInt8]
    let maxDepth: Int
    var i = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    mutating func parseDocument() throws(JSONParseError) -> JSON {
        // A UTF-8 byte-order mark is tolerated, as most JSON readers do.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
        let v = try parseValue(depth: 0)
        skipSpace()
        guard i == bytes.count else { throw fail("Unexpected data after the JSON value") }
        return v
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= maxDepth else { throw fail("JSON nested too deeply") }
        skipSpace()
        guard i < bytes.count else { throw fail("Unexpected end of JSON") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var members: [(String, JSON)] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(JSONObject(members)) }
            // Room for the usual object (API bodies' are 1-4 members) in one allocation: growing
            // from empty reallocated at the 2nd and 3rd member, ~a sixth of parsing a commit body.
            members.reserveCapacity(4)
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("Expected a string key") }
                let key = try parseString()
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("Expected ':'") }
                i += 1
                let value = try parseValue(depth: depth + 1)
                if let existing = members.firstIndex(where: { ExactString.equal($0.0, key) }) {
                    members[existing].1 = value  // last duplicate wins, as most parsers do
                } else {
                    members.append((key, value))
                }
                skipSpace()
                guard i < bytes.count else { throw fail("Unexpected end of JSON") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(JSONObject(members)) }
                throw fail("Expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSON] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                items.append(try parseValue(depth: depth + 1))
                skipSpace()
                guard i < bytes.count else { throw fail("Unexpected end of JSON") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                throw fail("Expected ',' or ']'")
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true"); return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false"); return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null"); return .null
        default:
            return try parseNumber()
        }
    }

    mutating func literal(_ word: String) throws(JSONParseError) {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else { throw fail("Invalid literal") }
        i += w.count
    }

    mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        let intStart = i
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
        guard i > intStart else { throw fail("Invalid JSON value") }
        if bytes[intStart] == 48, i - intStart > 1 { throw fail("Leading zero in number") }
        var isInteger = true
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            let f = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
            guard i > f else { throw fail("Invalid number") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let e = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
            guard i > e else { throw fail("Invalid number") }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let v = Int64(text) { return .int(v) }
        guard let d = Double(text) else { throw fail("Invalid number") }
        // `1e400` reads as infinity: refused as Google's JSON front end refuses it, at the number.
        // Kept, it reached callers as ±infinity — stored (a Firestore double), written back as
        // `null` (a bucket policy that then no longer parsed), or quietly dropped by `intValue`.
        guard d.isFinite else {
            i = start
            throw fail(JSONParseError.numberOutOfRange)
        }
        return .double(d)
    }

    mutating func parseString() throws(JSONParseError) -> String {
        i += 1  // opening quote
        // Most strings have no escape: find the closing quote and validate the run in place,
        // without copying it byte by byte into a buffer first.
        let start = i
        var high: UInt8 = 0
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c < 0x20 { break }
            high |= c
            i += 1
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            let end = i
            i += 1
            // ASCII is valid UTF-8 as it stands: `String(decoding:)` copies contiguous bytes in one
            // step, where `String(validating:)` of a slice took its generic path (~1,000
            // instructions a string, a quarter of parsing a Firestore commit body).
            if high < 0x80 { return String(decoding: bytes[start..<end], as: UTF8.self) }
            guard let s = String(validating: bytes[start..<end], as: UTF8.self) else { throw fail("Invalid UTF-8 in string") }
            return s
        }
        var out = Array(bytes[start..<i])
        while true {
            guard i < bytes.count else { throw fail("Unterminated string") }
            let c = bytes[i]
            if c == UInt8(ascii: "\"") { i += 1; break }
            if c < 0x20 { throw fail("Control character in string") }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw fail("Unterminated escape") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw fail("Unpaired surrogate")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("Invalid surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("Unpaired surrogate")
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("Invalid unicode escape") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                throw fail("Invalid escape")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw fail("Invalid UTF-8 in string") }
        return s
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("Invalid unicode escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 65...70: d = UInt32(c - 55)
            case 97...102: d = UInt32(c - 87)
            default: throw fail("Invalid unicode escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }
}
