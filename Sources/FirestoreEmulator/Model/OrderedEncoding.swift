import HearthCore

/// Byte encodings whose `memcmp` order is Firestore's order, so SQLite indexes sort values and
/// document names exactly as Firestore does.
///
/// Values: one tag byte per type class (null < bool < number < timestamp < string < bytes <
/// reference < geopoint < array < vector < map), then a type-specific body:
/// - numbers: NaN first (`0x00`), else `0x01`, the largest double not above the value as 8
///   sortable bytes, and a 2-byte remainder for integers beyond 2^53, so `3 == 3.0` and
///   `2^63 - 1 > 9.223372036854775e18` both hold exactly;
/// - strings, bytes: the bytes with `0x00` escaped as `0x00 0xFF`, ended by `0x00 0x01`
///   (a shorter string sorts first, UTF-8 byte order);
/// - references: each name segment encoded as in a document key, then `0x00 0x00`;
/// - arrays: elements, then `0x00`; maps: for each key in byte order `0x01`, key, value, then `0x00`;
/// - vectors: the dimension (4 bytes big-endian), then each element as a number's body (NaN
///   `0x00`, else `0x01` and 8 sortable bytes): by dimension first, as Firestore orders them.
///
/// Document keys: each path segment escaped and terminated by `0x00 0x01`, so names compare
/// segment by segment and every descendant of a path shares its key as a prefix. A numeric id
/// `__id<N>__` (a Datastore id) is `0x00 0x02`, N as 8 sign-flipped big-endian bytes, `0x00 0x01`:
/// Firestore sorts those before every string id and among themselves by N. `0x00 0x02` is above a
/// reference's end (`0x00 0x00`, so a shorter name still sorts first) and below the first bytes of
/// every id's string encoding (a non-zero byte, or `0x00 0xFF` for an escaped zero); only the
/// empty string (`0x00 0x01`), which no name holds, sorts before it.
enum OrderedEncoding {
    static let tagNull: UInt8 = 0x10
    static let tagBoolean: UInt8 = 0x20
    static let tagNumber: UInt8 = 0x30
    static let tagTimestamp: UInt8 = 0x40
    static let tagString: UInt8 = 0x50
    static let tagBytes: UInt8 = 0x60
    static let tagReference: UInt8 = 0x70
    static let tagGeoPoint: UInt8 = 0x80
    static let tagArray: UInt8 = 0x90
    static let tagVector: UInt8 = 0x98
    static let tagMap: UInt8 = 0xA0

    /// The encoding of `value`.
    static func encode(_ value: FirestoreValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        append(value, to: &out)
        return out
    }

    /// The tag byte that starts every value of `value`'s type class.
    static func tag(of value: FirestoreValue) -> UInt8 {
        switch value {
        case .null: tagNull
        case .boolean: tagBoolean
        case .integer, .double: tagNumber
        case .timestamp: tagTimestamp
        case .string: tagString
        case .bytes: tagBytes
        case .reference: tagReference
        case .geoPoint: tagGeoPoint
        case .array: tagArray
        case .vector: tagVector
        case .map: tagMap
        }
    }

    static func append(_ value: FirestoreValue, to out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(tagNull)
        case .boolean(let b):
            out.append(tagBoolean)
            out.append(b ? 1 : 0)
        case .integer(let i):
            out.append(tagNumber)
            out.append(0x01)
            let (floor, remainder) = floorDouble(i)
            appendSortable(floor, to: &out)
            out.append(UInt8(truncatingIfNeeded: remainder >> 8))
            out.append(UInt8(truncatingIfNeeded: remainder))
        case .double(let d):
            out.append(tagNumber)
            if d.isNaN {
                out.append(0x00)
            } else {
                out.append(0x01)
                appendSortable(d == 0 ? 0 : d, to: &out)  // -0.0 and 0.0 are the same number
                out.append(0)
                out.append(0)
            }
        case .timestamp(let t):
            out.append(tagTimestamp)
            appendBigEndian(UInt64(bitPattern: t.unixMicros) ^ (1 << 63), to: &out)
        case .string(let s):
            out.append(tagString)
            appendEscaped(s.utf8, to: &out)
        case .bytes(let b):
            out.append(tagBytes)
            appendEscaped(b, to: &out)
        case .reference(let name):
            out.append(tagReference)
            for segment in name.split(separator: "/", omittingEmptySubsequences: false) {
                appendSegment(segment, to: &out)
            }
            out.append(0)
            out.append(0)
        case .geoPoint(let lat, let lng):
            out.append(tagGeoPoint)
            appendSortable(lat == 0 ? 0 : lat, to: &out)
            appendSortable(lng == 0 ? 0 : lng, to: &out)
        case .array(let elements):
            out.append(tagArray)
            for e in elements { append(e, to: &out) }
            out.append(0)
        case .vector(let elements):
            out.append(tagVector)
            appendBigEndian32(UInt32(truncatingIfNeeded: elements.count), to: &out)
            for e in elements {
                if e.isNaN {
                    out.append(0x00)
                } else {
                    out.append(0x01)
                    appendSortable(e == 0 ? 0 : e, to: &out)
                }
            }
        case .map(let members):
            out.append(tagMap)
            for (key, value) in sortedMembers(members) {
                out.append(0x01)
                appendEscaped(key.string.utf8, to: &out)
                append(value, to: &out)
            }
            out.append(0)
        }
    }

    /// Keys in UTF-8 byte order (Firestore's string order), not Swift's `String` order.
    static func sortedKeys(_ members: [ExactString: FirestoreValue]) -> [ExactString] {
        members.keys.sorted()
    }

    /// The members in UTF-8 byte order of their keys: `sortedKeys` without a lookup per key.
    static func sortedMembers(_ members: [ExactString: FirestoreValue]) -> [(key: ExactString, value: FirestoreValue)] {
        members.sorted { $0.key < $1.key }
    }

    /// Whether `a` sorts before `b` by UTF-8 bytes.
    static func utf8Less(_ a: String, _ b: String) -> Bool {
        utf8Compare(a, b) < 0
    }

    /// `a`'s UTF-8 bytes against `b`'s, as SQLite compares TEXT: -1, 0 or 1 (a prefix first).
    static func utf8Compare(_ a: String, _ b: String) -> Int {
        ExactString.compare(a, b)
    }

    /// The largest double not above `i`, and `i` minus it (0 ..< 2048).
    static func floorDouble(_ i: Int64) -> (Double, UInt16) {
        var d = Double(i)
        // Double(Int64.max) rounds up to 2^63, which no Int64 holds.
        if d >= 9.223372036854775808e18 || (d.magnitude < 9.223372036854775808e18 && Int64(d) > i) {
            d = d.nextDown
        }
        let base = Int64(d)
        return (d, UInt16(truncatingIfNeeded: i &- base))
    }

    static func appendSortable(_ d: Double, to out: inout [UInt8]) {
        let bits = d.bitPattern
        let sortable = (bits & (1 << 63)) != 0 ? ~bits : bits | (1 << 63)
        appendBigEndian(sortable, to: &out)
    }

    static func appendBigEndian(_ v: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    static func appendBigEndian32(_ v: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    static func appendEscaped<S: Sequence>(_ bytes: S, to out: inout [UInt8]) where S.Element == UInt8 {
        // Contiguous bytes without a 0x00 (nearly every name and string) are copied in one go.
        let copied = bytes.withContiguousStorageIfAvailable { buffer -> Bool in
            guard !buffer.contains(0) else { return false }
            out.append(contentsOf: buffer)
            return true
        } ?? false
        if !copied {
            for b in bytes {
                out.append(b)
                if b == 0 { out.append(0xFF) }
            }
        }
        out.append(0)
        out.append(1)
    }

    // MARK: Document keys

    /// The key of a path given as segments (document or collection path, relative to `documents`).
    static func key<C: Collection>(_ segments: C) -> [UInt8] where C.Element: StringProtocol {
        var out: [UInt8] = []
        var capacity = 0
        for s in segments { capacity += s.utf8.count + 2 }
        out.reserveCapacity(capacity)
        for s in segments { appendSegment(s, to: &out) }
        return out
    }

    /// The second byte that starts a numeric id's segment (after `0x00`).
    static let numericMark: UInt8 = 0x02

    /// Appends one path segment: a numeric id as its number, any other id escaped.
    static func appendSegment<S: StringProtocol>(_ segment: S, to out: inout [UInt8]) {
        guard let n = ResourcePath.numericIDValue(segment) else { return appendEscaped(segment.utf8, to: &out) }
        out.append(0)
        out.append(numericMark)
        appendBigEndian(UInt64(bitPattern: n) ^ (1 << 63), to: &out)
        out.append(0)
        out.append(1)
    }

    /// The numeric id whose segment starts at `i` (at `0x00 0x02`) and the index after it; nil when malformed.
    private static func numericSegment(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> (String, Int)? {
        guard i + 12 <= b.count, b[i] == 0, b[i + 1] == numericMark, b[i + 10] == 0, b[i + 11] == 1 else { return nil }
        var v: UInt64 = 0
        for j in (i + 2)..<(i + 10) { v = v << 8 | UInt64(b[j]) }
        return ("__id\(Int64(bitPattern: v ^ (1 << 63)))__", i + 12)
    }

    /// The smallest byte string greater than every string that starts with `prefix`
    /// (which must end with a segment terminator `0x00 0x01`).
    static func prefixEnd(_ prefix: [UInt8]) -> [UInt8] {
        var end = prefix
        if let last = end.last, last < 0xFF {
            end[end.count - 1] = last + 1
        } else {
            end.append(0xFF)
        }
        return end
    }

    /// The segments of a key built by `key(_:)`; nil when malformed.
    static func segments(ofKey bytes: [UInt8]) -> [String]? {
        // Each segment straight from its bytes: run for every document a query or listing reads,
        // where appending byte by byte to a buffer was ~6k instructions a key (docs/benchmarks.md,
        // listbench). A key holding an escaped zero byte takes the general path.
        bytes.withUnsafeBufferPointer { b -> [String]? in
            var result: [String] = []
            var start = 0
            var i = 0
            while i < b.count {
                guard b[i] == 0 else {
                    i += 1
                    continue
                }
                if i == start, i + 1 < b.count, b[i + 1] == numericMark {
                    guard let (id, next) = numericSegment(b, at: i) else { return nil }
                    result.append(id)
                    i = next
                    start = i
                    continue
                }
                guard i + 1 < b.count, b[i + 1] == 1 else { return unescapedSegments(ofKey: bytes) }
                result.append(String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self))
                i += 2
                start = i
            }
            return start == b.count ? result : nil
        }
    }

    /// `segments(ofKey:)` for any key, escaped zero bytes (`00 FF`) included; nil when malformed.
    private static func unescapedSegments(ofKey bytes: [UInt8]) -> [String]? {
        var result: [String] = []
        var current: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0 {
                guard i + 1 < bytes.count else { return nil }
                if bytes[i + 1] == numericMark, current.isEmpty {
                    guard let (id, next) = bytes.withUnsafeBufferPointer({ numericSegment($0, at: i) }) else { return nil }
                    result.append(id)
                    i = next
                    continue
                }
                if bytes[i + 1] == 0xFF {
                    current.append(0)
                } else if bytes[i + 1] == 1 {
                    result.append(String(decoding: current, as: UTF8.self))
                    current.removeAll(keepingCapacity: true)
                } else {
                    return nil
                }
                i += 2
            } else {
                current.append(b)
                i += 1
            }
        }
        return current.isEmpty ? result : nil
    }

    /// The offset just past `count` whole segments of the key `bytes` from offset `from` (a segment
    /// boundary); nil when fewer follow. A numeric id's segment (`00 02`, 8 bytes, `00 01`) is taken
    /// whole: its 8 bytes may hold `00 01` themselves. Within a string segment `00` is followed by
    /// `FF` (an escaped zero) or `01` (its end).
    static func end(ofSegments count: Int, in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        var i = from
        for _ in 0..<count {
            if i + 1 < bytes.count, bytes[i] == 0, bytes[i + 1] == numericMark {
                i += 12
                guard i <= bytes.count else { return nil }
                continue
            }
            while true {
                guard i + 1 < bytes.count else { return nil }
                if bytes[i] != 0 {
                    i += 1
                } else if bytes[i + 1] == 1 {
                    i += 2
                    break
                } else {
                    i += 2
                }
            }
        }
        return i
    }

    /// The key of the parent of the path whose key is `bytes`: `bytes` without its last segment
    /// (`ResourcePath.parent.key`); nil when `bytes` is empty or not whole segments.
    static func parentKey(ofKey bytes: [UInt8]) -> [UInt8]? {
        bytes.withUnsafeBytes { b -> [UInt8]? in
            var last = 0, i = 0
            while i < b.count {
                guard let next = end(ofSegments: 1, in: b, from: i) else { return nil }
                (last, i) = (i, next)
            }
            return i == 0 ? nil : Array(b[..<last])
        }
    }

    /// The first segment of `bytes` after `prefix`, when `bytes` starts with `prefix`.
    static func segment(after prefix: [UInt8], in bytes: [UInt8]) -> String? {
        guard bytes.count > prefix.count, bytes.starts(with: prefix) else { return nil }
        if bytes.count > prefix.count + 1, bytes[prefix.count] == 0, bytes[prefix.count + 1] == numericMark {
            return bytes.withUnsafeBufferPointer { numericSegment($0, at: prefix.count)?.0 }
        }
        var current: [UInt8] = []
        var i = prefix.count
        while i + 1 < bytes.count {
            if bytes[i] == 0 {
                if bytes[i + 1] == 0xFF {
                    current.append(0)
                } else if bytes[i + 1] == 1 {
                    return String(decoding: current, as: UTF8.self)
                } else {
                    return nil
                }
                i += 2
            } else {
                current.append(bytes[i])
                i += 1
            }
        }
        return nil
    }

    /// `memcmp`-style comparison.
    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let n = min(a.count, b.count)
        var i = 0
        while i < n {
            if a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
            i += 1
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }
}
