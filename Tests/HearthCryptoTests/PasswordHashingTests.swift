import Foundation
import Testing
import HearthCrypto

@Suite struct PasswordHashingTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// RFC 7914 §12 scrypt test vectors (the second is also firebase-admin-node's STANDARD_SCRYPT
    /// import fixture, N = 1024, r = 8, p = 16).
    @Test(arguments: [
        ("", "", UInt64(16), UInt64(1), UInt64(1),
         "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"),
        ("password", "NaCl", 1024, 8, 16,
         "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"),
        ("pleaseletmein", "SodiumChloride", 16384, 8, 1,
         "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"),
    ])
    func scryptRFC7914(password: String, salt: String, n: UInt64, r: UInt64, p: UInt64, expected: String) throws {
        let out = try PasswordHashing.scrypt(password: Self.bytes(password), salt: Self.bytes(salt), n: n, r: r, p: p, length: 64)
        #expect(Hex.encode(out) == expected)
    }

    /// N = 2^17 with r = 8 (128 MiB) is beyond libcrypto's 32 MiB default but within Hearth's limit.
    @Test func scryptLargeCostFitsTheDefaultLimit() throws {
        let out = try PasswordHashing.scrypt(password: [1], salt: [2], n: 1 << 17, r: 8, p: 1, length: 16)
        #expect(out.count == 16 && out != [UInt8](repeating: 0, count: 16))
    }

    @Test(arguments: [
        (UInt64(0), UInt64(8), UInt64(1), 64),       // N not above 1
        (1000, 8, 1, 64),                              // N not a power of two
        (1024, 0, 1, 64),                              // r = 0
        (1024, 8, 0, 64),                              // p = 0
        (1 << 20, 1, 1, 64),                           // N ≥ 2^(16·r)
        (1 << 20, 8, 1, 64),                           // 1 GiB: over the memory limit
        (1024, 1 << 16, 1 << 15, 64),                  // r·p ≥ 2^30
        (1024, 8, 1, 0),                               // empty output
        (UInt64(1) << 63, UInt64.max, 1, 64),          // memory size overflows
    ])
    func scryptRejectsBadParameters(n: UInt64, r: UInt64, p: UInt64, length: Int) {
        #expect(throws: PasswordHashingError.self) {
            _ = try PasswordHashing.scrypt(password: [1], salt: [2], n: n, r: r, p: p, length: length)
        }
    }

    @Test func scryptHonoursAnExplicitMemoryLimit() {
        #expect(throws: PasswordHashingError.self) {
            _ = try PasswordHashing.scrypt(password: [1], salt: [2], n: 1 << 14, r: 8, p: 1, length: 32, maxMemory: 1 << 20)
        }
        let expected: UInt64 = 128 * 8 * (16_384 + 2) + 128 * 8
        #expect(PasswordHashing.scryptMemory(n: 16_384, r: 8, p: 1) == expected)
        #expect(PasswordHashing.scryptMemory(n: .max, r: 8, p: 1) == nil)
    }

    /// NIST SP 800-38A F.5.5 (CTR-AES256.Encrypt), and CTR's symmetry.
    @Test func aes256CTRNIST() throws {
        let key = try #require(Hex.decode("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"))
        let iv = try #require(Hex.decode("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"))
        let plain = try #require(Hex.decode("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
                                            + "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710"))
        let cipher = try PasswordHashing.aes256CTR(key: key, iv: iv, plain)
        #expect(Hex.encode(cipher) == "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
                                      + "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6")
        #expect(try PasswordHashing.aes256CTR(key: key, iv: iv, cipher) == plain)
        // A partial block is a prefix of the full keystream's output.
        #expect(try PasswordHashing.aes256CTR(key: key, iv: iv, Array(plain.prefix(5))) == Array(cipher.prefix(5)))
        #expect(try PasswordHashing.aes256CTR(key: key, iv: iv, []) == [])
    }

    @Test func aes256CTRRejectsBadSizes() {
        #expect(throws: PasswordHashingError.invalidParameter("AES-256 key is 16 bytes, not 32")) {
            _ = try PasswordHashing.aes256CTR(key: [UInt8](repeating: 0, count: 16), iv: [UInt8](repeating: 0, count: 16), [1])
        }
        #expect(throws: PasswordHashingError.self) {
            _ = try PasswordHashing.aes256CTR(key: [UInt8](repeating: 0, count: 32), iv: [0], [1])
        }
    }

    /// FIPS 180-2 "abc" and RFC 4231 test case 2.
    @Test func sha512AndHMACSHA512() {
        #expect(Hex.encode(PasswordHashing.sha512(Self.bytes("abc")))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        #expect(Hex.encode(PasswordHashing.sha512([UInt8]())).hasPrefix("cf83e1357eefb8bdf1542850d66d8007"))
        #expect(Hex.encode(PasswordHashing.hmacSHA512(key: Self.bytes("Jefe"), data: Self.bytes("what do ya want for nothing?")))
                == "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737")
        #expect(PasswordHashing.hmacSHA512(key: [UInt8](), data: [UInt8]()).count == 64)
    }

    /// RFC 6070 PBKDF2-HMAC-SHA1 vectors; SHA-256 agrees with `KeyDerivation`.
    @Test(arguments: [
        ("password", "salt", 1, 20, "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
        ("password", "salt", 2, 20, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
        ("password", "salt", 4096, 20, "4b007901b765489abead49d926f721d065a429c1"),
        ("passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 25,
         "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"),
    ])
    func pbkdf2SHA1RFC6070(password: String, salt: String, iterations: Int, length: Int, expected: String) throws {
        let out = try PasswordHashing.pbkdf2(.sha1, password: Self.bytes(password), salt: Self.bytes(salt), iterations: iterations, length: length)
        #expect(Hex.encode(out) == expected)
    }

    @Test func pbkdf2OtherHashesAndErrors() throws {
        let sha256 = try PasswordHashing.pbkdf2(.sha256, password: [1, 2], salt: [3], iterations: 7, length: 40)
        #expect(sha256 == KeyDerivation.pbkdf2SHA256(password: [1, 2], salt: [3], iterations: 7, length: 40))
        #expect(try PasswordHashing.pbkdf2(.sha512, password: [], salt: [], iterations: 1, length: 64).count == 64)
        #expect(throws: PasswordHashingError.self) { _ = try PasswordHashing.pbkdf2(.sha1, password: [1], salt: [2], iterations: 0, length: 20) }
        #expect(throws: PasswordHashingError.self) { _ = try PasswordHashing.pbkdf2(.sha1, password: [1], salt: [2], iterations: 1, length: 0) }
    }

    /// Firebase's modified scrypt composed from the primitives reproduces the public sample of
    /// github.com/firebase/scrypt (README): the hash is AES-256-CTR, keyed with the first 32 bytes
    /// of scrypt(password, salt ‖ separator, 2^14, 8, 1), over the project's signer key.
    @Test func firebaseScryptSampleFromPrimitives() throws {
        let signerKey = [UInt8](try #require(Data(base64Encoded: "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==")))
        let salt = [UInt8](try #require(Data(base64Encoded: "42xEC+ixf3L2lw=="))) + [UInt8](try #require(Data(base64Encoded: "Bw==")))
        let derived = try PasswordHashing.scrypt(password: Self.bytes("user1password"), salt: salt, n: 1 << 14, r: 8, p: 1, length: 64)
        let hash = try PasswordHashing.aes256CTR(key: Array(derived.prefix(32)), iv: [UInt8](repeating: 0, count: 16), signerKey)
        #expect(Data(hash).base64EncodedString() == "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==")
    }
}
