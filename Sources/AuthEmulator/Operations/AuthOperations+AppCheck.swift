import HearthCore
import HearthCrypto

extension AuthOperations {
    /// `POST v1/projects/{p}/apps/{app}:exchangeDebugToken` (Firebase App Check REST API): a
    /// registered debug token becomes an App Check token (RS256, App Check's claim set) with its
    /// TTL as a protobuf duration (`"3600s"`).
    func exchangeDebugToken(project: String, app: String, _ body: RequestBody) throws(AuthError) -> JSON {
        guard let debugToken = try body.nonEmptyString("debugToken") else {
            throw .invalidArgument("Request contains an invalid argument.", reason: "badRequest")
        }
        if let allowed = configuration.appCheckDebugTokens, !allowed.contains(debugToken) { throw .appAttestationFailed }
        let key = try keys.activeKey(.appCheck)
        let now = clock.now().unixSeconds
        let ttl = Int64(configuration.appCheckTokenTTLSeconds)
        var audience = ["projects/\(project)"]
        if project != configuration.projectID { audience.append("projects/\(configuration.projectID)") }
        let payload = JSONObject([
            ("sub", .string(app)),
            ("aud", .array(audience.map(JSON.string))),
            ("provider", .string("debug")),
            ("iss", .string("https://firebaseappcheck.googleapis.com/\(project)")),
            ("exp", .int(now + ttl)),
            ("iat", .int(now)),
            ("jti", .string(randomBase64URL(43))),
        ])
        let token: String
        do {
            token = try JWT.rs256(payload: payload, key: key.key, kid: key.kid)
        } catch {
            throw .internalError("Signing failed: \(error)")
        }
        return .object(JSONObject([("token", .string(token)), ("ttl", .string("\(ttl)s"))]))
    }

    /// Whether `token` is an App Check token Hearth issued that has not expired on the emulator
    /// clock and names this project in its audience.
    func verifyAppCheckToken(_ token: String) -> Bool {
        guard let jwt = try? JWT(decoding: token), jwt.algorithm == "RS256", let kid = jwt.keyID,
              let key = try? keys.key(.appCheck, kid: kid),
              key.key.verifyRS256(Array(jwt.signingInput.utf8), signature: jwt.signature) else { return false }
        guard let exp = jwt.payload["exp"]?.intValue, clock.now().unixSeconds < exp else { return false }
        guard jwt.payload["iss"]?.stringValue?.hasPrefix("https://firebaseappcheck.googleapis.com/") == true else { return false }
        let audience = jwt.payload["aud"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return audience.contains("projects/\(configuration.projectID)")
    }

    /// App Check's JWKS (`GET v1/jwks`).
    func appCheckJWKS() throws(AuthError) -> JSON {
        // Publishing creates the key, so a verifier that fetches keys first still finds the one
        // later tokens are signed with.
        let key = try keys.activeKey(.appCheck)
        let all = try keys.keys(.appCheck)
        return .object(JSONObject([("keys", .array((all.isEmpty ? [key] : all).map(\.jwk)))]))
    }
}
