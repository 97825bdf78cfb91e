import HearthCrypto

/// MD5 and CRC32C of an object's bytes fed in order: what GCS reports as `md5Hash` and `crc32c`.
///
/// Not thread-safe: one thread feeds it at a time. It crosses threads only where the hand-over
/// orders the accesses (`UploadDigests`' lock between one chunk's request and the next), hence
/// the unchecked conformance.
final class ObjectDigest: @unchecked Sendable {
    private let md5 = StreamingDigest(.md5)
    private var crc = CRC32(.castagnoli)

    func update(_ bytes: UnsafeRawBufferPointer) {
        md5.update(bytes)
        crc.update(bytes)
    }

    /// The digests of everything fed; call once.
    func finalize() -> (md5: [UInt8], crc32c: UInt32) { (md5.finalize(), crc.value) }
}
