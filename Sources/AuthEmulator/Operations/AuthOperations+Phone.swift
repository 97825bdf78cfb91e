import HearthCore

extension AuthOperations {
    /// `accounts:sendVerificationCode`: records a six-digit SMS code (nothing is sent; list codes
    /// at `/emulator/v1/projects/{p}/verificationCodes`). reCAPTCHA and app receipts are ignored.
    func sendVerificationCode(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard let phone = try body.nonEmptyString("phoneNumber"), Self.isValidPhoneNumber(phone) else { throw .invalidPhoneNumber }
        let record = try store.write { tx -> VerificationCodeRecord in
            let r = VerificationCodeRecord(sessionInfo: randomBase64URL(226), phoneNumber: phone, code: randomDigits(6))
            try tx.insertVerificationCode(ctx.projectID, r)
            return r
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
            guard let verification = try tx.verificationCode(ctx.projectID, sessionInfo: sessionInfo) else { throw AuthError.invalidSessionInfo }
            guard verification.code == code else { throw AuthError.invalidCode }
            try tx.deleteVerificationCode(sessionInfo)
            let phone = verification.phoneNumber
            let fromPhone = try tx.userByPhone(ctx.projectID, phone)
            let fromToken = try idToken.map { try parseIdToken(tx, ctx, $0).user }
            if let fromPhone, let fromToken, fromPhone.localId != fromToken.localId { throw AuthError.phoneNumberExists }
            var user: UserRecord
            let isNew: Bool
            if let existing = fromToken ?? fromPhone {
                if existing.disabled { throw AuthError.userDisabled }
                user = existing
                isNew = false
            } else {
                user = UserRecord(localId: try newLocalId(tx, ctx.projectID), createdAt: ctx.now.unixMillis)
                isNew = true
            }
            user.phoneNumber = phone
            user.lastLoginAt = ctx.now.unixMillis
            user.syncBuiltInProviders()
            try tx.save(ctx.projectID, user)
            return (user, isNew, try issueTokens(tx, ctx, user: user, provider: "phone"))
        }
        var reply = JSONObject([("isNewUser", .bool(isNewUser)), ("phoneNumber", .string(user.phoneNumber ?? "")),
                                ("localId", .string(user.localId))])
        try appendTokens(pending, to: &reply, ctx)
        return .object(reply)
    }
}
