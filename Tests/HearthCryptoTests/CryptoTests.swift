import Foundation
import Testing
import HearthCrypto

@Suite struct DigestTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "d41d8cd98f00b204e9800998ecf8427e", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "900150983cd24fb0d6963f7d28e17f72", "a9993e364706816aba3e25717850c26c9cd0d89d"),
    ])
    func knownDigests(input: String, sha256: String, md5: String, sha1: String) {
        #expect(Hex.encode(Digest.sha256(Array(input.utf8))) == sha256)
        #expect(Hex.encode(Digest.md5(Array(input.utf8))) == md5)
        #expect(Hex.encode(Digest.sha1(Array(input.utf8))) == sha1)
    }

    @Test func streamingEqualsOneShot() {
        let data = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let s = StreamingDigest(.sha256)
        var i = 0
        while i < data.count { let n = min(777, data.count - i); s.update(Array(data[i..<i + n])); i += n }
        #expect(s.finalize() == Digest.sha256(data))
    }

    // RFC 4231 test case 2.
    @Test func hmacSHA256RFC4231() {
        let mac = HMAC.sha256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(Hex.encode(HMAC.sha1(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8)))
                == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(HMAC.sha256(key: [UInt8](), data: [UInt8]()).count == 32)
    }

    // The standard check values of both CRC variants over "123456789".
    @Test func crcCheckValues() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum(Array("123456789".utf8), variant: .castagnoli) == 0xE306_9283)
        var c = CRC32()
        c.update(Array("12345".utf8))
        c.update(Array("6789".utf8))
        #expect(c.bigEndianBytes == [0xCB, 0xF4, 0x39, 0x26])
    }

    // RFC 7914 §11 PBKDF2-HMAC-SHA256 vector.
    @Test func pbkdf2() {
        let out = KeyDerivation.pbkdf2SHA256(password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, length: 64)
        #expect(Hex.encode(out).hasPrefix("55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"))
    }

    @Test func constantTimeEquality() {
        #expect(ConstantTime.equals("abc", "abc"))
        #expect(!ConstantTime.equals("abc", "abd"))
        #expect(!ConstantTime.equals("abc", "ab"))
        #expect(ConstantTime.equals("", ""))
    }

    @Test func encodings() {
        #expect(Hex.decode("00ffAB") == [0, 255, 0xab])
        #expect(Hex.decode("0") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.decode("-_8").map(Array.init) == [0xfb, 0xff])
        #expect(Base64URL.decode("!!") == nil)
        #expect(SecureRandom.bytes(16).count == 16)
        #expect(SecureRandom.bytes(16) != SecureRandom.bytes(16))
    }
}

@Suite struct RSAKeyTests {
    static let key = try! RSAKey.generate(bits: 2048)

    @Test func signsAndVerifiesRS256() throws {
        let message = Array("header.payload".utf8)
        let sig = try Self.key.signRS256(message)
        #expect(sig.count == 256)
        #expect(Self.key.verifyRS256(message, signature: sig))
        #expect(!Self.key.verifyRS256(Array("header.payloaD".utf8), signature: sig))
        var bad = sig
        bad[0] ^= 1
        #expect(!Self.key.verifyRS256(message, signature: bad))
    }

    @Test func pemRoundTripsAndPublicKeyVerifies() throws {
        let priv = try RSAKey(privateKeyPEM: try Self.key.privateKeyPEM())
        let pub = try RSAKey(publicKeyPEM: try Self.key.publicKeyPEM())
        #expect(!pub.hasPrivateKey)
        let sig = try priv.signRS256(Array("m".utf8))
        #expect(pub.verifyRS256(Array("m".utf8), signature: sig))
        #expect(throws: CryptoError.self) { try pub.signRS256(Array("m".utf8)) }
        #expect(throws: CryptoError.self) { try RSAKey(privateKeyPEM: "not a key") }
    }

    @Test func certificateCarriesThePublicKey() throws {
        let pem = try Self.key.selfSignedCertificatePEM(commonName: "localhost", subjectAltNames: ["DNS:localhost", "IP:127.0.0.1"],
                                                        notBefore: 1_700_000_000, validSeconds: 86_400)
        #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
        let fromCert = try RSAKey(publicKeyPEM: pem)
        let sig = try Self.key.signRS256(Array("x".utf8))
        #expect(fromCert.verifyRS256(Array("x".utf8), signature: sig))
        let (n, e) = try Self.key.publicComponents()
        #expect(n.count == 256)
        #expect(e == [1, 0, 1])
    }
}

@Suite struct Base64URLTests {
    static func foundationBase64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    @Test(arguments: 0..<70)
    func matchesFoundationsEncoder(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        #expect(Base64URL.encode(bytes) == Self.foundationBase64URL(bytes))
        #expect(Base64URL.decode(Base64URL.encode(bytes)).map { [UInt8]($0) } == bytes)
    }

    @Test(arguments: 0..<70)
    func standardAlphabetMatchesFoundation(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 53 &+ 250) }
        #expect(StandardBase64.encode(bytes) == Data(bytes).base64EncodedString())
    }

    /// Bytes in memory (S3's `x-amz-id-2`), contiguous arrays, and collections with no contiguous
    /// storage all encode as Foundation does.
    @Test(arguments: 0..<70)
    func everyInputKindMatchesFoundation(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 3) }
        let expected = Data(bytes).base64EncodedString()
        #expect(bytes.withUnsafeBytes { StandardBase64.encode($0) } == expected)
        #expect(StandardBase64.encode(bytes[...]) == expected)
        #expect(StandardBase64.encode((0..<length).lazy.map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 3) }) == expected)
        #expect(Base64URL.encode((0..<length).lazy.map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 3) }) == Self.foundationBase64URL(bytes))
    }

    @Test func allByteValues() {
        let bytes = (0...255).map(UInt8.init)
        #expect(StandardBase64.encode(bytes) == Data(bytes).base64EncodedString())
        #expect(Base64URL.encode(bytes) == Self.foundationBase64URL(bytes))
        #expect(Base64URL.decode(Data(bytes).base64EncodedString()).map { [UInt8]($0) } == bytes)
    }

    @Test(arguments: ["a", "ab=c", "abc==", "ab===", "a*bc", "abcde", "=abc"])
    func rejectsMalformed(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}
