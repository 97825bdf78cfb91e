import HearthHTTP
@testable import HearthGRPC
@testable import StorageEmulator

/// Differential: Storage's decompressive transcoding (`GunzipBodySource`, the stored object inflated
/// as a download reads it) on any stored bytes, read in ragged pieces from a ragged source, against
/// the same bytes read in large pieces — and, where the bytes are one gzip stream, against gRPC's
/// whole-message inflation (`MessageDecompressor`). The object is a client's upload, so every byte
/// of it is untrusted; the streaming reader has state across reads (members, a member's start,
/// input left in zlib) that the whole-message path does not.
extension FuzzTargets {
    /// Output read per input at most: a small object may inflate enormously (a bomb), and a
    /// download streams it; the target compares this much of it.
    static let gunzipCap = 64 << 10

    /// Two bytes of read sizes (the download's buffer, the stored object's chunks), then the object.
    static func gunzip(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard bytes.count >= 2 else { return }
        let outputPiece = Int(bytes[0]) % 97 + 1
        let inputPiece = Int(bytes[1]) % 61 + 1
        let object = Array(bytes[2...])
        let ragged = GunzipReading.read(object, outputPiece: outputPiece, sourcePiece: inputPiece, inputSize: inputPiece * 3)
        let whole = GunzipReading.read(object, outputPiece: 64 << 10, sourcePiece: 64 << 10, inputSize: 64 << 10)
        switch (ragged, whole) {
        case (.inflated(let a, let capped), .inflated(let b, let bCapped)):
            // A capped read stops at a piece boundary: compare what both read.
            let common = min(a.count, b.count)
            guard a.prefix(common) == b.prefix(common), capped || bCapped || a.count == b.count else {
                throw FuzzFailure("gunzip: \(a.count) bytes read in pieces of \(outputPiece) from pieces of \(inputPiece), \(b.count) read whole; first difference at \((0..<common).first { a[$0] != b[$0] } ?? common)")
            }
        case (.corrupt, .corrupt):
            break
        case (.inflated(_, let capped), .corrupt), (.corrupt, .inflated(_, let capped)):
            // The capped side stopped before it reached the damage.
            guard capped else {
                throw FuzzFailure("gunzip: read in pieces of \(outputPiece) from pieces of \(inputPiece): \(ragged); read whole: \(whole)")
            }
        }
        FuzzChecks.count("gunzip")
        // One gzip stream whole: the transcoded download is exactly what gRPC's inflation gives.
        guard GzipTranscoding.isGzip(object),
              case .success(let message) = MessageDecompressor.inflate(object, limit: gunzipCap) else { return }
        guard case .inflated(let streamed, _) = whole, streamed == message else {
            throw FuzzFailure("gunzip: one gzip stream of \(message.count) bytes by MessageDecompressor; the download read \(whole)")
        }
        FuzzChecks.count("gunzip")
    }
}

/// One download of a stored object through `GunzipBodySource`.
enum GunzipReading: CustomStringConvertible {
    case inflated([UInt8], capped: Bool)
    case corrupt

    var description: String {
        switch self {
        case .inflated(let bytes, let capped): "\(bytes.count) bytes\(capped ? " (capped)" : "")"
        case .corrupt: "corrupt"
        }
    }

    /// Reads `object` in pieces of `outputPiece` bytes; the stored bytes arrive `sourcePiece` at a
    /// time into an input buffer of `inputSize`.
    static func read(_ object: [UInt8], outputPiece: Int, sourcePiece: Int, inputSize: Int) -> GunzipReading {
        let source = GunzipBodySource(inner: PiecewiseSource(object, piece: sourcePiece), inputSize: inputSize)
        defer { source.close() }
        var out: [UInt8] = []
        var piece = [UInt8](repeating: 0, count: outputPiece)
        while out.count < FuzzTargets.gunzipCap {
            let n: Int
            do {
                n = try piece.withUnsafeMutableBytes { try source.read(into: $0) }
            } catch {
                return .corrupt
            }
            if n == 0 { return .inflated(out, capped: false) }
            out += piece[0..<n]
        }
        return .inflated(out, capped: true)
    }
}

/// Stored bytes handed out at most `piece` at a time, as a chunked blob reads.
private final class PiecewiseSource: ResponseBodySource, @unchecked Sendable {
    private let bytes: [UInt8]
    private let piece: Int
    private var position = 0

    init(_ bytes: [UInt8], piece: Int) {
        self.bytes = bytes
        self.piece = piece
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(piece, buffer.count, bytes.count - position)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + position, byteCount: n) }
        position += n
        return n
    }

    func close() {}
}
