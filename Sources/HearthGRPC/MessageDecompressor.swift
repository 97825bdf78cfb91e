import Foundation
import HearthHTTP

/// Inflates compressed gRPC messages (`grpc-encoding: gzip` or `deflate`) through zlib, never past a
/// size limit, so a small message that expands enormously (a decompression bomb) costs at most the limit.
/// Related: https://github.com/grpc/grpc/blob/master/doc/compression.md
enum MessageDecompressor {
    /// Why a compressed message was not inflated.
    enum Failure: Error, Equatable {
        /// The inflated message would exceed the limit.
        case tooLarge
        /// Not valid gzip/zlib data, or it ends early.
        case corrupt
    }

    /// The encodings whose messages this inflates (the gzip and zlib formats are told apart by header).
    static let encodings: Set<String> = ["gzip", "deflate"]

    /// The whole message `compressed` inflated; at most `limit` bytes.
    static func inflate(_ compressed: [UInt8], limit: Int) -> Result<[UInt8], Failure> {
        let inflater = Inflater()
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        return compressed.withUnsafeBytes { input -> Result<[UInt8], Failure> in
            inflater.feed(input)
            while true {
                let step: Inflater.Step
                do {
                    step = try chunk.withUnsafeMutableBytes { try inflater.inflate(into: $0) }
                } catch {
                    return .failure(.corrupt)
                }
                if output.count + step.produced > limit { return .failure(.tooLarge) }
                output.append(contentsOf: chunk[0..<step.produced])
                // One message is one stream: bytes after its end are not part of it.
                if step.ended { return inflater.pendingInput == 0 ? .success(output) : .failure(.corrupt) }
                // No progress possible with input used up: the stream ended early.
                if step.produced == 0 && inflater.pendingInput == 0 { return .failure(.corrupt) }
            }
        }
    }
}
