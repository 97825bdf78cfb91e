/// Appends protobuf fields to a byte buffer.
///
/// Nested messages are written in place: `message(_:_:)` reserves one length byte, writes the
/// body, then widens the length if the body turned out longer than 127 bytes (one move of the
/// body, instead of encoding it into a second buffer and copying it).
///
/// Related: https://protobuf.dev/programming-guides/encoding/
public struct ProtoWriter: Sendable {
    /// The encoded bytes so far.
    public var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// A raw varint (no tag).
    public mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// A field key.
    public mutating func tag(_ field: Int, _ wireType: WireType) {
        varint(UInt64(field) << 3 | UInt64(wireType.rawValue))
    }

    // MARK: Scalar fields (always written, so oneof members and explicit defaults survive)

    public mutating func uint64(_ field: Int, _ value: UInt64) {
        tag(field, .varint)
        varint(value)
    }

    /// `int64` / `int32` (negative values take ten bytes, as the encoding says).
    public mutating func int64(_ field: Int, _ value: Int64) {
        uint64(field, UInt64(bitPattern: value))
    }

    public mutating func bool(_ field: Int, _ value: Bool) {
        uint64(field, value ? 1 : 0)
    }

    /// `sint64` / `sint32`.
    public mutating func sint64(_ field: Int, _ value: Int64) {
        uint64(field, UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    public mutating func double(_ field: Int, _ value: Double) {
        fixed64(field, value.bitPattern)
    }

    public mutating func fixed64(_ field: Int, _ value: UInt64) {
        tag(field, .fixed64)
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    public mutating func fixed32(_ field: Int, _ value: UInt32) {
        tag(field, .fixed32)
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }

    public mutating func float(_ field: Int, _ value: Float) {
        fixed32(field, value.bitPattern)
    }

    public mutating func string(_ field: Int, _ value: String) {
        tag(field, .lengthDelimited)
        var v = value
        v.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    public mutating func bytes<C: Collection>(_ field: Int, _ value: C) where C.Element == UInt8 {
        tag(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A packed repeated varint field (omitted when empty, as proto3 does).
    public mutating func packedVarints(_ field: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        message(field) { w in
            for v in values { w.varint(v) }
        }
    }

    // MARK: Proto3 defaults omitted (plain scalar fields)

    public mutating func int64IfNonZero(_ field: Int, _ value: Int64) {
        if value != 0 { int64(field, value) }
    }

    public mutating func boolIfTrue(_ field: Int, _ value: Bool) {
        if value { bool(field, true) }
    }

    public mutating func stringIfNonEmpty(_ field: Int, _ value: String) {
        if !value.isEmpty { string(field, value) }
    }

    public mutating func bytesIfNonEmpty(_ field: Int, _ value: [UInt8]) {
        if !value.isEmpty { bytes(field, value) }
    }

    // MARK: Nested messages

    /// A nested message whose body `body` writes (an empty body is still written: the field is set).
    public mutating func message(_ field: Int, _ body: (inout ProtoWriter) -> Void) {
        tag(field, .lengthDelimited)
        let lengthAt = bytes.count
        bytes.append(0)
        body(&self)
        let length = bytes.count - lengthAt - 1
        if length < 0x80 {
            bytes[lengthAt] = UInt8(length)
            return
        }
        var prefix: [UInt8] = []
        var v = UInt64(length)
        while v >= 0x80 {
            prefix.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        prefix.append(UInt8(v))
        bytes.replaceSubrange(lengthAt..<(lengthAt + 1), with: prefix)
    }

    /// An already encoded message as field `field`.
    public mutating func encodedMessage(_ field: Int, _ encoded: [UInt8]) {
        bytes(field, encoded)
    }
}
