import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Firebase Authentication over its REST API (Identity Toolkit v1 and securetoken), against the
/// Hearth/Firebase Auth emulator or production.
///
/// Related: https://firebase.google.com/docs/reference/rest/auth
public struct AuthClient: Sendable {
    /// Where the API lives.
    public enum Endpoint: Sendable, Equatable {
        /// `https://identitytoolkit.googleapis.com` and `https://securetoken.googleapis.com`.
        case production
        /// An emulator serving both under host-named prefixes (`http://127.0.0.1:9099/identitytoolkit.googleapis.com/…`).
        case emulator(URL)
    }

    public let endpoint: Endpoint
    public let apiKey: String
    let transport: HTTPTransport

    /// A client for `endpoint`; the emulator accepts any API key.
    public init(endpoint: Endpoint, apiKey: String = "fake-api-key", session: URLSession = .shared) {
        self.endpoint = endpoint
        self.apiKey = apiKey
        transport = HTTPTransport(session: session)
    }

    /// A client for the emulator at `emulatorURL` (e.g. `http://127.0.0.1:9099`).
    public init(emulatorURL: URL, apiKey: String = "fake-api-key", session: URLSession = .shared) {
        self.init(endpoint: .emulator(emulatorURL), apiKey: apiKey, session: session)
    }

    // MARK: Sign-up and sign-in

    /// `accounts:signUp` with email and password.
    /// - Throws: `HearthClientError.api` with `authErrorCode` `EMAIL_EXISTS`, `WEAK_PASSWORD`, `INVALID_EMAIL`, …
    public func signUp(email: String, password: String, displayName: String? = nil) async throws -> AuthSession {
        var body: [String: AnyJSON] = ["email": .string(email), "password": .string(password), "returnSecureToken": .bool(true)]
        if let displayName { body["displayName"] = .string(displayName) }
        return try await session(identityToolkit("accounts:signUp", body))
    }

    /// `accounts:signUp` with no email: a new anonymous user.
    public func signInAnonymously() async throws -> AuthSession {
        try await session(identityToolkit("accounts:signUp", ["returnSecureToken": .bool(true)]))
    }

    /// `accounts:signInWithPassword`.
    /// - Throws: `HearthClientError.api` with `EMAIL_NOT_FOUND`, `INVALID_PASSWORD`, `USER_DISABLED`, …
    public func signIn(email: String, password: String) async throws -> AuthSession {
        try await session(identityToolkit("accounts:signInWithPassword",
                                          ["email": .string(email), "password": .string(password), "returnSecureToken": .bool(true)]))
    }

    /// `accounts:signInWithCustomToken` (a token from the Admin SDK's `create_custom_token`, or an
    /// unsigned one as the emulator accepts: see `AuthClient.unsignedCustomToken`).
    public func signIn(customToken: String) async throws -> AuthSession {
        try await session(identityToolkit("accounts:signInWithCustomToken",
                                          ["token": .string(customToken), "returnSecureToken": .bool(true)]))
    }

    /// Exchanges a refresh token for a new ID token (`securetoken.googleapis.com/v1/token`).
    /// - Throws: `HearthClientError.api` with `TOKEN_EXPIRED` (revoked), `USER_DISABLED`, `INVALID_REFRESH_TOKEN`, …
    public func refresh(_ refreshToken: String) async throws -> AuthSession {
        let url = try url(service: "securetoken.googleapis.com", path: "/v1/token")
        let form = "grant_type=refresh_token&refresh_token=" + URLBuilder.queryEscape(refreshToken)
        let result = try await transport.send("POST", url, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                              body: Data(form.utf8))
        guard result.isSuccess else { throw HearthClientError.from(result, method: "POST") }
        let r = try WireJSON.decode(SecureTokenResponse.self, from: result, what: "securetoken response")
        return AuthSession(uid: r.user_id, idToken: r.id_token, refreshToken: r.refresh_token,
                           expiresIn: Int(r.expires_in) ?? 3600, email: nil)
    }

    /// Refreshes `session`, keeping its email.
    public func refresh(_ session: AuthSession) async throws -> AuthSession {
        let fresh = try await refresh(session.refreshToken)
        return AuthSession(uid: fresh.uid, idToken: fresh.idToken, refreshToken: fresh.refreshToken,
                           expiresIn: fresh.expiresIn, email: session.email)
    }

    // MARK: Account

    /// `accounts:lookup` for the ID token's user.
    public func lookup(idToken: String) async throws -> AuthUser {
        let result = try await identityToolkit("accounts:lookup", ["idToken": .string(idToken)])
        let r = try WireJSON.decode(LookupResponse.self, from: result, what: "accounts:lookup response")
        guard let user = r.users?.first else {
            throw HearthClientError.api(GoogleAPIError(httpStatus: 400, status: nil, message: "USER_NOT_FOUND"))
        }
        return user
    }

    /// `accounts:update` of the display name and/or password; a password change returns new tokens.
    public func update(idToken: String, displayName: String? = nil, password: String? = nil) async throws -> AuthSession? {
        var body: [String: AnyJSON] = ["idToken": .string(idToken), "returnSecureToken": .bool(true)]
        if let displayName { body["displayName"] = .string(displayName) }
        if let password { body["password"] = .string(password) }
        let result = try await identityToolkit("accounts:update", body)
        let r = try WireJSON.decode(SignInResponse.self, from: result, what: "accounts:update response")
        guard let token = r.idToken, let refresh = r.refreshToken else { return nil }
        return AuthSession(uid: r.localId ?? IDTokenClaims(jwt: token)?.subject ?? "", idToken: token, refreshToken: refresh, expiresIn: Int(r.expiresIn ?? "") ?? 3600, email: r.email)
    }

    /// `accounts:delete` of the ID token's user.
    public func delete(idToken: String) async throws {
        _ = try await identityToolkit("accounts:delete", ["idToken": .string(idToken)])
    }

    /// An unsigned custom token (`alg: none`) for `uid`, which the Firebase Auth emulator (and Hearth)
    /// accept in place of one signed by a service account. Production refuses it.
    public static func unsignedCustomToken(uid: String, claims: [String: String] = [:], now: Date = Date()) -> String {
        let header = #"{"alg":"none","typ":"JWT"}"#
        let iat = Int(now.timeIntervalSince1970)
        var payload: [String: Any] = [
            "aud": "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit",
            "iat": iat, "exp": iat + 3600, "iss": "hearth-client@example.com", "sub": "hearth-client@example.com", "uid": uid,
        ]
        if !claims.isEmpty { payload["claims"] = claims }
        let body = (try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])) ?? Data()
        return Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(body) + "."
    }

    // MARK: Plumbing

    func url(service: String, path: String) throws(HearthClientError) -> URL {
        switch endpoint {
        case .production:
            guard let base = URL(string: "https://\(service)") else { throw .invalidArgument(service) }
            return try URLBuilder.url(base, path, query: [("key", apiKey)])
        case .emulator(let base):
            return try URLBuilder.url(base, "/\(service)\(path)", query: [("key", apiKey)])
        }
    }

    func identityToolkit(_ method: String, _ body: [String: AnyJSON]) async throws(HearthClientError) -> HTTPResult {
        let url = try url(service: "identitytoolkit.googleapis.com", path: "/v1/\(method)")
        let result = try await transport.send("POST", url, headers: ["Content-Type": "application/json"], body: try WireJSON.encode(body))
        guard result.isSuccess else { throw HearthClientError.from(result, method: "POST") }
        return result
    }

    func session(_ result: HTTPResult) throws(HearthClientError) -> AuthSession {
        let r = try WireJSON.decode(SignInResponse.self, from: result, what: "sign-in response")
        guard let token = r.idToken, let refresh = r.refreshToken else {
            throw .decoding("sign-in response without idToken/refreshToken: \(result.bodyText.prefix(300))")
        }
        // signInWithCustomToken answers without localId, as production does: the uid is in the token.
        guard let uid = r.localId ?? IDTokenClaims(jwt: token)?.subject else {
            throw .decoding("sign-in response without localId and an ID token without sub")
        }
        return AuthSession(uid: uid, idToken: token, refreshToken: refresh, expiresIn: Int(r.expiresIn ?? "") ?? 3600, email: r.email)
    }

    struct SignInResponse: Decodable {
        let localId: String?
        let idToken: String?
        let refreshToken: String?
        let expiresIn: String?
        let email: String?
    }

    // Field names are the wire's snake_case.
    struct SecureTokenResponse: Decodable {
        let id_token: String
        let refresh_token: String
        let expires_in: String
        let user_id: String
    }

    struct LookupResponse: Decodable {
        let users: [AuthUser]?
    }
}
