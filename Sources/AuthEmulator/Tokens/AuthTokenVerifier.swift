import HearthCore
import HearthCrypto

/// Verifies Firebase ID tokens for the rest of Hearth (Firestore rules, the uploads API).
///
/// `rs256` mode accepts only tokens whose RS256 signature verifies under one of Hearth's keys and
/// whose `exp` is still ahead on the emulator clock. `none` mode accepts unsigned tokens as the
/// Firebase emulators do: Hearth's own (`typ: JWT`, `exp` enforced on the emulator clock) and the
/// mock tokens of `@firebase/rules-unit-testing` and the JS SDK's `mockUserToken`
/// (`type: JWT`, `exp` in 1970, which the Firestore emulator ignores).
final class AuthTokenVerifier: IDTokenVerifier, Sendable {
    let signing: AuthConfiguration.TokenSigning
    let keys: SigningKeyRing
    let store: AuthStore
    let clock: Clock

    init(signing: AuthConfiguration.TokenSigning, keys: SigningKeyRing, store: AuthStore, clock: Clock) {
        self.signing = signing
        self.keys = keys
        self.store = store
        self.clock = clock
    }

    func verify(idToken token: String, projectID: String, checkRevoked: Bool) throws(IDTokenError) -> VerifiedIDToken {
        let jwt: JWT
        do {
            jwt = try JWT(decoding: token)
        } catch {
            throw .malformed("not a JWT")
        }
        let signed = try checkSignature(jwt)
        let payload = jwt.payload
        let issuer = "https://securetoken.google.com/\(projectID)"
        let aud = payload["aud"]?.stringValue
        guard aud == projectID else {
            throw .wrongProject("expected aud \"\(projectID)\" but got \(payload["aud"].map { $0.serialized() } ?? "none")")
        }
        guard payload["iss"]?.stringValue == issuer else {
            throw .wrongProject("expected iss \"\(issuer)\" but got \(payload["iss"].map { $0.serialized() } ?? "none")")
        }
        guard let sub = payload["sub"]?.stringValue, !sub.isEmpty, sub.count <= 128 else {
            throw .malformed("missing or invalid \"sub\" claim")
        }
        if Self.isIssuedInFuture(payload, now: clock.now().unixSeconds) {
            throw .issuedInFuture
        }
        if !Self.isMockToken(jwt) || signed {
            guard let exp = payload["exp"]?.intValue else { throw .malformed("missing \"exp\" claim") }
            if clock.now().unixSeconds >= exp { throw .expired }
        }
        if checkRevoked {
            let user: UserRecord?
            do {
                // A tenant's token names its tenant; its account lives there.
                let scope = AuthScope(projectID: projectID, tenantID: payload["firebase"]?["tenant"]?.stringValue)
                user = try store.read { tx in try tx.user(scope, sub) }
            } catch {
                throw .malformed("user lookup failed: \(error.message)")
            }
            guard let user else { throw .userNotFound }
            if user.disabled { throw .disabled }
            // A token without `iat` cannot show it was issued after the revocation: revoked (as
            // the refresh path judges it), never "not revoked".
            if let validSince = user.validSince, (payload["iat"]?.intValue ?? 0) < validSince { throw .revoked }
        }
        return VerifiedIDToken(uid: sub, claims: payload, isSigned: signed)
    }

    /// Whether `iat` is after `now` (emulator clock). Production's verifiers require `iat` in the
    /// past (Firebase's "verify ID tokens" rules; google-auth's "Token used too early"), so a token
    /// minted before the clock was moved back is refused here too, on every service.
    static func isIssuedInFuture(_ payload: JSONObject, now: Int64) -> Bool {
        guard let iat = payload["iat"]?.intValue else { return false }
        return iat > now
    }

    /// Whether the token is one of the unsigned mocks the Firebase JS tooling makes: they spell
    /// the type header `type` rather than `typ`.
    static func isMockToken(_ jwt: JWT) -> Bool {
        jwt.algorithm == "none" && jwt.header["typ"] == nil && jwt.header["type"] != nil
    }

    /// Checks the signature as the mode requires; returns whether the token was RS256-signed.
    func checkSignature(_ jwt: JWT) throws(IDTokenError) -> Bool {
        switch jwt.algorithm {
        case "RS256":
            guard let kid = jwt.keyID else { throw .malformed("signed token without \"kid\" header") }
            let key: SigningKeyRing.SigningKey?
            do {
                key = try keys.key(.idToken, kid: kid)
            } catch {
                throw .malformed("signing keys unavailable")
            }
            guard let key else { throw .malformed("token signed with an unknown key \"\(kid)\"") }
            guard key.key.verifyRS256(Array(jwt.signingInput.utf8), signature: jwt.signature) else {
                throw .malformed("invalid signature")
            }
            return true
        case "none" where signing == .none:
            guard jwt.signature.isEmpty else { throw .malformed("unsigned token with a signature") }
            return false
        case "none":
            throw .malformed("unsigned token; this Hearth signs ID tokens with RS256 (--token-signing rs256)")
        default:
            throw .malformed("unsupported algorithm \(jwt.algorithm.map { "\"\($0)\"" } ?? "(none)")")
        }
    }
}
