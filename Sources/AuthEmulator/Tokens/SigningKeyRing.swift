import Foundation
import HearthCore
import HearthCrypto

/// The RSA key pairs Hearth signs with, generated once per data directory and kept in SQLite.
///
/// One purpose per token family: ID tokens and session cookies (published where Google publishes
/// `securetoken@system.gserviceaccount.com`), and App Check tokens (published as App Check's JWKS).
final class SigningKeyRing: @unchecked Sendable {
    // `loaded` is only touched under `lock`; key generation happens under it too, so two requests
    // racing for the first key create one.
    private let lock = NSLock()
    private var loaded: [Purpose: [SigningKey]] = [:]
    private let store: AuthStore
    private let clock: Clock
    private let ids: IDGenerator

    /// What a key signs.
    enum Purpose: String, Sendable {
        case idToken = "id_token"
        case appCheck = "app_check"
    }

    /// A usable key: private key, certificate and JWK components.
    struct SigningKey: @unchecked Sendable {
        // RSAKey wraps a reference-counted EVP_PKEY whose sign/verify are thread safe.
        let kid: String
        let key: RSAKey
        let certificatePEM: String
        let modulus: [UInt8]
        let exponent: [UInt8]

        /// The JWK form (`kid`, `e`, `n`, `kty`, `alg`, `use`), as Google's JWKS endpoints list keys.
        var jwk: JSON {
            .object(JSONObject([
                ("kid", .string(kid)), ("e", .string(Base64URL.encode(exponent))), ("n", .string(Base64URL.encode(modulus))),
                ("kty", .string("RSA")), ("alg", .string("RS256")), ("use", .string("sig")),
            ]))
        }
    }

    init(store: AuthStore, clock: Clock, ids: IDGenerator) {
        self.store = store
        self.clock = clock
        self.ids = ids
    }

    /// Every stored key of `purpose` (none are created).
    func keys(_ purpose: Purpose) throws(AuthError) -> [SigningKey] {
        lock.lock()
        defer { lock.unlock() }
        return try loadLocked(purpose)
    }

    /// The newest key of `purpose`, generating and storing one when there is none.
    func activeKey(_ purpose: Purpose) throws(AuthError) -> SigningKey {
        lock.lock()
        defer { lock.unlock() }
        if let key = try loadLocked(purpose).last { return key }
        let created = try generateLocked(purpose)
        loaded[purpose] = [created]
        return created
    }

    /// The key named `kid` among those of `purpose`.
    func key(_ purpose: Purpose, kid: String) throws(AuthError) -> SigningKey? {
        try keys(purpose).first { $0.kid == kid }
    }

    private func loadLocked(_ purpose: Purpose) throws(AuthError) -> [SigningKey] {
        if let cached = loaded[purpose] { return cached }
        let stored = try store.read { tx in try tx.signingKeys(purpose: purpose.rawValue) }
        var out: [SigningKey] = []
        for s in stored {
            do {
                let key = try RSAKey(privateKeyPEM: s.privateKeyPEM)
                let (n, e) = try key.publicComponents()
                out.append(SigningKey(kid: s.kid, key: key, certificatePEM: s.certificatePEM, modulus: n, exponent: e))
            } catch {
                throw .internalError("Stored signing key \(s.kid) is unreadable: \(error)")
            }
        }
        if !out.isEmpty { loaded[purpose] = out }
        return out
    }

    private func generateLocked(_ purpose: Purpose) throws(AuthError) -> SigningKey {
        let now = clock.now()
        let kid = ids.hex(byteCount: 20)
        do {
            let key = try RSAKey.generate(bits: 2048)
            let serialBytes = ids.bytes(4)
            let serial = Int(serialBytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7fff_ffff)
            let commonName = purpose == .idToken ? "securetoken.system.gserviceaccount.com" : "firebaseappcheck.system.gserviceaccount.com"
            // Backdated a day so a clock frozen slightly in the past still sees a valid certificate.
            let cert = try key.selfSignedCertificatePEM(commonName: commonName, notBefore: now.unixSeconds - 86_400,
                                                        validSeconds: 20 * 365 * 86_400, serial: max(serial, 1))
            let pem = try key.privateKeyPEM()
            let stored = StoredSigningKey(kid: kid, purpose: purpose.rawValue, privateKeyPEM: pem, certificatePEM: cert,
                                          createdAt: now.unixSeconds)
            try store.write { tx in try tx.insertSigningKey(stored) }
            let (n, e) = try key.publicComponents()
            return SigningKey(kid: kid, key: key, certificatePEM: cert, modulus: n, exponent: e)
        } catch let e as AuthError {
            throw e
        } catch {
            throw .internalError("Could not create a signing key: \(error)")
        }
    }
}
