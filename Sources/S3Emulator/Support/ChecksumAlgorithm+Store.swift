import Foundation

extension ChecksumAlgorithm {
    /// The algorithm an `x-amz-checksum-algorithm` / `x-amz-sdk-checksum-algorithm` value names (any case).
    init?(name: String) {
        self.init(rawValue: name.lowercased())
    }

    /// `ChecksumCRC32` and so on, as in XML bodies.
    var xmlName: String { "Checksum" + displayName }

    /// Whether S3 can combine part checksums into a full-object one (the CRCs only).
    var supportsFullObjectMultipart: Bool {
        switch self {
        case .crc32, .crc32c, .crc64nvme: true
        case .sha1, .sha256: false
        }
    }

    /// Decodes a base64 value; nil unless it is exactly one checksum long.
    func decode(_ base64: String) -> [UInt8]? {
        guard let d = Data(base64Encoded: base64.trimmingCharacters(in: .whitespaces)), d.count == byteCount else { return nil }
        return [UInt8](d)
    }
}

extension RunningChecksum {
    /// One-shot checksum of `bytes`.
    static func checksum(_ algorithm: ChecksumAlgorithm, _ bytes: [UInt8]) -> [UInt8] {
        let c = RunningChecksum(algorithm)
        bytes.withUnsafeBytes { c.update($0) }
        return c.finalize()
    }
}
