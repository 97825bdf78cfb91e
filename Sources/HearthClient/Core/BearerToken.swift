/// Where a client gets the `Authorization: Bearer …` value for each request.
public struct BearerToken: Sendable {
    let provide: @Sendable () async throws -> String?

    /// Builds a provider from a closure (for example one that refreshes an expiring ID token).
    public init(_ provide: @escaping @Sendable () async throws -> String?) {
        self.provide = provide
    }

    /// No `Authorization` header: `request.auth == null` in Firestore rules.
    public static let none = BearerToken { nil }

    /// A fixed Firebase ID token.
    public static func idToken(_ token: String) -> BearerToken { BearerToken { token } }

    /// The emulators' admin credential (`Bearer owner`): Firestore rules are bypassed, as with the
    /// Admin SDK against the Firebase emulators. Never valid in production.
    public static let owner = BearerToken { "owner" }

    /// The headers to add to a request.
    func headers() async throws(HearthClientError) -> [String: String] {
        let token: String?
        do { token = try await provide() } catch let e as HearthClientError {
            throw e
        } catch {
            throw .invalidArgument("the token provider failed: \(error)")
        }
        guard let token, !token.isEmpty else { return [:] }
        return ["Authorization": "Bearer \(token)"]
    }
}
