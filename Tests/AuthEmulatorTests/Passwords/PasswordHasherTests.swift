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
        let unsupported = ImportedHash(algorithmName: "SCRYPT", key: [1], rounds: 8, passwordFirst: false)
        #expect(unsupported.compute(password: [1], salt: [2], length: 32) == nil)
    }

    @Test func importedSchemeRoundTrips() {
        let h = ImportedHash(algorithmName: "HMAC_SHA256", key: [1, 2, 3], rounds: 0, passwordFirst: true)
        #expect(ImportedHash(scheme: h.scheme) == h)
        #expect(ImportedHash(scheme: "pbkdf2-sha256:5") == nil)
    }

    /// Known answer (coreutils `printf saltpassword | sha256sum`): one SHA256 round, salt first.
    @Test func sha256ImportVector() {
        let h = ImportedHash(algorithmName: "SHA256", key: [], rounds: 1, passwordFirst: false)
        let out = h.compute(password: Array("password".utf8), salt: Array("salt".utf8), length: 32)
        #expect(out.map(Hex.encode) == "13601bda4ea78e55a07b98866d2be6be0744e3866f13c00c811cab608a28f322")
    }
}
