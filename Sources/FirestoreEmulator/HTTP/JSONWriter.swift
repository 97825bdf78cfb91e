import HearthCore

/// Writes response JSON straight into bytes.
///
/// Responses are mostly documents; building a `JSON` tree and serializing it through `String`
/// appends and `String(format:)` dominated query time, so the hot paths (documents, values,
/// timestamps) write UTF-8 directly here. Output is compact and byte-identical in meaning to
/// `JSON.serialized()`.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    /// Bytes that are already JSON (a cached document's encoding).
    mutating func encoded(_ json: [UInt8]) { bytes.append(contentsOf: json) }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// A JSON string literal with the escapes `JSON.serialized()` uses.
    mutating func string(_ s: String) {
        bytes.append(0x22)
        escaped(s)
        bytes.append(0x22)
    }

    /// `database.name(of: path)` as a JSON string, written piece by piece rather than built first.
    mutating func name(_ database: DatabaseID, _ path: ResourcePath) {
        raw("\"projects/")
        escaped(database.project)
        raw("/databases/")
        escaped(database.database)
        raw("/documents")
        for segment in path.segments {
            bytes.append(0x2F)
            escaped(segment)
        }
        bytes.append(0x22)
    }

    /// The inside of a JSON string literal (escapes apply per character, so pieces of one string
    /// may be written one after another).
    private mutating func escaped(_ s: String) {
        var copy = s
        copy.withUTF8 { utf8 in
            let count = utf8.count
            var start = 0
            var i = 0
            while i < count {
                // Eight bytes at a time while none of them can need an escape (most of a document's
                // names and strings): a byte-by-byte test cost ~15 instructions a byte.
                if i + 8 <= count,
                   !Self.mayNeedEscape(UnsafeRawPointer(utf8.baseAddress!).loadUnaligned(fromByteOffset: i, as: UInt64.self)) {
                    i += 8
                    continue
                }
                let c = utf8[i]
                // Plain bytes are copied in runs; U+2028/U+2029 (E2 80 A8/A9) are escaped as JSON.serialized does.
                let needsEscape = c < 0x20 || c == 0x22 || c == 0x5C
                    || (c == 0xE2 && i + 2 < count && utf8[i + 1] == 0x80 && (utf8[i + 2] == 0xA8 || utf8[i + 2] == 0xA9))
                guard needsEscape else {
                    i += 1
                    continue
                }
                if start < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i])) }
                switch c {
                case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
                case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
                case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
                case 0x08: bytes.append(contentsOf: [0x5C, 0x62])
                case 0x0C: bytes.append(contentsOf: [0x5C, 0x66])
                case 0xE2:
                    bytes.append(contentsOf: Array("\\u202".utf8))
                    bytes.append(utf8[i + 2] == 0xA8 ? 0x38 : 0x39)
                    // The two bytes after it (80, A8/A9) never need an escape themselves.
                    start = i + 3
                    i += 1
                    continue
                default:
                    bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, Self.hex[Int(c >> 4)], Self.hex[Int(c & 0xF)]])
                }
                start = i + 1
                i += 1
            }
            if start < count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        }
    }

    /// Whether any of the eight bytes of `word` is below 0x20, a quote, a backslash or 0xE2 (which may start
    /// U+2028/U+2029): the bytes `escaped` looks at one by one. Never false when one is (each test
    /// is the exact "has a zero byte" / "has a byte below n" word test); the byte order does not matter.
    @inline(__always)
    static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZero(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
        let below20 = (word &- ones &* 0x20) & ~word & highs != 0
        return below20 || hasZero(word ^ (ones &* 0x22)) || hasZero(word ^ (ones &* 0x5C)) || hasZero(word ^ (ones &* 0xE2))
    }

    /// `"key":`
    mutating func key(_ s: StaticString) {
        bytes.append(0x22)
        raw(s)
        bytes.append(0x22)
        bytes.append(0x3A)
    }

    mutating func int(_ i: Int64) {
        bytes.append(contentsOf: String(i).utf8)
    }

    mutating func double(_ d: Double) {
        if d.isNaN || d.isInfinite {
            raw("null")
        } else if d == 0 {
            if d.sign == .minus { raw("-0.0") } else { raw("0.0") }
        } else if d.rounded() == d && abs(d) < 1e16 {
            int(Int64(d))
            raw(".0")
        } else {
            bytes.append(contentsOf: d.description.utf8)
        }
    }

    /// Any JSON value.
    mutating func json(_ j: JSON) {
        switch j {
        case .null: raw("null")
        case .bool(let b): if b { raw("true") } else { raw("false") }
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let a):
            byte(0x5B)
            for (i, v) in a.enumerated() {
                if i > 0 { byte(0x2C) }
                json(v)
            }
            byte(0x5D)
        case .object(let o):
            byte(0x7B)
            for (i, (k, v)) in o.members.enumerated() {
                if i > 0 { byte(0x2C) }
                string(k)
                byte(0x3A)
                json(v)
            }
            byte(0x7D)
        }
    }

    // MARK: Firestore shapes

    /// A timestamp as Google's JSON writes it (UTC, 0, 3 or 6 fraction digits).
    mutating func timestamp(_ t: Instant) {
        bytes.append(0x22)
        TimestampFormat.append(t, to: &bytes)
        bytes.append(0x22)
    }

    /// A `Value`.
    mutating func value(_ v: FirestoreValue) {
        switch v {
        case .null: raw(#"{"nullValue":null}"#)
        case .boolean(let b): if b { raw(#"{"booleanValue":true}"#) } else { raw(#"{"booleanValue":false}"#) }
        case .integer(let i):
            raw(#"{"integerValue":""#)
            int(i)
            raw(#""}"#)
        case .double(let d):
            raw(#"{"doubleValue":"#)
            if d.isNaN { raw(#""NaN""#) } else if d.isInfinite { if d > 0 { raw(#""Infinity""#) } else { raw(#""-Infinity""#) } } else { double(d) }
            byte(0x7D)
        case .timestamp(let t):
            raw(#"{"timestampValue":"#)
            timestamp(t)
            byte(0x7D)
        case .string(let s):
            raw(#"{"stringValue":"#)
            string(s)
            byte(0x7D)
        case .bytes(let b):
            raw(#"{"bytesValue":"#)
            string(Base64.encode(b))
            byte(0x7D)
        case .reference(let r):
            raw(#"{"referenceValue":"#)
            string(r)
            byte(0x7D)
        case .geoPoint:
            json(ValueJSON.encode(v))
        case .vector(let elements):
            value(.map(VectorValue.members(elements)))
        case .array(let elements):
            if elements.isEmpty {
                raw(#"{"arrayValue":{}}"#)
                return
            }
            raw(#"{"arrayValue":{"values":["#)
            for (i, e) in elements.enumerated() {
                if i > 0 { byte(0x2C) }
                value(e)
            }
            raw("]}}")
        case .map(let members):
            if members.isEmpty {
                raw(#"{"mapValue":{}}"#)
                return
            }
            raw(#"{"mapValue":{"fields":"#)
            fields(members)
            raw("}}")
        }
    }

    /// A `fields` map, keys in byte order.
    mutating func fields(_ members: [ExactString: FirestoreValue]) {
        byte(0x7B)
        // Sorted with their values: no lookup of each key again.
        for (i, m) in OrderedEncoding.sortedMembers(members).enumerated() {
            if i > 0 { byte(0x2C) }
            string(m.key.string)
            byte(0x3A)
            value(m.value)
        }
        byte(0x7D)
    }

    /// A `Document`: name, fields (masked), createTime, updateTime.
    mutating func document(_ doc: StoredDocument, in database: DatabaseID, mask: [FieldPath]? = nil) {
        raw(#"{"name":"#)
        name(database, doc.path)
        let shown = mask.map { DocumentFields.project(doc.fields, onto: $0) } ?? doc.fields
        if !shown.isEmpty {
            raw(#","fields":"#)
            fields(shown)
        }
        raw(#","createTime":"#)
        timestamp(doc.createTime)
        raw(#","updateTime":"#)
        timestamp(doc.updateTime)
        byte(0x7D)
    }
}
