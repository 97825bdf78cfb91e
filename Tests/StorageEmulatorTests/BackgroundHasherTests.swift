import HearthBlobs
import HearthCrypto
import Testing
@testable import StorageEmulator

/// Hashing on the digest thread gives the digests of the bytes in order, whatever the pieces.
@Suite struct BackgroundHasherTests {
    @Test(arguments: [0, 1, 1000, BackgroundHasher.batchSize - 1, BackgroundHasher.batchSize,
                      BackgroundHasher.batchSize + 1, BackgroundHasher.batchSize * (BackgroundHasher.inFlight + 3) + 12_345])
    func piecesOfEverySizeHashInOrder(total: Int) {
        let data = StorageHarness.bytes(total)
        let digest = ObjectDigest()
        let hasher = BackgroundHasher { digest.update($0) }
        var offset = 0, step = 1
        while offset < data.count {
            // Piece sizes that straddle batch boundaries in every way.
            let end = min(data.count, offset + step)
            data[offset..<end].withUnsafeBytes { hasher.update($0) }
            offset = end
            step = step * 7 % 300_007 + 1
        }
        hasher.drain()
        let d = digest.finalize()
        #expect(d.md5 == Digest.md5(data))
        #expect(d.crc32c == CRC32.checksum(data, variant: .castagnoli))
    }
}
