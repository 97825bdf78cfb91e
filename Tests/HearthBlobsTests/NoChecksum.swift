import HearthBlobs

/// No checksum besides the MD5 the writer always computes (the tests' writers need none).
enum NoChecksum: BlobChecksumAlgorithm {
    final class Accumulator: BlobChecksumAccumulator {
        func update(_ bytes: UnsafeRawBufferPointer) {}
        func finalize() -> [UInt8] { [] }
    }
    func makeAccumulator() -> Accumulator { Accumulator() }
}
