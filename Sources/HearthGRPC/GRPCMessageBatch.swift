/// Response messages framed back to back (gRPC's 5-byte prefix each) in one buffer: what one call
/// sends at once goes to the transport as one write, with no copy per message.
///
/// Related: https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md (Length-Prefixed-Message)
public struct GRPCMessageBatch: Sendable {
    /// The framed messages.
    public private(set) var framed: [UInt8] = []
    /// How many messages `framed` holds.
    public private(set) var count = 0

    /// - Parameter capacity: the bytes expected (messages plus 5 per message).
    public init(capacity: Int = 0) {
        framed.reserveCapacity(capacity)
    }

    /// A batch of `count` messages already framed back to back in `framed` (a caller that lays out
    /// a batch of known size at once, rather than message by message).
    public init(framed: [UInt8], count: Int) {
        self.framed = framed
        self.count = count
    }

    /// Appends one uncompressed message.
    public mutating func append(_ message: [UInt8]) {
        let n = message.count
        framed.append(0)
        framed.append(UInt8(truncatingIfNeeded: n >> 24))
        framed.append(UInt8(truncatingIfNeeded: n >> 16))
        framed.append(UInt8(truncatingIfNeeded: n >> 8))
        framed.append(UInt8(truncatingIfNeeded: n))
        framed.append(contentsOf: message)
        count += 1
    }

    /// Appends one uncompressed message that `write` appends to the buffer it is given (a message
    /// made straight into the batch, without an array of its own).
    public mutating func append(writing write: (inout [UInt8]) -> Void) {
        let start = framed.count
        framed.append(contentsOf: repeatElement(0, count: 5))
        write(&framed)
        let n = framed.count - start - 5
        framed[start + 1] = UInt8(truncatingIfNeeded: n >> 24)
        framed[start + 2] = UInt8(truncatingIfNeeded: n >> 16)
        framed[start + 3] = UInt8(truncatingIfNeeded: n >> 8)
        framed[start + 4] = UInt8(truncatingIfNeeded: n)
        count += 1
    }

    /// Calls `body` with each message in order (for a response side that looks at each).
    public func forEachMessage(_ body: (ArraySlice<UInt8>) -> Void) {
        var i = 0
        while i + 5 <= framed.count {
            let n = Int(framed[i + 1]) << 24 | Int(framed[i + 2]) << 16 | Int(framed[i + 3]) << 8 | Int(framed[i + 4])
            body(framed[(i + 5)..<(i + 5 + n)])
            i += 5 + n
        }
    }
}
