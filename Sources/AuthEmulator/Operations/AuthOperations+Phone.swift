import HearthCore

extension AuthOperations {
    /// Records an SMS code for `phone` (nothing is sent). A test phone number of the tenant
    /// (`testPhoneNumbers`) or project (`signIn.phoneNumber.testPhoneNumbers`) gets its fixed code,
    /// as production gives it; any other gets six random digits.
    func newVerificationCode(_ tx: AuthTransaction, _ ctx: OperationContext, phone: String) throws -> VerificationCodeRecord {
        let testNumbers = try ctx.tenant?.testPhoneNumbers ?? tx.config(ctx.projectID).testPhoneNumbers
        let record = VerificationCodeRecord(sessionInfo: randomBase64URL(226), phoneNumber: phone, code: testNumbers[phone] ?? randomDigits(6))
        try tx.insertVerificationCode(ctx.scope, record)
        return record
    }

    /// Checks and consumes an SMS code; returns the phone number it was sent to.
    func consumeVerificationCode(_ tx: AuthTransaction, _ ctx: OperationContext, sessionInfo: String, code: String) throws -> String {
        guard let verification = try tx.verificationCode(ctx.scope, sessionInfo: sessionInfo) else { throw AuthError.invalidSessionInfo }
        guard verification.code == code else { throw AuthError.invalidCode }
        try tx.deleteVerificationCode(sessionInfo)
        return verification.phoneNumber
    }

    /// `accounts:sendVerificationCode`: records a six-digit SMS code (nothing is sent; list codes
    /// at `/emulator/v1/projects/{p}/verificationCodes`). reCAPTCHA and app receipts are ignored.
    /// A number that is an account's second factor cannot be a first factor
    /// (UNSUPPORTED_FIRST_FACTOR).
    func sendVerificationCode(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard let phone = try body.nonEmptyString("phoneNumber"), Self.isValidPhoneNumber(phone) else { throw .invalidPhoneNumber }
        let record = try store.write { tx -> VerificationCodeRecord in
            if let user = try tx.userByPhone(ctx.scope, phone), user.hasSecondFactors { throw AuthError.unsupportedFirstFactor }
            return try newVerificationCode(tx, ctx, phone: phone)
        }
        logger.info("auth sms code", [("phoneNumber", .string(phone)), ("code", .string(record.code))])
        return .object(JSONObject([("sessionInfo", .string(record.sessionInfo))]))
    }

    /// `accounts:signInWithPhoneNumber`: consumes a code, signing into (or creating) the account
    /// with that number, or adding the number to the account named by `idToken`.
    func signInWithPhoneNumber(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        if try body.nonEmptyString("temporaryProof") != nil {
            throw .notImplemented("temporaryProof is not implemented in Hearth.")
        }
        guard let sessionInfo = try body.nonEmptyString("sessionInfo") else { throw .missingSessionInfo }
        guard let code = try body.nonEmptyString("code") else { throw .missingCode }
        let idToken = try body.nonEmptyString("idToken")
        let (user, isNewUser, pending) = try store.write { tx -> (UserRecord, Bool, PendingTokens) in
            let phone = try consumeVerificationCode(tx, ctx, sessionInfo: sessionInfo, code: code)
            let fromPhone = try tx.userByPhone(ctx.scope, phone)
            let fromToken = try idToken.map { try parseIdToken(tx, ctx, $0).user }
            if let fromPhone, let fromToken, fromPhone.localId != fromToken.localId { throw AuthError.phoneNumberExists }
            var user: UserRecord
            let isNew: Bool
            if let existing = fromToken ?? fromPhone {
                if existing.disabled { throw AuthError.userDisabled }
                if existing.hasSecondFactors { throw AuthError.unsupportedFirstFactor }
                user = existing
                isNew = false
            } else {
                user = UserRecord(localId: try newLocalId(tx, ctx.scope), createdAt: ctx.now.unixMillis)
                isNew = true
            }
            user.phoneNumber = phone
            user.lastLoginAt = ctx.now.unixMillis
            user.syncBuiltInProviders()
            try tx.save(ctx.scope, user)
            return (user, isNew, try issueTokens(tx, ctx, user: user, provider: "phone"))
        }
        var reply = JSONObject([("isNewUser", .bool(isNewUser)), ("phoneNumber", .string(user.phoneNumber ?? "")),
                                ("localId", .string(user.localId))])
        try appendTokens(pending, to: &reply, ctx)
        return .object(reply)
    }
}
