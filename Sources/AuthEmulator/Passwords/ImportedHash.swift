import Foundation
import HearthCore
import HearthCrypto

/// A password hash algorithm `accounts:batchCreate` imports with, its parameters, and how
/// Firebase Auth recomputes it when the account signs in.
///
/// The conventions are production's, not what a reader of the reference might assume (checked
/// against firebase-admin-node's import integration suite, which signs in to production, and
/// the public sample of github.com/firebase/scrypt):
/// - `HMAC_*`: HMAC(signerKey, password ‖ salt); `SALT_AND_PASSWORD` puts the salt first.
/// - `SHA1`/`SHA256`/`SHA512`: H(salt ‖ password) (`PASSWORD_AND_SALT` swaps them), then H of
///   the previous digest until `rounds` applications. `rounds` = 0 imports but, as in production
///   ("round = 0 only works for MD5"), never matches.
/// - `MD5`: x = MD5(salt ‖ password), then `rounds` times x = MD5(x ‖ password); the stored hash
///   is the lower-case hex of x (so `rounds` = 0 is the plain hex `md5(salt . password)` of PHP).
/// - `PBKDF_SHA1`/`PBKDF2_SHA256`: PBKDF2 with `rounds` iterations, as long as the stored hash.
/// - `SCRYPT` (Firebase's modified scrypt): AES-256-CTR with a zero counter block, keyed with the
///   first 32 bytes of scrypt(password, salt ‖ saltSeparator, N = 2^memoryCost, r = rounds,
///   p = 1, 64 bytes), applied to the signer key.
/// - `STANDARD_SCRYPT`: scrypt(password, salt, N = cpuMemCost, r = blockSize, p =
///   parallelization, dkLen).
/// - `BCRYPT`, `ARGON2`: stored, never matched (libcrypto 3.0 has neither, and Hearth does not
///   hand-roll cryptography).
enum ImportedHash: Sendable, Equatable {
    /// The digest an HMAC, SHA or PBKDF2 algorithm is built on.
    enum HashFunction: String, Sendable, CaseIterable {
        case md5 = "MD5", sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"
    }

    /// Which of salt and password is hashed first (`passwordHashOrder`).
    enum InputOrder: String, Sendable {
        case saltFirst = "SALT_AND_PASSWORD"
        case passwordFirst = "PASSWORD_AND_SALT"
    }

    case hmac(HashFunction, key: [UInt8], order: InputOrder)
    case md5(rounds: Int, order: InputOrder)
    case sha(HashFunction, rounds: Int, order: InputOrder)
    case pbkdf2(HashFunction, rounds: Int)
    case firebaseScrypt(key: [UInt8], saltSeparator: [UInt8], rounds: Int, memoryCost: Int)
    case standardScrypt(cpuMemCost: Int, blockSize: Int, parallelization: Int, dkLen: Int)
    case bcrypt
    case argon2

    /// The `hashAlgorithm` name this was imported with.
    var algorithmName: String {
        switch self {
        case .hmac(let f, _, _): "HMAC_" + f.rawValue
        case .md5: "MD5"
        case .sha(let f, _, _): f.rawValue
        case .pbkdf2(let f, _): f == .sha1 ? "PBKDF_SHA1" : "PBKDF2_" + f.rawValue
        case .firebaseScrypt: "SCRYPT"
        case .standardScrypt: "STANDARD_SCRYPT"
        case .bcrypt: "BCRYPT"
        case .argon2: "ARGON2"
        }
    }

    /// Why no password can ever match, or nil when one can: algorithms Hearth cannot compute, and
    /// parameters production accepts at import but never verifies.
    var unverifiableReason: String? {
        switch self {
        case .bcrypt, .argon2: "libcrypto has no \(algorithmName) and Hearth does not hand-roll cryptography"
        case .sha(_, let rounds, _) where rounds < 1: "Firebase accepts SHA rounds 0 at import but never matches them"
        default: nil
        }
    }

    // MARK: Computing

    /// The hash of `password` under these parameters, to compare with a stored hash of
    /// `storedLength` bytes (PBKDF2 derives that many); nil when nothing can match.
    func compute(password: [UInt8], salt: [UInt8], storedLength: Int) -> [UInt8]? {
        switch self {
        case .hmac(let f, let key, let order):
            let input = order.join(salt: salt, password: password)
            switch f {
            case .md5: return HMAC.mac(.md5, key: key, data: input)
            case .sha1: return HMAC.mac(.sha1, key: key, data: input)
            case .sha256: return HMAC.mac(.sha256, key: key, data: input)
            case .sha512: return PasswordHashing.hmacSHA512(key: key, data: input)
            }
        case .md5(let rounds, let order):
            var x = Digest.md5(order.join(salt: salt, password: password))
            for _ in 0..<max(rounds, 0) { x = Digest.md5(x + password) }
            return Array(Hex.encode(x).utf8)
        case .sha(let f, let rounds, let order):
            guard rounds >= 1 else { return nil }
            var x = Self.digest(f, order.join(salt: salt, password: password))
            for _ in 1..<rounds { x = Self.digest(f, x) }
            return x
        case .pbkdf2(let f, let rounds):
            let prf: PBKDF2Hash = f == .sha1 ? .sha1 : f == .sha512 ? .sha512 : .sha256
            return try? PasswordHashing.pbkdf2(prf, password: password, salt: salt, iterations: rounds, length: storedLength)
        case .firebaseScrypt(let key, let separator, let rounds, let memoryCost):
            guard (1...Self.maxFirebaseMemoryCost).contains(memoryCost), rounds >= 1,
                  let derived = try? PasswordHashing.scrypt(password: password, salt: salt + separator, n: UInt64(1) << UInt64(memoryCost),
                                                            r: UInt64(rounds), p: 1, length: 64)
            else { return nil }
            return try? PasswordHashing.aes256CTR(key: Array(derived.prefix(32)), iv: [UInt8](repeating: 0, count: 16), key)
        case .standardScrypt(let n, let r, let p, let dkLen):
            guard n > 0, r > 0, p > 0 else { return nil }
            return try? PasswordHashing.scrypt(password: password, salt: salt, n: UInt64(n), r: UInt64(r), p: UInt64(p), length: dkLen)
        case .bcrypt, .argon2:
            return nil
        }
    }

    /// The largest SCRYPT `memoryCost` (log2 N) Hearth computes; imports allow 1...14 as
    /// production and the Admin SDKs do, older stored schemes are bounded here as well.
    static let maxFirebaseMemoryCost = 17

    private static func digest(_ f: HashFunction, _ input: [UInt8]) -> [UInt8] {
        switch f {
        case .md5: Digest.md5(input)
        case .sha1: Digest.sha1(input)
        case .sha256: Digest.sha256(input)
        case .sha512: PasswordHashing.sha512(input)
        }
    }

    // MARK: Storage

    /// The stored scheme string: `import:` + compact JSON of the parameters. The input order is
    /// stored resolved (`passwordFirst`), so a later change of defaults cannot alter old rows.
    var scheme: String {
        var o = JSONObject([("alg", .string(algorithmName))])
        func bytes(_ name: String, _ value: [UInt8]) { o[name] = .string(Data(value).base64EncodedString()) }
        func int(_ name: String, _ value: Int) { o[name] = .int(Int64(value)) }
        switch self {
        case .hmac(_, let key, let order):
            bytes("key", key)
            o["passwordFirst"] = .bool(order == .passwordFirst)
        case .md5(let rounds, let order), .sha(_, let rounds, let order):
            int("rounds", rounds)
            o["passwordFirst"] = .bool(order == .passwordFirst)
        case .pbkdf2(_, let rounds):
            int("rounds", rounds)
        case .firebaseScrypt(let key, let separator, let rounds, let memoryCost):
            bytes("key", key)
            bytes("saltSeparator", separator)
            int("rounds", rounds)
            int("memoryCost", memoryCost)
        case .standardScrypt(let n, let r, let p, let dkLen):
            int("cpuMemCost", n)
            int("blockSize", r)
            int("parallelization", p)
            int("dkLen", dkLen)
        case .bcrypt, .argon2:
            break
        }
        return "import:" + JSON.object(o).serialized()
    }

    /// Reads a stored scheme string; nil for anything else (Hearth's own `pbkdf2-sha256:` schemes).
    init?(scheme: String) {
        guard scheme.hasPrefix("import:"), let json = try? JSON.parse(String(scheme.dropFirst(7))),
              let name = json["alg"]?.stringValue else { return nil }
        func bytes(_ key: String) -> [UInt8] {
            json[key]?.stringValue.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? []
        }
        func int(_ key: String) -> Int {
            // Stored values were validated at import; clamp anyway so a hand-edited row cannot trap.
            Int(clamping: json[key]?.intValue ?? 0)
        }
        let order: InputOrder = json["passwordFirst"]?.boolValue == true ? .passwordFirst : .saltFirst
        switch name {
        case "HMAC_MD5", "HMAC_SHA1", "HMAC_SHA256", "HMAC_SHA512":
            guard let f = HashFunction(rawValue: String(name.dropFirst(5))) else { return nil }
            self = .hmac(f, key: bytes("key"), order: order)
        case "MD5": self = .md5(rounds: int("rounds"), order: order)
        case "SHA1", "SHA256", "SHA512":
            guard let f = HashFunction(rawValue: name) else { return nil }
            self = .sha(f, rounds: int("rounds"), order: order)
        case "PBKDF_SHA1": self = .pbkdf2(.sha1, rounds: int("rounds"))
        case "PBKDF2_SHA256": self = .pbkdf2(.sha256, rounds: int("rounds"))
        case "SCRYPT":
            self = .firebaseScrypt(key: bytes("key"), saltSeparator: bytes("saltSeparator"), rounds: int("rounds"), memoryCost: int("memoryCost"))
        case "STANDARD_SCRYPT":
            self = .standardScrypt(cpuMemCost: int("cpuMemCost"), blockSize: int("blockSize"),
                                   parallelization: int("parallelization"), dkLen: int("dkLen"))
        case "BCRYPT": self = .bcrypt
        case "ARGON2": self = .argon2
        default: return nil
        }
    }
}

extension ImportedHash.InputOrder {
    /// The bytes hashed: salt and password in this order.
    func join(salt: [UInt8], password: [UInt8]) -> [UInt8] {
        self == .saltFirst ? salt + password : password + salt
    }
}
