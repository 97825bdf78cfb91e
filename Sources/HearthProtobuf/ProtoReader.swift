/// Reads one protobuf message (or a nested one) from a byte buffer, field by field.
///
/// Every read is bounds-checked against the end of the current message, so a length that lies
/// ends in a `ProtoDecodingError` and never in a read past the buffer or an allocation sized by the
/// input. Nested readers share the buffer (no copy) and count their depth, so recursion through
/// nested messages stops at `maxDepth`.
///
/// Related: https://protobuf.dev/programming-guides/encoding/
public struct ProtoReader: Sendable {
    /// Deepest nesting of messages a reader descends into (Firestore allows 20 levels of
    /// map/array values, each of which is two messages deep, plus the request around them).
    public static let maxDepth = 100

    @usableFromInline let bytes: [UInt8]
    /// Offset of the next unread byte.
    public private(set) var offset: Int
    /// One past the last byte of this message.
    public let end: Int
    /// How many messages enclose this one (0 for the outermost).
    public let depth: Int

    /// A reader of the whole buffer as one message.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        offset = 0
        end = bytes.count
        depth = 0
    }

    // Internal, not private: ProtoReader+Groups.swift makes readers of groups.
    init(bytes: [UInt8], range: Range<Int>, depth: Int) {
        self.bytes = bytes
        offset = range.lowerBound
        end = range.upperBound
        self.depth = depth
    }

    /// Whether every byte of this message has been read.
    public var isAtEnd: Bool { offset >= end }

    /// The next field's number and wire type; nil at the end of the message.
    /// - Throws: on a malformed tag, field number 0, a number above 2²⁹−1, or a group or unknown wire type.
    public mutating func nextField() throws(ProtoDecodingError) -> (number: Int, wireType: WireType)? {
        guard offset < end else { return nil }
        let at = offset
        let key = try readVarint()
        let number = key >> 3
        guard number >= 1, number <= 0x1FFF_FFFF else {
            throw ProtoDecodingError("invalid field number \(number)", at: at)
        }
        guard let type = WireType(rawValue: UInt8(key & 7)) else {
            throw ProtoDecodingError("unsupported wire type \(key & 7) for field \(number)", at: at)
        }
        return (Int(number), type)
    }

    /// A base-128 varint of at most 10 bytes.
    public mutating func readVarint() throws(ProtoDecodingError) -> UInt64 {
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end else { throw ProtoDecodingError("truncated varint", at: start) }
            let b = bytes[offset]
            offset += 1
            // The tenth byte may carry only the top bit of a 64-bit value.
            if shift == 63 && b > 1 { throw ProtoDecodingError("varint overflows 64 bits", at: start) }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
            if shift > 63 { throw ProtoDecodingError("varint longer than 10 bytes", at: start) }
        }
    }

    /// A little-endian 32-bit value.
    public mutating func readFixed32() throws(ProtoDecodingError) -> UInt32 {
        guard end - offset >= 4 else { throw ProtoDecodingError("truncated fixed32", at: offset) }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[offset + i]) << (8 * UInt32(i)) }
        offset += 4
        return v
    }

    /// A little-endian 64-bit value.
    public mutating func readFixed64() throws(ProtoDecodingError) -> UInt64 {
        guard end - offset >= 8 else { throw ProtoDecodingError("truncated fixed64", at: offset) }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return v
    }

    /// The byte range of a length-delimited value, checked against the end of the message.
    public mutating func readLengthDelimitedRange() throws(ProtoDecodingError) -> Range<Int> {
        let at = offset
        let length = try readVarint()
        guard length <= UInt64(end - offset) else {
            throw ProtoDecodingError("length \(length) runs past the end of the message", at: at)
        }
        let range = offset..<(offset + Int(length))
        offset = range.upperBound
        return range
    }

    /// A length-delimited value's bytes (copied; the size is bounded by the input already read).
    public mutating func readBytes() throws(ProtoDecodingError) -> [UInt8] {
        Array(bytes[try readLengthDelimitedRange()])
    }

    /// A length-delimited value as UTF-8 text (proto3 `string` must be valid UTF-8).
    public mutating func readString() throws(ProtoDecodingError) -> String {
        let at = offset
        let range = try readLengthDelimitedRange()
        let slice = bytes[range]
        // `String(decoding:)` would repair bad bytes silently; proto3 rejects them. (The stdlib's
        // `String(validating:)` needs macOS 15, above the package's floor.)
        let invalid = transcode(slice.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: true, into: { _ in })
        guard !invalid else { throw ProtoDecodingError("string field is not valid UTF-8", at: at) }
        return String(decoding: slice, as: UTF8.self)
    }

    /// A reader of the nested message that follows (a length-delimited value).
    /// - Throws: when the length runs past this message or nesting exceeds `maxDepth`.
    public mutating func readMessage() throws(ProtoDecodingError) -> ProtoReader {
        let at = offset
        guard depth < Self.maxDepth else {
            throw ProtoDecodingError("messages nested more than \(Self.maxDepth) levels deep", at: at)
        }
        return ProtoReader(bytes: bytes, range: try readLengthDelimitedRange(), depth: depth + 1)
    }

    /// Skips the value of a field of `wireType` (an unknown field).
    public mutating func skip(_ wireType: WireType) throws(ProtoDecodingError) {
        switch wireType {
        case .varint: _ = try readVarint()
        case .fixed64: _ = try readFixed64()
        case .fixed32: _ = try readFixed32()
        case .lengthDelimited: _ = try readLengthDelimitedRange()
        }
    }

    /// The varints of a packed repeated field, or the single one of an unpacked element.
    public mutating func readVarints(_ wireType: WireType) throws(ProtoDecodingError) -> [UInt64] {
        try readRepeated(wireType, element: .varint) { (r: inout ProtoReader) throws(ProtoDecodingError) in try r.readVarint() }
    }

    /// The fixed64 values of a packed repeated field, or the single one of an unpacked element.
    public mutating func readFixed64s(_ wireType: WireType) throws(ProtoDecodingError) -> [UInt64] {
        try readRepeated(wireType, element: .fixed64) { (r: inout ProtoReader) throws(ProtoDecodingError) in try r.readFixed64() }
    }

    /// The fixed32 values of a packed repeated field, or the single one of an unpacked element.
    public mutating func readFixed32s(_ wireType: WireType) throws(ProtoDecodingError) -> [UInt32] {
        try readRepeated(wireType, element: .fixed32) { (r: inout ProtoReader) throws(ProtoDecodingError) in try r.readFixed32() }
    }

    /// One element (`wireType == element`) or a packed run of them (length-delimited); parsers
    /// must accept both for repeated scalars, whichever the schema declares.
    private mutating func readRepeated<T>(_ wireType: WireType, element: WireType,
                                          _ read: (inout ProtoReader) throws(ProtoDecodingError) -> T) throws(ProtoDecodingError) -> [T] {
        if wireType == element { return [try read(&self)] }
        guard wireType == .lengthDelimited else {
            throw ProtoDecodingError("wire type \(wireType.rawValue) where \(element) was expected", at: offset)
        }
        var packed = ProtoReader(bytes: bytes, range: try readLengthDelimitedRange(), depth: depth)
        var out: [T] = []
        while !packed.isAtEnd { out.append(try read(&packed)) }
        return out
    }

    /// Zigzag decoding of `sint32`/`sint64`.
    public static func zigzag(_ v: UInt64) -> Int64 {
        Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1)))
    }
}
