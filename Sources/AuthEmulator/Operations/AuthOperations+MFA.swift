import HearthCore

extension AuthOperations {
    /// First factors that cannot be combined with a second one (production's and the emulator's
    /// list): anonymous, phone, custom-token and Game Center sessions.
    static let mfaIneligibleProviders: Set<String> = ["anonymous", "phone", "custom", "gc.apple.com"]

    /// The multi-factor settings that apply: the tenant's, else the project's.
    func mfaConfig(_ tx: AuthTransaction, _ ctx: OperationContext) throws -> MfaConfig {
        if let tenant = ctx.tenant { return tenant.mfa }
        return try tx.config(ctx.projectID).mfa
    }

    /// Whether a sign-in of `user` stops after the first factor, waiting for the second.
    func needsSecondFactor(_ tx: AuthTransaction, _ ctx: OperationContext, _ user: UserRecord) throws -> Bool {
        guard user.hasSecondFactors else { return false }
        return try mfaConfig(tx, ctx).isEnabled
    }

    /// Records a first factor passed by an account with second factors and returns what the
    /// sign-in answers instead of tokens: `mfaPendingCredential` and the factors as hints
    /// (`mfaInfo`, numbers masked).
    func pendingSecondFactor(_ tx: AuthTransaction, _ ctx: OperationContext, user: UserRecord,
                             provider: String) throws -> [(String, JSON)] {
        let credential = randomBase64URL(160)
        try tx.insertPendingSignIn(PendingSecondFactorSignIn(credential: credential, scope: ctx.scope, localId: user.localId,
                                                             provider: provider, createdAt: ctx.now.unixSeconds))
        return [("mfaPendingCredential", .string(credential)), ("mfaInfo", .array((user.mfaInfo ?? []).map(\.hintJSON)))]
    }

    /// The tenant a pending credential was issued in (nil for the project's own accounts or an
    /// unknown credential), so that `mfaSignIn:*` need not repeat the tenant.
    func pendingCredentialTenant(project: String, _ credential: String) -> String? {
        guard let p = try? store.read({ tx in try tx.pendingSignIn(credential) }), p.scope.projectID == project else { return nil }
        return p.scope.tenantID
    }

    /// The pending sign-in a credential stands for and its account.
    private func pendingSignIn(_ tx: AuthTransaction, _ ctx: OperationContext,
                               _ credential: String) throws -> (PendingSecondFactorSignIn, UserRecord) {
        guard let pending = try tx.pendingSignIn(credential) else { throw AuthError.invalidMfaPendingCredential }
        guard pending.scope == ctx.scope else { throw AuthError.pendingCredentialProjectMismatch }
        guard let user = try tx.user(ctx.scope, pending.localId) else { throw AuthError.userNotFound }
        return (pending, user)
    }

    /// A new enrollment id (28 alphanumerics, like `localId`s) not in `taken`.
    func newEnrollmentId(avoiding taken: Set<String>) throws(AuthError) -> String {
        for _ in 0..<10 {
            let id = ids.alphanumeric(28)
            if !taken.contains(id) { return id }
        }
        throw .internalError("Cannot generate a unique mfaEnrollmentId after 10 tries.")
    }

    /// The enrollments an admin request sets (`mfaInfo` on create, `mfa.enrollments` on update):
    /// valid phone numbers (INVALID_MFA_PHONE_NUMBER), a repeated number dropped as production
    /// does, ids kept when `keepIds` and given (DUPLICATE_MFA_ENROLLMENT_ID when repeated) and
    /// provisioned otherwise, at most five (SECOND_FACTOR_LIMIT_EXCEEDED).
    func secondFactors(_ items: [RequestBody], _ ctx: OperationContext, keepIds: Bool) throws(AuthError) -> [MfaEnrollment] {
        var out: [MfaEnrollment] = []
        var phones = Set<String>()
        var taken = Set<String>()
        if keepIds {
            for item in items {
                if let id = try item.nonEmptyString("mfaEnrollmentId"), !taken.insert(id).inserted { throw .duplicateMfaEnrollmentId }
            }
        }
        for item in items {
            guard let phone = try item.nonEmptyString("phoneInfo"), Self.isValidPhoneNumber(phone) else { throw .invalidMfaPhoneNumber }
            guard phones.insert(phone).inserted else { continue }
            var id = keepIds ? try item.nonEmptyString("mfaEnrollmentId") ?? "" : ""
            if id.isEmpty { id = try newEnrollmentId(avoiding: taken) }
            taken.insert(id)
            let enrolledAt = try item.string("enrolledAt").flatMap { Instant(rfc3339: $0) }?.unixMicros ?? ctx.now.unixMicros
            out.append(MfaEnrollment(mfaEnrollmentId: id, displayName: try item.string("displayName"), phoneInfo: phone,
                                     enrolledAt: enrolledAt))
        }
        if out.count > MfaEnrollment.maximumPerAccount { throw .secondFactorLimitExceeded }
        return out
    }

    /// Production keeps second factors only on accounts with a verified email.
    static func checkSecondFactorOwner(_ user: UserRecord) throws(AuthError) {
        guard user.hasSecondFactors else { return }
        guard user.email != nil else { throw .missingEmail }
        guard user.emailVerified == true else { throw .unverifiedEmail }
    }

    /// The account and first factor behind an `idToken` that may enroll or use second factors.
    private func enrollingAccount(_ tx: AuthTransaction, _ ctx: OperationContext,
                                  _ idToken: String?) throws -> (user: UserRecord, provider: String) {
        guard try mfaConfig(tx, ctx).allowsPhone else { throw AuthError.mfaNotEnabled }
        guard let idToken else { throw AuthError.missingIdToken }
        let parsed = try parseIdToken(tx, ctx, idToken)
        guard !Self.mfaIneligibleProviders.contains(parsed.provider) else { throw AuthError.mfaUnsupportedFirstFactor }
        return (parsed.user, parsed.provider)
    }

    /// The `code` and `sessionInfo` of a `phoneVerificationInfo`, checked in the emulator's order.
    private func phoneVerification(_ info: RequestBody) throws -> (sessionInfo: String, code: String) {
        if info.has("androidVerificationProof") { throw AuthError.notImplemented("androidVerificationProof is unsupported!") }
        guard let code = try info.nonEmptyString("code") else { throw AuthError.missingCode }
        guard let sessionInfo = try info.nonEmptyString("sessionInfo") else { throw AuthError.missingSessionInfo }
        return (sessionInfo, code)
    }

    // MARK: Enrollment

    /// `v2/accounts/mfaEnrollment:start`: sends (records) an SMS code to the phone number being
    /// enrolled by the account of `idToken`, which needs a verified email and a first factor that
    /// allows second factors. The code is listed at `/emulator/v1/projects/{p}/verificationCodes`.
    func mfaEnrollmentStart(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        let idToken = try body.nonEmptyString("idToken")
        let info = try body.object("phoneEnrollmentInfo")
        if info == nil, body.has("totpEnrollmentInfo") { throw .notImplemented("TOTP second factors are not implemented in Hearth.") }
        let record = try store.write { tx -> VerificationCodeRecord in
            let (user, _) = try enrollingAccount(tx, ctx, idToken)
            guard user.emailVerified == true else { throw AuthError.unverifiedEmail }
            guard let info else { throw AuthError.invalidInput("INVALID_ARGUMENT : ((Missing phoneEnrollmentInfo.))") }
            // Production answers INVALID_PHONE_NUMBER, not a MISSING_ code, for an absent number.
            guard let phone = try info.nonEmptyString("phoneNumber"), Self.isValidPhoneNumber(phone) else {
                throw AuthError.invalidPhoneNumber
            }
            let enrolled = user.mfaInfo ?? []
            if enrolled.contains(where: { $0.phoneInfo == phone }) { throw AuthError.secondFactorExists }
            if enrolled.count >= MfaEnrollment.maximumPerAccount { throw AuthError.secondFactorLimitExceeded }
            return try newVerificationCode(tx, ctx, phone: phone)
        }
        logger.info("auth mfa enrollment code", [("phoneNumber", .string(record.phoneNumber)), ("code", .string(record.code))])
        return .object(JSONObject([("phoneSessionInfo", .object(JSONObject([("sessionInfo", .string(record.sessionInfo))])))]))
    }

    /// `v2/accounts/mfaEnrollment:finalize`: checks the SMS code and enrolls the number; the
    /// answer's tokens are of a session completed with the new factor.
    func mfaEnrollmentFinalize(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        let idToken = try body.nonEmptyString("idToken")
        let info = try body.object("phoneVerificationInfo")
        let displayName = try body.string("displayName")
        if info == nil, body.has("totpVerificationInfo") { throw .notImplemented("TOTP second factors are not implemented in Hearth.") }
        let pending = try store.write { tx -> PendingTokens in
            let (account, provider) = try enrollingAccount(tx, ctx, idToken)
            guard let info else { throw AuthError.invalidInput("INVALID_ARGUMENT : ((Missing phoneVerificationInfo.))") }
            let (sessionInfo, code) = try phoneVerification(info)
            let phone = try consumeVerificationCode(tx, ctx, sessionInfo: sessionInfo, code: code)
            var user = account
            var enrolled = user.mfaInfo ?? []
            if enrolled.contains(where: { $0.phoneInfo == phone }) { throw AuthError.secondFactorExists }
            if enrolled.count >= MfaEnrollment.maximumPerAccount { throw AuthError.secondFactorLimitExceeded }
            let enrollment = MfaEnrollment(mfaEnrollmentId: try newEnrollmentId(avoiding: Set(enrolled.map(\.mfaEnrollmentId))),
                                           displayName: displayName, phoneInfo: phone, enrolledAt: ctx.now.unixMicros)
            enrolled.append(enrollment)
            user.mfaInfo = enrolled
            try tx.save(ctx.scope, user)
            return try issueTokens(tx, ctx, user: user, provider: provider,
                                   secondFactor: SecondFactor(identifier: enrollment.mfaEnrollmentId, provider: "phone"))
        }
        return .object(JSONObject(try mint(pending, ctx).filter { $0.0 != "expiresIn" }))
    }

    /// `v2/accounts/mfaEnrollment:withdraw`: removes the factor `mfaEnrollmentId` from the account
    /// of `idToken` (MFA_ENROLLMENT_NOT_FOUND when it has no such factor) and answers new tokens.
    func mfaEnrollmentWithdraw(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard let idToken = try body.nonEmptyString("idToken") else { throw .missingIdToken }
        let enrollmentId = try body.string("mfaEnrollmentId")
        let pending = try store.write { tx -> PendingTokens in
            let parsed = try parseIdToken(tx, ctx, idToken)
            var user = parsed.user
            let enrolled = user.mfaInfo ?? []
            let remaining = enrolled.filter { $0.mfaEnrollmentId != enrollmentId }
            guard remaining.count < enrolled.count else { throw AuthError.mfaEnrollmentNotFound }
            user.mfaInfo = remaining.isEmpty ? nil : remaining
            try tx.save(ctx.scope, user)
            return try issueTokens(tx, ctx, user: user, provider: parsed.provider)
        }
        return .object(JSONObject(try mint(pending, ctx).filter { $0.0 != "expiresIn" }))
    }

    // MARK: Sign-in

    /// `v2/accounts:mfaSignIn:start`: sends (records) an SMS code to the enrolled factor
    /// `mfaEnrollmentId` of the account behind `mfaPendingCredential`.
    func mfaSignInStart(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        let credential = try body.nonEmptyString("mfaPendingCredential")
        let enrollmentId = try body.nonEmptyString("mfaEnrollmentId")
        let record = try store.write { tx -> VerificationCodeRecord in
            guard try mfaConfig(tx, ctx).allowsPhone else { throw AuthError.mfaNotEnabled }
            guard let credential else { throw AuthError.missingMfaPendingCredential }
            guard let enrollmentId else { throw AuthError.missingMfaEnrollmentId }
            // Production does not insist on `phoneSignInInfo`: its members are anti-abuse tokens.
            let (_, user) = try pendingSignIn(tx, ctx, credential)
            guard let enrollment = user.mfaInfo?.first(where: { $0.mfaEnrollmentId == enrollmentId }) else {
                throw AuthError.mfaEnrollmentNotFound
            }
            return try newVerificationCode(tx, ctx, phone: enrollment.phoneInfo)
        }
        logger.info("auth mfa sign-in code", [("phoneNumber", .string(record.phoneNumber)), ("code", .string(record.code))])
        return .object(JSONObject([("phoneResponseInfo", .object(JSONObject([("sessionInfo", .string(record.sessionInfo))])))]))
    }

    /// `v2/accounts:mfaSignIn:finalize`: checks the SMS code and completes the sign-in the pending
    /// credential stands for; the ID token carries `firebase.sign_in_second_factor: "phone"` and
    /// `firebase.second_factor_identifier`.
    func mfaSignInFinalize(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        let credential = try body.nonEmptyString("mfaPendingCredential")
        let info = try body.object("phoneVerificationInfo")
        let pending = try store.write { tx -> PendingTokens in
            guard try mfaConfig(tx, ctx).allowsPhone else { throw AuthError.mfaNotEnabled }
            // MISSING_CREDENTIAL here against MISSING_MFA_PENDING_CREDENTIAL in start: production's
            // inconsistency, kept.
            guard let credential else { throw AuthError.missingCredential }
            guard let info else { throw AuthError.invalidInput("INVALID_ARGUMENT : MFA provider not supported!") }
            let (sessionInfo, code) = try phoneVerification(info)
            let phone = try consumeVerificationCode(tx, ctx, sessionInfo: sessionInfo, code: code)
            let (signIn, account) = try pendingSignIn(tx, ctx, credential)
            guard let enrollment = account.mfaInfo?.first(where: { $0.phoneInfo == phone }) else { throw AuthError.mfaEnrollmentNotFound }
            if account.disabled { throw AuthError.userDisabled }
            var user = account
            user.lastLoginAt = ctx.now.unixMillis
            return try issueTokens(tx, ctx, user: user, provider: signIn.provider,
                                   secondFactor: SecondFactor(identifier: enrollment.mfaEnrollmentId, provider: "phone"))
        }
        return .object(JSONObject(try mint(pending, ctx).filter { $0.0 != "expiresIn" }))
    }
}
