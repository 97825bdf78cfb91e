import Foundation
import HearthCore
import HearthHTTP

/// The route table of the auth port.
enum AuthRoutes {
    static let identityToolkit = "/identitytoolkit.googleapis.com"
    static let secureToken = "/securetoken.googleapis.com"
    static let legacy = "/www.googleapis.com/identitytoolkit/v3/relyingparty"
    static let appCheck = "/firebaseappcheck.googleapis.com"
    /// Where Google publishes the ID-token signing certificates and keys.
    static let x509Path = "/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"
    static let jwksPath = "/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
    /// Where Google publishes the session-cookie certificates.
    static let sessionCookieKeysPath = "/identitytoolkit/v3/relyingparty/publicKeys"

    /// The client operations reachable as `v1/accounts:<name>`.
    static func clientOperations(_ ops: AuthOperations) -> [(String, AuthHTTPService.Operation)] {
        [
            ("signUp", { ctx, body, _, _ throws(AuthError) in try ops.signUp(ctx, body) }),
            ("signInWithPassword", { ctx, body, _, _ throws(AuthError) in try ops.signInWithPassword(ctx, body) }),
            ("signInWithCustomToken", { ctx, body, _, _ throws(AuthError) in try ops.signInWithCustomToken(ctx, body) }),
            ("signInWithIdp", { ctx, body, _, _ throws(AuthError) in try ops.signInWithIdp(ctx, body) }),
            ("signInWithEmailLink", { ctx, body, _, _ throws(AuthError) in try ops.signInWithEmailLink(ctx, body) }),
            ("signInWithPhoneNumber", { ctx, body, _, _ throws(AuthError) in try ops.signInWithPhoneNumber(ctx, body) }),
            ("sendVerificationCode", { ctx, body, _, _ throws(AuthError) in try ops.sendVerificationCode(ctx, body) }),
            ("lookup", { ctx, body, _, _ throws(AuthError) in try ops.lookup(ctx, body) }),
            ("update", { ctx, body, _, _ throws(AuthError) in try ops.update(ctx, body) }),
            ("delete", { ctx, body, _, _ throws(AuthError) in try ops.deleteAccount(ctx, body) }),
            ("sendOobCode", { ctx, body, _, _ throws(AuthError) in try ops.sendOobCode(ctx, body) }),
            ("resetPassword", { ctx, body, _, _ throws(AuthError) in try ops.resetPassword(ctx, body) }),
            ("createAuthUri", { ctx, body, _, _ throws(AuthError) in try ops.createAuthUri(ctx, body) }),
        ]
    }

    /// Legacy v3 relyingparty names and the v1 operations they map to.
    static let legacyNames: [(String, String)] = [
        ("createAuthUri", "createAuthUri"), ("deleteAccount", "delete"), ("emailLinkSignin", "signInWithEmailLink"),
        ("getAccountInfo", "lookup"), ("getOobConfirmationCode", "sendOobCode"), ("resetPassword", "resetPassword"),
        ("sendVerificationCode", "sendVerificationCode"), ("setAccountInfo", "update"), ("signupNewUser", "signUp"),
        ("verifyAssertion", "signInWithIdp"), ("verifyCustomToken", "signInWithCustomToken"),
        ("verifyPassword", "signInWithPassword"), ("verifyPhoneNumber", "signInWithPhoneNumber"),
    ]

    static func register(on s: AuthHTTPService) {
        let ops = s.operations
        let it = identityToolkit
        let client = clientOperations(ops)
        let byName = Dictionary(uniqueKeysWithValues: client)

        // Client API (API key, or admin bearer for privileged variants); `tenantId` in the body
        // (or the presented ID token's tenant) selects a tenant's accounts.
        for (name, op) in client { s.api("POST", "\(it)/v1/accounts:\(name)", tenancy: .accounts, op) }
        s.api("GET", "\(it)/v1/projects") { _, _, _, _ throws(AuthError) in ops.getProjects() }
        s.api("GET", "\(it)/v1/recaptchaParams") { _, _, _, _ throws(AuthError) in ops.recaptchaParams() }

        // Multi-factor enrollment and sign-in (v2, API key).
        let mfa: [(String, AuthHTTPService.Operation)] = [
            ("mfaEnrollment:start", { ctx, body, _, _ throws(AuthError) in try ops.mfaEnrollmentStart(ctx, body) }),
            ("mfaEnrollment:finalize", { ctx, body, _, _ throws(AuthError) in try ops.mfaEnrollmentFinalize(ctx, body) }),
            ("mfaEnrollment:withdraw", { ctx, body, _, _ throws(AuthError) in try ops.mfaEnrollmentWithdraw(ctx, body) }),
            ("mfaSignIn:start", { ctx, body, _, _ throws(AuthError) in try ops.mfaSignInStart(ctx, body) }),
            ("mfaSignIn:finalize", { ctx, body, _, _ throws(AuthError) in try ops.mfaSignInFinalize(ctx, body) }),
        ]
        for (name, op) in mfa { s.api("POST", "\(it)/v2/accounts/\(name)", tenancy: .accounts, op) }

        // Admin API (project in the path), for the project's own accounts and, under
        // `tenants/{tenant}`, for a tenant's.
        let admin: [(String, AuthHTTPService.Operation)] = [
            ("lookup", { ctx, body, _, _ throws(AuthError) in try ops.lookup(ctx, body) }),
            ("update", { ctx, body, _, _ throws(AuthError) in try ops.update(ctx, body) }),
            ("delete", { ctx, body, _, _ throws(AuthError) in try ops.deleteAccount(ctx, body) }),
            ("query", { ctx, body, _, _ throws(AuthError) in try ops.queryAccounts(ctx, body) }),
            ("sendOobCode", { ctx, body, _, _ throws(AuthError) in try ops.sendOobCode(ctx, body) }),
            ("batchCreate", { ctx, body, _, _ throws(AuthError) in try ops.batchCreate(ctx, body) }),
            ("batchDelete", { ctx, body, _, _ throws(AuthError) in try ops.batchDelete(ctx, body) }),
        ]
        for base in ["\(it)/v1/projects/{project}", "\(it)/v1/projects/{project}/tenants/{tenant}"] {
            s.api("POST", "\(base)/accounts", tenancy: .accounts) { ctx, body, _, _ throws(AuthError) in try ops.signUp(ctx, body) }
            for (name, op) in admin { s.api("POST", "\(base)/accounts:\(name)", tenancy: .accounts, op) }
            s.api("GET", "\(base)/accounts:batchGet", tenancy: .accounts) { ctx, _, req, _ throws(AuthError) in try ops.batchGet(ctx, req) }
        }
        for last in ["{project}", "{project}/tenants/{tenant}"] {
            s.api("POST", "\(it)/v1/projects/\(last):createSessionCookie", tenancy: .accounts) { ctx, body, _, _ throws(AuthError) in
                try ops.createSessionCookie(ctx, body)
            }
        }
        s.api("POST", "\(it)/v1/projects/{project}:queryAccounts", tenancy: .accounts) { ctx, body, _, _ throws(AuthError) in
            try ops.queryAccounts(ctx, body)
        }

        // Admin v2: project configuration and tenants, at `v2/` (what the Admin SDKs call) and at
        // `admin/v2/` (where the Identity Platform reference documents them).
        for v2 in ["\(it)/v2", "\(it)/admin/v2"] {
            s.api("GET", "\(v2)/projects/{project}/config") { ctx, _, _, _ throws(AuthError) in try ops.getConfig(ctx) }
            s.api("PATCH", "\(v2)/projects/{project}/config") { ctx, body, req, _ throws(AuthError) in
                try ops.updateConfig(ctx, body, updateMask: req.query("updateMask"))
            }
            s.api("POST", "\(v2)/projects/{project}/tenants") { ctx, body, _, _ throws(AuthError) in try ops.createTenant(ctx, body) }
            s.api("GET", "\(v2)/projects/{project}/tenants") { ctx, _, req, _ throws(AuthError) in try ops.listTenants(ctx, req) }
            s.api("GET", "\(v2)/projects/{project}/tenants/{tenant}") { ctx, _, _, params throws(AuthError) in
                try ops.getTenant(ctx, params["tenant"] ?? "")
            }
            s.api("PATCH", "\(v2)/projects/{project}/tenants/{tenant}") { ctx, body, req, params throws(AuthError) in
                try ops.updateTenant(ctx, params["tenant"] ?? "", body, updateMask: req.query("updateMask"))
            }
            s.api("DELETE", "\(v2)/projects/{project}/tenants/{tenant}") { ctx, _, _, params throws(AuthError) in
                try ops.deleteTenant(ctx, params["tenant"] ?? "")
            }
            // OIDC and SAML provider configurations, the project's and a tenant's.
            for parent in ["\(v2)/projects/{project}", "\(v2)/projects/{project}/tenants/{tenant}"] {
                for kind in ProviderConfig.Kind.allCases {
                    let collection = "\(parent)/\(kind.collection)"
                    s.api("POST", collection) { ctx, body, req, params throws(AuthError) in
                        try ops.createProviderConfig(kind, ctx, tenant: params["tenant"], body, req)
                    }
                    s.api("GET", collection) { ctx, _, req, params throws(AuthError) in
                        try ops.listProviderConfigs(kind, ctx, tenant: params["tenant"], req)
                    }
                    s.api("GET", "\(collection)/{config}") { ctx, _, _, params throws(AuthError) in
                        try ops.getProviderConfig(kind, ctx, tenant: params["tenant"], params["config"] ?? "")
                    }
                    s.api("PATCH", "\(collection)/{config}") { ctx, body, req, params throws(AuthError) in
                        try ops.updateProviderConfig(kind, ctx, tenant: params["tenant"], params["config"] ?? "", body,
                                                     updateMask: req.query("updateMask"))
                    }
                    s.api("DELETE", "\(collection)/{config}") { ctx, _, _, params throws(AuthError) in
                        try ops.deleteProviderConfig(kind, ctx, tenant: params["tenant"], params["config"] ?? "")
                    }
                }
            }
            s.api(nil, "\(v2)/projects/{project}/tenants/{tenant}/{resource}/{rest...}") { _, _, _, params throws(AuthError) in
                throw .notImplemented("Tenant \(params["resource"] ?? "") are not implemented in Hearth.")
            }
        }
        for name in ["signInWithGameCenter", "issueSamlResponse", "revokeToken"] {
            s.api("POST", "\(it)/v1/accounts:\(name)") { _, _, _, _ throws(AuthError) in
                throw .notImplemented("\(name) is not implemented in Hearth.")
            }
        }

        // securetoken (form or JSON, snake_case or camelCase).
        s.api("POST", "\(secureToken)/v1/token", formBody: true) { ctx, body, _, _ throws(AuthError) in try ops.grantToken(ctx, body) }

        // Published keys, with Google's caching headers (registered before the legacy paths,
        // which share the `/www.googleapis.com` prefix).
        for prefix in ["", "/www.googleapis.com"] {
            s.router.get(prefix + x509Path) { req, _ in AuthHTTPService.keysResponse(req, ops) { () throws(AuthError) in try AuthHTTPService.certificates(ops) } }
            s.router.get(prefix + sessionCookieKeysPath) { req, _ in
                AuthHTTPService.keysResponse(req, ops) { () throws(AuthError) in try AuthHTTPService.certificates(ops) }
            }
            s.router.get(prefix + jwksPath) { req, _ in AuthHTTPService.keysResponse(req, ops) { () throws(AuthError) in try AuthHTTPService.jwks(ops) } }
        }

        // Legacy v3 relyingparty paths.
        for (old, new) in legacyNames {
            if let op = byName[new] { s.api("POST", "\(legacy)/\(old)", tenancy: .accounts, op) }
        }
        s.api("POST", "\(legacy)/signOutUser") { _, _, _, _ throws(AuthError) in
            throw .notImplemented("signOutUser is not implemented in the Auth Emulator.")
        }
        s.api("POST", "\(legacy)/getProjectConfig") { _, _, _, _ throws(AuthError) in ops.getProjects() }
        s.api("GET", "\(legacy)/getProjectConfig") { _, _, _, _ throws(AuthError) in ops.getProjects() }
        s.api("GET", "\(legacy)/getRecaptchaParam") { _, _, _, _ throws(AuthError) in ops.recaptchaParams() }
        s.api("POST", "\(legacy)/downloadAccount") { ctx, body, req, _ throws(AuthError) in
            guard ctx.privileged, body.has("targetProjectId") else { throw .insufficientPermission }
            var query = "maxResults=\(try body.int64("maxResults") ?? 20)"
            if let token = try body.nonEmptyString("nextPageToken") { query += "&nextPageToken=\(AuthOperations.formEscape(token))" }
            let inner = Request(method: "GET", rawPath: req.rawPath, rawQuery: query, headers: req.headers)
            return try ops.batchGet(ctx, inner)
        }
        s.api("POST", "\(legacy)/uploadAccount") { ctx, body, _, _ throws(AuthError) in
            guard ctx.privileged, body.has("targetProjectId") else { throw .insufficientPermission }
            return try ops.batchCreate(ctx, body)
        }

        // App Check debug-token exchange and its keys.
        for prefix in ["", appCheck] {
            s.api("POST", "\(prefix)/v1/projects/{appProject}/apps/{app}:exchangeDebugToken") { _, body, _, params throws(AuthError) in
                try ops.exchangeDebugToken(project: params["appProject"] ?? "", app: params["app"] ?? "", body)
            }
            s.api("GET", "\(prefix)/v1/jwks", access: .open) { _, _, _, _ throws(AuthError) in try ops.appCheckJWKS() }
        }

        // Emulator-only endpoints (no credentials), for the project's own accounts and a tenant's.
        for emu in ["/emulator/v1/projects/{project}", "/emulator/v1/projects/{project}/tenants/{tenant}"] {
            s.api("DELETE", "\(emu)/accounts", access: .open, tenancy: .emulator) { ctx, _, _, _ throws(AuthError) in
                try ops.deleteAllAccounts(ctx.scope)
            }
            s.api("GET", "\(emu)/oobCodes", access: .open, tenancy: .emulator) { ctx, _, _, _ throws(AuthError) in
                try ops.listOobCodes(ctx.scope)
            }
            s.api("GET", "\(emu)/verificationCodes", access: .open, tenancy: .emulator) { ctx, _, _, _ throws(AuthError) in
                try ops.listVerificationCodes(ctx.scope)
            }
        }
        let emu = "/emulator/v1/projects/{project}"
        s.api("GET", "\(emu)/config", access: .open) { ctx, _, _, _ throws(AuthError) in try ops.emulatorConfig(ctx.projectID) }
        s.api("PATCH", "\(emu)/config", access: .open) { ctx, body, _, _ throws(AuthError) in
            try ops.updateEmulatorConfig(ctx.projectID, body)
        }
        s.router.get("/emulator/action") { req, _ in ops.emulatorAction(req, baseURL: AuthHTTPService.baseURL(req)) }
        s.api("GET", "/", access: .open) { _, _, _, _ throws(AuthError) in
            .object(JSONObject([("authEmulator", .object(JSONObject([
                ("ready", .bool(true)), ("docs", .string("https://firebase.google.com/docs/emulator-suite")),
                ("apiSpec", .string("/emulator/openapi.json")),
            ])))]))
        }
        s.api("GET", "/emulator/openapi.json", access: .open) { _, _, _, _ throws(AuthError) in openAPI() }
    }

    /// A minimal OpenAPI description of what this port serves.
    static func openAPI() -> JSON {
        var paths = JSONObject()
        func add(_ method: String, _ path: String) {
            var entry = paths[path]?.objectValue ?? JSONObject()
            entry[method.lowercased()] = .object(JSONObject([("operationId", .string(path.split(separator: ":").last.map(String.init) ?? path))]))
            paths[path] = .object(entry)
        }
        for name in ["signUp", "signInWithPassword", "signInWithCustomToken", "signInWithIdp", "signInWithEmailLink", "signInWithPhoneNumber",
                     "sendVerificationCode", "lookup", "update", "delete", "sendOobCode", "resetPassword", "createAuthUri"] {
            add("POST", "\(identityToolkit)/v1/accounts:\(name)")
        }
        for name in ["mfaEnrollment:start", "mfaEnrollment:finalize", "mfaEnrollment:withdraw", "mfaSignIn:start", "mfaSignIn:finalize"] {
            add("POST", "\(identityToolkit)/v2/accounts/\(name)")
        }
        for base in ["\(identityToolkit)/v1/projects/{targetProjectId}", "\(identityToolkit)/v1/projects/{targetProjectId}/tenants/{tenantId}"] {
            add("POST", "\(base)/accounts")
            for name in ["lookup", "update", "delete", "query", "sendOobCode", "batchCreate", "batchDelete"] {
                add("POST", "\(base)/accounts:\(name)")
            }
            add("GET", "\(base)/accounts:batchGet")
            add("POST", "\(base):createSessionCookie")
        }
        add("GET", "\(identityToolkit)/v2/projects/{projectId}/config")
        add("PATCH", "\(identityToolkit)/v2/projects/{projectId}/config")
        add("POST", "\(identityToolkit)/v2/projects/{projectId}/tenants")
        add("GET", "\(identityToolkit)/v2/projects/{projectId}/tenants")
        for method in ["GET", "PATCH", "DELETE"] { add(method, "\(identityToolkit)/v2/projects/{projectId}/tenants/{tenantId}") }
        for parent in ["\(identityToolkit)/v2/projects/{projectId}", "\(identityToolkit)/v2/projects/{projectId}/tenants/{tenantId}"] {
            for kind in ProviderConfig.Kind.allCases {
                add("POST", "\(parent)/\(kind.collection)")
                add("GET", "\(parent)/\(kind.collection)")
                for method in ["GET", "PATCH", "DELETE"] { add(method, "\(parent)/\(kind.collection)/{\(kind.idParameter)}") }
            }
        }
        add("POST", "\(secureToken)/v1/token")
        for emu in ["/emulator/v1/projects/{targetProjectId}", "/emulator/v1/projects/{targetProjectId}/tenants/{tenantId}"] {
            add("DELETE", "\(emu)/accounts")
            add("GET", "\(emu)/oobCodes")
            add("GET", "\(emu)/verificationCodes")
        }
        add("GET", "/emulator/v1/projects/{targetProjectId}/config")
        add("PATCH", "/emulator/v1/projects/{targetProjectId}/config")
        add("POST", "/v1/projects/{project}/apps/{app}:exchangeDebugToken")
        return .object(JSONObject([
            ("openapi", .string("3.0.3")),
            ("info", .object(JSONObject([("title", .string("Hearth Auth emulator")), ("version", .string("v1"))]))),
            ("paths", .object(paths)),
        ]))
    }
}

extension AuthHTTPService {
    /// `kid → PEM certificate` of the ID-token keys (empty in `none` mode).
    static func certificates(_ ops: AuthOperations) throws(AuthError) -> JSON {
        let keys = try ops.keys.keys(.idToken)
        return .object(JSONObject(keys.map { ($0.kid, .string($0.certificatePEM)) }))
    }

    /// The ID-token keys as a JWKS (empty in `none` mode).
    static func jwks(_ ops: AuthOperations) throws(AuthError) -> JSON {
        .object(JSONObject([("keys", .array(try ops.keys.keys(.idToken).map(\.jwk)))]))
    }

    /// A key document with Google's caching headers.
    static func keysResponse(_ req: Request, _ ops: AuthOperations, _ make: () throws(AuthError) -> JSON) -> Response {
        do throws(AuthError) {
            var h = HTTPHeaders()
            h.set("Cache-Control", "public, max-age=\(keysMaxAge), must-revalidate, no-transform")
            h.set("Expires", ops.clock.now().adding(seconds: Double(keysMaxAge)).httpDate)
            return json(try make(), pretty: pretty(req), headers: h)
        } catch {
            return error.response()
        }
    }

    /// How long clients may cache published keys (seconds).
    static let keysMaxAge = 3600
}
