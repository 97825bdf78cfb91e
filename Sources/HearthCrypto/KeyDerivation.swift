internal import COpenSSL

/// Password hashing with libcrypto's PBKDF2.
public enum KeyDerivation {
    /// PBKDF2-HMAC-SHA256 of `password` with `salt`.
    public static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int = 32) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let ok = password.withUnsafeBufferPointer { p in
            p.withMemoryRebound(to: CChar.self) { pc in
                PKCS5_PBKDF2_HMAC(pc.baseAddress, Int32(password.count), salt, Int32(salt.count),
                                  Int32(iterations), EVP_sha256(), Int32(length), &out)
            }
        }
        precondition(ok == 1, "PKCS5_PBKDF2_HMAC failed")
        return out
    }
}
