import Foundation
import HearthCore
import HearthHTTP
@testable import AuthEmulator

/// Identity Toolkit request bodies through the Auth service's own request handling, on a fresh
/// in-memory store holding one signed-up account: up to 8 requests an input, separated by a zero
/// byte; each one's first byte picks one of 28 endpoints (client, admin, MFA, tenants, provider
/// configurations, project and emulator configuration, the token endpoint's form, listing), the
/// rest is its body. `$T`, `$R` and `$U` in a body become the account's ID token, refresh token
/// and `localId`, so bodies get past the token checks to the fields behind them.
///
/// Invariants: never a 5xx but 501 (a feature Hearth does not emulate); every answer JSON, and
/// every error Google's error body whose `code` is the status, with a message. After the requests,
/// everything stored exports, imports into a second fresh service and exports the same again —
/// a request never leaves behind data an export loses or cannot carry.
extension FuzzTargets {
    static func authRequests(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        guard !bytes.isEmpty, let service = ImportProbe.auth() else { return }
        let signedUp = AuthProbe.send(service, AuthProbe.endpoints[0],
                                      Array(#"{"email":"seed@example.com","password":"secret123","returnSecureToken":true}"#.utf8))
        let account = (try? JSON.parse(signedUp.body)) ?? .null
        guard let idToken = account["idToken"]?.stringValue, let refreshToken = account["refreshToken"]?.stringValue,
              let localId = account["localId"]?.stringValue else {
            throw FuzzFailure("auth-requests: the seed account did not sign up: \(signedUp.status) \(String(decoding: signedUp.body, as: UTF8.self))")
        }
        for segment in bytes.split(separator: 0, maxSplits: 7, omittingEmptySubsequences: true) {
            let endpoint = AuthProbe.endpoints[Int(segment[segment.startIndex]) % AuthProbe.endpoints.count]
            let body = String(decoding: segment.dropFirst(), as: UTF8.self)
                .replacingOccurrences(of: "$T", with: idToken)
                .replacingOccurrences(of: "$R", with: refreshToken)
                .replacingOccurrences(of: "$U", with: localId)
            let answer = AuthProbe.send(service, endpoint, Array(body.utf8))
            try AuthProbe.check(answer, endpoint, body)
        }
        try ImportProbe.authRoundTrip(service, "what the requests stored")
    }
}

/// The endpoints of the `auth-requests` target and its checks of an answer.
enum AuthProbe {
    struct Endpoint {
        let method: String
        let path: String
        /// `Bearer owner` (else the client's API key).
        var admin = false
        /// An `application/x-www-form-urlencoded` body (the token endpoint); a GET takes the body as its query.
        var form = false
    }

    static let it = "/identitytoolkit.googleapis.com"
    static let project = "\(it)/v1/projects/\(ImportProbe.project)"

    static let endpoints: [Endpoint] = [
        Endpoint(method: "POST", path: "\(it)/v1/accounts:signUp"),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:signInWithPassword"),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:signInWithCustomToken"),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:signInWithIdp"),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:lookup"),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:update"),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:delete"),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:sendOobCode"),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:resetPassword"),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:createAuthUri"),
        Endpoint(method: "POST", path: "\(it)/v2/accounts/mfaEnrollment:start"),
        Endpoint(method: "POST", path: "\(it)/v2/accounts/mfaEnrollment:finalize"),
        Endpoint(method: "POST", path: "\(it)/v2/accounts/mfaSignIn:start"),
        Endpoint(method: "POST", path: "\(project)/accounts:batchCreate", admin: true),
        Endpoint(method: "POST", path: "\(project)/accounts:query", admin: true),
        Endpoint(method: "POST", path: "\(project)/accounts:update", admin: true),
        Endpoint(method: "POST", path: "\(project)/accounts:batchDelete", admin: true),
        Endpoint(method: "POST", path: "\(project)/accounts", admin: true),
        Endpoint(method: "PATCH", path: "\(it)/admin/v2/projects/\(ImportProbe.project)/config", admin: true),
        Endpoint(method: "POST", path: "\(it)/v2/projects/\(ImportProbe.project)/tenants", admin: true),
        Endpoint(method: "POST", path: "\(it)/v2/projects/\(ImportProbe.project)/oauthIdpConfigs?oauthIdpConfigId=oidc.fuzz", admin: true),
        Endpoint(method: "POST", path: "/securetoken.googleapis.com/v1/token", form: true),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:signInWithPhoneNumber"),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:sendVerificationCode"),
        Endpoint(method: "PATCH", path: "/emulator/v1/projects/\(ImportProbe.project)/config"),
        Endpoint(method: "POST", path: "\(project):createSessionCookie", admin: true),
        Endpoint(method: "POST", path: "\(it)/v1/accounts:signInWithEmailLink"),
        Endpoint(method: "GET", path: "\(project)/accounts:batchGet", admin: true),
    ]

    static func send(_ service: AuthService, _ endpoint: Endpoint, _ body: [UInt8]) -> (status: Int, body: [UInt8]) {
        var headers = HTTPHeaders()
        var target = endpoint.path
        var bytes = body
        if endpoint.method == "GET" {
            // The body is the query, in the characters a request line carries.
            target += "?" + String(decoding: body.filter { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }, as: UTF8.self)
            bytes = []
        } else {
            headers.set("Content-Type", endpoint.form ? "application/x-www-form-urlencoded" : "application/json")
        }
        if endpoint.admin { headers.set("Authorization", "Bearer owner") } else { target += (target.contains("?") ? "&" : "?") + "key=fake-api-key" }
        let response = service.http.answer(Request(method: endpoint.method, target: target, headers: headers, body: bytes))
        return (response.status, response.bodyBytes ?? [])
    }

    static func check(_ answer: (status: Int, body: [UInt8]), _ endpoint: Endpoint, _ body: String) throws(FuzzFailure) {
        let text = String(decoding: answer.body, as: UTF8.self)
        let request = "\(endpoint.method) \(endpoint.path) \(body.debugDescription)"
        guard answer.status < 500 || answer.status == 501 else {
            throw FuzzFailure("auth-requests: \(request) answered \(answer.status) \(text)")
        }
        guard let json = try? JSON.parse(answer.body), json.objectValue != nil else {
            throw FuzzFailure("auth-requests: \(request) answered \(answer.status) with no JSON object: \(text.debugDescription)")
        }
        if answer.status >= 400 {
            guard json["error"]?["code"]?.intValue == Int64(answer.status), let message = json["error"]?["message"]?.stringValue, !message.isEmpty else {
                throw FuzzFailure("auth-requests: \(request) answered \(answer.status) with no Google error body: \(text)")
            }
        }
        FuzzChecks.count("auth-requests")
    }
}
