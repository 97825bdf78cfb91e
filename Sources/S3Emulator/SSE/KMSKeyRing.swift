import HearthBlobs
import HearthCore
import HearthCrypto
import HearthSQLite

/// The local stand-in for AWS KMS: symmetric keys per account (`s3_kms_keys`), which wrap the data
/// keys of SSE-KMS objects, and the one master key of SSE-S3.
///
/// Keys come from the `s3KmsKeys` configuration (created at start when missing) and from
/// `POST /emulator/v1/s3/kms/keys`; each account's AWS-managed key (`alias/aws/s3`) is created
/// the first time it is used, as AWS does. Key ids are UUIDs from the id generator (so `--seed`
/// runs name them alike); key material always comes from the secure random generator.
struct KMSKeyRing: Sendable {
    /// One key.
    struct Key: Sendable, Equatable {
        let keyID: String
        /// The 12-digit account that owns it ('' for the SSE-S3 master key).
        let account: String
        /// `alias/…`, if the key has one.
        let alias: String?
        let description: String?
        let material: [UInt8]
        let createdAt: Instant
    }

    /// The row of the SSE-S3 master key.
    static let sseS3KeyID = "hearth-sse-s3-master"
    /// The alias of each account's AWS-managed key.
    static let managedAlias = "alias/aws/s3"

    let database: Database
    let region: String

    /// The ARN S3 reports for a key.
    func arn(_ key: Key) -> String { "arn:aws:kms:\(region):\(key.account):key/\(key.keyID)" }

    private static let columns = "key_id, account, alias, description, material, created_at"

    private static func key(_ s: Statement) -> Key {
        Key(keyID: s.text(0), account: s.text(1), alias: s.optionalText(2), description: s.optionalText(3),
            material: s.withBlob(4) { Array($0) }, createdAt: Instant(unixMicros: s.int64(5)))
    }

    /// The key with this id, whatever its account (nil: none).
    func key(id: String) throws -> Key? {
        try database.read { c in try c.first("SELECT \(Self.columns) FROM s3_kms_keys WHERE key_id = ?", [id], Self.key) }
    }

    /// Every key of `account` (every customer key when nil), oldest first.
    func keys(account: String?) throws -> [Key] {
        try database.read { c in
            if let account {
                return try c.rows("SELECT \(Self.columns) FROM s3_kms_keys WHERE account = ? ORDER BY created_at, key_id", [account], Self.key)
            }
            return try c.rows("SELECT \(Self.columns) FROM s3_kms_keys WHERE account != '' ORDER BY created_at, key_id", [], Self.key)
        }
    }

    /// A configured key that cannot be created (start-up fails with it).
    struct ConfigurationError: Error, CustomStringConvertible {
        let description: String
    }

    /// Why a key could not be created.
    enum CreateError: Error, Equatable {
        case keyIDTaken(String)
        case aliasTaken(String)
        case badAlias(String)
    }

    /// Creates a key for `account` (a new UUID unless `keyID` is given); an existing key with the
    /// same id and account (and alias, if given), or without `keyID` the key the alias already
    /// names, is returned as it is, so configured keys survive restarts.
    func create(account: String, keyID: String?, alias: String?, description: String?, ids: IDGenerator, now: Instant) throws -> Result<Key, CreateError> {
        if let alias, !alias.hasPrefix("alias/") || alias.count <= 6 || alias.hasPrefix("alias/aws/") {
            return .failure(.badAlias(alias))
        }
        return try database.write { c -> Result<Key, CreateError> in
            if let keyID, let existing = try c.first("SELECT \(Self.columns) FROM s3_kms_keys WHERE key_id = ?", [keyID], Self.key) {
                guard existing.account == account, alias == nil || existing.alias == alias else { return .failure(.keyIDTaken(keyID)) }
                return .success(existing)
            }
            if let alias, let existing = try c.first("SELECT \(Self.columns) FROM s3_kms_keys WHERE account = ? AND alias = ?", [account, alias], Self.key) {
                // The same alias again (a configured key at the next start, a setup script run twice) is that key.
                return keyID == nil ? .success(existing) : .failure(.aliasTaken(alias))
            }
            let key = Key(keyID: keyID ?? ids.uuid(), account: account, alias: alias, description: description,
                          material: SecureRandom.bytes(AESGCM.keySize), createdAt: now)
            try insert(c, key)
            return .success(key)
        }
    }

    private func insert(_ c: Connection, _ key: Key) throws {
        try c.run("INSERT INTO s3_kms_keys (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)",
                  [key.keyID, key.account, key.alias, key.description, key.material, key.createdAt.unixMicros])
    }

    /// The SSE-S3 master key, created the first time it is needed.
    func sseS3Key(ids: IDGenerator, now: Instant) throws -> Key {
        if let key = try key(id: Self.sseS3KeyID) { return key }
        return try database.write { c in
            if let key = try c.first("SELECT \(Self.columns) FROM s3_kms_keys WHERE key_id = ?", [Self.sseS3KeyID], Self.key) { return key }
            let key = Key(keyID: Self.sseS3KeyID, account: "", alias: nil, description: "SSE-S3 master key",
                          material: SecureRandom.bytes(AESGCM.keySize), createdAt: now)
            try insert(c, key)
            return key
        }
    }

    /// The key a request's `x-amz-server-side-encryption-aws-kms-key-id` (or a bucket default's
    /// `KMSMasterKeyID`) names for `account`: a key id, a key ARN, `alias/…` or an alias ARN; nil
    /// is the account's AWS-managed key. Unknown keys are S3's 400 `KMS.NotFoundException` with
    /// KMS's message ("Invalid keyId …" for something that is no key id at all).
    func resolve(_ reference: String?, account: String, ids: IDGenerator, now: Instant) throws -> Result<Key, S3Error> {
        guard let reference, reference != Self.managedAlias else { return .success(try managedKey(account: account, ids: ids, now: now)) }
        func notFound(_ message: String) -> Result<Key, S3Error> { .failure(.plain(.kmsNotFound(message: message))) }
        if reference.hasPrefix("arn:") {
            let parts = reference.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 6, parts[1] == "aws", parts[2] == "kms" else { return notFound("Invalid arn") }
            guard parts[3] == region else { return notFound("Invalid arn \(parts[3])") }
            let owner = parts[4], resource = parts[5]
            if resource == Self.managedAlias { return .success(try managedKey(account: owner, ids: ids, now: now)) }
            if resource.hasPrefix("alias/") {
                if let key = try aliased(resource, account: owner) { return .success(key) }
                return notFound("Alias \(reference) is not found.")
            }
            guard resource.hasPrefix("key/"), let key = try key(id: String(resource.dropFirst(4))), key.account == owner else {
                return notFound("Key '\(reference)' does not exist")
            }
            return .success(key)
        }
        if reference.hasPrefix("alias/") {
            if let key = try aliased(reference, account: account) { return .success(key) }
            return notFound("Alias arn:aws:kms:\(region):\(account):\(reference) is not found.")
        }
        if let key = try key(id: reference), key.account == account { return .success(key) }
        guard KMSKeyRing.isUUID(reference) else { return notFound("Invalid keyId \(reference)") }
        return notFound("Key 'arn:aws:kms:\(region):\(account):key/\(reference)' does not exist")
    }

    private func aliased(_ alias: String, account: String) throws -> Key? {
        try database.read { c in
            try c.first("SELECT \(Self.columns) FROM s3_kms_keys WHERE account = ? AND alias = ?", [account, alias], Self.key)
        }
    }

    /// The account's `aws/s3` key, created on first use.
    private func managedKey(account: String, ids: IDGenerator, now: Instant) throws -> Key {
        if let key = try aliased(Self.managedAlias, account: account) { return key }
        return try database.write { c in
            if let key = try c.first("SELECT \(Self.columns) FROM s3_kms_keys WHERE account = ? AND alias = ?",
                                     [account, Self.managedAlias], Self.key) {
                return key
            }
            let key = Key(keyID: ids.uuid(), account: account, alias: Self.managedAlias,
                          description: "Default key that protects my S3 objects when no other key is defined",
                          material: SecureRandom.bytes(AESGCM.keySize), createdAt: now)
            try insert(c, key)
            return key
        }
    }

    /// Whether `text` has KMS's key id shape (a UUID, or `mrk-` and 32 hex digits).
    static func isUUID(_ text: String) -> Bool {
        let hex = Set("0123456789abcdefABCDEF")
        if text.hasPrefix("mrk-") { return text.count == 36 && text.dropFirst(4).allSatisfy(hex.contains) }
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(hex.contains) }
    }

    /// The key id inside a key ARN as objects record it (`arn:…:key/<id>`).
    static func keyID(fromARN arn: String) -> String? {
        guard let r = arn.range(of: ":key/") else { return nil }
        return String(arn[r.upperBound...])
    }
}
