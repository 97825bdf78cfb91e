import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import AuthEmulator

@Suite struct PasswordHasherTests {
    let hasher = PasswordHasher(iterations: 50, ids: IDGenerator(seed: 3))

    func user(_ h: (hash: [UInt8], salt: [UInt8], scheme: String)) -> UserRecord {
        var u = UserRecord(localId: "u", createdAt: 0)
        (u.passwordHash, u.salt, u.passwordScheme) = (h.hash, h.salt, h.scheme)
        return u
    }

    @Test func hashesAreSaltedPBKDF2() {
        let a = hasher.hash("hunter22")
        let b = hasher.hash("hunter22")
        #expect(a.scheme == "pbkdf2-sha256:50")
        #expect(a.salt != b.salt && a.hash != b.hash)
        #expect(a.hash == KeyDerivation.pbkdf2SHA256(password: Array("hunter22".utf8), salt: a.salt, iterations: 50))
        #expect(hasher.verify("hunter22", user: user(a)))
        #expect(!hasher.verify("hunter23", user: user(a)))
    }

    @Test func changingIterationsKeepsOldHashesValid() {
        let old = hasher.hash("keep-me")
        let newer = PasswordHasher(iterations: 99, ids: IDGenerator(seed: 4))
        #expect(newer.verify("keep-me", user: user(old)))
    }

    @Test func unknownOrMissingSchemesNeverMatch() {
        var u = user(hasher.hash("x-password"))
        u.passwordScheme = "bcrypt"
        #expect(!hasher.verify("x-password", user: u))
        u.passwordScheme = nil
        #expect(!hasher.verify("x-password", user: u))
        u.passwordScheme = ImportedHash.bcrypt.scheme
        #expect(!hasher.verify("x-password", user: u))
    }

    /// Imported accounts are checked with the algorithm they came with, on the stored salt.
    @Test func importedHashesVerify() throws {
        var u = UserRecord(localId: "u", createdAt: 0)
        u.salt = Array("NaCl".utf8)
        u.passwordHash = [UInt8](try #require(Data(base64Encoded: "V358E8LdWJXAO7muq0CufVpEOXaj8aFiC7T/rcaGieN04q/ZPJ08WhJEHGjj9lz/2TT+/86N5VjVoc5DdBhBiw==")))
        u.passwordScheme = ImportedHash.firebaseScrypt(key: ImportedHashTests.firebaseSignerKey, saltSeparator: [7], rounds: 8, memoryCost: 14).scheme
        #expect(hasher.verify("password", user: u))
        #expect(!hasher.verify("Password", user: u))
        u.salt = Array("NaCI".utf8)
        #expect(!hasher.verify("password", user: u))
    }
}
