import Foundation
import HearthCrypto

/// The additional checksums S3 accepts in `x-amz-checksum-*` headers and aws-chunked trailers.
///
/// Related: "Checking object integrity" in the S3 user guide; the value is the base64 of the
/// big-endian checksum (CRCs) or of the digest (SHA-1, SHA-256).
enum ChecksumAlgorithm: String, Sendable, CaseIterable, Equatable {
    case crc32, crc32c, crc64nvme, sha1, sha256

    /// The header or trailer name, `x-amz-checksum-crc32`.
    var headerName: String { "x-amz-checksum-\(rawValue)" }

    /// The name S3 uses in messages and in `x-amz-sdk-checksum-algorithm` (`CRC32`).
    var displayName: String { rawValue.uppercased() }

    /// The checksum's length in bytes.
    var byteCount: Int {
        switch self {
        case .crc32, .crc32c: 4
        case .crc64nvme: 8
        case .sha1: 20
        case .sha256: 32
        }
    }

    /// The algorithm a header or trailer name denotes (`x-amz-checksum-crc32`, any case).
    init?(headerName: String) {
        let lower = headerName.lowercased()
        guard lower.hasPrefix("x-amz-checksum-") else { return nil }
        self.init(rawValue: String(lower.dropFirst("x-amz-checksum-".count)))
    }

    /// Whether `value` is a well-formed base64 checksum of this algorithm.
    func isWellFormed(_ value: String) -> Bool {
        guard let data = Data(base64Encoded: value) else { return false }
        return data.count == byteCount
    }
}

/// A checksum computed as body bytes stream past.
final class RunningChecksum {
    private enum State {
        case crc32(CRC32)
        case crc64(CRC64NVME)
        case digest(StreamingDigest)
    }

    let algorithm: ChecksumAlgorithm
    private var state: State

    init(_ algorithm: ChecksumAlgorithm) {
        self.algorithm = algorithm
        switch algorithm {
        case .crc32: state = .crc32(CRC32(.ieee))
        case .crc32c: state = .crc32(CRC32(.castagnoli))
        case .crc64nvme: state = .crc64(CRC64NVME())
        case .sha1: state = .digest(StreamingDigest(.sha1))
        case .sha256: state = .digest(StreamingDigest(.sha256))
        }
    }

    /// Adds bytes.
    func update(_ bytes: UnsafeRawBufferPointer) {
        switch state {
        case .crc32(var crc):
            crc.update(bytes)
            state = .crc32(crc)
        case .crc64(var crc):
            crc.update(bytes)
            state = .crc64(crc)
        case .digest(let digest):
            digest.update(bytes)
        }
    }

    /// The checksum bytes; call once.
    func finalize() -> [UInt8] {
        switch state {
        case .crc32(let crc): crc.bigEndianBytes
        case .crc64(let crc): crc.bigEndianBytes
        case .digest(let digest): digest.finalize()
        }
    }

    /// The checksum as S3 prints it (base64).
    func finalizeBase64() -> String { Data(finalize()).base64EncodedString() }
}

/// CRC-64/NVME (`x-amz-checksum-crc64nvme`): reflected polynomial 0x9A6C9329AC4BC9B5, initial and
/// final XOR all ones. A checksum, not cryptography; the table-driven loop is the standard form.
struct CRC64NVME {
    private static let table: [UInt64] = (0..<256).map { n -> UInt64 in
        var c = UInt64(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0x9A6C_9329_AC4B_C9B5 ^ (c >> 1) : c >> 1 }
        return c
    }

    private var crc: UInt64 = ~0

    /// Adds bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var c = crc
        CRC64NVME.table.withUnsafeBufferPointer { t in
            for b in bytes { c = t[Int((c ^ UInt64(b)) & 0xFF)] ^ (c >> 8) }
        }
        crc = c
    }

    /// The checksum so far.
    var value: UInt64 { ~crc }

    /// The checksum as eight big-endian bytes.
    var bigEndianBytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) } }
}
