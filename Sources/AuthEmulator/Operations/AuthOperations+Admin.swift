import Foundation
import HearthCore
import HearthHTTP

extension AuthOperations {
    /// `GET projects/{p}/accounts:batchGet` (listUsers): accounts in `localId` order, paged by
    /// `maxResults` (default 20, at most 1000, -1 for all) and `nextPageToken` (the last `localId`).
    func batchGet(_ ctx: OperationContext, _ request: Request) throws(AuthError) -> JSON {
        var maxResults = 20
        if let text = request.query("maxResults"), !text.isEmpty {
            // JavaScript's Math.floor(Number(x)); anything out of Int32 range is as invalid as text.
            guard let d = Double(text), d.isFinite, abs(d) < 2_147_483_648 else {
                throw .invalidArgument("Invalid value at 'max_results' (TYPE_INT32), \"\(text)\"", reason: "invalid")
            }
            let n = Int(d.rounded(.down))
            maxResults = n == 0 ? 20 : min(n, 1000)
        }
        let token = request.query("nextPageToken").flatMap { $0.isEmpty ? nil : $0 }
        let users = try store.read { tx in try tx.users(ctx.scope, after: token, limit: maxResults >= 0 ? maxResults : nil) }
        var reply = JSONObject([("kind", .string("identitytoolkit#DownloadAccountResponse")),
                                ("users", .array(users.map { $0.json(disclosure: .full) }))])
        if maxResults >= 0, users.count >= maxResults, let last = users.last { reply["nextPageToken"] = .string(last.localId) }
        return .object(reply)
    }

    /// `projects/{p}/accounts:query`: all accounts matching `expression` (email / userId /
    /// phoneNumber alternatives), sorted, with `offset` and `limit`; or just the count.
    func queryAccounts(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        let returnUserInfo = try body.bool("returnUserInfo") ?? true
        let limit = try body.int64("limit")
        let offset = try body.int64("offset") ?? 0
        let order = try body.string("order") ?? "ASC"
        let sortBy = try body.string("sortBy") ?? "USER_ID"
        var filters: [(email: String?, userId: String?, phone: String?)] = []
        for e in try body.objects("expression") ?? [] {
            filters.append((try e.nonEmptyString("email").map(Self.canonicalEmail), try e.nonEmptyString("userId"), try e.nonEmptyString("phoneNumber")))
        }
        if let limit, limit < 0 || limit > 500 { throw .invalidInput("INVALID_LIMIT") }
        if offset < 0 { throw .invalidInput("INVALID_OFFSET") }
        var users = try store.read { tx in try tx.users(ctx.scope, after: nil, limit: nil) }
        if !filters.isEmpty {
            users = users.filter { u in
                filters.contains { f in
                    (f.email == nil || u.email == f.email) && (f.userId == nil || u.localId == f.userId)
                        && (f.phone == nil || u.phoneNumber == f.phone) && (f.email != nil || f.userId != nil || f.phone != nil)
                }
            }
        }
        if !returnUserInfo { return .object(JSONObject([("recordsCount", .string(String(users.count)))])) }
        func key(_ u: UserRecord) -> String {
            switch sortBy {
            case "NAME": return u.displayName ?? ""
            case "CREATED_AT": return String(format: "%020lld", u.createdAt)
            case "LAST_LOGIN_AT": return String(format: "%020lld", u.lastLoginAt ?? 0)
            case "USER_EMAIL": return u.email ?? ""
            default: return u.localId
            }
        }
        users.sort { a, b in
            let (ka, kb) = (key(a), key(b))
            return ka != kb ? ka < kb : a.localId < b.localId
        }
        if order == "DESC" { users.reverse() }
        let pageSize = limit.map { $0 == 0 ? 500 : Int($0) } ?? 500
        let page = users.dropFirst(Int(min(offset, Int64(users.count)))).prefix(pageSize)
        return .object(JSONObject([("recordsCount", .string(String(page.count))),
                                   ("userInfo", .array(page.map { $0.json(disclosure: .redacted) }))]))
    }

    /// `projects/{p}/accounts:batchDelete`: deletes disabled accounts (any with `force`); missing
    /// ids are ignored.
    func batchDelete(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        let localIds = try body.strings("localIds") ?? []
        guard !localIds.isEmpty, localIds.count <= 1000 else { throw .localIdListExceedsLimit }
        let force = try body.bool("force") ?? false
        let errors = try store.write { tx -> [JSON] in
            var errors: [JSON] = []
            for (index, id) in localIds.enumerated() {
                guard let user = try tx.user(ctx.scope, id) else { continue }
                if !user.disabled && !force {
                    errors.append(.object(JSONObject([("index", .int(Int64(index))), ("localId", .string(id)),
                                                      ("message", .string("NOT_DISABLED : Disable the account before batch deletion."))])))
                } else {
                    try tx.deleteUser(ctx.scope, id)
                }
            }
            return errors
        }
        var reply = JSONObject()
        if !errors.isEmpty { reply["errors"] = .array(errors) }
        return .object(reply)
    }

    /// `projects/{p}/accounts:batchCreate` (importUsers), with password hashes in any of Firebase's
    /// import algorithms (see `ImportedHash`), raw passwords (`rawPassword`, emulator only) or the
    /// Firebase emulator's own exported `fakeHash:` strings.
    func batchCreate(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard let users = try body.objects("users"), !users.isEmpty else { throw .missingUserAccount }
        let sanityCheck = try body.bool("sanityCheck") ?? false
        let allowOverwrite = try body.bool("allowOverwrite") ?? false
        let algorithm = try importAlgorithm(body)

        if !allowOverwrite {
            var seen = Set<String>()
            for u in users {
                let id = try u.string("localId") ?? ""
                if !seen.insert(id).inserted { throw .duplicateLocalIdAt(id) }
            }
        }
        let config = try store.read { tx in try tx.config(ctx.projectID) }
        if sanityCheck {
            if !config.allowDuplicateEmails {
                var emails = Set<String>()
                for u in users {
                    if let e = try u.nonEmptyString("email"), !emails.insert(e).inserted { throw .duplicateEmail(e) }
                }
            }
            var raw = Set<String>()
            for u in users {
                for p in try u.objects("providerUserInfo") ?? [] {
                    let pid = try p.string("providerId") ?? "undefined", rid = try p.string("rawId") ?? "undefined"
                    if !raw.insert("\(pid):\(rid)").inserted { throw .duplicateRawId(pid, rid) }
                }
            }
        }

        // A time that is no integer (`1.5`, `"soon"`, `1e300`) fails the whole request, as the real
        // front end's mapping of the body onto its message does before any row is looked at; read
        // per row with `try?`, it quietly became the import's own time (createdAt) or none.
        for u in users {
            _ = try u.int64("createdAt")
            _ = try u.int64("lastLoginAt")
        }

        // Row preparation (hashing included) happens before the writer lock is taken.
        var prepared: [(index: Int, result: Result<UserRecord, AuthError>)] = []
        for (index, u) in users.enumerated() {
            do {
                prepared.append((index, .success(try importRecord(u, algorithm: algorithm, ctx))))
            } catch {
                prepared.append((index, .failure(error)))
            }
        }
        let errors = try store.write { tx -> [JSON] in
            var errors: [JSON] = []
            for (index, result) in prepared {
                func fail(_ message: String) {
                    errors.append(.object(JSONObject([("index", .int(Int64(index))), ("message", .string(message))])))
                }
                switch result {
                case .failure(let e):
                    fail(Self.importMessage(e))
                case .success(var record):
                    if let email = record.email, let other = try tx.userByEmail(ctx.scope, email), other.localId != record.localId {
                        fail(sanityCheck && !config.allowDuplicateEmails ? "email exists in other account in database"
                                                                          : "((Auth Emulator does not support importing duplicate email: \(email)))")
                        continue
                    }
                    var conflict = false
                    for p in record.providers ?? [] {
                        if let other = try tx.userByProvider(ctx.scope, providerId: p.providerId, rawId: p.rawId), other.localId != record.localId {
                            conflict = true
                        }
                    }
                    if conflict {
                        fail("raw id exists in other account in database")
                        continue
                    }
                    if let existing = try tx.user(ctx.scope, record.localId) {
                        guard allowOverwrite else {
                            fail("localId belongs to an existing account - can not overwrite.")
                            continue
                        }
                        record.tokenEpoch = existing.tokenEpoch + 1
                    }
                    record.syncBuiltInProviders()
                    try tx.save(ctx.scope, record)
                }
            }
            return errors
        }
        return .object(JSONObject([("kind", .string("identitytoolkit#UploadAccountResponse")), ("error", .array(errors))]))
    }

    /// The request's `hashAlgorithm` and parameters, validated (see `ImportedHash.options(of:)`).
    private func importAlgorithm(_ body: RequestBody) throws(AuthError) -> ImportedHash? {
        let algorithm = try ImportedHash.options(of: body)
        if let algorithm, let reason = algorithm.unverifiableReason {
            logger.warning("Importing accounts hashed with \(algorithm.algorithmName): \(reason); these accounts cannot sign in with a password.")
        }
        return algorithm
    }

    /// One imported account, validated as the emulator does (messages are per-row errors).
    private func importRecord(_ u: RequestBody, algorithm: ImportedHash?, _ ctx: OperationContext) throws(AuthError) -> UserRecord {
        guard let localId = try u.nonEmptyString("localId") else { throw .invalidInput("localId is missing") }
        if let tenant = try u.nonEmptyString("tenantId"), tenant != ctx.tenantID {
            throw .invalidInput("Tenant id in userInfo does not match the tenant id in request.")
        }
        var record = UserRecord(localId: localId, createdAt: ctx.now.unixMillis)
        if let created = try u.int64("createdAt") { record.createdAt = created }
        record.lastLoginAt = try u.int64("lastLoginAt")
        record.displayName = try u.string("displayName")
        record.photoUrl = try u.string("photoUrl")
        if let hashText = try u.nonEmptyString("passwordHash") {
            if hashText.hasPrefix("fakeHash:"), let password = Self.fakeHashPassword(hashText) {
                let h = hasher.hash(password)
                (record.passwordHash, record.salt, record.passwordScheme) = (h.hash, h.salt, h.scheme)
            } else {
                guard let algorithm else { throw .invalidInput("MISSING_HASH_ALGORITHM") }
                guard let hash = Self.decodeBase64(hashText), hash.count <= 1024 else { throw .invalidInput("INVALID_PASSWORD_HASH") }
                record.passwordHash = hash
                record.salt = Self.decodeBase64(try u.string("salt")) ?? []
                record.passwordScheme = algorithm.scheme
            }
            record.passwordUpdatedAt = ctx.now.unixMillis
        } else if let raw = try u.nonEmptyString("rawPassword") {
            let h = hasher.hash(raw)
            (record.passwordHash, record.salt, record.passwordScheme) = (h.hash, h.salt, h.scheme)
            record.passwordUpdatedAt = ctx.now.unixMillis
        }
        if let claims = try u.nonEmptyString("customAttributes") {
            _ = try CustomClaims.validate(serialized: claims)
            record.customAttributes = claims
        }
        for p in try u.objects("providerUserInfo") ?? [] {
            let providerId = try p.nonEmptyString("providerId")
            if providerId == "password" || providerId == "phone" { continue }
            guard let providerId, let rawId = try p.nonEmptyString("rawId") else {
                if try p.nonEmptyString("federatedId") == nil { throw .invalidInput("federatedId or (providerId & rawId) is required") }
                throw .invalidInput("((Parsing federatedId is not implemented in Auth Emulator; please specify providerId AND rawId as a workaround.))")
            }
            var info = ProviderUserInfo(json: .object(p.object)) ?? ProviderUserInfo(providerId: providerId, rawId: rawId)
            info.providerId = providerId
            info.rawId = rawId
            record.upsertProvider(info)
        }
        if let phone = try u.nonEmptyString("phoneNumber") {
            guard Self.isValidPhoneNumber(phone) else { throw .invalidInput("phone number format is invalid") }
            record.phoneNumber = phone
        }
        record.validSince = ctx.now.unixSeconds
        if let email = try u.nonEmptyString("email") {
            guard Self.isValidEmail(email) else { throw .invalidInput("email is invalid") }
            record.email = Self.canonicalEmail(email)
        }
        record.emailVerified = try u.bool("emailVerified") ?? false
        record.disabled = try u.bool("disabled") ?? false
        if let items = try u.objects("mfaInfo"), !items.isEmpty { record.mfaInfo = try importedSecondFactors(items, record, ctx) }
        return record
    }

    /// An imported account's second factors, with the per-row messages of the emulator's import.
    private func importedSecondFactors(_ items: [RequestBody], _ record: UserRecord,
                                       _ ctx: OperationContext) throws(AuthError) -> [MfaEnrollment] {
        guard record.email != nil else { throw .invalidInput("Second factor account requires email to be presented.") }
        guard record.emailVerified == true else { throw .invalidInput("Second factor account requires email to be verified.") }
        var taken = Set<String>()
        for item in items {
            if let id = try item.nonEmptyString("mfaEnrollmentId"), !taken.insert(id).inserted {
                throw .invalidInput("Enrollment id already exists.")
            }
        }
        var out: [MfaEnrollment] = []
        for item in items {
            var id = try item.nonEmptyString("mfaEnrollmentId") ?? ""
            if id.isEmpty { id = try newEnrollmentId(avoiding: taken) }
            taken.insert(id)
            guard let phone = try item.nonEmptyString("phoneInfo") else { throw .invalidInput("Second factor not supported.") }
            guard Self.isValidPhoneNumber(phone) else { throw .invalidInput("Phone number format is invalid") }
            let enrolledAt = try item.string("enrolledAt").flatMap { Instant(rfc3339: $0) }?.unixMicros ?? ctx.now.unixMicros
            out.append(MfaEnrollment(mfaEnrollmentId: id, displayName: try item.string("displayName"), phoneInfo: phone,
                                     enrolledAt: enrolledAt))
        }
        if out.count > MfaEnrollment.maximumPerAccount { throw .secondFactorLimitExceeded }
        return out
    }

    /// Production's friendlier wording for claim errors in import results.
    static func importMessage(_ e: AuthError) -> String {
        switch e {
        case .invalidClaims: "Invalid custom claims provided."
        case .claimsTooLarge: "Custom claims provided are too large."
        case .forbiddenClaim: "Custom claims provided include a reserved claim."
        default: e.message
        }
    }

    /// The password inside a Firebase emulator export hash (`fakeHash:salt=…:password=…`).
    static func fakeHashPassword(_ text: String) -> String? {
        guard let r = text.range(of: ":password=") else { return nil }
        return String(text[r.upperBound...])
    }

    /// Standard or URL-safe base64, padded or not.
    static func decodeBase64(_ text: String?) -> [UInt8]? {
        guard var s = text else { return nil }
        s = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/").replacingOccurrences(of: "=", with: "")
        while s.count % 4 != 0 { s.append("=") }
        return Data(base64Encoded: s).map { [UInt8]($0) }
    }

    // MARK: Session cookies

    /// Shortest and longest session cookie lifetimes Firebase allows.
    static let sessionCookieDurations: ClosedRange<Int64> = 300...(14 * 86_400)

    /// `projects/{p}:createSessionCookie`: the ID token's claims re-issued with the session
    /// issuer and the requested lifetime (unsigned in `none` mode, RS256 in `rs256` mode).
    func createSessionCookie(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard let idToken = try body.nonEmptyString("idToken") else { throw .missingIdToken }
        var duration = try body.int64("validDuration") ?? 0
        if duration == 0 { duration = Self.sessionCookieDurations.upperBound }
        guard Self.sessionCookieDurations.contains(duration) else { throw .invalidDuration }
        let payload = try store.read { tx in try parseIdToken(tx, ctx, idToken).payload }
        var claims = OrderedClaims()
        for (k, v) in payload { claims.set(k, v) }
        let now = ctx.now.unixSeconds
        claims.set("iat", .int(now))
        claims.set("exp", .int(now + duration))
        claims.set("iss", .string("https://session.firebase.google.com/\(payload["aud"]?.stringValue ?? ctx.projectID)"))
        return .object(JSONObject([("sessionCookie", .string(try issuer.sign(claims.object)))]))
    }

    // MARK: Project configuration

    /// `GET v2/projects/{p}/config`.
    func getConfig(_ ctx: OperationContext) throws(AuthError) -> JSON {
        .object(try store.read { tx in try tx.config(ctx.projectID) }.document)
    }

    /// `PATCH v2/projects/{p}/config?updateMask=…` (also under `admin/v2`); `mfa` sets the
    /// project's multi-factor settings (`state`, `enabledProviders`).
    func updateConfig(_ ctx: OperationContext, _ body: RequestBody, updateMask: String?) throws(AuthError) -> JSON {
        if let mfa = try body.object("mfa") { try MfaConfig.validate(mfa, field: "config.mfa") }
        if let triggers = try body.object("blockingFunctions")?.object("triggers") {
            for (event, value) in triggers.object {
                guard event == "beforeCreate" || event == "beforeSignIn" else {
                    throw .invalidInput("INVALID_BLOCKING_FUNCTION : ((Event type is invalid.))")
                }
                guard let uri = value["functionUri"]?.stringValue, Self.isAbsoluteURI(uri) else {
                    throw .invalidInput("INVALID_BLOCKING_FUNCTION : ((Expected an absolute URI with valid scheme and host.))")
                }
            }
        }
        let config = try store.write { tx -> ProjectConfig in
            var c = try tx.config(ctx.projectID)
            c.apply(update: body.object, updateMask: updateMask)
            try tx.saveConfig(ctx.projectID, c)
            return c
        }
        return .object(config.document)
    }

    /// `GET v1/projects` (getProjectConfig): what client SDKs ask before redirect flows.
    func getProjects() -> JSON {
        .object(JSONObject([("projectId", .string(Self.projectNumber)), ("authorizedDomains", .array([.string("localhost")]))]))
    }

    /// `GET v1/recaptchaParams`: obviously fake values (SDKs skip reCAPTCHA against emulators).
    func recaptchaParams() -> JSON {
        .object(JSONObject([
            ("kind", .string("identitytoolkit#GetRecaptchaParamResponse")),
            ("recaptchaStoken", .string("This-is-a-fake-token__Dont-send-this-to-the-Recaptcha-service__The-Auth-Emulator-does-not-support-Recaptcha")),
            ("recaptchaSiteKey", .string("Fake-key__Do-not-send-this-to-Recaptcha_")),
        ]))
    }
}
