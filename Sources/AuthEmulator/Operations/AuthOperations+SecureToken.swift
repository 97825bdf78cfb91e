import HearthCore

extension AuthOperations {
    /// `securetoken.googleapis.com/v1/token` with `grant_type=refresh_token`: a fresh ID token
    /// for a stored refresh token, which production rules invalidate: the account deleted
    /// (USER_NOT_FOUND), disabled (USER_DISABLED), or changed since the token was issued —
    /// password, email, or `validSince` revocation (TOKEN_EXPIRED).
    ///
    /// The refresh token names its project, so it works with any API key.
    func grantToken(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard let grantType = try body.nonEmptyString("grantType") else { throw .missingGrantType }
        guard grantType == "refresh_token" else { throw .invalidGrantType }
        guard let token = try body.nonEmptyString("refreshToken") else { throw .missingRefreshToken }
        let (record, pending) = try store.write { tx -> (RefreshTokenRecord, PendingTokens) in
            guard let record = try tx.refreshToken(token) else { throw AuthError.invalidRefreshToken }
            guard let user = try tx.user(record.projectID, record.localId) else { throw AuthError.userNotFound }
            if user.disabled { throw AuthError.userDisabled }
            // Every revoking change bumps the account's epoch (exact, unlike second-granular
            // `validSince`, and immune to the emulator clock moving backwards).
            if record.epoch < user.tokenEpoch { throw AuthError.tokenExpired }
            var updated = user
            updated.lastRefreshAt = ctx.now.unixMicros
            try tx.touch(record.projectID, user.localId, lastLoginAt: nil, lastRefreshAt: ctx.now.unixMicros)
            return (record, PendingTokens(user: updated, provider: record.provider, extraClaims: record.extraClaims,
                                          refreshToken: record.token, issuedAt: ctx.now.unixSeconds))
        }
        let idToken = try issuer.mint(user: pending.user, projectID: record.projectID, provider: record.provider,
                                      extraClaims: record.extraClaims, issuedAt: pending.issuedAt)
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
