internal import COpenSSL
import Foundation

/// Errors from libcrypto key operations.
public struct CryptoError: Error, CustomStringConvertible, Sendable {
    /// What failed, with libcrypto's own reason when it gave one.
    public let description: String

    init(_ what: String) {
        let code = ERR_get_error()
        if code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            description = "\(what): \(String(cString: buffer))"
        } else {
            description = what
        }
    }
}

/// An RSA key pair (or public key) held by libcrypto; signs and verifies RS256.
public final class RSAKey: @unchecked Sendable {
    // EVP_PKEY is reference counted and its sign/verify calls are safe from several threads.
    let pkey: OpaquePointer
    /// Whether the private half is present.
    public let hasPrivateKey: Bool

    private init(pkey: OpaquePointer, hasPrivateKey: Bool) {
        self.pkey = pkey
        self.hasPrivateKey = hasPrivateKey
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Generates a new key pair.
    public static func generate(bits: Int = 2048) throws -> RSAKey {
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nil) else { throw CryptoError("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1 else { throw CryptoError("EVP_PKEY_keygen_init") }
        guard hearth_EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(bits)) == 1 else { throw CryptoError("set_rsa_keygen_bits") }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen(ctx, &key) == 1, let key else { throw CryptoError("EVP_PKEY_keygen") }
        return RSAKey(pkey: key, hasPrivateKey: true)
    }

    /// Reads a PEM private key (PKCS#8 or PKCS#1).
    public convenience init(privateKeyPEM pem: String) throws {
        guard let bio = Self.memoryBIO(pem) else { throw CryptoError("BIO_new_mem_buf") }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw CryptoError("PEM_read_bio_PrivateKey") }
        self.init(pkey: key, hasPrivateKey: true)
    }

    /// Reads a PEM public key (SubjectPublicKeyInfo) or the key of a PEM X.509 certificate.
    public convenience init(publicKeyPEM pem: String) throws {
        guard let bio = Self.memoryBIO(pem) else { throw CryptoError("BIO_new_mem_buf") }
        defer { BIO_free(bio) }
        if pem.contains("BEGIN CERTIFICATE") {
            guard let cert = PEM_read_bio_X509(bio, nil, nil, nil) else { throw CryptoError("PEM_read_bio_X509") }
            defer { X509_free(cert) }
            guard let key = X509_get_pubkey(cert) else { throw CryptoError("X509_get_pubkey") }
            self.init(pkey: key, hasPrivateKey: false)
        } else {
            guard let key = PEM_read_bio_PUBKEY(bio, nil, nil, nil) else { throw CryptoError("PEM_read_bio_PUBKEY") }
            self.init(pkey: key, hasPrivateKey: false)
        }
    }

    /// The private key as PKCS#8 PEM.
    public func privateKeyPEM() throws -> String {
        try Self.withMemoryBIO { bio in PEM_write_bio_PrivateKey(bio, pkey, nil, nil, 0, nil, nil) == 1 }
    }

    /// The public key as SubjectPublicKeyInfo PEM.
    public func publicKeyPEM() throws -> String {
        try Self.withMemoryBIO { bio in PEM_write_bio_PUBKEY(bio, pkey) == 1 }
    }

    /// The modulus and exponent, big-endian, as a JWK publishes them (base64url of these bytes).
    public func publicComponents() throws -> (modulus: [UInt8], exponent: [UInt8]) {
        (try bignum(OSSL_PKEY_PARAM_RSA_N), try bignum(OSSL_PKEY_PARAM_RSA_E))
    }

    private func bignum(_ name: String) throws -> [UInt8] {
        var bn: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &bn) == 1, let bn else { throw CryptoError("EVP_PKEY_get_bn_param \(name)") }
        defer { BN_free(bn) }
        let count = (BN_num_bits(bn) + 7) / 8
        var out = [UInt8](repeating: 0, count: Int(count))
        guard BN_bn2bin(bn, &out) == count else { throw CryptoError("BN_bn2bin \(name)") }
        return out
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 (JWT "RS256") over `message`.
    public func signRS256<D: ContiguousBytes>(_ message: D) throws -> [UInt8] {
        guard hasPrivateKey else { throw CryptoError("signing needs a private key") }
        guard let ctx = EVP_MD_CTX_new() else { throw CryptoError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else { throw CryptoError("EVP_DigestSignInit") }
        return try message.withUnsafeBytes { m -> [UInt8] in
            let base = m.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var length = 0
            guard EVP_DigestSign(ctx, nil, &length, base, m.count) == 1 else { throw CryptoError("EVP_DigestSign size") }
            var out = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(ctx, &out, &length, base, m.count) == 1 else { throw CryptoError("EVP_DigestSign") }
            return Array(out.prefix(length))
        }
    }

    /// Whether `signature` is a valid RS256 signature of `message` under this key.
    public func verifyRS256<D: ContiguousBytes>(_ message: D, signature: [UInt8]) -> Bool {
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
        return message.withUnsafeBytes { m in
            EVP_DigestVerify(ctx, signature, signature.count, m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count) == 1
        }
    }

    /// A self-signed X.509 certificate for this key, as PEM.
    ///
    /// - Parameters:
    ///   - commonName: the subject and issuer CN.
    ///   - subjectAltNames: DNS names and IP addresses, e.g. `["DNS:localhost", "IP:127.0.0.1"]`.
    ///   - notBefore: seconds since 1970 when it starts to be valid.
    ///   - validSeconds: lifetime.
    ///   - serial: the serial number.
    public func selfSignedCertificatePEM(commonName: String, subjectAltNames: [String] = [],
                                         notBefore: Int64, validSeconds: Int64, serial: Int = 1) throws -> String {
        guard hasPrivateKey else { throw CryptoError("a certificate needs the private key") }
        guard let cert = X509_new() else { throw CryptoError("X509_new") }
        defer { X509_free(cert) }
        guard X509_set_version(cert, 2) == 1 else { throw CryptoError("X509_set_version") }
        guard ASN1_INTEGER_set(X509_get_serialNumber(cert), serial) == 1 else { throw CryptoError("ASN1_INTEGER_set") }
        var start = time_t(notBefore)
        var end = time_t(notBefore + validSeconds)
        guard X509_time_adj_ex(X509_getm_notBefore(cert), 0, 0, &start) != nil,
              X509_time_adj_ex(X509_getm_notAfter(cert), 0, 0, &end) != nil else { throw CryptoError("X509_time_adj_ex") }
        guard X509_set_pubkey(cert, pkey) == 1 else { throw CryptoError("X509_set_pubkey") }
        guard let name = X509_get_subject_name(cert) else { throw CryptoError("X509_get_subject_name") }
        guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1 else { throw CryptoError("X509_NAME_add_entry_by_txt") }
        guard X509_set_issuer_name(cert, name) == 1 else { throw CryptoError("X509_set_issuer_name") }
        if !subjectAltNames.isEmpty {
            let value = subjectAltNames.joined(separator: ",")
            guard let ext = X509V3_EXT_conf_nid(nil, nil, NID_subject_alt_name, value) else { throw CryptoError("subjectAltName") }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(cert, ext, -1) == 1 else { throw CryptoError("X509_add_ext subjectAltName") }
        }
        // iOS and macOS refuse TLS server certificates without extendedKeyUsage serverAuth
        // (Apple's "Requirements for trusted certificates in iOS 13 and macOS 10.15").
        guard let eku = X509V3_EXT_conf_nid(nil, nil, NID_ext_key_usage, "serverAuth") else { throw CryptoError("extendedKeyUsage") }
        defer { X509_EXTENSION_free(eku) }
        guard X509_add_ext(cert, eku, -1) == 1 else { throw CryptoError("X509_add_ext extendedKeyUsage") }
        guard X509_sign(cert, pkey, EVP_sha256()) > 0 else { throw CryptoError("X509_sign") }
        return try Self.withMemoryBIO { bio in PEM_write_bio_X509(bio, cert) == 1 }
    }

    private static func memoryBIO(_ text: String) -> OpaquePointer? {
        let bytes = Array(text.utf8)
        // BIO_new_mem_buf does not copy; BIO_write into a fresh memory BIO does.
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        // A short write (allocation failure) would hand the parser a truncated PEM: refuse instead.
        guard bytes.count <= Int(Int32.max), BIO_write(bio, bytes, Int32(bytes.count)) == Int32(bytes.count) || bytes.isEmpty else {
            BIO_free(bio)
            return nil
        }
        return bio
    }

    private static func withMemoryBIO(_ write: (OpaquePointer) -> Bool) throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError("BIO_new") }
        defer { BIO_free(bio) }
        guard write(bio) else { throw CryptoError("PEM write") }
        var pointer: UnsafeMutablePointer<CChar>?
        let length = hearth_BIO_get_mem_data(bio, &pointer)
        guard let pointer, length > 0 else { throw CryptoError("BIO_get_mem_data") }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }
}
