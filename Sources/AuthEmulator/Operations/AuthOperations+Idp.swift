import Foundation
import HearthCore
import HearthHTTP

extension AuthOperations {
    /// `accounts:signInWithIdp` with fake provider credentials, as the Firebase emulator accepts
    /// them: an unsigned (or any) `id_token` JWT, or strict JSON claims, in `postBody` or in the
    /// `requestUri` query/fragment, for any provider (`google.com`, `apple.com`, `github.com`, …).
    /// Creates the account, signs into the one linked to the identity, or links it to `idToken`.
    func signInWithIdp(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        if try body.bool("returnRefreshToken") == true { throw .notImplemented("returnRefreshToken is not implemented yet.") }
        if try body.nonEmptyString("pendingIdToken") != nil { throw .notImplemented("pendingIdToken is not implemented yet.") }
        guard let requestUri = try body.nonEmptyString("requestUri") else { throw .missingRequestUri }
        guard Self.isAbsoluteURI(requestUri), let uri = URLComponents(string: requestUri) else { throw .invalidRequestUri }
        var params: [String: String] = [:]
        var order: [String] = []
        func merge(_ items: [(name: String, value: String?)]) {
            for item in items {
                if params[item.name] == nil { order.append(item.name) }
                params[item.name] = item.value ?? ""
            }
        }
        merge(Request.parseQuery(uri.percentEncodedQuery ?? "", plusAsSpace: true))
        if let postBody = try body.nonEmptyString("postBody") { merge(Request.parseQuery(postBody, plusAsSpace: true)) }
        if let fragment = uri.percentEncodedFragment, !fragment.isEmpty { merge(Request.parseQuery(fragment, plusAsSpace: true)) }
        let normalized: String = {
            var c = uri
            c.fragment = nil
            c.percentEncodedQuery = order.isEmpty ? nil : Self.formEncode(order.map { ($0, params[$0] ?? "") })
            return c.string ?? requestUri
        }()
        guard let providerId = params["providerId"]?.lowercased(), !providerId.isEmpty else {
            throw .invalidCredentialOrProviderId(normalized)
        }
        let oauthIdToken = params["id_token"].flatMap { $0.isEmpty ? nil : $0 }
        let oauthAccessToken = params["access_token"].flatMap { $0.isEmpty ? nil : $0 }
        var parsedClaims = try Self.idpClaims(oauthIdToken)
        if parsedClaims == nil { parsedClaims = try Self.idpClaims(oauthAccessToken) }
        guard let claims = parsedClaims else {
            if let oauthIdToken {
                throw .invalidIdpResponse("Unable to parse id_token: \(oauthIdToken) ((Auth Emulator only accepts strict JSON or JWTs as fake id_tokens.))")
            } else if oauthAccessToken != nil {
                if providerId == "google.com" || providerId == "apple.com" {
                    throw .notImplemented("The Auth Emulator only support sign-in with \(providerId) using id_token, not access_token. Please update your code to use id_token.")
                }
                throw .notImplemented("The Auth Emulator does not support \(providerId) sign-in with credentials.")
            }
            throw .notImplemented("The Auth Emulator only supports sign-in with credentials (id_token required).")
        }
        let idToken = try body.nonEmptyString("idToken")
        let returnIdpCredential = try body.bool("returnIdpCredential") ?? false

        // What the (fake) provider tells us about the user.
        let rawId = claims["sub"]?.stringValue ?? ""
        let email = claims["email"]?.stringValue.map(Self.canonicalEmail)
        let emailVerified: Bool = {
            switch claims["email_verified"] {
            case .bool(let b)?: return b
            case .string(let s)?: return s == "true"
            default: return false
            }
        }()
        let displayName = claims["name"]?.stringValue
        let photoUrl = claims["picture"]?.stringValue
        let screenName = claims["screen_name"]?.stringValue
        var response = JSONObject([("kind", .string("identitytoolkit#VerifyAssertionResponse")), ("context", .string("")),
                                   ("providerId", .string(providerId))])
        response.put("displayName", displayName)
        response.put("fullName", displayName)
        response.put("screenName", screenName)
        response.put("email", email)
        response["emailVerified"] = .bool(emailVerified)
        response.put("photoUrl", photoUrl)
        if providerId == "google.com" {
            var scopes = "openid https://www.googleapis.com/auth/userinfo.profile"
            if email != nil { scopes += " https://www.googleapis.com/auth/userinfo.email" }
            response.put("firstName", claims["given_name"]?.stringValue)
            response.put("lastName", claims["family_name"]?.stringValue)
            var raw = JSONObject([("granted_scopes", .string(scopes)), ("id", .string(rawId))])
            raw.put("name", displayName)
            raw.put("given_name", claims["given_name"]?.stringValue)
            raw.put("family_name", claims["family_name"]?.stringValue)
            raw["verified_email"] = .bool(emailVerified)
            raw["locale"] = .string("en")
            raw.put("email", email)
            raw.put("picture", photoUrl)
            response["rawUserInfo"] = .string(JSON.object(raw).serialized())
            response["federatedId"] = .string("https://accounts.google.com/\(rawId)")
        } else {
            response["rawUserInfo"] = .string(JSON.object(claims).serialized())
            response["federatedId"] = .string(rawId)
        }
        response["oauthAccessToken"] = .string(oauthAccessToken ?? "FirebaseAuthEmulatorFakeAccessToken_\(providerId)")
        response.put("oauthIdToken", oauthIdToken)
        let identity = ProviderUserInfo(providerId: providerId, rawId: rawId, federatedId: rawId, email: email,
                                        displayName: displayName, photoUrl: photoUrl, screenName: screenName)

        enum Outcome { case reply(JSONObject), signedIn(JSONObject, SignInOutcome) }
        let outcome: Outcome = try store.write { tx -> Outcome in
            var response = response
            let config = try tx.config(ctx.projectID)
            let fromToken = try idToken.map { try parseIdToken(tx, ctx, $0).user }
            let matching = try tx.userByProvider(ctx.scope, providerId: providerId, rawId: rawId)
            var target: UserRecord?
            var isNewUser = false
            var fields: (UserRecord) -> UserRecord = { $0 }
            do {
                if let fromToken {
                    if matching != nil { throw AuthError.federatedUserIdAlreadyLinked }
                    if !config.allowDuplicateEmails, let email, let other = try tx.userByEmail(ctx.scope, email),
                       other.localId != fromToken.localId {
                        throw AuthError.emailExists
                    }
                    target = fromToken
                    let oneAccount = !config.allowDuplicateEmails
                    fields = { user in
                        var u = user
                        if oneAccount, let email, u.email == nil {
                            u.email = email
                            u.emailVerified = emailVerified
                        }
                        if let email, emailVerified, u.email == email { u.emailVerified = true }
                        return u
                    }
                } else if let matching {
                    target = matching
                } else if !config.allowDuplicateEmails, let email, let byEmail = try tx.userByEmail(ctx.scope, email) {
                    guard emailVerified else {
                        // The address belongs to an account the provider did not prove ownership of.
                        response["needConfirmation"] = .bool(true)
                        response["localId"] = .string(byEmail.localId)
                        let verified = (byEmail.providers ?? []).map(\.providerId).filter { $0 != "password" && $0 != "phone" }
                        response["verifiedProvider"] = .array(verified.map(JSON.string))
                        return .reply(response)
                    }
                    if (byEmail.providers ?? []).contains(where: { $0.providerId == providerId && $0.rawId != rawId }) {
                        response["emailRecycled"] = .bool(true)
                    }
                    target = byEmail
                    let wasVerified = byEmail.emailVerified == true
                    let now = ctx.now
                    fields = { user in
                        var u = user
                        if !wasVerified {
                            // Unverified owner: the provider's proof wins, older credentials go.
                            u.passwordHash = nil
                            u.salt = nil
                            u.passwordScheme = nil
                            u.phoneNumber = nil
                            u.validSince = now.unixSeconds
                            u.tokenEpoch += 1
                            u.removeProviders((u.providers ?? []).map(\.providerId))
                        }
                        u.displayName = displayName
                        u.photoUrl = photoUrl
                        u.screenName = screenName
                        u.emailVerified = true
                        return u
                    }
                } else {
                    isNewUser = true
                    let copyEmail = !config.allowDuplicateEmails
                    fields = { user in
                        var u = user
                        u.displayName = displayName
                        u.photoUrl = photoUrl
                        u.screenName = screenName
                        if copyEmail, let email {
                            u.email = email
                            u.emailVerified = emailVerified
                        }
                        return u
                    }
                }
            } catch let e as AuthError {
                if returnIdpCredential {
                    response["errorMessage"] = .string(e.message)
                    return .reply(response)
                }
                throw e
            }

            var user: UserRecord
            if isNewUser {
                user = fields(UserRecord(localId: try newLocalId(tx, ctx.scope), createdAt: ctx.now.unixMillis))
                user.upsertProvider(identity)
                response["isNewUser"] = .bool(true)
            } else if let target {
                user = fields(target)
                user.upsertProvider(identity)
            } else {
                throw AuthError.internalError("signInWithIdp resolved no account")
            }
            if user.disabled { throw AuthError.userDisabled }
            user.syncBuiltInProviders()
            response["localId"] = .string(user.localId)
            if user.email == email { response["emailVerified"] = .bool(user.emailVerified ?? false) }
            response.put("tenantId", ctx.tenantID)
            if try needsSecondFactor(tx, ctx, user) {
                try tx.save(ctx.scope, user)
                return .signedIn(response, .secondFactor(try pendingSecondFactor(tx, ctx, user: user, provider: providerId)))
            }
            user.lastLoginAt = ctx.now.unixMillis
            try tx.save(ctx.scope, user)
            return .signedIn(response, .tokens(try issueTokens(tx, ctx, user: user, provider: providerId)))
        }
        switch outcome {
        case .reply(let r):
            return .object(r)
        case .signedIn(var r, let signIn):
            try append(signIn, to: &r, ctx)
            return .object(r)
        }
    }

    /// Claims of a fake provider credential: strict JSON, or a JWT's payload (never verified).
    /// nil when the text is neither; throws when JSON is malformed or `sub` is missing.
    static func idpClaims(_ text: String?) throws(AuthError) -> JSONObject? {
        guard let text else { return nil }
        let claims: JSONObject
        if text.hasPrefix("{") {
            guard let parsed = try? JSON.parse(text), let o = parsed.objectValue else {
                throw .invalidIdpResponse("Unable to parse id_token: \(text) ((Auth Emulator failed to parse fake id_token as strict JSON.))")
            }
            claims = o
        } else {
            guard let jwt = try? JWT(decoding: text) else { return nil }
            claims = jwt.payload
        }
        guard let sub = claims["sub"], !sub.isNull, sub != .string("") else {
            throw .invalidIdpResponse("Invalid Idp Response: id_token missing required fields. ((Missing \"sub\" field. This field is required and must be a unique identifier.))")
        }
        guard sub.stringValue != nil else { throw .invalidIdpResponse("((The \"sub\" field must be a string.))") }
        return claims
    }
}
