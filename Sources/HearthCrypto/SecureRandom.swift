internal import COpenSSL

/// Cryptographically strong random bytes from libcrypto's RAND_bytes.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return out }
        // RAND_bytes fails only when the generator cannot be seeded, which leaves nothing safe to do.
        guard RAND_bytes(&out, Int32(count)) == 1 else { fatalError("RAND_bytes failed") }
        return out
    }
}
