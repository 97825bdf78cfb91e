/// A user record as `accounts:lookup` returns it.
public struct AuthUser: Sendable, Equatable, Codable {
    /// `localId`.
    public let uid: String
    public let email: String?
    public let emailVerified: Bool?
    public let displayName: String?
    public let photoUrl: String?
    public let disabled: Bool?
    /// Seconds since the epoch (a string, as the API sends it) before which tokens are revoked.
    public let validSince: String?
    /// Milliseconds since the epoch, as a string.
    public let createdAt: String?
    /// Milliseconds since the epoch, as a string.
    public let lastLoginAt: String?
    /// Custom claims as a JSON string.
    public let customAttributes: String?
    /// Linked providers.
    public let providerUserInfo: [ProviderInfo]?

    /// One linked identity provider.
    public struct ProviderInfo: Sendable, Equatable, Codable {
        public let providerId: String
        public let rawId: String?
        public let email: String?
        public let federatedId: String?
    }

    enum CodingKeys: String, CodingKey {
        case uid = "localId"
        case email, emailVerified, displayName, photoUrl, disabled, validSince, createdAt, lastLoginAt
        case customAttributes, providerUserInfo
    }
}
