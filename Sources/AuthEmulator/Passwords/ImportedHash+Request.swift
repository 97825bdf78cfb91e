import HearthCore
import HearthCrypto

extension ImportedHash {
    /// The hash options of an `accounts:batchCreate` request (`hashAlgorithm`, `signerKey`,
    /// `saltSeparator`, `rounds`, `memoryCost`, `cpuMemCost`, `blockSize`, `parallelization`,
    /// `dkLen`, `passwordHashOrder`), validated as Identity Toolkit does; nil when the request
    /// names no algorithm.
    ///
    /// Ranges are production's (the Admin SDKs check the same ones client-side): MD5 and SHA*
    /// `rounds` 0...8192, PBKDF* 1...120000, SCRYPT `rounds` 1...8 and `memoryCost` 1...14; HMAC*
    /// and SCRYPT need a non-empty `signerKey`. STANDARD_SCRYPT needs a power-of-two
    /// `cpuMemCost` (the Go Admin SDK sends it as `memoryCost`) and positive `blockSize`,
    /// `parallelization` and `dkLen`, and must fit the memory scrypt may use in Hearth.
    /// - Throws: `INVALID_HASH_ALGORITHM`, `EMPTY_HASH_KEY`, `INVALID_HASH_ROUNDS`,
    ///   `INVALID_HASH_MEMORY_COST`, `INVALID_HASH_BLOCK_SIZE`, `INVALID_HASH_PARALLELIZATION`,
    ///   `INVALID_HASH_DERIVED_KEY_LENGTH`, or a field error for a malformed value.
    static func options(of body: RequestBody) throws(AuthError) -> ImportedHash? {
        guard let name = try body.nonEmptyString("hashAlgorithm") else { return nil }
        switch name {
        case "HMAC_MD5", "HMAC_SHA1", "HMAC_SHA256", "HMAC_SHA512":
            guard let f = HashFunction(rawValue: String(name.dropFirst(5))) else { throw .invalidInput("INVALID_HASH_ALGORITHM") }
            let key = try bytes(body, "signerKey", field: "signer_key")
            guard !key.isEmpty else { throw .invalidInput("EMPTY_HASH_KEY") }
            return .hmac(f, key: key, order: try order(body, default: .passwordFirst))
        case "MD5":
            return .md5(rounds: try rounds(body, 0...8192), order: try order(body, default: .saltFirst))
        case "SHA1", "SHA256", "SHA512":
            guard let f = HashFunction(rawValue: name) else { throw .invalidInput("INVALID_HASH_ALGORITHM") }
            return .sha(f, rounds: try rounds(body, 0...8192), order: try order(body, default: .saltFirst))
        case "PBKDF_SHA1":
            return .pbkdf2(.sha1, rounds: try rounds(body, 1...120_000))
        case "PBKDF2_SHA256":
            return .pbkdf2(.sha256, rounds: try rounds(body, 1...120_000))
        case "SCRYPT":
            let key = try bytes(body, "signerKey", field: "signer_key")
            guard !key.isEmpty else { throw .invalidInput("EMPTY_HASH_KEY") }
            let separator = try bytes(body, "saltSeparator", field: "salt_separator")
            let rounds = try rounds(body, 1...8)
            let memoryCost = try body.int64("memoryCost") ?? 0
            guard (1...14).contains(memoryCost) else { throw .invalidInput("INVALID_HASH_MEMORY_COST") }
            return .firebaseScrypt(key: key, saltSeparator: separator, rounds: rounds, memoryCost: Int(memoryCost))
        case "STANDARD_SCRYPT":
            return try standardScrypt(body)
        case "BCRYPT":
            return .bcrypt
        case "ARGON2":
            return .argon2
        default:
            throw .invalidInput("INVALID_HASH_ALGORITHM")
        }
    }

    /// The most memory one STANDARD_SCRYPT check may take in Hearth (libcrypto's `maxmem`).
    static let maxScryptMemory = PasswordHashing.defaultScryptMaxMemory

    private static func standardScrypt(_ body: RequestBody) throws(AuthError) -> ImportedHash {
        // `??` takes an autoclosure, which would erase the typed throw; read both first.
        let cpuMemCost = try body.int64("cpuMemCost"), memoryCost = try body.int64("memoryCost")
        let n = cpuMemCost ?? memoryCost ?? 0
        guard n >= 2, n <= 1 << 40, n & (n - 1) == 0 else { throw .invalidInput("INVALID_HASH_MEMORY_COST") }
        let r = try body.int64("blockSize") ?? 0
        guard r >= 1, r < 1 << 30 else { throw .invalidInput("INVALID_HASH_BLOCK_SIZE") }
        let p = try body.int64("parallelization") ?? 0
        guard p >= 1, p < 1 << 30, r * p < 1 << 30 else { throw .invalidInput("INVALID_HASH_PARALLELIZATION") }
        let dkLen = try body.int64("dkLen") ?? 0
        guard (1...1024).contains(dkLen) else { throw .invalidInput("INVALID_HASH_DERIVED_KEY_LENGTH") }
        // RFC 7914 requires N < 2^(16·r); beyond that, scrypt's memory (128·r·N) must fit.
        if r < 4, n >= Int64(1) << (16 * r) { throw .invalidInput("INVALID_HASH_MEMORY_COST") }
        guard let memory = PasswordHashing.scryptMemory(n: UInt64(n), r: UInt64(r), p: UInt64(p)), memory <= maxScryptMemory else {
            throw .invalidInput("INVALID_HASH_MEMORY_COST : ((Hearth checks scrypt hashes within \(maxScryptMemory >> 20) MiB; 128 × blockSize × cpuMemCost exceeds it.))")
        }
        return .standardScrypt(cpuMemCost: Int(n), blockSize: Int(r), parallelization: Int(p), dkLen: Int(dkLen))
    }

    /// `rounds`, which must lie in `range`.
    private static func rounds(_ body: RequestBody, _ range: ClosedRange<Int64>) throws(AuthError) -> Int {
        let rounds = try body.int64("rounds") ?? 0
        guard range.contains(rounds) else { throw .invalidInput("INVALID_HASH_ROUNDS") }
        return Int(rounds)
    }

    /// `passwordHashOrder` as its enum name or number (proto JSON accepts both).
    private static func order(_ body: RequestBody, default fallback: InputOrder) throws(AuthError) -> InputOrder {
        switch try body.string("passwordHashOrder") {
        case nil, "", "UNSPECIFIED_ORDER", "0": return fallback
        case "SALT_AND_PASSWORD", "1": return .saltFirst
        case "PASSWORD_AND_SALT", "2": return .passwordFirst
        case let other?:
            throw .invalidArgument("Invalid value at 'password_hash_order' (TYPE_ENUM), \"\(other)\"", reason: "invalid")
        }
    }

    /// A `bytes` member (standard or URL-safe base64, padded or not); empty when absent.
    private static func bytes(_ body: RequestBody, _ key: String, field: String) throws(AuthError) -> [UInt8] {
        guard let text = try body.string(key), !text.isEmpty else { return [] }
        guard let bytes = AuthOperations.decodeBase64(text) else {
            throw .invalidArgument("Invalid value at '\(field)' (TYPE_BYTES), Base64 decoding failed for \"\(text)\"", reason: "invalid")
        }
        return bytes
    }
}
