import Foundation
import HearthCrypto
import Testing
@testable import S3Emulator

@Suite struct SigningKeyTests {
    @Test func derivesTheDocumentedKey() {
        // The worked example of "Calculate the signature for AWS Signature Version 4" (service iam).
        let key = SigningKey.derive(secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", date: "20150830", region: "us-east-1", service: "iam")
        #expect(Hex.encode(key) == "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9")
    }

    @Test func cacheReturnsTheDerivedKeyPerScope() {
        let cache = SigningKeyCache(capacity: 2)
        let a = cache.key(secret: "s", date: "20261130", region: "us-east-1")
        #expect(a == SigningKey.derive(secret: "s", date: "20261130", region: "us-east-1", service: "s3"))
        #expect(cache.key(secret: "s", date: "20261130", region: "us-east-1") == a)
        #expect(cache.key(secret: "s", date: "20261130", region: "eu-west-1") != a)
        #expect(cache.key(secret: "t", date: "20261130", region: "us-east-1") != a)
        #expect(cache.key(secret: "s", date: "20261201", region: "us-east-1") != a)
        // Past capacity the cache starts over, still answering correctly.
        #expect(cache.key(secret: "s", date: "20261130", region: "us-east-1") == a)
    }

    @Test func cacheIsSafeAcrossThreads() {
        let cache = SigningKeyCache(capacity: 8)
        let expected = (0..<16).map { SigningKey.derive(secret: "s\($0)", date: "20261130", region: "us-east-1", service: "s3") }
        let mismatches = Mismatches()
        DispatchQueue.concurrentPerform(iterations: 400) { i in
            if cache.key(secret: "s\(i % 16)", date: "20261130", region: "us-east-1") != expected[i % 16] { mismatches.add() }
        }
        #expect(mismatches.count == 0)
    }

    final class Mismatches: @unchecked Sendable {
        // Guarded by `lock`.
        private let lock = NSLock()
        private var value = 0
        func add() { lock.lock(); value += 1; lock.unlock() }
        var count: Int { lock.lock(); defer { lock.unlock() }; return value }
    }
}
