import Foundation
import HearthCore
import HearthHTTP

extension AuthOperations {
    /// The scope a provider-configuration path names: the project's own, or an existing tenant's
    /// (TENANT_NOT_FOUND otherwise).
    private func providerConfigScope(_ ctx: OperationContext, tenant: String?) throws(AuthError) -> AuthScope {
        guard let tenant else { return AuthScope(projectID: ctx.projectID) }
        guard try self.tenant(project: ctx.projectID, tenant) != nil else { throw .tenantNotFound }
        return AuthScope(projectID: ctx.projectID, tenantID: tenant)
    }

    /// Type-checks the members of a configuration in a request, as the API's proto parser does.
    private static func typeCheck(_ kind: ProviderConfig.Kind, _ body: RequestBody) throws(AuthError) {
        _ = try body.string("displayName")
        _ = try body.bool("enabled")
        switch kind {
        case .oidc:
            for member in ["clientId", "issuer", "clientSecret"] { _ = try body.string(member) }
            if let types = try body.object("responseType") {
                for member in ["idToken", "code", "token"] { _ = try types.bool(member) }
            }
        case .saml:
            if let idp = try body.object("idpConfig") {
                for member in ["idpEntityId", "ssoUrl"] { _ = try idp.string(member) }
                _ = try idp.bool("signRequest")
                for certificate in try idp.objects("idpCertificates") ?? [] { _ = try certificate.string("x509Certificate") }
            }
            if let sp = try body.object("spConfig") {
                for member in ["spEntityId", "callbackUri"] { _ = try sp.string(member) }
            }
        }
    }

    /// What production requires of a whole configuration (on create, and after an update applied):
    /// an OIDC provider needs a client id and an issuer URL, and may ask for an ID token or a code
    /// (with a client secret) but not both; a SAML one needs the IdP's entity id, sign-in URL and
    /// certificates, and the relying party's entity id and callback URL.
    private static func validate(_ config: ProviderConfig) throws(AuthError) {
        let d = RequestBody(config.document)
        switch config.kind {
        case .oidc:
            guard try d.nonEmptyString("clientId") != nil else { throw .missingOAuthClientId }
            guard let issuer = try d.nonEmptyString("issuer") else { throw .missingIssuer }
            guard isURLWithHost(issuer) else { throw .invalidConfig("issuer must be a valid URL.") }
            let types = try d.object("responseType")
            let code = try types?.bool("code") ?? false
            let idToken = try types?.bool("idToken") ?? false
            let secret = try d.nonEmptyString("clientSecret")
            if code && idToken {
                throw .invalidConfig("Only one response type, idToken or code, may be enabled.")
            }
            if code && secret == nil {
                throw .invalidConfig("A client secret is required for the code response type.")
            }
        case .saml:
            guard let idp = try d.object("idpConfig") else { throw .missingConfig }
            guard try idp.nonEmptyString("idpEntityId") != nil else { throw .invalidConfig("idpConfig.idpEntityId is required.") }
            guard let sso = try idp.nonEmptyString("ssoUrl"), isURLWithHost(sso) else {
                throw .invalidConfig("idpConfig.ssoUrl must be a valid URL.")
            }
            let certificates = try idp.objects("idpCertificates") ?? []
            guard !certificates.isEmpty else { throw .invalidConfig("idpConfig.idpCertificates is required.") }
            for certificate in certificates where try certificate.nonEmptyString("x509Certificate") == nil {
                throw .invalidConfig("idpConfig.idpCertificates needs an x509Certificate.")
            }
            guard let sp = try d.object("spConfig") else { throw .missingSamlRelyingPartyConfig }
            guard try sp.nonEmptyString("spEntityId") != nil else { throw .invalidConfig("spConfig.spEntityId is required.") }
            guard let callback = try sp.nonEmptyString("callbackUri"), isURLWithHost(callback) else {
                throw .invalidConfig("spConfig.callbackUri must be a valid URL.")
            }
        }
    }

    private static func isURLWithHost(_ text: String) -> Bool {
        guard isAbsoluteURI(text), let host = URLComponents(string: text)?.host else { return false }
        return !host.isEmpty
    }

    /// A provider id of `kind`: present (MISSING_CONFIG_ID) and with the kind's prefix and
    /// something after it (INVALID_CONFIG_ID).
    private static func checkProviderID(_ id: String?, _ kind: ProviderConfig.Kind) throws(AuthError) -> String {
        guard let id, !id.isEmpty else { throw .missingConfigId }
        guard id.hasPrefix(kind.idPrefix), id.count > kind.idPrefix.count else {
            throw .invalidConfigId("\(kind.collection) ids start with \"\(kind.idPrefix)\".")
        }
        return id
    }

    /// `POST v2/projects/{p}[/tenants/{t}]/{oauthIdpConfigs|inboundSamlConfigs}?{kind}Id=…`.
    func createProviderConfig(_ kind: ProviderConfig.Kind, _ ctx: OperationContext, tenant: String?, _ body: RequestBody,
                              _ request: Request) throws(AuthError) -> JSON {
        let id = try Self.checkProviderID(request.query(kind.idParameter), kind)
        try Self.typeCheck(kind, body)
        let scope = try providerConfigScope(ctx, tenant: tenant)
        let config = ProviderConfig(kind: kind, scope: scope, providerID: id, document: body.object)
        try Self.validate(config)
        try store.write { tx in
            guard try tx.providerConfig(kind, scope, id) == nil else { throw AuthError.configurationExists }
            try tx.saveProviderConfig(config)
        }
        return config.json
    }

    /// `GET …/{collection}/{id}`.
    func getProviderConfig(_ kind: ProviderConfig.Kind, _ ctx: OperationContext, tenant: String?, _ id: String) throws(AuthError) -> JSON {
        let scope = try providerConfigScope(ctx, tenant: tenant)
        guard let config = try store.read({ tx in try tx.providerConfig(kind, scope, id) }) else { throw .configurationNotFound }
        return config.json
    }

    /// `GET …/{collection}?pageSize=&pageToken=`: in id order, 20 a page unless asked (at most
    /// 100, the Admin SDKs' limit); `nextPageToken` (the last id) only when more follow.
    func listProviderConfigs(_ kind: ProviderConfig.Kind, _ ctx: OperationContext, tenant: String?, _ request: Request) throws(AuthError) -> JSON {
        var pageSize = 20
        if let text = request.query("pageSize"), !text.isEmpty {
            guard let n = Int32(text) else {
                throw .invalidArgument("Invalid value at 'page_size' (TYPE_INT32), \"\(text)\"", reason: "invalid")
            }
            if n > 0 { pageSize = min(Int(n), 100) }
        }
        let scope = try providerConfigScope(ctx, tenant: tenant)
        let token = request.query("pageToken").flatMap { $0.isEmpty ? nil : $0 }
        var configs = try store.read { tx in try tx.providerConfigs(kind, scope, after: token, limit: pageSize + 1) }
        var reply = JSONObject()
        let more = configs.count > pageSize
        if more { configs.removeLast(configs.count - pageSize) }
        reply[kind.collection] = .array(configs.map(\.json))
        if more { reply["nextPageToken"] = .string(configs.last?.providerID ?? "") }
        return .object(reply)
    }

    /// `PATCH …/{collection}/{id}?updateMask=…`: with a mask only the listed (dotted) members
    /// change, an absent or null value clearing one; without one the configuration is replaced.
    /// The result must still be a valid configuration.
    func updateProviderConfig(_ kind: ProviderConfig.Kind, _ ctx: OperationContext, tenant: String?, _ id: String,
                              _ body: RequestBody, updateMask: String?) throws(AuthError) -> JSON {
        try Self.typeCheck(kind, body)
        let scope = try providerConfigScope(ctx, tenant: tenant)
        return try store.write { tx -> JSON in
            guard var config = try tx.providerConfig(kind, scope, id) else { throw AuthError.configurationNotFound }
            if let updateMask, !updateMask.isEmpty {
                config.apply(body.object, paths: FieldMask.paths(updateMask))
            } else {
                config.replace(with: body.object)
            }
            try Self.validate(config)
            try tx.saveProviderConfig(config)
            return config.json
        }
    }

    /// `DELETE …/{collection}/{id}` → `{}`.
    func deleteProviderConfig(_ kind: ProviderConfig.Kind, _ ctx: OperationContext, tenant: String?, _ id: String) throws(AuthError) -> JSON {
        let scope = try providerConfigScope(ctx, tenant: tenant)
        guard try store.write({ tx in try tx.deleteProviderConfig(kind, scope, id) }) else { throw .configurationNotFound }
        return .object(JSONObject())
    }
}
