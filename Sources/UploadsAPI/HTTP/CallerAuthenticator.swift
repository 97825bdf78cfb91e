import HearthCore
import HearthHTTP

/// The verified caller of a request.
struct Caller: Sendable {
    let uid: String
    let token: VerifiedIDToken
}

/// Identifies the caller from `Authorization: Bearer <ID token>` and, when required, checks App Check.
struct CallerAuthenticator: Sendable {
    let projectID: String
    let tokenVerifier: any IDTokenVerifier
    let requireAppCheck: Bool
    let appCheckVerifier: (@Sendable (String) -> Bool)?

    func authenticate(_ request: Request) throws(UploadsError) -> Caller {
        if requireAppCheck {
            // App Check attests the app before anything about the user is looked at, as Firebase's
            // callable functions order it.
            guard let token = request.headers["X-Firebase-AppCheck"].map({ Substring($0).trimmingSpaces() }), !token.isEmpty else {
                throw .appCheckMissing
            }
            guard let verify = appCheckVerifier, verify(token) else { throw .appCheckInvalid }
        }
        let idToken = try Self.bearerToken(request.headers["Authorization"])
        let verified: VerifiedIDToken
        do {
            verified = try tokenVerifier.verify(idToken: idToken, projectID: projectID, checkRevoked: true)
        } catch {
            throw .idToken(error)
        }
        guard !verified.uid.isEmpty else { throw .idToken(.malformed("the token has no subject")) }
        // As bytes: a `/` followed by a combining mark is one character that `contains("/")`
        // does not find, and the uid would reach into another user's `users/<uid>/` paths.
        guard !verified.uid.utf8.contains(UInt8(ascii: "/")) else { throw .unusableUID(verified.uid) }
        return Caller(uid: verified.uid, token: verified)
    }

    /// The token of a `Bearer` authorization (scheme case-insensitive, RFC 7235).
    static func bearerToken(_ header: String?) throws(UploadsError) -> String {
        guard let header else { throw .missingIDToken }
        let trimmed = Substring(header).trimmingSpaces()
        if trimmed.isEmpty || trimmed.lowercased() == "bearer" { throw .missingIDToken }
        guard trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " else { throw .malformedAuthorization }
        let token = trimmed.dropFirst(7).trimmingSpaces()
        guard !token.isEmpty else { throw .missingIDToken }
        return token
    }
}
