import Foundation
internal import CZlib

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
        var stream = z_stream()
        guard hearth_inflate_init(&stream) == Z_OK else { return .failure(.corrupt) }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        return compressed.withUnsafeBufferPointer { input -> Result<[UInt8], Failure> in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = UInt32(input.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                if output.count + produced > limit { return .failure(.tooLarge) }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END:
                    // One message is one stream: bytes after its end are not part of it.
                    return stream.avail_in == 0 ? .success(output) : .failure(.corrupt)
                case Z_OK:
                    // No progress possible with input used up: the stream ended early.
                    if stream.avail_in == 0 && produced == 0 { return .failure(.corrupt) }
                case Z_BUF_ERROR where stream.avail_in == 0:
                    return .failure(.corrupt)
                default:
                    return .failure(.corrupt)
                }
            }
        }
    }
}
