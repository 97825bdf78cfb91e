import Foundation
import HearthCore
import HearthCrypto
import SecurityRules

/// Who a request acts for, from its `Authorization` header, as the Firestore emulator decides it.
enum Caller {
    /// `Bearer owner` (or a Google OAuth access token): rules do not apply.
    case admin
    /// A client: `auth` is `request.auth` (nil when signed out).
    case client(auth: RulesValue?)

    var isAdmin: Bool {
        if case .admin = self { return true }
        return false
    }

    /// Reads the header. A bearer that is not a JWT is refused with the emulator's `invalid jwt`.
    ///
    /// The verifier (the auth emulator's) decides signed and unsigned tokens first; when it
    /// refuses a token that still decodes as a JWT, the token is accepted as decoded, because the
    /// Firestore emulator never checks signatures, expiry or audience (the rules-unit-testing mock
    /// tokens carry `exp` 3600 seconds after 1970).
    static func from(authorization: String?, projectID: String, verifier: any IDTokenVerifier,
                     logger: Logger) throws(FirestoreError) -> Caller {
        guard let header = authorization?.trimmingCharacters(in: .whitespaces), !header.isEmpty else {
            return .client(auth: nil)
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw .unauthenticated("Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
        }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        if token.lowercased() == "owner" || token.hasPrefix("ya29.") { return .admin }
        do {
            let verified = try verifier.verify(idToken: token, projectID: projectID, checkRevoked: false)
            return .client(auth: RulesConversion.auth(uid: verified.uid, claims: verified.claims))
        } catch {
            guard let claims = decodeUnverified(token) else {
                throw .invalidArgument("invalid jwt")
            }
            let uid = claims["user_id"]?.stringValue ?? claims["sub"]?.stringValue ?? ""
            return .client(auth: RulesConversion.auth(uid: uid, claims: claims))
        }
    }

    /// The payload of a JWT (`header.payload.signature`), unverified; nil when not a JWT.
    static func decodeUnverified(_ token: String) -> JSONObject? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
              let headerData = Base64URL.decode(String(segments[0])),
              case .object? = try? JSON.parse(headerData),
              let payloadData = Base64URL.decode(String(segments[1])),
              case .object(let claims)? = try? JSON.parse(payloadData)
        else { return nil }
        return claims
    }
}
