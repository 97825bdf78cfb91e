internal import COpenSSL

/// AES-256-GCM from libcrypto's EVP interface: authenticated encryption of one message under a
/// 256-bit key with a fresh random 96-bit nonce.
///
/// A sealed box is `nonce (12) ‖ ciphertext ‖ tag (16)`, so it is exactly `overhead` bytes longer
/// than the plaintext and carries everything `open` needs besides the key. Random nonces are safe
/// for up to 2^32 messages per key (NIST SP 800-38D §8.3); callers keep far below that by giving
/// every object its own data key.
public enum AESGCM {
    /// Key length in bytes.
    public static let keySize = 32
    /// Nonce length in bytes (GCM's recommended 96 bits).
    public static let nonceSize = 12
    /// Authentication tag length in bytes.
    public static let tagSize = 16
    /// How much longer a sealed box is than its plaintext.
    public static let overhead = nonceSize + tagSize

    /// Why a box could not be opened: the wrong key, or bytes that were altered or truncated.
    public struct AuthenticationFailure: Error, Equatable {
        public init() {}
    }

    /// Encrypts `plaintext` under `key` (32 bytes) with a random nonce; `aad` is authenticated too.
    public static func seal(_ plaintext: UnsafeRawBufferPointer, key: [UInt8], aad: [UInt8] = []) -> [UInt8] {
        precondition(key.count == keySize, "AES-256-GCM needs a 32-byte key")
        let nonce = SecureRandom.bytes(nonceSize)
        var out = [UInt8](repeating: 0, count: plaintext.count + overhead)
        guard let ctx = EVP_CIPHER_CTX_new() else { fatalError("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        // Every call below fails only on allocation failure or a programming error (a wrong
        // length), neither of which leaves a safe way to continue.
        var ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, nil, nil) == 1
        ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceSize), nil) == 1
        ok = ok && EVP_EncryptInit_ex(ctx, nil, nil, key, nonce) == 1
        var n: Int32 = 0
        if ok, !aad.isEmpty { ok = EVP_EncryptUpdate(ctx, nil, &n, aad, Int32(aad.count)) == 1 }
        out.withUnsafeMutableBufferPointer { o in
            for i in 0..<nonceSize { o[i] = nonce[i] }
            let body = o.baseAddress! + nonceSize
            if ok, plaintext.count > 0 {
                ok = EVP_EncryptUpdate(ctx, body, &n, plaintext.bindMemory(to: UInt8.self).baseAddress, Int32(plaintext.count)) == 1
            }
            ok = ok && EVP_EncryptFinal_ex(ctx, body + plaintext.count, &n) == 1
            ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), body + plaintext.count) == 1
        }
        guard ok else { fatalError("AES-256-GCM encryption failed") }
        return out
    }

    /// `seal` of a byte array.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], aad: [UInt8] = []) -> [UInt8] {
        plaintext.withUnsafeBytes { seal($0, key: key, aad: aad) }
    }

    /// Decrypts and authenticates a sealed box.
    /// - Throws: `AuthenticationFailure` for the wrong key or an altered, truncated box.
    public static func open(_ box: UnsafeRawBufferPointer, key: [UInt8], aad: [UInt8] = []) throws(AuthenticationFailure) -> [UInt8] {
        guard key.count == keySize, box.count >= overhead else { throw AuthenticationFailure() }
        let length = box.count - overhead
        var out = [UInt8](repeating: 0, count: length)
        guard let ctx = EVP_CIPHER_CTX_new() else { fatalError("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let bytes = box.bindMemory(to: UInt8.self).baseAddress!
        var ok = EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, nil, nil) == 1
        ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceSize), nil) == 1
        ok = ok && EVP_DecryptInit_ex(ctx, nil, nil, key, bytes) == 1
        var n: Int32 = 0
        if ok, !aad.isEmpty { ok = EVP_DecryptUpdate(ctx, nil, &n, aad, Int32(aad.count)) == 1 }
        out.withUnsafeMutableBufferPointer { o in
            if ok, length > 0 { ok = EVP_DecryptUpdate(ctx, o.baseAddress, &n, bytes + nonceSize, Int32(length)) == 1 }
            // The tag must be set before the final call, which is where GCM compares it.
            let tag = UnsafeMutableRawPointer(mutating: bytes + nonceSize + length)
            ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), tag) == 1
            ok = ok && EVP_DecryptFinal_ex(ctx, (o.baseAddress ?? UnsafeMutablePointer(mutating: bytes)) + length, &n) == 1
        }
        guard ok else { throw AuthenticationFailure() }
        return out
    }

    /// `open` of a byte array.
    public static func open(_ box: [UInt8], key: [UInt8], aad: [UInt8] = []) throws(AuthenticationFailure) -> [UInt8] {
        let opened: [UInt8]? = box.withUnsafeBytes { raw in try? open(raw, key: key, aad: aad) }
        guard let opened else { throw AuthenticationFailure() }
        return opened
    }
}
