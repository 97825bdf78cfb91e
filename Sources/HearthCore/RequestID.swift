/// A request id as the request log and log lines show it: 16 upper-case hex digits (S3's
/// `x-amz-request-id` shape). Made from the generator's 64 bits, its text is spelled only when read:
/// the 16-byte string is one byte too long for Swift's inline small strings, so making it for every
/// gRPC call was an allocation and a free (~0.8k instructions a one-stream get, docs/benchmarks.md,
/// grpctail29) that only a read of the request log or a log line needs.
public enum RequestID: Sendable, Equatable {
    /// The generator's 64 bits: the text is their 16 hex digits, most significant first.
    case bits(UInt64)
    /// An id given as text (a test's, or one another part of the process made).
    case text(String)

    private static let digits: StaticString = "0123456789ABCDEF"

    /// The id as it is shown.
    public var text: String {
        switch self {
        case .text(let s):
            return s
        case .bits(let z):
            return String(unsafeUninitializedCapacity: 16) { out in
                let d = Self.digits.utf8Start
                for i in 0..<16 { out[i] = d[Int((z >> UInt64(60 - 4 * i)) & 0xF)] }
                return 16
            }
        }
    }
}
