/// Why a protobuf message could not be read, and where: the byte offset from the start of the
/// outermost message, so an INVALID_ARGUMENT can point at the bad byte.
public struct ProtoDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong (`varint longer than 10 bytes`, `length 300 runs past the end`, …).
    public var reason: String
    /// Offset of the field or value that failed, from the start of the buffer.
    public var offset: Int

    public init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(reason) at byte \(offset)" }
}
