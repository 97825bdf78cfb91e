import HearthCore

extension AuthOperations {
    /// `accounts:lookup`: admins look accounts up by `localId`, `email`, `phoneNumber`,
    /// `federatedUserId` or `initialEmail`; end users get their own account from `idToken`.
    func lookup(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        var users: [UserRecord] = []
        if ctx.privileged {
            let localIds = try body.strings("localId") ?? []
            let emails = try body.strings("email") ?? []
            let phones = try body.strings("phoneNumber") ?? []
            let initialEmails = try body.strings("initialEmail") ?? []
            var federated: [(String, String)] = []
            for item in try body.objects("federatedUserId") ?? [] {
                if let p = try item.nonEmptyString("providerId"), let r = try item.nonEmptyString("rawId") { federated.append((p, r)) }
            }
            users = try store.read { tx in
                var found: [UserRecord] = []
                func add(_ u: UserRecord?) {
                    if let u, !found.contains(where: { $0.localId == u.localId }) { found.append(u) }
                }
                for id in localIds { add(try tx.user(ctx.scope, id)) }
                for e in emails { add(try tx.userByEmail(ctx.scope, Self.canonicalEmail(e))) }
                for p in phones { add(try tx.userByPhone(ctx.scope, p)) }
                for (p, r) in federated { add(try tx.userByProvider(ctx.scope, providerId: p, rawId: r)) }
                for e in initialEmails { add(try tx.userByInitialEmail(ctx.scope, Self.canonicalEmail(e))) }
                return found
            }
        } else {
            guard let idToken = try body.nonEmptyString("idToken") else { throw .missingIdToken }
            users = [try store.read { tx in try parseIdToken(tx, ctx, idToken).user }]
        }
        var reply = JSONObject([("kind", .string("identitytoolkit#GetAccountInfoResponse"))])
        // `users` is omitted when nothing matched (the Node Admin SDK relies on it).
        if !users.isEmpty { reply["users"] = .array(users.map { $0.json(disclosure: .redacted) }) }
        return .object(reply)
    }

    /// `accounts:update` (setAccountInfo): profile, email, password and attribute changes by the
    /// user (`idToken`), by an admin (`localId`, plus `customAttributes`, `disableUser`,
    /// `validSince`, …), or by applying an out-of-band code (`oobCode`). `mfa.enrollments`
    /// replaces the second factors (an empty list or `mfa: {}` removes them all).
    func update(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        for field in ["provider", "upgradeToFederatedLogin"] where body.has(field) {
            throw .notImplemented("\(field) is not implemented yet.")
        }
        let idToken = try body.nonEmptyString("idToken")
        let oobCode = try body.nonEmptyString("oobCode")
        let localId = try body.nonEmptyString("localId")
        if !ctx.privileged {
            guard idToken != nil || oobCode != nil else { throw .invalidReqType }
            if body.has("customAttributes") { throw .insufficientPermission }
        } else if localId == nil {
            throw .missingLocalId
        }
        let customAttributes = try body.string("customAttributes")
        if let customAttributes, !customAttributes.isEmpty { _ = try CustomClaims.validate(serialized: customAttributes) }
        let deleteAttribute = try body.strings("deleteAttribute") ?? []
        for attr in deleteAttribute where attr == "PROVIDER" || attr == "RAW_USER_INFO" {
            throw .notImplemented("deleteAttribute: \(attr)")
        }
        let deleteProvider = try body.strings("deleteProvider") ?? []
        let rawEmail = try body.nonEmptyString("email")
        let password = try body.nonEmptyString("password")
        let displayName = try body.string("displayName")
        let photoUrl = try body.string("photoUrl")
        let disableUser = try body.bool("disableUser")
        let phoneNumber = try body.nonEmptyString("phoneNumber")
        let emailVerified = try body.bool("emailVerified")
        let validSinceValue = try body.int64("validSince")
        let createdAtValue = try body.int64("createdAt")
        let lastLoginAtValue = try body.int64("lastLoginAt")
        var link: ProviderUserInfo?
        if let info = try body.object("linkProviderUserInfo") {
            guard try info.nonEmptyString("providerId") != nil else { throw .missingProviderId }
            guard try info.nonEmptyString("rawId") != nil else { throw .missingRawId }
            link = ProviderUserInfo(json: .object(info.object))
        }
        let enrollments = try body.object("mfa").map { mfa throws(AuthError) in
            try secondFactors(try mfa.objects("enrollments") ?? [], ctx, keepIds: true)
        }
        if oobCode == nil, let rawEmail, !Self.isValidEmail(rawEmail) { throw .invalidEmail }
        if oobCode == nil, let password { try Self.checkPasswordStrength(password) }
        let hashed = oobCode == nil ? password.map { hasher.hash($0) } : nil

        let (user, newEmail, pending) = try store.write { tx -> (UserRecord, String?, PendingTokens?) in
            let config = try tx.config(ctx.projectID)
            var user: UserRecord
            var signInProvider: String?
            var newEmail: String?
            var isEmailUpdate = false
            var revoke = false

            if let oobCode {
                guard let oob = try tx.oob(ctx.scope, oobCode) else { throw AuthError.invalidOobCode }
                switch oob.requestType {
                case "VERIFY_EMAIL":
                    try tx.deleteOob(oobCode)
                    signInProvider = "password"
                    guard let found = try tx.userByEmail(ctx.scope, oob.email) else { throw AuthError.invalidOobCode }
                    user = found
                    user.emailVerified = true
                    if oob.email != user.email { user.email = oob.email }
                case "VERIFY_AND_CHANGE_EMAIL":
                    try tx.deleteOob(oobCode)
                    guard let found = try tx.userByEmail(ctx.scope, oob.email), let target = oob.newEmail else {
                        throw AuthError.invalidOobCode
                    }
                    if try tx.userByEmail(ctx.scope, target) != nil { throw AuthError.emailExists }
                    user = found
                    if target != user.email {
                        user.email = target
                        user.emailVerified = true
                        newEmail = target
                    }
                case "RECOVER_EMAIL":
                    try tx.deleteOob(oobCode)
                    guard let found = try tx.userByInitialEmail(ctx.scope, oob.email) else { throw AuthError.invalidOobCode }
                    if try tx.userByEmail(ctx.scope, oob.email) != nil { throw AuthError.emailExists }
                    user = found
                    if oob.email != user.email {
                        user.email = oob.email
                        user.emailVerified = true
                    }
                default:
                    throw AuthError.notImplemented(oob.requestType)
                }
            } else {
                if let idToken {
                    let parsed = try parseIdToken(tx, ctx, idToken)
                    user = parsed.user
                    signInProvider = parsed.provider
                    if disableUser != nil { throw AuthError.operationNotAllowed }
                } else {
                    guard let localId else { throw AuthError.missingLocalId }
                    guard let found = try tx.user(ctx.scope, localId) else { throw AuthError.userNotFound }
                    user = found
                }
                if let rawEmail {
                    let canonical = Self.canonicalEmail(rawEmail)
                    if canonical != user.email {
                        if !config.allowDuplicateEmails, try tx.userByEmail(ctx.scope, canonical) != nil { throw AuthError.emailExists }
                        if signInProvider != "anonymous", user.email != nil, user.initialEmail == nil { user.initialEmail = user.email }
                        user.email = canonical
                        user.emailVerified = false
                        newEmail = canonical
                        isEmailUpdate = true
                    }
                }
                if let hashed {
                    user.passwordHash = hashed.hash
                    user.salt = hashed.salt
                    user.passwordScheme = hashed.scheme
                    user.passwordUpdatedAt = ctx.now.unixMillis
                    signInProvider = "password"
                }
                if hashed != nil || body.has("validSince") || isEmailUpdate {
                    user.validSince = ctx.now.unixSeconds
                    revoke = true
                }
                if ctx.privileged {
                    if let disableUser { user.disabled = disableUser }
                    if let phoneNumber, phoneNumber != user.phoneNumber {
                        guard Self.isValidPhoneNumber(phoneNumber) else { throw AuthError.invalidPhoneNumber }
                        if try tx.userByPhone(ctx.scope, phoneNumber) != nil { throw AuthError.phoneNumberExists }
                        user.phoneNumber = phoneNumber
                    }
                    if let emailVerified { user.emailVerified = emailVerified }
                    if let customAttributes { user.customAttributes = customAttributes }
                    if let createdAtValue { user.createdAt = createdAtValue }
                    if let lastLoginAtValue { user.lastLoginAt = lastLoginAtValue }
                    if let validSinceValue { user.validSince = validSinceValue }
                }
                if let displayName { user.displayName = displayName }
                if let photoUrl { user.photoUrl = photoUrl }
                for attr in deleteAttribute {
                    switch attr {
                    case "DISPLAY_NAME": user.displayName = nil
                    case "PHOTO_URL": user.photoUrl = nil
                    case "PASSWORD":
                        user.passwordHash = nil
                        user.salt = nil
                        user.passwordScheme = nil
                    case "EMAIL":
                        user.email = nil
                        user.emailVerified = nil
                        user.emailLinkSignin = false
                    default: break
                    }
                }
                if deleteProvider.contains("password") {
                    user.email = nil
                    user.emailVerified = nil
                    user.emailLinkSignin = false
                    user.passwordHash = nil
                    user.salt = nil
                    user.passwordScheme = nil
                }
                if deleteProvider.contains("phone") { user.phoneNumber = nil }
                if let enrollments {
                    user.mfaInfo = enrollments.isEmpty ? nil : enrollments
                    try Self.checkSecondFactorOwner(user)
                }
            }
            if let link { user.upsertProvider(link) }
            user.removeProviders(deleteProvider)
            user.syncBuiltInProviders()
            if revoke { user.tokenEpoch += 1 }
            try tx.save(ctx.scope, user)

            if signInProvider != "anonymous", isEmailUpdate, let initial = user.initialEmail {
                _ = try createOob(tx, ctx, email: initial, requestType: "RECOVER_EMAIL", mode: "recoverEmail", continueUrl: nil)
            }
            var pending: PendingTokens?
            if revoke, let signInProvider { pending = try issueTokens(tx, ctx, user: user, provider: signInProvider) }
            return (user, newEmail, pending)
        }

        var reply = JSONObject([("kind", .string("identitytoolkit#SetAccountInfoResponse")), ("localId", .string(user.localId))])
        reply.put("emailVerified", user.emailVerified)
        if let providers = user.providers { reply["providerUserInfo"] = .array(providers.map(\.json)) }
        reply.put("email", user.email)
        reply.put("displayName", user.displayName)
        reply.put("photoUrl", user.photoUrl)
        reply.put("newEmail", newEmail)
        if user.hasPassword { reply["passwordHash"] = .string(UserRecord.redactedHash) }
        try appendTokens(pending, to: &reply, ctx)
        return .object(reply)
    }

    /// `accounts:delete`: the user's own account (`idToken`) or any account (admin `localId`).
    func deleteAccount(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        let localId = try body.nonEmptyString("localId")
        let idToken = try body.nonEmptyString("idToken")
        try store.write { tx in
            let user: UserRecord
            if ctx.privileged {
                guard let localId else { throw AuthError.missingLocalId }
                guard let found = try tx.user(ctx.scope, localId) else { throw AuthError.userNotFound }
                user = found
            } else {
                guard let idToken else { throw AuthError.missingIdToken }
                user = try parseIdToken(tx, ctx, idToken).user
            }
            try tx.deleteUser(ctx.scope, user.localId)
        }
        return .object(JSONObject([("kind", .string("identitytoolkit#DeleteAccountResponse"))]))
    }
}
