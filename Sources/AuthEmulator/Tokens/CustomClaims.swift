import HearthCore

/// Developer claims rules: what `customAttributes` and custom-token `claims` may hold.
///
/// Related: https://firebase.google.com/docs/auth/admin/custom-claims (reserved names, 1000 bytes).
enum CustomClaims {
    /// Claim names Firebase reserves for itself, in the order it checks them.
    static let forbidden = ["iss", "aud", "sub", "iat", "exp", "nbf", "jti", "nonce", "azp", "acr", "amr", "cnf",
                            "auth_time", "firebase", "at_hash", "c_hash"]

    /// Longest serialised `customAttributes` (UTF-16 units, as the emulator measures).
    static let maxLength = 1000

    /// Validates a serialised claims object and returns it parsed.
    static func validate(serialized text: String) throws(AuthError) -> JSONObject {
        guard text.utf16.count <= maxLength else { throw .claimsTooLarge }
        guard let parsed = try? JSON.parse(text) else { throw .invalidClaims }
        return try validate(parsed)
    }

    /// Validates a claims value: a JSON object without reserved names.
    static func validate(_ value: JSON) throws(AuthError) -> JSONObject {
        guard let object = value.objectValue else { throw .invalidClaims }
        for name in forbidden where object[name] != nil { throw .forbiddenClaim(name) }
        return object
    }
}
