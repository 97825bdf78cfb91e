import HearthCore
import HearthCrypto

/// Builds and signs Firebase ID tokens and session cookies.
struct IDTokenIssuer: Sendable {
    let signing: AuthConfiguration.TokenSigning
    let keys: SigningKeyRing

    /// ID tokens live one hour, as Firebase's do.
    static let lifetimeSeconds: Int64 = 3600

    /// The claims of an ID token, in the Firebase emulator's order: `name`, `picture`, custom
    /// attributes, custom-token claims, `email`, `email_verified`, `phone_number`, `provider_id`
    /// (anonymous only), `auth_time`, `user_id`, `firebase`, `iat`, `exp`, `aud`, `iss`, `sub`.
    /// `firebase` holds `identities`, `sign_in_provider`, then, for a session completed with a
    /// second factor, `second_factor_identifier` and `sign_in_second_factor`, and for a tenant's
    /// account `tenant`.
    ///
    /// Developer claims are spread like JavaScript object spreads: a developer `name` replaces the
    /// profile name in place, and reserved fields assigned afterwards win.
    static func claims(user: UserRecord, projectID: String, provider: String, extraClaims: JSONObject, issuedAt: Int64,
                       secondFactor: SecondFactor? = nil) -> JSONObject {
        var c = OrderedClaims()
        c.set("name", user.displayName.map(JSON.string))
        c.set("picture", user.photoUrl.map(JSON.string))
        for (k, v) in user.customClaims { c.set(k, v) }
        for (k, v) in extraClaims { c.set(k, v) }
        c.set("email", user.email.map(JSON.string))
        c.set("email_verified", user.emailVerified.map(JSON.bool))
        c.set("phone_number", user.phoneNumber.map(JSON.string))
        c.set("provider_id", provider == "anonymous" ? .string("anonymous") : nil)
        c.set("auth_time", .int(authTime(user, fallback: issuedAt)))
        c.set("user_id", .string(user.localId))
        var firebase = JSONObject([("identities", .object(identities(user))), ("sign_in_provider", .string(provider))])
        if let secondFactor {
            firebase["second_factor_identifier"] = .string(secondFactor.identifier)
            firebase["sign_in_second_factor"] = .string(secondFactor.provider)
        }
        if let tenant = user.tenantId { firebase["tenant"] = .string(tenant) }
        c.set("firebase", .object(firebase))
        c.set("iat", .int(issuedAt))
        c.set("exp", .int(issuedAt + lifetimeSeconds))
        c.set("aud", .string(projectID))
        c.set("iss", .string("https://securetoken.google.com/\(projectID)"))
        c.set("sub", .string(user.localId))
        return c.object
    }

    /// `firebase.identities`: the email first, then every linked identity except `password`.
    static func identities(_ user: UserRecord) -> JSONObject {
        var ids = JSONObject()
        if let email = user.email { ids["email"] = .array([.string(email)]) }
        for p in user.providers ?? [] where p.providerId != "password" {
            var list = ids[p.providerId]?.arrayValue ?? []
            list.append(.string(p.rawId))
            ids[p.providerId] = .array(list)
        }
        return ids
    }

    /// Seconds of the last sign-in (or last refresh), as `auth_time` reports it.
    static func authTime(_ user: UserRecord, fallback: Int64) -> Int64 {
        if let ms = user.lastLoginAt { return ms >= 0 ? ms / 1000 : (ms - 999) / 1000 }
        if let micros = user.lastRefreshAt { return Instant(unixMicros: micros).unixSeconds }
        return fallback
    }

    /// A signed (or, in `none` mode, unsigned) ID token.
    func mint(user: UserRecord, projectID: String, provider: String, extraClaims: JSONObject, issuedAt: Int64,
              secondFactor: SecondFactor? = nil) throws(AuthError) -> String {
        try sign(Self.claims(user: user, projectID: projectID, provider: provider, extraClaims: extraClaims, issuedAt: issuedAt,
                             secondFactor: secondFactor))
    }

    /// Serialises `payload` as the signing mode requires.
    func sign(_ payload: JSONObject) throws(AuthError) -> String {
        switch signing {
        case .none:
            return JWT.unsigned(payload: payload)
        case .rs256:
            let key = try keys.activeKey(.idToken)
            do {
                return try JWT.rs256(payload: payload, key: key.key, kid: key.kid)
            } catch {
                throw .internalError("Signing failed: \(error)")
            }
        }
    }
}

/// An ordered claim set with JavaScript object semantics: assigning an existing name keeps its
/// position, and a nil value (JavaScript `undefined`) is dropped on output.
struct OrderedClaims {
    private var entries: [(String, JSON?)] = []

    mutating func set(_ key: String, _ value: JSON?) {
        if let i = entries.firstIndex(where: { $0.0 == key }) {
            entries[i].1 = value
        } else {
            entries.append((key, value))
        }
    }

    var object: JSONObject {
        JSONObject(entries.compactMap { k, v in v.map { (k, $0) } })
    }
}
