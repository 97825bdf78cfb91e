import Foundation
import HearthCore
import HearthHTTP

extension AuthOperations {
    /// `accounts:sendOobCode`: records a PASSWORD_RESET, VERIFY_EMAIL, EMAIL_SIGNIN or
    /// VERIFY_AND_CHANGE_EMAIL code (nothing is mailed; list them at `/emulator/v1/projects/{p}/oobCodes`).
    /// Admins may ask for the link back with `returnOobLink`.
    func sendOobCode(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard let requestType = try body.nonEmptyString("requestType"), requestType != "OOB_REQ_TYPE_UNSPECIFIED" else {
            throw .missingReqType
        }
        let returnOobLink = try body.bool("returnOobLink") ?? false
        if returnOobLink && !ctx.privileged { throw .insufficientPermission }
        let continueUrl = try body.nonEmptyString("continueUrl")
        if let continueUrl, !Self.isAbsoluteURI(continueUrl) {
            throw .invalidInput("INVALID_CONTINUE_URI : ((expected an absolute URI with valid scheme and host))")
        }
        let rawEmail = try body.nonEmptyString("email")
        let idToken = try body.nonEmptyString("idToken")
        let rawNewEmail = try body.nonEmptyString("newEmail")
        if try body.bool("canHandleCodeInApp") == true {
            logger.warning("canHandleCodeInApp is unsupported in Hearth. All OOB operations will complete via web.")
        }

        let result = try store.write { tx -> (email: String, record: OobRecord?) in
            let email: String
            var newEmail: String?
            let mode: String
            switch requestType {
            case "EMAIL_SIGNIN":
                guard ctx.allowsEmailLinkSignin else { throw AuthError.operationNotAllowed }
                mode = "signIn"
                guard let rawEmail else { throw AuthError.missingEmail }
                email = Self.canonicalEmail(rawEmail)
            case "PASSWORD_RESET":
                mode = "resetPassword"
                guard let rawEmail else { throw AuthError.missingEmail }
                email = Self.canonicalEmail(rawEmail)
                if try tx.userByEmail(ctx.scope, email) == nil {
                    // With enumeration protection an unknown address looks like a sent email.
                    if try tx.config(ctx.projectID).improvedEmailPrivacy { return (email, nil) }
                    throw AuthError.emailNotFound
                }
            case "VERIFY_EMAIL":
                mode = "verifyEmail"
                if returnOobLink && idToken == nil {
                    guard let rawEmail else { throw AuthError.missingEmail }
                    email = Self.canonicalEmail(rawEmail)
                    if try tx.userByEmail(ctx.scope, email) == nil { throw AuthError.userNotFound }
                } else {
                    let user = try parseIdToken(tx, ctx, idToken ?? "")
                    guard let e = user.user.email else { throw AuthError.missingEmail }
                    email = e
                }
            case "VERIFY_AND_CHANGE_EMAIL":
                mode = "verifyAndChangeEmail"
                guard let rawNewEmail else { throw AuthError.missingNewEmail }
                newEmail = Self.canonicalEmail(rawNewEmail)
                if returnOobLink && idToken == nil {
                    guard let rawEmail else { throw AuthError.missingEmail }
                    email = Self.canonicalEmail(rawEmail)
                    if try tx.userByEmail(ctx.scope, email) == nil { throw AuthError.userNotFound }
                } else {
                    guard let idToken else { throw AuthError.missingIdToken }
                    guard let e = try parseIdToken(tx, ctx, idToken).user.email else { throw AuthError.missingEmail }
                    email = e
                }
                if let newEmail, try tx.userByEmail(ctx.scope, newEmail) != nil { throw AuthError.emailExists }
            default:
                throw AuthError.notImplemented(requestType)
            }
            let record = try createOob(tx, ctx, email: email, newEmail: newEmail, requestType: requestType, mode: mode,
                                       continueUrl: continueUrl)
            return (email, record)
        }
        var reply = JSONObject([("kind", .string("identitytoolkit#GetOobConfirmationCodeResponse")), ("email", .string(result.email))])
        if returnOobLink, let record = result.record {
            reply["oobCode"] = .string(record.oobCode)
            reply["oobLink"] = .string(record.oobLink)
        }
        return .object(reply)
    }

    /// `accounts:resetPassword`: with `newPassword`, applies a PASSWORD_RESET code; without, only
    /// reports what the code is for.
    func resetPassword(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        guard ctx.allowsPasswordSignup else { throw .passwordLoginDisabled }
        guard let code = try body.nonEmptyString("oobCode") else { throw .missingOobCode }
        let newPassword = try body.nonEmptyString("newPassword")
        let hashed: (hash: [UInt8], salt: [UInt8], scheme: String)?
        if let newPassword {
            try Self.checkPasswordStrength(newPassword)
            hashed = hasher.hash(newPassword)
        } else {
            hashed = nil
        }
        let oob = try store.write { tx -> OobRecord in
            guard let oob = try tx.oob(ctx.scope, code) else { throw AuthError.invalidOobCode }
            guard let hashed else { return oob }
            guard oob.requestType == "PASSWORD_RESET" else { throw AuthError.invalidOobCode }
            try tx.deleteOob(code)
            guard var user = try tx.userByEmail(ctx.scope, oob.email) else { throw AuthError.invalidOobCode }
            user.emailVerified = true
            user.passwordHash = hashed.hash
            user.salt = hashed.salt
            user.passwordScheme = hashed.scheme
            user.passwordUpdatedAt = ctx.now.unixMillis
            user.validSince = ctx.now.unixSeconds
            user.tokenEpoch += 1
            // Resetting through email proves ownership of the address only: linked identities go.
            user.removeProviders((user.providers ?? []).map(\.providerId))
            user.syncBuiltInProviders()
            try tx.save(ctx.scope, user)
            return oob
        }
        var reply = JSONObject([("kind", .string("identitytoolkit#ResetPasswordResponse")), ("requestType", .string(oob.requestType))])
        // An email sign-in code does not reveal its address (the user must type it again).
        if oob.requestType != "EMAIL_SIGNIN" { reply["email"] = .string(oob.email) }
        reply.put("newEmail", oob.newEmail)
        return .object(reply)
    }

    /// `accounts:createAuthUri`: whether an email is registered and with which sign-in methods
    /// (fetchSignInMethodsForEmail). Hidden under enumeration protection.
    func createAuthUri(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        let sessionId = try body.nonEmptyString("sessionId") ?? ids.alphanumeric(27)
        if try body.nonEmptyString("providerId") != nil { throw .notImplemented("Sign-in with IDP is not yet supported.") }
        guard let identifier = try body.nonEmptyString("identifier") else { throw .missingIdentifier }
        guard let continueUri = try body.nonEmptyString("continueUri") else { throw .missingContinueUri }
        guard Self.isValidEmail(identifier) else { throw .invalidIdentifier }
        let email = Self.canonicalEmail(identifier)
        guard Self.isAbsoluteURI(continueUri) else { throw .invalidContinueUri }

        let (users, config) = try store.read { tx in (try tx.usersByEmailOrProviderEmail(ctx.scope, email), try tx.config(ctx.projectID)) }
        var registered = false
        var allProviders: [String] = []
        var signinMethods: [String] = []
        if !config.allowDuplicateEmails {
            if let first = users.first {
                registered = true
                for p in first.providers ?? [] {
                    if p.providerId == "password" {
                        allProviders.append("password")
                        if first.hasPassword { signinMethods.append("password") }
                        if first.emailLinkSignin { signinMethods.append("emailLink") }
                    } else if p.providerId != "phone" {
                        allProviders.append(p.providerId)
                        signinMethods.append(p.providerId)
                    }
                }
            }
        } else if let user = users.first(where: { $0.email != nil }) {
            registered = true
            if user.hasPassword || user.emailLinkSignin {
                allProviders.append("password")
                if user.hasPassword { signinMethods.append("password") }
                if user.emailLinkSignin { signinMethods.append("emailLink") }
            }
        }
        var reply = JSONObject([("kind", .string("identitytoolkit#CreateAuthUriResponse"))])
        if config.improvedEmailPrivacy {
            reply["sessionId"] = .string(sessionId)
            return .object(reply)
        }
        reply["registered"] = .bool(registered)
        reply["allProviders"] = .array(allProviders.map(JSON.string))
        reply["sessionId"] = .string(sessionId)
        reply["signinMethods"] = .array(signinMethods.map(JSON.string))
        return .object(reply)
    }

    /// `GET /emulator/action`: what following an emailed link does (verify, reset with
    /// `&newPassword=`, recover, change email, or redirect an email sign-in to `continueUrl`), in
    /// the tenant the link names (`tenantId`).
    func emulatorAction(_ request: Request, baseURL: String) -> Response {
        func reply(_ status: Int, _ members: [(String, JSON)]) -> Response {
            Response.json(.object(JSONObject([("authEmulator", .object(JSONObject(members)))])), status: status)
        }
        func redirect(_ location: String) -> Response {
            var h = HTTPHeaders()
            h.set("Location", location)
            return Response(status: 303, headers: h, body: .empty)
        }
        let mode = request.query("mode")
        guard let apiKey = request.query("apiKey"), !apiKey.isEmpty else {
            return reply(400, [("error", .string("missing apiKey query parameter")),
                               ("instructions", .string("Please modify the URL to specify an apiKey, such as ...&apiKey=YOUR_API_KEY"))])
        }
        guard let oobCode = request.query("oobCode"), !oobCode.isEmpty else {
            return reply(400, [("error", .string("missing oobCode query parameter")),
                               ("instructions", .string("Please modify the URL to specify an oobCode, such as ...&oobCode=YOUR_OOB_CODE"))])
        }
        let continueUrl = request.query("continueUrl").flatMap { $0.isEmpty ? nil : $0 }
        var ctx = OperationContext(projectID: configuration.projectID, privileged: false, baseURL: baseURL, now: clock.now())
        if let tenantID = request.query("tenantId"), !tenantID.isEmpty {
            do {
                ctx = try within(tenant: tenantID, ctx)
            } catch {
                return error.response()
            }
        }
        let oob = try? store.read { tx in try tx.oob(ctx.scope, oobCode) }
        switch mode {
        case "resetPassword":
            guard let oob, oob.requestType == "PASSWORD_RESET" else {
                return reply(400, [("error", .string("Your request to reset your password has expired or the link has already been used.")),
                                   ("instructions", .string("Try resetting your password again."))])
            }
            guard let newPassword = request.query("newPassword"), !newPassword.isEmpty else {
                return reply(400, [("error", .string("missing newPassword query parameter")),
                                   ("instructions", .string("To reset the password for \(oob.email), send an HTTP GET request to the following URL.")),
                                   ("instructions2", .string("You may use a web browser or any HTTP client, such as curl.")),
                                   ("urlTemplate", .string("\(oob.oobLink)&newPassword=NEW_PASSWORD_HERE"))])
            }
            if newPassword == "NEW_PASSWORD_HERE" {
                return reply(400, [("error", .string("newPassword must be something other than 'NEW_PASSWORD_HERE'")),
                                   ("instructions", .string("The string 'NEW_PASSWORD_HERE' is just a placeholder.")),
                                   ("instructions2", .string("Please change the URL to specify a new password instead.")),
                                   ("urlTemplate", .string("\(oob.oobLink)&newPassword=NEW_PASSWORD_HERE"))])
            }
            do {
                let result = try resetPassword(ctx, RequestBody(JSONObject([("oobCode", .string(oobCode)), ("newPassword", .string(newPassword))])))
                if let continueUrl { return redirect(continueUrl) }
                return reply(200, [("success", .string("The password has been successfully updated.")), ("email", result["email"] ?? .null)])
            } catch {
                return error.response()
            }
        case "verifyEmail", "recoverEmail", "verifyAndChangeEmail":
            let expected = ["verifyEmail": "VERIFY_EMAIL", "recoverEmail": "RECOVER_EMAIL", "verifyAndChangeEmail": "VERIFY_AND_CHANGE_EMAIL"][mode ?? ""]
            let what = ["verifyEmail": "verify your email", "recoverEmail": "revert your email", "verifyAndChangeEmail": "change your email"][mode ?? ""] ?? ""
            guard let oob, oob.requestType == expected else {
                return reply(400, [("error", .string("Your request to \(what) has expired or the link has already been used.")),
                                   ("instructions", .string("Try \(mode == "verifyEmail" ? "verifying your email" : "changing your email") again."))])
            }
            do {
                let result = try update(ctx, RequestBody(JSONObject([("oobCode", .string(oob.oobCode))])))
                if let continueUrl, mode != "recoverEmail" { return redirect(continueUrl) }
                switch mode {
                case "verifyEmail":
                    return reply(200, [("success", .string("The email has been successfully verified.")), ("email", result["email"] ?? .null)])
                case "recoverEmail":
                    return reply(200, [("success", .string("The email has been successfully reset.")), ("email", result["email"] ?? .null)])
                default:
                    return reply(200, [("success", .string("The email has been successfully changed.")), ("newEmail", result["newEmail"] ?? .null)])
                }
            } catch {
                return reply(400, [("error", .string("Your request to \(what) has expired or the link has already been used."))])
            }
        case "signIn":
            guard let continueUrl, var target = URLComponents(string: continueUrl) else {
                return reply(400, [("error", .string("Missing continueUrl query parameter")),
                                   ("instructions", .string("To sign in, append &continueUrl=YOUR_APP_URL to the link."))])
            }
            var items = target.queryItems ?? []
            for item in request.queryItems where item.name != "continueUrl" {
                items.removeAll { $0.name == item.name }
                items.append(URLQueryItem(name: item.name, value: item.value ?? ""))
            }
            target.percentEncodedQuery = Self.formEncode(items.map { ($0.name, $0.value ?? "") })
            return redirect(target.string ?? continueUrl)
        default:
            return reply(400, [("error", .string("Invalid mode"))])
        }
    }
}
