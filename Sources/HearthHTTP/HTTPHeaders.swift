import Foundation
import HearthCore

/// HTTP header fields in the order received, with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// Fields as sent (names keep their case; duplicates are kept separately, in order).
    public private(set) var fields: [(name: String, value: String)] {
        // Any change may move a known field: lookups walk the fields again from then on.
        didSet { known = .unknown; receivedSize = -1 }
    }
    /// Where the `Known` fields first occur, when a listener noted them as it received the fields.
    private var known = KnownSlots.unknown
    /// While `known` is noted (every name ASCII, as received): bit `min(n, 63)` set for each field
    /// name of `n` bytes. Two ASCII names equal ignoring case have one length, so an ASCII name
    /// whose length has no bit is absent without a walk — most lookups: a presigned S3 GET asks for
    /// some ten fields it was not sent (`If-Match`, `Range`, …; docs/benchmarks.md, *s3c131*).
    private var lengths: UInt64 = 0
    /// The header section's size as received, summed by `appendReceived`; -1 once the fields were
    /// set any other way (`sectionSize` then sums them).
    private var receivedSize = -1

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }
    public init(dictionaryLiteral elements: (String, String)...) { self.fields = elements.map { (name: $0.0, value: $0.1) } }

    /// The first value of `name` (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        if known.isNoted && HTTPHeaders.absent(name, lengths: lengths) { return nil }
        return fields.first(where: { HTTPHeaders.namesEqual($0.name, name) })?.value
    }

    /// The header section's size as a client writes it: each field's name, `": "`, value and CRLF
    /// (the request line and the blank line ending the section not counted). S3 refuses a request
    /// whose section is over 8 KB (docs/s3.md, *Limits*).
    public var sectionSize: Int {
        if receivedSize >= 0 { return receivedSize }
        return fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }

    /// Whether no received field can be `name`: its length has no bit in `lengths` and it is ASCII
    /// (lower-casing a non-ASCII name can change its length: `"\u{212A}"` lower-cases to `"k"`).
    @inline(__always)
    private static func absent(_ name: String, lengths: UInt64) -> Bool {
        let n = name.utf8.count
        guard lengths & (1 << UInt64(Swift.min(n, 63))) == 0 else { return false }
        return isASCIIName(name)
    }

    /// Fields nearly every request is asked for, by the server (framing) or by the services in front
    /// of every handler (CORS, the caller, the request log).
    public enum Known: Int, Sendable, CaseIterable {
        case authorization, origin, contentLength, transferEncoding, expect, methodOverride

        /// The field name, as `subscript(name:)` would be asked for it.
        public var name: String {
            switch self {
            case .authorization: "Authorization"
            case .origin: "Origin"
            case .contentLength: "Content-Length"
            case .transferEncoding: "Transfer-Encoding"
            case .expect: "Expect"
            case .methodOverride: "X-HTTP-Method-Override"
            }
        }
    }

    /// The first value of a known field: `self[known.name]`, without walking the fields when the
    /// listener noted where it is (each walk compared every name, ~0.5k instructions a lookup and
    /// five or more lookups a request; callgrind, bench/callgrind_commit.py --transport txn).
    public subscript(known field: Known) -> String? {
        guard known.isNoted else { return self[field.name] }
        let slot = known.slot(field)
        return slot == 0 ? nil : fields[slot - 1].value
    }

    /// Whether these fields are `other`'s very array, unchanged since it was copied (any change
    /// copies it): then they are equal, without comparing them. False when either has none.
    public func sharesFields(with other: HTTPHeaders) -> Bool {
        guard !fields.isEmpty, fields.count == other.fields.count else { return false }
        return fields.withUnsafeBufferPointer { a in other.fields.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { HTTPHeaders.namesEqual($0.name, name) }.map(\.value)
    }

    /// Whether a field `name` is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Room for `n` fields without growing (an answer's headers are added one by one: growing
    /// from empty moved them four times).
    public mutating func reserveCapacity(_ n: Int) { fields.reserveCapacity(n) }

    /// Appends a field, keeping any existing ones.
    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    /// Inserts a field at `index` of `fields` (0 puts it first), keeping any existing ones.
    public mutating func insert(_ name: String, _ value: String, at index: Int) { fields.insert((name: name, value: value), at: index) }

    /// Replaces every field `name` with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    /// Removes every field `name`.
    public mutating func remove(_ name: String) {
        // Looked for first: `set` on a field not there yet (CORS headers on every answer) went
        // through the array's `removeAll`, which rebuilds it even when nothing matches.
        guard fields.contains(where: { HTTPHeaders.namesEqual($0.name, name) }) else { return }
        fields.removeAll { HTTPHeaders.namesEqual($0.name, name) }
    }

    /// Whether two field names are equal ignoring case. Lookups run many times per request, so
    /// ASCII names (all real ones) are compared byte by byte without allocating; anything else
    /// falls back to comparing `lowercased()` forms, the rule this type has always applied.
    static func namesEqual(_ a: String, _ b: String) -> Bool {
        let fast: Bool?? = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in asciiNamesEqual(x, y) } ?? nil
        }
        if let fast, let answer = fast { return answer }
        return a.lowercased() == b.lowercased()
    }

    /// The ASCII comparison, or nil when non-ASCII bytes make it undecidable here.
    private static func asciiNamesEqual(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool? {
        // Leading ASCII bytes that differ decide it whatever follows: lower-casing maps each
        // ASCII character to one ASCII character in place. Most lookups end here.
        let n = Swift.min(x.count, y.count)
        var i = 0
        while i < n {
            let c = x[i], d = y[i]
            if c >= 0x80 || d >= 0x80 { return nil }
            if c != d && asciiLowercase(c) != asciiLowercase(d) { return false }
            i += 1
        }
        if x.count == y.count { return true }
        // Lower-casing can change the length only outside ASCII.
        let longer = x.count > y.count ? x : y
        if longer[n...].contains(where: { $0 >= 0x80 }) { return nil }
        return false
    }

    /// Whether a name held in contiguous UTF-8 is all ASCII (false when it is not contiguous: the
    /// callers then take their general path). The length tests of `absent` and `isFraming` hold
    /// only for ASCII names.
    @inline(__always)
    public static func isASCIIName(_ name: String) -> Bool {
        name.utf8.withContiguousStorageIfAvailable { isASCII(UnsafeRawBufferPointer($0)) } ?? false
    }

    /// Whether `name` is `Content-Length` or `Transfer-Encoding` (any case), which libmicrohttpd
    /// writes itself. An ASCII name of neither length is neither, without the two comparisons
    /// (~0.12k instructions for each field of every answer).
    static func isFraming(_ name: String) -> Bool {
        let n = name.utf8.count
        if n != 14 && n != 17 && isASCIIName(name) {
            return false
        }
        return namesEqual(name, "Content-Length") || namesEqual(name, "Transfer-Encoding")
    }

    /// `name.lowercased()`, without Unicode's tables for an ASCII name (every real one): one with no
    /// upper-case letter is returned as it is, any other has its letters lowered byte by byte
    /// (`lowercased()` cost ~0.4k instructions a name; the SigV4 cache lowers every field's name).
    public static func lowercasedName(_ name: String) -> String {
        let fast: String?? = name.utf8.withContiguousStorageIfAvailable { b -> String? in
            var upper = false
            for c in b {
                if c >= 0x80 { return nil }
                if c >= 0x41 && c <= 0x5A { upper = true }
            }
            guard upper else { return name }
            return String(unsafeUninitializedCapacity: b.count) { out in
                for i in 0..<b.count { out[i] = asciiLowercase(b[i]) }
                return b.count
            }
        }
        if let fast, let lowered = fast { return lowered }
        return name.lowercased()
    }

    /// Whether `lowercasedName(name)` of an ASCII `name` (`isASCIIName`) is byte for byte `lower`,
    /// without making it: the bytes lowered and compared in place.
    public static func lowercasedASCIIName(_ name: String, is lower: String) -> Bool {
        let decided: Bool?? = name.utf8.withContiguousStorageIfAvailable { n in
            lower.utf8.withContiguousStorageIfAvailable { l in
                guard n.count == l.count else { return false }
                for i in 0..<n.count where asciiLowercase(n[i]) != l[i] { return false }
                return true
            }
        }
        if let decided, let answer = decided { return answer }
        return lower.utf8.elementsEqual(name.utf8.lazy.map(asciiLowercase))
    }

    /// An ASCII byte lower-cased (other bytes unchanged).
    @inlinable @inline(__always)
    public static func asciiLowercase(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c | 0x20 : c }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    // MARK: Received fields

    /// Whether `s`'s UTF-8 is exactly `bytes` (then `String(decoding: bytes, as: UTF8.self)` is `s`).
    @inline(__always)
    static func holds(_ s: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard s.utf8.count == bytes.count, let base = bytes.baseAddress else { return false }
        return s.utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, base, bytes.count) == 0 } ?? false
    }

    /// A literal for a value most requests send that is too long for a small string (over 15
    /// bytes: made from the bytes, each was an allocation a request), else nil. The same string.
    @inline(__always)
    static func commonValue(_ value: UnsafeRawBufferPointer) -> String? {
        // Content-Type of every JSON API request (REST clients, the SDKs' REST transports).
        let json: StaticString = "application/json"
        guard value.count == json.utf8CodeUnitCount, let base = value.baseAddress,
              memcmp(base, json.utf8Start, json.utf8CodeUnitCount) == 0 else { return nil }
        return "application/json"
    }

    /// The name as a literal when it is one every request of the REST clients and load generators
    /// sends, spelled as they spell it, else nil. The same string `String(decoding:as:)` makes,
    /// without its UTF-8 validation (~100 instructions a name, four or five names a request).
    @inline(__always)
    static func commonName(_ name: UnsafeRawBufferPointer) -> String? {
        @inline(__always) func spelled(_ literal: StaticString) -> Bool {
            name.count == literal.utf8CodeUnitCount && memcmp(name.baseAddress!, literal.utf8Start, name.count) == 0
        }
        guard name.count > 0 else { return nil }
        switch name.count {
        case 4: return spelled("Host") ? "Host" : nil
        case 12: return spelled("Content-Type") ? "Content-Type" : nil
        case 13: return spelled("Authorization") ? "Authorization" : nil
        case 14: return spelled("Content-Length") ? "Content-Length" : nil
        case 15: return spelled("Accept-Encoding") ? "Accept-Encoding" : nil
        default: return nil
        }
    }

    /// Empty headers that note the `Known` fields as `appendReceived` adds fields.
    init(receiving capacity: Int) {
        fields = []
        fields.reserveCapacity(capacity)
        known = .noted
        receivedSize = 0
    }

    /// Appends a received field from its bytes and notes it if it is the first of a `Known` name.
    /// A name with a non-ASCII byte (its lower-cased form could be anything; `namesEqual` compares
    /// those by `lowercased()`) or a 255th field stops the noting: lookups then walk the fields.
    /// - Parameter reusing: a string the value may well be (the connection's last `Authorization`):
    ///   when its bytes are the value's, it is the value, without decoding them into a new one.
    mutating func appendReceived(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, reusing: String? = nil) {
        let n = HTTPHeaders.commonName(name) ?? SmallASCII.string(name)
        let v: String
        if let reusing, HTTPHeaders.holds(reusing, value) {
            v = reusing
        } else {
            v = HTTPHeaders.commonValue(value) ?? SmallASCII.string(value)
        }
        var slots = known
        let size = receivedSize
        if slots.isNoted {
            if fields.count >= 254 || !HTTPHeaders.isASCII(name) {
                slots = .unknown
            } else if let field = HTTPHeaders.known(named: name), slots.slot(field) == 0 {
                slots.note(field, at: fields.count + 1)
            }
        }
        fields.append((name: n, value: v))  // resets `known` (didSet)
        known = slots
        if size >= 0 { receivedSize = size &+ name.count &+ value.count &+ 4 }
        if slots.isNoted { lengths |= 1 << UInt64(Swift.min(name.count, 63)) }
    }

    /// The `Known` field an ASCII name is (any case), by its length first.
    static func known(named name: UnsafeRawBufferPointer) -> Known? {
        let candidates: (Known, Known?)
        switch name.count {
        case 6: candidates = (.origin, .expect)
        case 13: candidates = (.authorization, nil)
        case 14: candidates = (.contentLength, nil)
        case 17: candidates = (.transferEncoding, nil)
        case 22: candidates = (.methodOverride, nil)
        default: return nil
        }
        if lowercaseEqual(name, candidates.0.lowercasedName) { return candidates.0 }
        if let second = candidates.1, lowercaseEqual(name, second.lowercasedName) { return second }
        return nil
    }

    /// Whether ASCII `bytes` lower-cased are `lower` (same length).
    private static func lowercaseEqual(_ bytes: UnsafeRawBufferPointer, _ lower: StaticString) -> Bool {
        let l = lower.utf8Start
        var i = 0
        while i < bytes.count {
            if asciiLowercase(bytes[i]) != l[i] { return false }
            i += 1
        }
        return true
    }

    /// Whether no byte is ≥ 0x80, eight at a time (every received name is checked).
    public static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var any: UInt64 = 0
        var i = 0
        while i + 8 <= bytes.count {
            any |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            any |= UInt64(bytes[i])
            i += 1
        }
        return any & 0x8080_8080_8080_8080 == 0
    }

    /// One byte per `Known` field: 0 when absent, else its index in `fields` + 1; the top byte
    /// says whether the slots were noted at all.
    private struct KnownSlots: Sendable {
        var bits: UInt64
        static let unknown = KnownSlots(bits: 0)
        static let noted = KnownSlots(bits: 1 << 56)
        var isNoted: Bool { bits >> 56 != 0 }
        func slot(_ field: Known) -> Int { Int(truncatingIfNeeded: bits >> UInt64(field.rawValue * 8)) & 0xFF }
        mutating func note(_ field: Known, at slot: Int) { bits |= UInt64(slot) << UInt64(field.rawValue * 8) }
    }
}

extension HTTPHeaders.Known {
    /// `name` lower-cased, for comparing received bytes.
    var lowercasedName: StaticString {
        switch self {
        case .authorization: "authorization"
        case .origin: "origin"
        case .contentLength: "content-length"
        case .transferEncoding: "transfer-encoding"
        case .expect: "expect"
        case .methodOverride: "x-http-method-override"
        }
    }
}
