internal import COpenSSL
import Foundation

/// A message digest algorithm provided by libcrypto.
public enum DigestAlgorithm: Sendable {
    case md5, sha1, sha256

    var evp: OpaquePointer? {
        switch self {
        case .md5: FetchedDigests.md5
        case .sha1: FetchedDigests.sha1
        case .sha256: FetchedDigests.sha256
        }
    }

    /// Digest length in bytes.
    public var length: Int {
        switch self {
        case .md5: 16
        case .sha1: 20
        case .sha256: 32
        }
    }
}

/// The digests fetched from libcrypto's default provider once, for the life of the process. OpenSSL 3
/// fetches a digest again on every init given the static `EVP_sha256()` (an "implicit fetch"), which
/// costs more than hashing a short message; a fetched one is used as is. Where a fetch fails (a
/// FIPS-only provider has no MD5) the static one stands in, and its init fails as it always did.
enum FetchedDigests {
    nonisolated(unsafe) static let md5: OpaquePointer? = EVP_MD_fetch(nil, "MD5", nil) ?? EVP_md5()
    nonisolated(unsafe) static let sha1: OpaquePointer? = EVP_MD_fetch(nil, "SHA1", nil) ?? EVP_sha1()
    nonisolated(unsafe) static let sha256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()
}

/// Stops the process with libcrypto's own reason when a call that cannot fail for any input did.
///
/// Digest and HMAC calls fail only when memory runs out or the crypto provider refuses the
/// algorithm outright (a FIPS-only OpenSSL configuration refuses MD5): nothing a caller can
/// handle, and going on would hand out wrong ETags or accept or refuse signatures on garbage.
/// Every such result is checked; a failure ends here, loudly, instead of being ignored.
func libcryptoFailure(_ call: String) -> Never {
    let code = ERR_get_error()
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, buffer.count)
    let reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    fatalError("\(call) failed: \(code == 0 ? "no reason given (out of memory?)" : reason)")
}

/// An incremental digest over libcrypto's EVP interface; feed it chunks, then `finalize()` once.
public final class StreamingDigest {
    private let context: OpaquePointer
    public let algorithm: DigestAlgorithm

    public init(_ algorithm: DigestAlgorithm) {
        self.algorithm = algorithm
        // EVP_MD_CTX_new only fails on allocation failure, which we treat as fatal like Swift does.
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed: out of memory") }
        self.context = context
        guard EVP_DigestInit_ex(context, algorithm.evp, nil) == 1 else { libcryptoFailure("EVP_DigestInit_ex") }
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes to the digest.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard EVP_DigestUpdate(context, base, bytes.count) == 1 else { libcryptoFailure("EVP_DigestUpdate") }
    }

    /// Adds bytes to the digest.
    public func update<D: ContiguousBytes>(_ data: D) {
        data.withUnsafeBytes { update($0) }
    }

    /// Returns the digest; the object must not be used afterwards.
    public func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &out, &length) == 1, Int(length) == algorithm.length else { libcryptoFailure("EVP_DigestFinal_ex") }
        return Array(out.prefix(Int(length)))
    }
}

/// One-shot digests.
public enum Digest {
    /// SHA-256 of `data`.
    public static func sha256<D: ContiguousBytes>(_ data: D) -> [UInt8] { hash(.sha256, data) }
    /// SHA-1 of `data`.
    public static func sha1<D: ContiguousBytes>(_ data: D) -> [UInt8] { hash(.sha1, data) }
    /// MD5 of `data` (S3 ETags and Content-MD5, not security).
    public static func md5<D: ContiguousBytes>(_ data: D) -> [UInt8] { hash(.md5, data) }

    /// Digest of `data` with `algorithm`.
    public static func hash<D: ContiguousBytes>(_ algorithm: DigestAlgorithm, _ data: D) -> [UInt8] {
        let digest = StreamingDigest(algorithm)
        digest.update(data)
        return digest.finalize()
    }
}

/// HMAC over libcrypto.
public enum HMAC {
    /// HMAC-SHA256 of `data` under `key`.
    public static func sha256<K: ContiguousBytes, D: ContiguousBytes>(key: K, data: D) -> [UInt8] {
        mac(.sha256, key: key, data: data)
    }

    /// HMAC-SHA1 of `data` under `key` (SigV2).
    public static func sha1<K: ContiguousBytes, D: ContiguousBytes>(key: K, data: D) -> [UInt8] {
        mac(.sha1, key: key, data: data)
    }

    /// HMAC of `data` under `key` with `algorithm`.
    public static func mac<K: ContiguousBytes, D: ContiguousBytes>(_ algorithm: DigestAlgorithm, key: K, data: D) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        key.withUnsafeBytes { k in
            data.withUnsafeBytes { d in
                // A zero-length key still needs a valid pointer for libcrypto.
                let dummy: UInt8 = 0
                withUnsafePointer(to: dummy) { zero in
                    let keyPointer = k.baseAddress ?? UnsafeRawPointer(zero)
                    let dataPointer = d.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    guard hearth_hmac(algorithm.evp, keyPointer, Int32(k.count), dataPointer, d.count, &out, &length) == 1,
                          Int(length) == algorithm.length else { libcryptoFailure("HMAC") }
                }
            }
        }
        return Array(out.prefix(Int(length)))
    }
}

/// Comparisons that take the same time whatever the inputs hold.
public enum ConstantTime {
    /// True when both byte strings are equal; the time depends only on their lengths.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }

    /// True when both strings have equal UTF-8 bytes.
    public static func equals(_ a: String, _ b: String) -> Bool { equals(Array(a.utf8), Array(b.utf8)) }
}
