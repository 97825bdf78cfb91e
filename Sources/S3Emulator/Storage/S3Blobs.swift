import HearthBlobs

/// S3's blob namespace: the `s3_blobs`, `s3_chunks` and `s3_blob_chunks` tables its first
/// migration created (before the blob code moved into `HearthBlobs`).
enum S3BlobNamespace: BlobNamespace {
    static let tables = BlobTables(prefix: "s3")
}

// S3's code names the shared blob types without their namespace.
typealias BlobStore = HearthBlobs.BlobStore<S3BlobNamespace>
typealias BlobWriter = HearthBlobs.BlobWriter<S3BlobNamespace, ChecksumAlgorithm>
typealias BlobBodySource = HearthBlobs.BlobBodySource<S3BlobNamespace>
typealias EmptyBodySource = HearthBlobs.EmptyBodySource

extension ChecksumAlgorithm: BlobChecksumAlgorithm {
    func makeAccumulator() -> RunningChecksum { RunningChecksum(self) }
}

extension RunningChecksum: BlobChecksumAccumulator {}
