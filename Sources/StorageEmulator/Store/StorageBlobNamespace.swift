import HearthBlobs
import HearthCrypto

/// Cloud Storage's blob tables: `storage_blobs`, `storage_chunks`, `storage_blob_chunks`.
enum StorageBlobNamespace: BlobNamespace {
    static let tables = BlobTables(prefix: "storage")
}

/// The checksum GCS computes besides the MD5: CRC32C (`crc32c`, base64 of the big-endian value).
enum StorageChecksum: BlobChecksumAlgorithm {
    case crc32c

    /// A running CRC32C.
    final class Accumulator: BlobChecksumAccumulator {
        private var crc = CRC32(.castagnoli)
        func update(_ bytes: UnsafeRawBufferPointer) { crc.update(bytes) }
        func finalize() -> [UInt8] { crc.bigEndianBytes }
    }

    func makeAccumulator() -> Accumulator { Accumulator() }
}

typealias StorageBlobs = BlobStore<StorageBlobNamespace>
typealias StorageBlobWriter = BlobWriter<StorageBlobNamespace, StorageChecksum>
typealias StorageBodySource = BlobBodySource<StorageBlobNamespace>
