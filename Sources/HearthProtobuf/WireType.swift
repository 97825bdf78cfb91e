/// The protobuf wire types Hearth reads and writes (groups, 3 and 4, are obsolete and rejected).
///
/// Related: https://protobuf.dev/programming-guides/encoding/
public enum WireType: UInt8, Sendable {
    case varint = 0
    case fixed64 = 1
    case lengthDelimited = 2
    case fixed32 = 5
}
