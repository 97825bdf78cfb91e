import Foundation
internal import CZlib

/// zlib's inflate, wrapped once for every module that reads compressed bodies: gRPC messages
/// (`grpc-encoding: gzip`/`deflate`, HearthGRPC) and Storage's decompressive transcoding. The gzip
/// and zlib formats are told apart by their headers (`hearth_inflate_init`). The caller owns the
/// pacing: it feeds input, asks for output into its own buffer, and decides what an ended stream or a
/// starved one means — so a size limit or a streamed body is the caller's, never a buffer here.
/// Not thread-safe: one owner, or the owner's lock.
public final class Inflater {
    /// The input is not a valid gzip/zlib stream (or zlib could not start).
    public struct Corrupt: Error {
        public init() {}
    }

    /// What one `inflate` call did: bytes written to the output, and whether a stream ended there
    /// (input after it is left in `pendingInput`).
    public struct Step {
        public let produced: Int
        public let ended: Bool
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let ready: Bool

    public init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        ready = hearth_inflate_init(stream) == Z_OK
    }

    deinit {
        if ready { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Input bytes fed and not yet read by zlib.
    public var pendingInput: Int { Int(stream.pointee.avail_in) }

    /// The next input byte zlib will read, if any (a caller looking for another gzip member).
    public var nextInputByte: UInt8? { stream.pointee.avail_in > 0 ? stream.pointee.next_in.pointee : nil }

    /// Makes `input` the bytes to read next; it must stay valid until `pendingInput` is 0 or the
    /// caller feeds again.
    public func feed(_ input: UnsafeRawBufferPointer) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = UInt32(clamping: input.count)
    }

    /// Inflates what was fed into `output`. A step that produced nothing and left no input pending
    /// is starved (more input needed, or the stream was cut: the caller knows which).
    public func inflate(into output: UnsafeMutableRawBufferPointer) throws -> Step {
        guard ready else { throw Corrupt() }
        guard let base = output.baseAddress, !output.isEmpty else { return Step(produced: 0, ended: false) }
        let room = UInt32(clamping: output.count)
        stream.pointee.next_out = base.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = room
        let status = CZlib.inflate(stream, Z_NO_FLUSH)
        let produced = Int(room - stream.pointee.avail_out)
        switch status {
        case Z_STREAM_END: return Step(produced: produced, ended: true)
        case Z_OK: return Step(produced: produced, ended: false)
        // No progress possible because the input ran out: starved, not corrupt.
        case Z_BUF_ERROR where stream.pointee.avail_in == 0: return Step(produced: produced, ended: false)
        default: throw Corrupt()
        }
    }

    /// Ready for another stream (the next member of a multi-member gzip file), input kept.
    public func reset() throws {
        guard ready, inflateReset(stream) == Z_OK else { throw Corrupt() }
    }
}
