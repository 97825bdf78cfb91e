import Foundation
import HearthCrypto

/// SigV4 signing keys: `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`.
///
/// Related: "Calculate the signature for AWS Signature Version 4" (deriving the signing key).
enum SigningKey {
    /// Derives the signing key for a credential scope.
    static func derive(secret: String, date: String, region: String, service: String) -> [UInt8] {
        let kDate = HMAC.sha256(key: Array(("AWS4" + secret).utf8), data: Array(date.utf8))
        let kRegion = HMAC.sha256(key: kDate, data: Array(region.utf8))
        let kService = HMAC.sha256(key: kRegion, data: Array(service.utf8))
        return HMAC.sha256(key: kService, data: Array("aws4_request".utf8))
    }

    /// Lower-case hex HMAC-SHA256 of `data` under `key` (a signature).
    static func sign(_ key: [UInt8], _ data: [UInt8]) -> String {
        SigV4Encoding.hex(HMAC.sha256(key: key, data: data))
    }
}

/// Remembers derived signing keys per (secret, date, region, service): four HMACs saved per
/// request, since every request of a day from one key shares its signing key.
final class SigningKeyCache: @unchecked Sendable {
    // The dictionary is guarded by `lock`; entries are immutable arrays.
    private let lock = NSLock()
    private var keys: [String: [UInt8]] = [:]
    private let capacity: Int

    /// A cache holding at most `capacity` keys (it is emptied when full: keys roll daily anyway).
    init(capacity: Int = 256) { self.capacity = capacity }

    /// The signing key for the scope, derived once.
    func key(secret: String, date: String, region: String, service: String = "s3") -> [UInt8] {
        let id = "\(date)\u{0}\(region)\u{0}\(service)\u{0}\(secret)"
        lock.lock()
        if let key = keys[id] {
            lock.unlock()
            return key
        }
        lock.unlock()
        let key = SigningKey.derive(secret: secret, date: date, region: region, service: service)
        lock.lock()
        if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
        keys[id] = key
        lock.unlock()
        return key
    }
}
