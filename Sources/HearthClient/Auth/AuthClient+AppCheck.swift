import Foundation

extension AuthClient {
    /// An App Check token from the debug provider (`projects/{p}/apps/{app}:exchangeDebugToken` of the
    /// Firebase App Check REST API), for `UploadsClient(appCheckToken:)` when the API requires App Check.
    /// On Hearth the auth listener serves it; in production the debug token must be registered in the console.
    public func exchangeAppCheckDebugToken(projectID: String, appID: String, debugToken: String) async throws -> AppCheckToken {
        let url = try url(service: "firebaseappcheck.googleapis.com", path: "/v1/projects/\(projectID)/apps/\(appID):exchangeDebugToken")
        let result = try await transport.send("POST", url, headers: ["Content-Type": "application/json"],
                                              body: try WireJSON.encode(["debugToken": AnyJSON.string(debugToken)]))
        guard result.isSuccess else { throw HearthClientError.from(result, method: "POST") }
        struct Response: Decodable { let token: String; let ttl: String? }
        let r = try WireJSON.decode(Response.self, from: result, what: "exchangeDebugToken response")
        // `ttl` is a protobuf Duration: "3600s" (possibly with a fraction).
        let seconds = r.ttl.flatMap { Double($0.hasSuffix("s") ? String($0.dropLast()) : $0) }
        return AppCheckToken(token: r.token, ttlSeconds: seconds.map { Int($0) })
    }
}

/// An App Check token to send as `X-Firebase-AppCheck`.
public struct AppCheckToken: Sendable, Equatable {
    public let token: String
    /// Its lifetime in seconds, when the server said.
    public let ttlSeconds: Int?
}
