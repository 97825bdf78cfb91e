internal import COpenSSL
import Foundation

/// Why a password-hashing primitive refused to run.
public enum PasswordHashingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A parameter outside what the algorithm, or Hearth's resource limits, allow.
    case invalidParameter(String)
    /// libcrypto reported a failure; its reason is included when it gave one.
    case libcrypto(String)

    public var description: String {
        switch self {
        case .invalidParameter(let what): "invalid parameter: \(what)"
        case .libcrypto(let what): "libcrypto: \(what)"
        }
    }

    /// A libcrypto failure carrying the first queued reason; the rest of the thread's error queue
    /// is cleared so it cannot be misread by a later, unrelated call.
    static func fromQueue(_ what: String) -> PasswordHashingError {
        let code = ERR_get_error()
        defer { ERR_clear_error() }
        guard code != 0 else { return .libcrypto(what) }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        let reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return .libcrypto("\(what): \(reason)")
    }
}

/// The pseudo-random function PBKDF2 runs with.
public enum PBKDF2Hash: Sendable {
    case sha1, sha256, sha512

    var evp: OpaquePointer? {
        switch self {
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        }
    }
}

/// Thin libcrypto wrappers for checking password hashes made by other systems (the algorithms
/// Firebase Auth imports): SHA-512, HMAC-SHA512, PBKDF2 with SHA-1/256/512, scrypt and
/// AES-256-CTR. Nothing here is hand-rolled; every function is one libcrypto call plus checks
/// that turn bad parameters into errors instead of aborts.
public enum PasswordHashing {
    /// The scrypt memory Hearth lets one derivation take: enough for N = 2^17 with r = 8 (what
    /// Firebase projects and most standard-scrypt systems use) and up to N = 2^18 with r = 4.
    /// libcrypto's own default (32 MiB) would refuse N = 2^15, r = 8.
    public static let defaultScryptMaxMemory: UInt64 = 256 << 20

    /// SHA-512 of `data`.
    public static func sha512<D: ContiguousBytes>(_ data: D) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        let ok = data.withUnsafeBytes { d in
            // EVP_Digest needs a valid pointer even for zero bytes.
            let zero: UInt8 = 0
            return withUnsafePointer(to: zero) { z in
                EVP_Digest(d.baseAddress ?? UnsafeRawPointer(z), d.count, &out, &length, EVP_sha512(), nil)
            }
        }
        // A built-in digest over memory only fails on allocation failure, as in `StreamingDigest`.
        guard ok == 1 else { fatalError("EVP_Digest(SHA-512) failed: out of memory") }
        return out
    }

    /// HMAC-SHA512 of `data` under `key`.
    public static func hmacSHA512<K: ContiguousBytes, D: ContiguousBytes>(key: K, data: D) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        key.withUnsafeBytes { k in
            data.withUnsafeBytes { d in
                // HMAC() wants valid pointers for an empty key or message too.
                let zero: UInt8 = 0
                withUnsafePointer(to: zero) { z in
                    let keyPointer = k.baseAddress ?? UnsafeRawPointer(z)
                    let dataPointer = d.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? z
                    guard COpenSSL.HMAC(EVP_sha512(), keyPointer, Int32(k.count), dataPointer, d.count, &out, &length) != nil,
                          length == 64 else { libcryptoFailure("HMAC(SHA-512)") }
                }
            }
        }
        return Array(out.prefix(Int(length)))
    }

    /// PBKDF2 (RFC 8018) of `password` and `salt` with the HMAC of `hash`.
    /// - Throws: `invalidParameter` for fewer than one iteration or an empty or oversized output.
    public static func pbkdf2(_ hash: PBKDF2Hash, password: [UInt8], salt: [UInt8], iterations: Int,
                              length: Int) throws(PasswordHashingError) -> [UInt8] {
        guard iterations >= 1, iterations <= Int(Int32.max) else { throw .invalidParameter("PBKDF2 iterations \(iterations)") }
        guard length >= 1, length <= Int(Int32.max) else { throw .invalidParameter("PBKDF2 output length \(length)") }
        guard password.count <= Int(Int32.max), salt.count <= Int(Int32.max) else { throw .invalidParameter("PBKDF2 input too long") }
        var out = [UInt8](repeating: 0, count: length)
        // Empty inputs still need valid pointers; the lengths passed are the real ones.
        let pass = password.isEmpty ? [0] : password, saltBytes = salt.isEmpty ? [0] : salt
        let ok = pass.withUnsafeBufferPointer { p in
            saltBytes.withUnsafeBufferPointer { s in
                PKCS5_PBKDF2_HMAC(UnsafeRawPointer(p.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(password.count),
                                  s.baseAddress, Int32(salt.count), Int32(iterations), hash.evp, Int32(length), &out)
            }
        }
        guard ok == 1 else { throw .fromQueue("PKCS5_PBKDF2_HMAC") }
        return out
    }

    /// Bytes libcrypto allocates for scrypt with these parameters (`128·r·p` for B plus
    /// `128·r·(N+2)` for V), or nil when that overflows 64 bits.
    public static func scryptMemory(n: UInt64, r: UInt64, p: UInt64) -> UInt64? {
        let (rp, o1) = r.multipliedReportingOverflow(by: p)
        let (b, o2) = rp.multipliedReportingOverflow(by: 128)
        let (n2, o3) = n.addingReportingOverflow(2)
        let (r128, o4) = r.multipliedReportingOverflow(by: 128)
        let (v, o5) = r128.multipliedReportingOverflow(by: n2)
        let (total, o6) = b.addingReportingOverflow(v)
        return o1 || o2 || o3 || o4 || o5 || o6 ? nil : total
    }

    /// scrypt (RFC 7914) of `password` and `salt` with cost `n` (a power of two above 1), block
    /// size `r` and parallelism `p`, through libcrypto's `EVP_PBE_scrypt`.
    /// - Parameter maxMemory: the most memory the derivation may take (see `scryptMemory`).
    /// - Throws: `invalidParameter` for parameters RFC 7914 or `maxMemory` rule out (checked here
    ///   so the caller learns which one), `libcrypto` if the library still refuses.
    public static func scrypt(password: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64, length: Int,
                              maxMemory: UInt64 = defaultScryptMaxMemory) throws(PasswordHashingError) -> [UInt8] {
        guard n >= 2, n & (n - 1) == 0 else { throw .invalidParameter("scrypt N \(n) is not a power of two above 1") }
        guard r >= 1, p >= 1 else { throw .invalidParameter("scrypt r and p must be positive") }
        // RFC 7914 §2: p ≤ (2^32−1)·32 / (128·r); libcrypto bounds r·p below 2^30.
        guard r.multipliedReportingOverflow(by: p).partialValue < (1 << 30), r < (1 << 30), p < (1 << 30) else {
            throw .invalidParameter("scrypt r·p must be below 2^30")
        }
        // RFC 7914 §2: N < 2^(128·r/8).
        if 16 * r < 64, n >= UInt64(1) << (16 * r) { throw .invalidParameter("scrypt N must be below 2^(16·r)") }
        guard let memory = scryptMemory(n: n, r: r, p: p), memory <= maxMemory else {
            throw .invalidParameter("scrypt N=\(n), r=\(r), p=\(p) needs more than \(maxMemory) bytes")
        }
        guard length >= 1, length <= 1 << 20 else { throw .invalidParameter("scrypt output length \(length)") }
        var out = [UInt8](repeating: 0, count: length)
        let ok = password.withUnsafeBufferPointer { pw in
            salt.withUnsafeBufferPointer { s in
                // Null pointers with zero lengths are libcrypto's documented way to pass empty input.
                let passPointer = UnsafeRawPointer(pw.baseAddress)?.assumingMemoryBound(to: CChar.self)
                return EVP_PBE_scrypt(passPointer, pw.count, s.baseAddress, s.count, n, r, p, maxMemory, &out, length)
            }
        }
        guard ok == 1 else { throw .fromQueue("EVP_PBE_scrypt") }
        return out
    }

    /// AES-256 in counter mode over `data` (encryption and decryption are the same operation),
    /// with a 32-byte `key` and the 16-byte initial counter block `iv`.
    /// - Throws: `invalidParameter` for a wrong key or IV size, `libcrypto` on a library failure.
    public static func aes256CTR(key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws(PasswordHashingError) -> [UInt8] {
        guard key.count == 32 else { throw .invalidParameter("AES-256 key is \(key.count) bytes, not 32") }
        guard iv.count == 16 else { throw .invalidParameter("AES-CTR counter block is \(iv.count) bytes, not 16") }
        guard data.count <= Int(Int32.max) else { throw .invalidParameter("AES-CTR input too long") }
        if data.isEmpty { return [] }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .fromQueue("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nil, key, iv) == 1 else { throw .fromQueue("EVP_EncryptInit_ex") }
        // CTR is a stream mode: the output is exactly as long as the input, and Final adds nothing.
        var out = [UInt8](repeating: 0, count: data.count + 16)
        var written: Int32 = 0
        guard EVP_EncryptUpdate(ctx, &out, &written, data, Int32(data.count)) == 1 else { throw .fromQueue("EVP_EncryptUpdate") }
        var tail: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            EVP_EncryptFinal_ex(ctx, buffer.baseAddress.map { $0 + Int(written) }, &tail)
        }
        guard ok == 1 else { throw .fromQueue("EVP_EncryptFinal_ex") }
        return Array(out.prefix(Int(written + tail)))
    }
}
