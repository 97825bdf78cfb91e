import HearthCore

extension AuthOperations {
    /// `accounts:signInWithPassword`.
    ///
    /// The password is checked on a read snapshot without the writer lock (PBKDF2 dominates the
    /// cost), then one short write records the sign-in and the refresh token. An account with
    /// second factors gets `mfaPendingCredential` and `mfaInfo` instead of tokens.
    func signInWithPassword(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard ctx.allowsPasswordSignup else { throw .passwordLoginDisabled }
        guard let rawEmail = try body.string("email") else { throw .missingEmail }
        guard Self.isValidEmail(rawEmail) else { throw .invalidEmail }
        guard let password = try body.nonEmptyString("password") else { throw .missingPassword }
        let captchaResponse = try body.nonEmptyString("captchaResponse")
        let captchaChallenge = try body.nonEmptyString("captchaChallenge")
        if captchaResponse != nil || captchaChallenge != nil {
            throw .notImplemented("captcha unimplemented")
        }
        let legacyToken = try body.nonEmptyString("idToken")
        let pendingToken = try body.nonEmptyString("pendingIdToken")
        if legacyToken != nil || pendingToken != nil {
            throw .notImplemented("idToken / pendingIdToken is no longer in use and unsupported by the Auth Emulator.")
        }
        let email = Self.canonicalEmail(rawEmail)
        let (found, config) = try store.read { tx in (try tx.userByEmail(ctx.scope, email), try tx.config(ctx.projectID)) }
        let privacy = config.improvedEmailPrivacy
        guard let user = found else { throw privacy ? .invalidLoginCredentials : .emailNotFound }
        if user.disabled { throw .userDisabled }
        guard user.hasPassword, hasher.verify(password, user: user) else { throw privacy ? .invalidLoginCredentials : .invalidPassword }

        let outcome = try store.write { tx -> SignInOutcome in
            // The account may have changed since the snapshot; re-read it under the lock.
            guard var current = try tx.user(ctx.scope, user.localId) else { throw privacy ? AuthError.invalidLoginCredentials : .emailNotFound }
            if current.disabled { throw AuthError.userDisabled }
            if try needsSecondFactor(tx, ctx, current) {
                return .secondFactor(try pendingSecondFactor(tx, ctx, user: current, provider: "password"))
            }
            current.lastLoginAt = ctx.now.unixMillis
            return .tokens(try issueTokens(tx, ctx, user: current, provider: "password"))
        }
        var reply = JSONObject([("kind", .string("identitytoolkit#VerifyPasswordResponse")), ("registered", .bool(true)),
                                ("localId", .string(user.localId)), ("email", .string(email))])
        try append(outcome, to: &reply, ctx)
        return .object(reply)
    }

    /// The Firebase emulator's audience for custom tokens.
    static let customTokenAudience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"

    /// `accounts:signInWithCustomToken`: accepts tokens signed by a service account or unsigned
    /// (as the Admin SDKs make them in emulator mode), and, as the emulator does, plain JSON.
    /// Signatures, `iat` and `exp` are not checked, so tests can reuse one token.
    func signInWithCustomToken(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard let token = try body.nonEmptyString("token") else { throw .missingCustomToken }
        let payload: JSONObject
        if token.hasPrefix("{") {
            guard let parsed = try? JSON.parse(token), let o = parsed.objectValue else {
                throw .invalidCustomToken("((Auth Emulator only accepts strict JSON or JWTs as fake custom tokens.))")
            }
            payload = o
        } else {
            guard let jwt = try? JWT(decoding: token) else {
                // A tenant's request checks the token's tenant first, as the Firebase emulator does.
                if ctx.tenantID != nil { throw .tenantIdMismatch }
                throw .invalidCustomToken("Invalid assertion format")
            }
            if let tenantID = ctx.tenantID, jwt.payload["tenant_id"]?.stringValue != tenantID { throw .tenantIdMismatch }
            let aud = jwt.payload["aud"]
            guard aud?.stringValue == Self.customTokenAudience else {
                let shown = aud.map { $0.stringValue ?? $0.serialized() } ?? "undefined"
                throw .invalidCustomToken("((Invalid aud (audience): \(shown) Note: Firebase ID Tokens / third-party tokens cannot be used with signInWithCustomToken.))")
            }
            if jwt.algorithm != "none" {
                logger.warning("Received a signed custom token. Hearth does not verify custom-token signatures.")
            }
            payload = jwt.payload
        }
        guard let localId = Self.primitiveString(payload["uid"]) ?? Self.primitiveString(payload["user_id"]) else {
            throw .missingIdentifier
        }
        var extraClaims = JSONObject()
        if let claims = payload["claims"] { extraClaims = try CustomClaims.validate(claims) }
        // A tenant-scoped token (`tenant_id`, as the Admin SDKs' tenant clients mint them) signs
        // into its tenant; a request naming another tenant is TENANT_ID_MISMATCH.
        var ctx = ctx
        if let claimed = payload["tenant_id"]?.stringValue {
            if let tenantID = ctx.tenantID {
                guard claimed == tenantID else { throw .tenantIdMismatch }
            } else {
                ctx = try within(tenant: claimed, ctx)
            }
        }

        let (isNewUser, pending) = try store.write { tx -> (Bool, PendingTokens) in
            var user: UserRecord
            let isNew: Bool
            if let existing = try tx.user(ctx.scope, localId) {
                if existing.disabled { throw AuthError.userDisabled }
                user = existing
                isNew = false
            } else {
                user = UserRecord(localId: localId, createdAt: ctx.now.unixMillis)
                isNew = true
            }
            user.customAuth = true
            user.lastLoginAt = ctx.now.unixMillis
            try tx.save(ctx.scope, user)
            return (isNew, try issueTokens(tx, ctx, user: user, provider: "custom", extraClaims: extraClaims))
        }
        var reply = JSONObject([("kind", .string("identitytoolkit#VerifyCustomTokenResponse")), ("isNewUser", .bool(isNewUser))])
        try appendTokens(pending, to: &reply, ctx)
        return .object(reply)
    }

    /// JavaScript's coercion of a primitive claim to a string (`uid: 123` works).
    static func primitiveString(_ v: JSON?) -> String? {
        switch v {
        case .string(let s)?: return s
        case .int(let i)?: return String(i)
        case .double(let d)?: return d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .bool(let b)?: return b ? "true" : "false"
        default: return nil
        }
    }

    /// `accounts:signInWithEmailLink`: consumes an EMAIL_SIGNIN code for its email, creating the
    /// account or linking the email to the account named by `idToken`.
    func signInWithEmailLink(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard ctx.allowsEmailLinkSignin else { throw .operationNotAllowed }
        let idToken = try body.nonEmptyString("idToken")
        guard let rawEmail = try body.nonEmptyString("email") else { throw .missingEmail }
        let email = Self.canonicalEmail(rawEmail)
        guard let code = try body.nonEmptyString("oobCode") else { throw .missingOobCode }

        let (user, isNewUser, outcome) = try store.write { tx -> (UserRecord, Bool, SignInOutcome) in
            let fromToken = try idToken.map { try parseIdToken(tx, ctx, $0).user }
            guard let oob = try tx.oob(ctx.scope, code), oob.requestType == "EMAIL_SIGNIN" else { throw AuthError.invalidOobCode }
            guard oob.email == email else { throw AuthError.invalidEmailMismatch }
            try tx.deleteOob(code)
            let fromEmail = try tx.userByEmail(ctx.scope, email)
            var user: UserRecord
            let isNew: Bool
            if let existing = fromToken ?? fromEmail {
                if existing.disabled { throw AuthError.userDisabled }
                if let fromToken, let fromEmail, fromToken.localId != fromEmail.localId { throw AuthError.emailExists }
                user = existing
                isNew = false
            } else {
                user = UserRecord(localId: try newLocalId(tx, ctx.scope), createdAt: ctx.now.unixMillis)
                isNew = true
            }
            user.email = email
            user.emailVerified = true
            user.emailLinkSignin = true
            user.syncBuiltInProviders()
            if try needsSecondFactor(tx, ctx, user) {
                try tx.save(ctx.scope, user)
                return (user, isNew, .secondFactor(try pendingSecondFactor(tx, ctx, user: user, provider: "password")))
            }
            user.lastLoginAt = ctx.now.unixMillis
            try tx.save(ctx.scope, user)
            return (user, isNew, .tokens(try issueTokens(tx, ctx, user: user, provider: "password")))
        }
        var reply = JSONObject([("kind", .string("identitytoolkit#EmailLinkSigninResponse")), ("email", .string(email)),
                                ("localId", .string(user.localId)), ("isNewUser", .bool(isNewUser))])
        try append(outcome, to: &reply, ctx)
        return .object(reply)
    }
}

/// How a first factor ended: a completed sign-in, or one waiting for the second factor.
enum SignInOutcome: Sendable {
    case tokens(PendingTokens)
    /// `mfaPendingCredential` and `mfaInfo`.
    case secondFactor([(String, JSON)])
}

extension AuthOperations {
    /// Appends the minted tokens, or the second-factor members, to `reply`.
    func append(_ outcome: SignInOutcome, to reply: inout JSONObject, _ ctx: OperationContext) throws(AuthError) {
        switch outcome {
        case .tokens(let pending): try appendTokens(pending, to: &reply, ctx)
        case .secondFactor(let members): for (k, v) in members { reply[k] = v }
        }
    }

    /// The context acting on `tenantID`'s accounts: INVALID_TENANT_ID when the project has no such
    /// tenant, PROJECT_DISABLED when its authentication is off.
    func within(tenant tenantID: String, _ ctx: OperationContext) throws(AuthError) -> OperationContext {
        guard let tenant = try store.read({ tx in try tx.tenant(ctx.projectID, tenantID) }) else { throw .invalidTenantId }
        if tenant.disableAuth { throw .projectDisabled }
        return ctx.within(tenant)
    }
}
