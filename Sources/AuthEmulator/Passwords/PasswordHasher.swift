import Foundation
import HearthCore
import HearthCrypto

/// Hashes and checks account passwords.
///
/// Hearth's own hashes are salted PBKDF2-HMAC-SHA256 (`pbkdf2-sha256:<iterations>`). Accounts
/// imported with `accounts:batchCreate` keep the hash and parameters they were imported with, and
/// are checked with that algorithm (see `ImportedHash`).
struct PasswordHasher: Sendable {
    let iterations: Int
    let ids: IDGenerator

    /// Salt length in bytes.
    static let saltLength = 16

    /// A fresh salted hash of `password`.
    func hash(_ password: String) -> (hash: [UInt8], salt: [UInt8], scheme: String) {
        let salt = ids.bytes(Self.saltLength)
        let derived = KeyDerivation.pbkdf2SHA256(password: Array(password.utf8), salt: salt, iterations: iterations)
        return (derived, salt, "pbkdf2-sha256:\(iterations)")
    }

    /// Whether `password` matches the account's stored hash.
    func verify(_ password: String, user: UserRecord) -> Bool {
        guard let stored = user.passwordHash, let scheme = user.passwordScheme else { return false }
        let salt = user.salt ?? []
        let candidate: [UInt8]?
        if scheme.hasPrefix("pbkdf2-sha256:"), let n = Int(scheme.dropFirst("pbkdf2-sha256:".count)), n > 0 {
            candidate = KeyDerivation.pbkdf2SHA256(password: Array(password.utf8), salt: salt, iterations: n, length: max(stored.count, 1))
        } else if let imported = ImportedHash(scheme: scheme) {
            candidate = imported.compute(password: Array(password.utf8), salt: salt, length: stored.count)
        } else {
            candidate = nil
        }
        guard let candidate else { return false }
        return ConstantTime.equals(candidate, stored)
    }
}

/// A password hash algorithm `accounts:batchCreate` imports with, and how to recompute it.
///
/// Supported (libcrypto primitives Hearth wraps): HMAC_SHA256, HMAC_SHA1, HMAC_MD5 (keyed with
/// `signerKey`), SHA256, SHA1, MD5 (`rounds` iterations), PBKDF2_SHA256 (`rounds` iterations).
/// Firebase's input order is salt then password unless `passwordHashOrder` says
/// `PASSWORD_AND_SALT`. Accounts imported with another algorithm (SCRYPT, STANDARD_SCRYPT, BCRYPT,
/// HMAC_SHA512, SHA512, PBKDF_SHA1) are stored but cannot sign in with their password.
struct ImportedHash: Sendable, Equatable {
    enum Algorithm: String, Sendable, CaseIterable {
        case hmacSHA256 = "HMAC_SHA256", hmacSHA1 = "HMAC_SHA1", hmacMD5 = "HMAC_MD5"
        case sha256 = "SHA256", sha1 = "SHA1", md5 = "MD5"
        case pbkdf2SHA256 = "PBKDF2_SHA256"
    }

    /// Algorithm names the Admin SDKs can send but Hearth cannot recompute.
    static let unsupported: Set<String> = ["SCRYPT", "STANDARD_SCRYPT", "BCRYPT", "HMAC_SHA512", "SHA512", "PBKDF_SHA1"]

    let algorithmName: String
    let key: [UInt8]
    let rounds: Int
    let passwordFirst: Bool

    init(algorithmName: String, key: [UInt8], rounds: Int, passwordFirst: Bool) {
        self.algorithmName = algorithmName
        self.key = key
        self.rounds = rounds
        self.passwordFirst = passwordFirst
    }

    /// The stored scheme string (`import:` + compact JSON of the parameters).
    var scheme: String {
        let o = JSONObject([("alg", .string(algorithmName)), ("key", .string(Data(key).base64EncodedString())),
                            ("rounds", .int(Int64(rounds))), ("passwordFirst", .bool(passwordFirst))])
        return "import:" + JSON.object(o).serialized()
    }

    /// Reads a stored scheme string.
    init?(scheme: String) {
        guard scheme.hasPrefix("import:"), let json = try? JSON.parse(String(scheme.dropFirst(7))),
              let name = json["alg"]?.stringValue else { return nil }
        algorithmName = name
        key = json["key"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? []
        rounds = Int(json["rounds"]?.intValue ?? 0)
        passwordFirst = json["passwordFirst"]?.boolValue ?? false
    }

    /// The hash of `password` under these parameters, or nil for an algorithm Hearth cannot compute.
    func compute(password: [UInt8], salt: [UInt8], length: Int) -> [UInt8]? {
        guard let algorithm = Algorithm(rawValue: algorithmName) else { return nil }
        let input = passwordFirst ? password + salt : salt + password
        switch algorithm {
        case .hmacSHA256: return HMAC.mac(.sha256, key: key, data: input)
        case .hmacSHA1: return HMAC.mac(.sha1, key: key, data: input)
        case .hmacMD5: return HMAC.mac(.md5, key: key, data: input)
        case .sha256: return repeated(.sha256, input)
        case .sha1: return repeated(.sha1, input)
        case .md5: return repeated(.md5, input)
        case .pbkdf2SHA256:
            return KeyDerivation.pbkdf2SHA256(password: password, salt: salt, iterations: max(rounds, 1), length: max(length, 1))
        }
    }

    /// `rounds` applications of the digest (0 and 1 both mean one, as Firebase's MD5 allows 0).
    private func repeated(_ algorithm: DigestAlgorithm, _ input: [UInt8]) -> [UInt8] {
        var h = Digest.hash(algorithm, input)
        if rounds > 1 { for _ in 1..<rounds { h = Digest.hash(algorithm, h) } }
        return h
    }
}
