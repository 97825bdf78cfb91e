import HearthCrypto

/// The key a blob's chunks are encrypted with at rest (envelope encryption's data key).
///
/// Each chunk row holds `AESGCM.seal` of its bytes — its own random nonce, the ciphertext, the
/// tag — so any chunk opens on its own: a range read decrypts only the chunks it touches, and a
/// blob that shares chunks with another (a multipart object's parts, a copy) opens with the same
/// key. Slices (`offset`, `length`, `chunk_start`) stay in plaintext coordinates. GCM rather
/// than CTR because a chunk is always read whole anyway, and the tag turns a wrong key or a
/// damaged row into an error instead of garbage.
public struct BlobDataKey: Sendable, Equatable {
    /// The 32 key bytes.
    public let bytes: [UInt8]

    /// A key from these bytes (32 of them).
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == AESGCM.keySize else { return nil }
        self.bytes = bytes
    }

    /// A fresh key from the secure random generator (never the seeded id generator: a key must
    /// not be reproducible from `--seed`).
    public static func random() -> BlobDataKey { BlobDataKey(SecureRandom.bytes(AESGCM.keySize))! }

    /// How many more bytes a sealed chunk takes than its plaintext.
    public static var overhead: Int { AESGCM.overhead }

    func seal(_ plain: UnsafeRawBufferPointer) -> [UInt8] { AESGCM.seal(plain, key: bytes) }

    /// The plaintext of one stored chunk row.
    /// - Throws: `ChunkUnreadable` when the key is not the chunk's or the row was altered.
    func open(_ row: UnsafeRawBufferPointer) throws -> [UInt8] {
        do { return try AESGCM.open(row, key: bytes) } catch { throw ChunkUnreadable() }
    }
}

/// A chunk row that does not open with the key given (the wrong key, or damaged bytes).
public struct ChunkUnreadable: Error {
    public init() {}
}
