import HearthCore

extension AuthOperations {
    /// `DELETE /emulator/v1/projects/{p}[/tenants/{t}]/accounts`: every account and refresh token
    /// of the project's own accounts (its tenants' stay), or of the tenant.
    func deleteAllAccounts(_ scope: AuthScope) throws(AuthError) -> JSON {
        try store.write { tx in try tx.deleteAllUsers(scope) }
        return .object(JSONObject())
    }

    /// `GET /emulator/v1/projects/{p}/config`.
    func emulatorConfig(_ project: String) throws(AuthError) -> JSON {
        try store.read { tx in try tx.config(project) }.emulatorView
    }

    /// `PATCH /emulator/v1/projects/{p}/config`: sets `signIn.allowDuplicateEmails` and
    /// `emailPrivacyConfig.enableImprovedEmailPrivacy` when present.
    func updateEmulatorConfig(_ project: String, _ body: RequestBody) throws(AuthError) -> JSON {
        let allow = try body.object("signIn")?.bool("allowDuplicateEmails")
        let privacy = try body.object("emailPrivacyConfig")?.bool("enableImprovedEmailPrivacy")
        let config = try store.write { tx -> ProjectConfig in
            var c = try tx.config(project)
            var mask: [String] = []
            if allow != nil { mask.append("signIn.allowDuplicateEmails") }
            if privacy != nil { mask.append("emailPrivacyConfig.enableImprovedEmailPrivacy") }
            if !mask.isEmpty {
                var update = JSONObject()
                if let allow { update["signIn"] = .object(JSONObject([("allowDuplicateEmails", .bool(allow))])) }
                if let privacy { update["emailPrivacyConfig"] = .object(JSONObject([("enableImprovedEmailPrivacy", .bool(privacy))])) }
                c.apply(update: update, updateMask: mask.joined(separator: ","))
                try tx.saveConfig(project, c)
            }
            return c
        }
        return config.emulatorView
    }

    /// `GET /emulator/v1/projects/{p}[/tenants/{t}]/oobCodes`.
    func listOobCodes(_ scope: AuthScope) throws(AuthError) -> JSON {
        let codes = try store.read { tx in try tx.oobCodes(scope) }
        return .object(JSONObject([("oobCodes", .array(codes.map(\.json)))]))
    }

    /// `GET /emulator/v1/projects/{p}[/tenants/{t}]/verificationCodes`: SMS codes of phone sign-in
    /// and of second-factor enrollment and sign-in alike.
    func listVerificationCodes(_ scope: AuthScope) throws(AuthError) -> JSON {
        let codes = try store.read { tx in try tx.verificationCodes(scope) }
        return .object(JSONObject([("verificationCodes", .array(codes.map(\.json)))]))
    }
}
