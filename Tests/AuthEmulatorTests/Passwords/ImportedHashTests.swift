import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import AuthEmulator

@Suite struct ImportedHashTests {
    /// One known answer: parameters, password, salt and the base64 hash Firebase stores.
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let hash: ImportedHash
        var password = "password"
        var salt = Array("NaCl".utf8)
        let expected: String
        var testDescription: String { name }
    }

    static let secret = Array("secret".utf8)
    static let firebaseSignerKey = [UInt8](Data(base64Encoded: "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==") ?? Data())

    /// The first six are firebase-admin-node's production import fixtures (password "password",
    /// salt "NaCl", HMAC key "secret"); the two Firebase scrypt hashes come from
    /// github.com/firebase/scrypt; the rest were computed independently with Python's hashlib,
    /// hmac and cryptography modules.
    static let vectors: [Vector] = [
        Vector(name: "HMAC_SHA256 (password first)", hash: .hmac(.sha256, key: secret, order: .passwordFirst),
               expected: "C5WKh+Qa5RkMlq+h5DX5XKsBOsQt/DEKEaUBAMQqrlI="),
        Vector(name: "SHA256 rounds 1", hash: .sha(.sha256, rounds: 1, order: .saltFirst),
               expected: "sgq3SqJUn34ToOiGy0RxzC5w/NLOgHXA7mSDq7phMvM="),
        Vector(name: "MD5 rounds 0 (hex)", hash: .md5(rounds: 0, order: .saltFirst),
               expected: Data("62d19f7e7ddcb5946728776d25e410ed".utf8).base64EncodedString()),
        Vector(name: "STANDARD_SCRYPT N1024 r8 p16", hash: .standardScrypt(cpuMemCost: 1024, blockSize: 8, parallelization: 16, dkLen: 64),
               expected: "/bq+HJ00cgB4VucZDQHp/nxq18vII3gw53N2Y0s3MWIurzDZLiKjiG/xCSedmDDaxyevuUqD7m2DYMvfoswGQA=="),
        Vector(name: "PBKDF2_SHA256 100000 (64 bytes)", hash: .pbkdf2(.sha256, rounds: 100_000),
               expected: "5VnqZoKMOie1mhCQGRw7u1FV5Kv8Yb8uxEArtVAl0vSlwAQqXe8VxejCRe5enxUyNN4OWQ60PGRIVPZzEvcQtw=="),
        Vector(name: "SCRYPT (Firebase) NaCl", hash: .firebaseScrypt(key: firebaseSignerKey, saltSeparator: [7], rounds: 8, memoryCost: 14),
               expected: "V358E8LdWJXAO7muq0CufVpEOXaj8aFiC7T/rcaGieN04q/ZPJ08WhJEHGjj9lz/2TT+/86N5VjVoc5DdBhBiw=="),
        Vector(name: "SCRYPT (Firebase) README sample", hash: .firebaseScrypt(key: firebaseSignerKey, saltSeparator: [7], rounds: 8, memoryCost: 14),
               password: "user1password", salt: [UInt8](Data(base64Encoded: "42xEC+ixf3L2lw==") ?? Data()),
               expected: "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="),
        Vector(name: "HMAC_MD5", hash: .hmac(.md5, key: secret, order: .passwordFirst), expected: "4tZGVrzeu9LZ9eWZ03FrLg=="),
        Vector(name: "HMAC_MD5 salt first", hash: .hmac(.md5, key: secret, order: .saltFirst), expected: "YZXdKOf2tNj3E9k4RWrpnw=="),
        Vector(name: "HMAC_SHA1", hash: .hmac(.sha1, key: secret, order: .passwordFirst), expected: "tSjltw8SZxad1AY6k8wDYCwUeyI="),
        Vector(name: "HMAC_SHA256 salt first", hash: .hmac(.sha256, key: secret, order: .saltFirst),
               expected: "ExOA8YX6DO2P838cxsMMdHTddVwTeqjm1H9BMFO7qWE="),
        Vector(name: "HMAC_SHA512", hash: .hmac(.sha512, key: secret, order: .passwordFirst),
               expected: "yoFsygT+IMma1lMv+IqBvfHM1DCminat6m9ku6Re5nl8QSy9Z3BwPG9FnejSRcu99tK4xSVVkY6I9euOf8nmQA=="),
        Vector(name: "HMAC_SHA512 salt first", hash: .hmac(.sha512, key: secret, order: .saltFirst),
               expected: "1BpFtuBO0eX0GvrmiNttaT90HJDzQp286zZGGkNh2aMRjqOAttVRKWPDvY3hNyvXMoiwxXD6ODLT/pLy/WFcpw=="),
        Vector(name: "SHA1 rounds 2", hash: .sha(.sha1, rounds: 2, order: .saltFirst), expected: "13lrvJcl8TcDuAiaFNui2i4rgBo="),
        Vector(name: "SHA256 rounds 3 password first", hash: .sha(.sha256, rounds: 3, order: .passwordFirst),
               expected: "29AoRmDJ5NwHmJx4Y2qu3SnRCLxiQC5/bkB187c0Fpw="),
        Vector(name: "SHA512 rounds 1", hash: .sha(.sha512, rounds: 1, order: .saltFirst),
               expected: "2p0svfOgDTflOF7HK5wbHP+05l4lkdV8P+FFq+p6aHPQS7uBGa9TyGc8DfxZsfkcaV2Mfod35WxAzaj5yBEKYw=="),
        Vector(name: "SHA512 rounds 2 password first", hash: .sha(.sha512, rounds: 2, order: .passwordFirst),
               expected: "QEqaPx0Xj9i8lKp3Lqm6oQmIGNkLGwZZXq2XG6giSYPz40JwRIGeCwa0BCjm7PUPiaUC/aUwhLhv1eOaEytwQQ=="),
        Vector(name: "MD5 rounds 1", hash: .md5(rounds: 1, order: .saltFirst), expected: "MmZhYjVjYjIxODNiMzVmYzYzYjM2NzY3MTcyZGFhZmY="),
        Vector(name: "MD5 rounds 2", hash: .md5(rounds: 2, order: .saltFirst), expected: "NzIyZTI2OGFiMGIxM2JkNTEzYTI2Yzk3YmMzOWU2MGI="),
        Vector(name: "MD5 rounds 0 password first", hash: .md5(rounds: 0, order: .passwordFirst),
               expected: "ZjI1YjAxOWE5NDcwMzE4ZDQ0ZDYwZTE0MTY2MzFmMzQ="),
        Vector(name: "PBKDF_SHA1 1000 (20 bytes)", hash: .pbkdf2(.sha1, rounds: 1000), expected: "lyyzCFlAUpkzVJDKKPSl1PyJGrk="),
        Vector(name: "PBKDF_SHA1 1000 (64 bytes)", hash: .pbkdf2(.sha1, rounds: 1000),
               expected: "lyyzCFlAUpkzVJDKKPSl1PyJGrmus+3dXEdQlJCV2Koj7sWeSt1Ms97lbOs8VkXPrXT6EeGIP0GtWWhzdepgGw=="),
        Vector(name: "STANDARD_SCRYPT N16384 r8 p1 (32 bytes)", hash: .standardScrypt(cpuMemCost: 16_384, blockSize: 8, parallelization: 1, dkLen: 32),
               expected: "qEMNflgfnKA8lS31Bqxmx1eJnWeiHXHA8ZAL13isHRQ="),
    ]

    @Test(arguments: vectors)
    func knownAnswers(v: Vector) throws {
        let stored = [UInt8](try #require(Data(base64Encoded: v.expected)))
        let out = v.hash.compute(password: Array(v.password.utf8), salt: v.salt, storedLength: stored.count)
        #expect(out.map { Data($0).base64EncodedString() } == v.expected)
        #expect(v.hash.compute(password: Array((v.password + "!").utf8), salt: v.salt, storedLength: stored.count) != stored)
        #expect(v.hash.unverifiableReason == nil)
        // The stored scheme string brings back exactly these parameters.
        #expect(ImportedHash(scheme: v.hash.scheme) == v.hash)
    }

    @Test func unverifiableAlgorithmsNeverMatch() {
        for hash: ImportedHash in [.bcrypt, .argon2, .sha(.sha256, rounds: 0, order: .saltFirst)] {
            #expect(hash.unverifiableReason != nil)
            #expect(hash.compute(password: [1], salt: [2], storedLength: 32) == nil)
            #expect(ImportedHash(scheme: hash.scheme) == hash)
        }
        // Parameters no import accepts (a hand-edited row) fail closed instead of trapping.
        #expect(ImportedHash.firebaseScrypt(key: [1], saltSeparator: [], rounds: 8, memoryCost: 40).compute(password: [1], salt: [], storedLength: 1) == nil)
        #expect(ImportedHash.standardScrypt(cpuMemCost: 1000, blockSize: 8, parallelization: 1, dkLen: 32).compute(password: [1], salt: [], storedLength: 32) == nil)
        #expect(ImportedHash.pbkdf2(.sha1, rounds: 0).compute(password: [1], salt: [], storedLength: 20) == nil)
        #expect(ImportedHash.pbkdf2(.sha1, rounds: 10).compute(password: [1], salt: [], storedLength: 0) == nil)
    }

    @Test func schemesAreVersionedByPrefix() {
        #expect(ImportedHash(scheme: "pbkdf2-sha256:5") == nil)
        #expect(ImportedHash(scheme: "import:{\"alg\":\"NOPE\"}") == nil)
        #expect(ImportedHash(scheme: "import:not json") == nil)
        // Rows written before SCRYPT was computable (alg, key, rounds, passwordFirst) still read.
        #expect(ImportedHash(scheme: "import:{\"alg\":\"HMAC_SHA1\",\"key\":\"a2V5\",\"rounds\":0,\"passwordFirst\":false}")
                == .hmac(.sha1, key: Array("key".utf8), order: .saltFirst))
    }

    // MARK: Request options

    static func options(_ json: String) throws(AuthError) -> ImportedHash? {
        try ImportedHash.options(of: RequestBody.parse(Array(json.utf8)))
    }

    @Test(arguments: [
        (#"{}"#, nil),
        (#"{"hashAlgorithm":"HMAC_SHA256","signerKey":"c2VjcmV0"}"#, ImportedHash.hmac(.sha256, key: Array("secret".utf8), order: .passwordFirst)),
        (#"{"hashAlgorithm":"HMAC_SHA512","signerKey":"c2VjcmV0","passwordHashOrder":"SALT_AND_PASSWORD"}"#,
         .hmac(.sha512, key: Array("secret".utf8), order: .saltFirst)),
        (#"{"hashAlgorithm":"HMAC_MD5","signerKey":"-_8","passwordHashOrder":1}"#, .hmac(.md5, key: [0xfb, 0xff], order: .saltFirst)),
        (#"{"hashAlgorithm":"SHA512","rounds":"12","passwordHashOrder":"PASSWORD_AND_SALT"}"#, .sha(.sha512, rounds: 12, order: .passwordFirst)),
        (#"{"hashAlgorithm":"SHA1","rounds":8192,"passwordHashOrder":"UNSPECIFIED_ORDER"}"#, .sha(.sha1, rounds: 8192, order: .saltFirst)),
        (#"{"hashAlgorithm":"MD5","rounds":0}"#, .md5(rounds: 0, order: .saltFirst)),
        (#"{"hashAlgorithm":"PBKDF_SHA1","rounds":120000}"#, .pbkdf2(.sha1, rounds: 120_000)),
        (#"{"hashAlgorithm":"PBKDF2_SHA256","rounds":1}"#, .pbkdf2(.sha256, rounds: 1)),
        (#"{"hashAlgorithm":"SCRYPT","signerKey":"a2V5","saltSeparator":"Bw==","rounds":8,"memoryCost":14}"#,
         .firebaseScrypt(key: Array("key".utf8), saltSeparator: [7], rounds: 8, memoryCost: 14)),
        (#"{"hashAlgorithm":"SCRYPT","signerKey":"a2V5","rounds":1,"memoryCost":1}"#, .firebaseScrypt(key: Array("key".utf8), saltSeparator: [], rounds: 1, memoryCost: 1)),
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","cpuMemCost":1024,"blockSize":8,"parallelization":16,"dkLen":64}"#,
         .standardScrypt(cpuMemCost: 1024, blockSize: 8, parallelization: 16, dkLen: 64)),
        // The Go Admin SDK sends the CPU/memory cost as memoryCost.
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","memoryCost":131072,"blockSize":8,"parallelization":1,"dkLen":32}"#,
         .standardScrypt(cpuMemCost: 131_072, blockSize: 8, parallelization: 1, dkLen: 32)),
        (#"{"hashAlgorithm":"BCRYPT"}"#, .bcrypt),
        (#"{"hashAlgorithm":"ARGON2"}"#, .argon2),
    ] as [(String, ImportedHash?)])
    func acceptedOptions(json: String, expected: ImportedHash?) throws {
        #expect(try Self.options(json) == expected)
    }

    @Test(arguments: [
        (#"{"hashAlgorithm":"NOPE"}"#, "INVALID_HASH_ALGORITHM"),
        (#"{"hashAlgorithm":"hmac_sha256","signerKey":"a2V5"}"#, "INVALID_HASH_ALGORITHM"),
        (#"{"hashAlgorithm":"HMAC_SHA256"}"#, "EMPTY_HASH_KEY"),
        (#"{"hashAlgorithm":"HMAC_SHA512","signerKey":""}"#, "EMPTY_HASH_KEY"),
        (#"{"hashAlgorithm":"HMAC_SHA1","signerKey":"a2V5","passwordHashOrder":"SIDEWAYS"}"#,
         "Invalid value at 'password_hash_order' (TYPE_ENUM), \"SIDEWAYS\""),
        (#"{"hashAlgorithm":"HMAC_SHA1","signerKey":"not base64!"}"#, "Invalid value at 'signer_key' (TYPE_BYTES), Base64 decoding failed for \"not base64!\""),
        (#"{"hashAlgorithm":"SHA256","rounds":8193}"#, "INVALID_HASH_ROUNDS"),
        (#"{"hashAlgorithm":"MD5","rounds":-1}"#, "INVALID_HASH_ROUNDS"),
        (#"{"hashAlgorithm":"PBKDF_SHA1","rounds":0}"#, "INVALID_HASH_ROUNDS"),
        (#"{"hashAlgorithm":"PBKDF2_SHA256","rounds":120001}"#, "INVALID_HASH_ROUNDS"),
        (#"{"hashAlgorithm":"SCRYPT","rounds":8,"memoryCost":14}"#, "EMPTY_HASH_KEY"),
        (#"{"hashAlgorithm":"SCRYPT","signerKey":"a2V5","rounds":9,"memoryCost":14}"#, "INVALID_HASH_ROUNDS"),
        (#"{"hashAlgorithm":"SCRYPT","signerKey":"a2V5","rounds":8,"memoryCost":15}"#, "INVALID_HASH_MEMORY_COST"),
        (#"{"hashAlgorithm":"SCRYPT","signerKey":"a2V5","rounds":8}"#, "INVALID_HASH_MEMORY_COST"),
        (#"{"hashAlgorithm":"SCRYPT","signerKey":"a2V5","saltSeparator":"%%","rounds":8,"memoryCost":14}"#,
         "Invalid value at 'salt_separator' (TYPE_BYTES), Base64 decoding failed for \"%%\""),
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","cpuMemCost":1000,"blockSize":8,"parallelization":1,"dkLen":64}"#, "INVALID_HASH_MEMORY_COST"),
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","blockSize":8,"parallelization":1,"dkLen":64}"#, "INVALID_HASH_MEMORY_COST"),
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","cpuMemCost":1024,"blockSize":0,"parallelization":1,"dkLen":64}"#, "INVALID_HASH_BLOCK_SIZE"),
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","cpuMemCost":1024,"blockSize":8,"dkLen":64}"#, "INVALID_HASH_PARALLELIZATION"),
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","cpuMemCost":1024,"blockSize":8,"parallelization":9223372036854775807,"dkLen":64}"#,
         "INVALID_HASH_PARALLELIZATION"),
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","cpuMemCost":1024,"blockSize":8,"parallelization":1}"#, "INVALID_HASH_DERIVED_KEY_LENGTH"),
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","cpuMemCost":1024,"blockSize":8,"parallelization":1,"dkLen":1025}"#, "INVALID_HASH_DERIVED_KEY_LENGTH"),
        // RFC 7914: N < 2^(16·r).
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","cpuMemCost":65536,"blockSize":1,"parallelization":1,"dkLen":32}"#, "INVALID_HASH_MEMORY_COST"),
        (#"{"hashAlgorithm":"STANDARD_SCRYPT","cpuMemCost":1048576,"blockSize":8,"parallelization":1,"dkLen":32}"#,
         "INVALID_HASH_MEMORY_COST : ((Hearth checks scrypt hashes within 256 MiB; 128 × blockSize × cpuMemCost exceeds it.))"),
    ])
    func rejectedOptions(json: String, message: String) {
        #expect {
            _ = try Self.options(json)
        } throws: { error in
            (error as? AuthError)?.message == message
        }
    }
}
