import Foundation
import HearthCore
import HearthCrypto

/// Hashes and checks account passwords.
///
/// Hearth's own hashes are salted PBKDF2-HMAC-SHA256 (`pbkdf2-sha256:<iterations>`). Accounts
/// imported with `accounts:batchCreate` keep the hash and parameters they were imported with, and
/// are checked with that algorithm at every sign-in (see `ImportedHash`); setting a new password
/// (update, reset) replaces them with Hearth's own scheme.
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
            candidate = imported.compute(password: Array(password.utf8), salt: salt, storedLength: stored.count)
        } else {
            candidate = nil
        }
        guard let candidate else { return false }
        return ConstantTime.equals(candidate, stored)
    }
}
