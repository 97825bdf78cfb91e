import HearthCore

/// The compact binary form documents are stored in (the `fields` column).
///
/// A tag byte per value, little-endian fixed-width numbers, LEB128 lengths. Decoding is
/// bounds-checked: a damaged row becomes an error, never a crash.
enum StoredValueCodec {
    private enum Tag: UInt8 {
        case null = 0, boolFalse, boolTrue, integer, double, timestamp, string, bytes, reference, geoPoint, array, map
        /// Added after the others, so rows written before vectors existed decode unchanged.
        case vector
    }

    /// Why stored bytes did not decode.
    struct DecodeError: Error {}

    /// Encodes a document's fields (a map without its tag).
    static func encodeFields(_ fields: [ExactString: FirestoreValue]) -> [UInt8] {
        encodeFields(sorted: OrderedEncoding.sortedMembers(fields))
    }

    /// `encodeFields` of fields already in `OrderedEncoding.sortedMembers` order (a writer that
    /// also needs them in that order for the index entries sorts them once for both).
    static func encodeFields(sorted members: [(key: ExactString, value: FirestoreValue)]) -> [UInt8] {
        var out: [UInt8] = []
        // A small document (a few strings and a timestamp) encodes to ~200 bytes: from 64 the
        // buffer was copied twice on the way, in every commit on the single writer.
        out.reserveCapacity(256)
        appendMapBody(sorted: members, to: &out)
        return out
    }

    /// Whether `encodeFields(a) == encodeFields(b)`, decided without encoding either: the form is a
    /// count and the members in key order, each key's bytes and its value's tag and exact bits, so
    /// two maps encode alike exactly when they hold the same keys (byte for byte, as `ExactString`
    /// compares) with values that encode alike. (A transaction's update asked this of two ~200-byte
    /// encodings on the single writer, to keep an unchanged document's update time.)
    static func encodeAlike(_ a: [ExactString: FirestoreValue], _ b: [ExactString: FirestoreValue]) -> Bool {
        guard a.count == b.count else { return false }
        for (key, value) in a {
            guard let other = b[key], encodeAlike(value, other) else { return false }
        }
        return true
    }

    /// Whether two values' encodings (`append`) are the same bytes.
    private static func encodeAlike(_ a: FirestoreValue, _ b: FirestoreValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.boolean(let x), .boolean(let y)): return x == y
        case (.integer(let x), .integer(let y)): return x == y
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.timestamp(let x), .timestamp(let y)): return x.unixMicros == y.unixMicros
        case (.string(let x), .string(let y)): return ExactString.equal(x, y)
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.reference(let x), .reference(let y)): return ExactString.equal(x, y)
        case (.geoPoint(let xa, let xo), .geoPoint(let ya, let yo)):
            return xa.bitPattern == ya.bitPattern && xo.bitPattern == yo.bitPattern
        case (.array(let x), .array(let y)):
            guard x.count == y.count else { return false }
            for i in x.indices where !encodeAlike(x[i], y[i]) { return false }
            return true
        case (.vector(let x), .vector(let y)):
            guard x.count == y.count else { return false }
            for i in x.indices where x[i].bitPattern != y[i].bitPattern { return false }
            return true
        case (.map(let x), .map(let y)): return encodeAlike(x, y)
        default: return false  // different tags
        }
    }

    /// Decodes what `encodeFields` wrote.
    static func decodeFields(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> [ExactString: FirestoreValue] {
        var reader = Reader(bytes: bytes)
        let fields = try reader.mapBody(depth: 0)
        guard reader.offset == bytes.count else { throw DecodeError() }
        return fields
    }

    /// Hands `body` each field named in `names` (top-level names as UTF-8, each once) of what
    /// `encodeFields` wrote, decoded, with its position in `names`; the other fields are stepped over
    /// without being built, and no map is made (a query's walk of an index checks the fields its
    /// filters name on every entry it steps over, most of which it never returns). Returns whether
    /// every name was found.
    static func visitFields(_ bytes: UnsafeRawBufferPointer, only names: [[UInt8]],
                            _ body: (Int, FirestoreValue) -> Void) throws(DecodeError) -> Bool {
        var reader = Reader(bytes: bytes)
        let count = try reader.varint()
        var found = 0
        for _ in 0..<count {
            let key = try reader.rawBytes()
            if let i = names.firstIndex(where: { $0.count == key.count && $0.elementsEqual(key) }) {
                body(i, try reader.value(depth: 1))
                found += 1
                // Keys are stored sorted and each once: nothing more to find.
                if found == names.count { return true }
            } else {
                try reader.skipValue(depth: 1)
            }
        }
        guard reader.offset == bytes.count else { throw DecodeError() }
        return found == names.count
    }

    static func decodeFields(_ bytes: [UInt8]) throws(DecodeError) -> [ExactString: FirestoreValue] {
        do {
            return try bytes.withUnsafeBytes { buffer in try decodeFields(buffer) }
        } catch let e as DecodeError {
            throw e
        } catch {
            throw DecodeError()
        }
    }

    private static func appendVarint(_ value: Int, to out: inout [UInt8]) {
        var v = UInt64(value)
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    private static func appendFixed(_ v: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 0, through: 56, by: 8) { out.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    private static func appendBytes<C: Collection>(_ bytes: C, to out: inout [UInt8]) where C.Element == UInt8 {
        appendVarint(bytes.count, to: &out)
        out.append(contentsOf: bytes)
    }

    private static func appendMapBody(_ members: [ExactString: FirestoreValue], to out: inout [UInt8]) {
        appendMapBody(sorted: OrderedEncoding.sortedMembers(members), to: &out)
    }

    private static func appendMapBody(sorted members: [(key: ExactString, value: FirestoreValue)], to out: inout [UInt8]) {
        appendVarint(members.count, to: &out)
        for (key, value) in members {
            appendBytes(key.string.utf8, to: &out)
            append(value, to: &out)
        }
    }

    private static func append(_ value: FirestoreValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(Tag.null.rawValue)
        case .boolean(let b): out.append(b ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
        case .integer(let i):
            out.append(Tag.integer.rawValue)
            appendFixed(UInt64(bitPattern: i), to: &out)
        case .double(let d):
            out.append(Tag.double.rawValue)
            appendFixed(d.bitPattern, to: &out)
        case .timestamp(let t):
            out.append(Tag.timestamp.rawValue)
            appendFixed(UInt64(bitPattern: t.unixMicros), to: &out)
        case .string(let s):
            out.append(Tag.string.rawValue)
            appendBytes(s.utf8, to: &out)
        case .bytes(let b):
            out.append(Tag.bytes.rawValue)
            appendBytes(b, to: &out)
        case .reference(let r):
            out.append(Tag.reference.rawValue)
            appendBytes(r.utf8, to: &out)
        case .geoPoint(let lat, let lng):
            out.append(Tag.geoPoint.rawValue)
            appendFixed(lat.bitPattern, to: &out)
            appendFixed(lng.bitPattern, to: &out)
        case .array(let elements):
            out.append(Tag.array.rawValue)
            appendVarint(elements.count, to: &out)
            for e in elements { append(e, to: &out) }
        case .vector(let elements):
            out.append(Tag.vector.rawValue)
            appendVarint(elements.count, to: &out)
            for e in elements { appendFixed(e.bitPattern, to: &out) }
        case .map(let members):
            out.append(Tag.map.rawValue)
            appendMapBody(members, to: &out)
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        mutating func byte() throws(DecodeError) -> UInt8 {
            guard offset < bytes.count else { throw DecodeError() }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws(DecodeError) -> Int {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let b = try byte()
                result |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { break }
                shift += 7
                guard shift < 63 else { throw DecodeError() }
            }
            guard result <= UInt64(bytes.count) else { throw DecodeError() }
            return Int(result)
        }

        mutating func fixed() throws(DecodeError) -> UInt64 {
            guard offset + 8 <= bytes.count else { throw DecodeError() }
            var v: UInt64 = 0
            for i in 0..<8 { v |= UInt64(bytes[offset + i]) << UInt64(8 * i) }
            offset += 8
            return v
        }

        mutating func rawBytes() throws(DecodeError) -> UnsafeRawBufferPointer {
            let n = try varint()
            guard offset + n <= bytes.count else { throw DecodeError() }
            defer { offset += n }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + n])
        }

        mutating func string() throws(DecodeError) -> String {
            String(decoding: try rawBytes(), as: UTF8.self)
        }

        mutating func mapBody(depth: Int) throws(DecodeError) -> [ExactString: FirestoreValue] {
            let count = try varint()
            var members: [ExactString: FirestoreValue] = [:]
            members.reserveCapacity(count)
            for _ in 0..<count {
                let key = ExactString(try string())
                members[key] = try value(depth: depth + 1)
            }
            return members
        }

        /// Moves past one value, building nothing.
        mutating func skipValue(depth: Int) throws(DecodeError) {
            guard depth < 128, let tag = Tag(rawValue: try byte()) else { throw DecodeError() }
            switch tag {
            case .null, .boolFalse, .boolTrue: return
            case .integer, .double, .timestamp: try skip(8)
            case .geoPoint: try skip(16)
            case .string, .bytes, .reference: _ = try rawBytes()
            case .array:
                for _ in 0..<(try varint()) { try skipValue(depth: depth + 1) }
            case .vector:
                let count = try varint()
                guard count <= (bytes.count - offset) / 8 else { throw DecodeError() }
                try skip(8 * count)
            case .map:
                for _ in 0..<(try varint()) {
                    _ = try rawBytes()
                    try skipValue(depth: depth + 1)
                }
            }
        }

        mutating func skip(_ n: Int) throws(DecodeError) {
            guard offset + n <= bytes.count else { throw DecodeError() }
            offset += n
        }

        mutating func value(depth: Int) throws(DecodeError) -> FirestoreValue {
            guard depth < 128, let tag = Tag(rawValue: try byte()) else { throw DecodeError() }
            switch tag {
            case .null: return .null
            case .boolFalse: return .boolean(false)
            case .boolTrue: return .boolean(true)
            case .integer: return .integer(Int64(bitPattern: try fixed()))
            case .double: return .double(Double(bitPattern: try fixed()))
            case .timestamp: return .timestamp(Instant(unixMicros: Int64(bitPattern: try fixed())))
            case .string: return .string(try string())
            case .bytes: return .bytes(Array(try rawBytes()))
            case .reference: return .reference(try string())
            case .geoPoint:
                let lat = Double(bitPattern: try fixed())
                return .geoPoint(latitude: lat, longitude: Double(bitPattern: try fixed()))
            case .array:
                let count = try varint()
                var elements: [FirestoreValue] = []
                elements.reserveCapacity(count)
                for _ in 0..<count { elements.append(try value(depth: depth + 1)) }
                return .array(elements)
            case .vector:
                let count = try varint()
                var elements: [Double] = []
                elements.reserveCapacity(count)
                for _ in 0..<count { elements.append(Double(bitPattern: try fixed())) }
                return .vector(elements)
            case .map:
                return .map(try mapBody(depth: depth))
            }
        }
    }
}
