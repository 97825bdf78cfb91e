import HearthCore

extension AuthOperations {
    /// `accounts:signUp` (and the admin `projects/{p}/accounts` create).
    ///
    /// End users get an email/password account (or an anonymous one with an empty body, or an
    /// upgrade of the account named by `idToken`) and tokens; admins create any account, with an
    /// optional `localId` and second factors (`mfaInfo`), and get no tokens. In a tenant,
    /// password sign-up needs `allowPasswordSignup` (else OPERATION_NOT_ALLOWED) and anonymous
    /// sign-up `enableAnonymousUser` (else ADMIN_ONLY_OPERATION).
    func signUp(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        let email = try body.string("email")
        let password = try body.nonEmptyString("password")
        let idToken = try body.nonEmptyString("idToken")
        let localId = try body.nonEmptyString("localId")
        let displayName = try body.string("displayName")
        let photoUrl = try body.string("photoUrl")
        let emailVerified = try body.bool("emailVerified")
        let phoneNumber = try body.nonEmptyString("phoneNumber")
        let disabled = try body.bool("disabled")
        let mfaItems = try body.objects("mfaInfo")

        var provider: String?
        if ctx.privileged {
            if idToken != nil && localId != nil { throw .unexpectedParameterUserId }
            if let phoneNumber, !Self.isValidPhoneNumber(phoneNumber) { throw .invalidPhoneNumber }
        } else {
            if localId != nil { throw .unexpectedParameterUserId }
            if idToken != nil || password != nil || !(email ?? "").isEmpty {
                if (email ?? "").isEmpty { throw .missingEmail }
                if password == nil { throw .missingPassword }
                provider = "password"
                guard ctx.allowsPasswordSignup else { throw .operationNotAllowed }
            } else {
                provider = "anonymous"
                guard ctx.allowsAnonymousUsers else { throw .adminOnlyOperation }
            }
        }
        var canonical: String?
        if let email, !email.isEmpty || provider != nil {
            guard Self.isValidEmail(email) else { throw .invalidEmail }
            canonical = Self.canonicalEmail(email)
        }
        if let password { try Self.checkPasswordStrength(password) }
        // New enrollments get ids of their own, as production provisions them on create.
        let enrollments = try mfaItems.map { items throws(AuthError) in try secondFactors(items, ctx, keepIds: false) }
        // Hash before taking the writer lock: PBKDF2 is the slow part of a sign-up.
        let hashed = password.map { hasher.hash($0) }

        let (user, pending) = try store.write { tx -> (UserRecord, PendingTokens?) in
            if ctx.privileged, let localId, try tx.user(ctx.scope, localId) != nil { throw AuthError.duplicateLocalId }
            let config = try tx.config(ctx.projectID)
            if let canonical, !config.allowDuplicateEmails, try tx.userByEmail(ctx.scope, canonical) != nil {
                throw AuthError.emailExists
            }
            if ctx.privileged, let phoneNumber, try tx.userByPhone(ctx.scope, phoneNumber) != nil { throw AuthError.phoneNumberExists }

            var user: UserRecord
            if let idToken {
                user = try parseIdToken(tx, ctx, idToken).user
                if let canonical, canonical != user.email, config.allowDuplicateEmails == false,
                   let other = try tx.userByEmail(ctx.scope, canonical), other.localId != user.localId {
                    throw AuthError.emailExists
                }
            } else {
                user = UserRecord(localId: try localId ?? newLocalId(tx, ctx.scope), createdAt: ctx.now.unixMillis)
            }
            // An end user's sign-up is their first sign-in; an account an admin creates has
            // not signed in yet (production answers no `lastLoginAt` until it does).
            if provider != nil { user.lastLoginAt = ctx.now.unixMillis }
            if ctx.privileged {
                user.displayName = displayName
                user.photoUrl = photoUrl
                user.emailVerified = emailVerified ?? false
                if let phoneNumber { user.phoneNumber = phoneNumber }
                if disabled == true { user.disabled = true }
            } else if provider == "password" {
                user.displayName = displayName
                user.emailVerified = false
            }
            if let canonical { user.email = canonical }
            if let enrollments {
                user.mfaInfo = enrollments.isEmpty ? nil : enrollments
                try Self.checkSecondFactorOwner(user)
            }
            if let hashed {
                user.passwordHash = hashed.hash
                user.salt = hashed.salt
                user.passwordScheme = hashed.scheme
                user.passwordUpdatedAt = ctx.now.unixMillis
                user.validSince = ctx.now.unixSeconds
            }
            user.syncBuiltInProviders()
            try tx.save(ctx.scope, user)
            let pending = try provider.map { try issueTokens(tx, ctx, user: user, provider: $0) }
            return (user, pending)
        }

        var reply = JSONObject([("kind", .string("identitytoolkit#SignupNewUserResponse")), ("localId", .string(user.localId))])
        reply.put("displayName", user.displayName)
        reply.put("email", user.email)
        try appendTokens(pending, to: &reply, ctx)
        return .object(reply)
    }
}
