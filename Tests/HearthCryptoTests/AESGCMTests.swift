import Foundation
import Testing
import HearthCrypto

@Suite struct AESGCMTests {
    /// Test case 16 of "The Galois/Counter Mode of Operation" (McGrew & Viega): AES-256, 96-bit IV, AAD.
    @Test func opensTheSpecificationsVector() throws {
        let key = Hex.decode("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")!
        let box = Hex.decode("cafebabefacedbaddecaf888"
            + "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
            + "76fc6ece0f4e1768cddf8853bb2d551b")!
        let aad = Hex.decode("feedfacedeadbeeffeedfacedeadbeefabaddad2")!
        let plain = try AESGCM.open(box, key: key, aad: aad)
        #expect(Hex.encode(plain) == "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
    }

    @Test func sealsWithAFreshNonceAndOpensOnlyWithItsKey() throws {
        let key = SecureRandom.bytes(32)
        let message = Array("attack at dawn".utf8)
        let a = AESGCM.seal(message, key: key), b = AESGCM.seal(message, key: key)
        #expect(a.count == message.count + AESGCM.overhead)
        #expect(a != b)  // a new nonce each time
        #expect(try AESGCM.open(a, key: key) == message)
        #expect(throws: AESGCM.AuthenticationFailure.self) { try AESGCM.open(a, key: SecureRandom.bytes(32)) }
        var tampered = a
        tampered[AESGCM.nonceSize] ^= 1
        #expect(throws: AESGCM.AuthenticationFailure.self) { try AESGCM.open(tampered, key: key) }
        #expect(throws: AESGCM.AuthenticationFailure.self) { try AESGCM.open(Array(a.prefix(10)), key: key) }
        #expect(try AESGCM.open(AESGCM.seal([], key: key), key: key) == [])
    }
}
