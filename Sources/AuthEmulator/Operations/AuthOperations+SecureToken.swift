import HearthCore

extension AuthOperations {
    /// `securetoken.googleapis.com/v1/token` with `grant_type=refresh_token`: a fresh ID token
    /// for a stored refresh token, which production rules invalidate: the account deleted
    /// (USER_NOT_FOUND), disabled (USER_DISABLED), or changed since the token was issued —
    /// password, email, or `validSince` revocation (TOKEN_EXPIRED).
    ///
    /// The refresh token names its project and tenant, so it works with any API key and keeps the
    /// tenant (and the second factor the session was completed with) in every new ID token.
    func grantToken(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard let grantType = try body.nonEmptyString("grantType") else { throw .missingGrantType }
        guard grantType == "refresh_token" else { throw .invalidGrantType }
        guard let token = try body.nonEmptyString("refreshToken") else { throw .missingRefreshToken }
        let (record, pending) = try store.write { tx -> (RefreshTokenRecord, PendingTokens) in
            guard let record = try tx.refreshToken(token) else { throw AuthError.invalidRefreshToken }
            if let tenantID = record.scope.tenantID {
                guard let tenant = try tx.tenant(record.scope.projectID, tenantID) else { throw AuthError.tenantNotFound }
                if tenant.disableAuth { throw AuthError.projectDisabled }
            }
            guard let user = try tx.user(record.scope, record.localId) else { throw AuthError.userNotFound }
            if user.disabled { throw AuthError.userDisabled }
            // Every revoking change bumps the account's epoch (exact, unlike second-granular
            // `validSince`, and immune to the emulator clock moving backwards).
            if record.epoch < user.tokenEpoch { throw AuthError.tokenExpired }
            var updated = user
            updated.lastRefreshAt = ctx.now.unixMicros
            try tx.touch(record.scope, user.localId, lastLoginAt: nil, lastRefreshAt: ctx.now.unixMicros)
            return (record, PendingTokens(user: updated, provider: record.provider, extraClaims: record.extraClaims,
                                          refreshToken: record.token, issuedAt: ctx.now.unixSeconds, secondFactor: record.secondFactor))
        }
        let idToken = try issuer.mint(user: pending.user, projectID: record.scope.projectID, provider: record.provider,
                                      extraClaims: record.extraClaims, issuedAt: pending.issuedAt, secondFactor: record.secondFactor)
        return .object(JSONObject([
            ("id_token", .string(idToken)),
            ("access_token", .string(idToken)),
            ("expires_in", .string(String(IDTokenIssuer.lifetimeSeconds))),
            ("refresh_token", .string(record.token)),
            ("token_type", .string("Bearer")),
            ("user_id", .string(record.localId)),
            ("project_id", .string(Self.projectNumber)),
        ]))
    }
}
