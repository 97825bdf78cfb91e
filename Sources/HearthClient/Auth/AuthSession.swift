import Foundation

/// A signed-in user's tokens, as Identity Toolkit and securetoken return them.
public struct AuthSession: Sendable, Equatable, Codable {
    /// The user's id (`localId` / `user_id`).
    public let uid: String
    /// The Firebase ID token (a JWT) to send as `Authorization: Bearer …`.
    public let idToken: String
    /// The refresh token for `AuthClient.refresh`.
    public let refreshToken: String
    /// Seconds the ID token is valid for after it was issued (3600).
    public let expiresIn: Int
    /// The email, for email/password accounts.
    public let email: String?

    public init(uid: String, idToken: String, refreshToken: String, expiresIn: Int, email: String? = nil) {
        self.uid = uid
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.email = email
    }

    /// The ID token's claims, read without verifying anything (for display and tests).
    public var claims: IDTokenClaims? { IDTokenClaims(jwt: idToken) }

    /// `BearerToken.idToken(idToken)`, for the other clients.
    public var bearer: BearerToken { .idToken(idToken) }
}

/// The payload of a Firebase ID token, decoded without verification.
public struct IDTokenClaims: Sendable, Equatable {
    /// `sub`.
    public let subject: String?
    /// `aud`: the project id.
    public let audience: String?
    /// `iss`: `https://securetoken.google.com/<project>`.
    public let issuer: String?
    /// `iat`.
    public let issuedAt: Date?
    /// `exp`.
    public let expiresAt: Date?
    /// `email`.
    public let email: String?
    /// `firebase.sign_in_provider`: `password`, `anonymous`, `custom`, …
    public let signInProvider: String?
    /// The payload's JSON text.
    public let json: String

    /// Decodes the middle part of `jwt`; nil when it is not a JWT.
    public init?(jwt: String) {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, let data = Base64URL.decode(String(parts[1])),
              let o = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
        subject = o["sub"] as? String
        audience = o["aud"] as? String
        issuer = o["iss"] as? String
        issuedAt = (o["iat"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) }
        expiresAt = (o["exp"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) }
        email = o["email"] as? String
        signInProvider = (o["firebase"] as? [String: Any])?["sign_in_provider"] as? String
        json = String(decoding: data, as: UTF8.self)
    }
}

/// base64url without padding, as JWTs use it.
enum Base64URL {
    static func decode(_ text: String) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s)
    }

    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
