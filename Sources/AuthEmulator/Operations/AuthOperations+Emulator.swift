import HearthCore

extension AuthOperations {
    /// `DELETE /emulator/v1/projects/{p}/accounts`: every account and refresh token of the project.
    func deleteAllAccounts(_ project: String) throws(AuthError) -> JSON {
        try store.write { tx in try tx.deleteAllUsers(project) }
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

    /// `GET /emulator/v1/projects/{p}/oobCodes`.
    func listOobCodes(_ project: String) throws(AuthError) -> JSON {
        let codes = try store.read { tx in try tx.oobCodes(project) }
        return .object(JSONObject([("oobCodes", .array(codes.map(\.json)))]))
    }

    /// `GET /emulator/v1/projects/{p}/verificationCodes`.
    func listVerificationCodes(_ project: String) throws(AuthError) -> JSON {
        let codes = try store.read { tx in try tx.verificationCodes(project) }
        return .object(JSONObject([("verificationCodes", .array(codes.map(\.json)))]))
    }
}
