import Foundation
import HearthCore

/// Seed data in and out: every project's Auth configuration, tenants, provider configurations and
/// accounts, the format `hearth export` writes to `auth/accounts.json` (docs/import-export.md).
///
/// Accounts keep their password hash, salt and the scheme that made them (`pbkdf2-sha256:N`, or
/// an imported algorithm's parameters), so every password keeps signing in after an import.
/// Times are kept in the units they are stored in, so a round trip changes nothing.
extension AuthService {
    /// `{"projects": [{"projectId", "config", "tenants": [...], "providerConfigs": [...], "accounts": [...]}]}`,
    /// projects by id, tenants by id, provider configurations and accounts by tenant then id.
    public func exportAccounts() throws -> JSON {
        do throws(AuthError) {
            return try operations.store.read { tx -> JSON in
                var projects = Set<String>()
                for table in ["auth_users", "auth_tenants", "auth_project_config", "auth_provider_configs"] {
                    for p in try tx.conn.rows("SELECT DISTINCT project_id FROM \(table)", [], { $0.text(0) }) { projects.insert(p) }
                }
                var out: [JSON] = []
                for project in projects.sorted() {
                    var o = JSONObject([("projectId", .string(project))])
                    if try tx.conn.scalarInt("SELECT 1 FROM auth_project_config WHERE project_id = ?", [project]) != nil {
                        o["config"] = .object(try tx.config(project).document)
                    }
                    let tenants = try tx.tenants(project, after: nil, limit: Int(Int32.max))
                    var tenantList: [JSON] = []
                    for t in tenants {
                        var d = JSONObject([("tenantId", .string(t.tenantID))])
                        for (k, v) in t.document { d[k] = v }
                        tenantList.append(.object(d))
                    }
                    o["tenants"] = .array(tenantList)
                    var accounts: [JSON] = []
                    let scopes = [AuthScope(projectID: project, tenantKey: "")] + tenants.map { AuthScope(projectID: project, tenantKey: $0.tenantID) }
                    var providerConfigs: [JSON] = []
                    for scope in scopes {
                        for kind in ProviderConfig.Kind.allCases {
                            for c in try tx.providerConfigs(kind, scope, after: nil, limit: Int(Int32.max)) {
                                var d = JSONObject([("kind", .string(kind.rawValue)), ("providerId", .string(c.providerID))])
                                if let tenant = scope.tenantID { d["tenantId"] = .string(tenant) }
                                for (k, v) in c.document { d[k] = v }
                                providerConfigs.append(.object(d))
                            }
                        }
                    }
                    // Absent when there are none, so exports of projects without any read as before.
                    if !providerConfigs.isEmpty { o["providerConfigs"] = .array(providerConfigs) }
                    for scope in scopes {
                        for user in try tx.users(scope, after: nil, limit: nil) { accounts.append(Self.exportJSON(user)) }
                    }
                    o["accounts"] = .array(accounts)
                    out.append(.object(o))
                }
                return .object(JSONObject([("projects", .array(out))]))
            }
        } catch {
            throw ImportError(description: error.message)
        }
    }

    /// Loads an `exportAccounts` document: configurations and tenants replaced, accounts written
    /// as they were (an existing account with the same `localId` is replaced).
    /// - Returns: how many accounts were written.
    @discardableResult
    public func importAccounts(_ export: JSON) throws -> Int {
        guard let projects = export["projects"]?.arrayValue else {
            throw ImportError(description: "an auth export needs a \"projects\" array")
        }
        var parsed: [(project: String, config: JSONObject?, tenants: [Tenant], providerConfigs: [ProviderConfig],
                      accounts: [(String, UserRecord)])] = []
        for (pi, p) in projects.enumerated() {
            guard let project = p["projectId"]?.stringValue, !project.isEmpty else {
                throw ImportError(description: "projects[\(pi)]: projectId is missing")
            }
            var tenants: [Tenant] = []
            for (ti, t) in (p["tenants"]?.arrayValue ?? []).enumerated() {
                guard var d = t.objectValue, let id = d["tenantId"]?.stringValue, !id.isEmpty else {
                    throw ImportError(description: "\(project) tenants[\(ti)]: tenantId is missing")
                }
                d["tenantId"] = nil
                tenants.append(Tenant(projectID: project, tenantID: id, document: d))
            }
            var providerConfigs: [ProviderConfig] = []
            for (ci, c) in (p["providerConfigs"]?.arrayValue ?? []).enumerated() {
                guard var d = c.objectValue, let kind = d["kind"]?.stringValue.flatMap(ProviderConfig.Kind.init(rawValue:)),
                      let id = d["providerId"]?.stringValue, id.hasPrefix(kind.idPrefix) else {
                    throw ImportError(description: "\(project) providerConfigs[\(ci)]: needs a kind (oidc or saml) and a providerId with its prefix")
                }
                let tenant = d["tenantId"]?.stringValue ?? ""
                for key in ["kind", "providerId", "tenantId"] { d[key] = nil }
                providerConfigs.append(ProviderConfig(kind: kind, scope: AuthScope(projectID: project, tenantKey: tenant), providerID: id, document: d))
            }
            var accounts: [(String, UserRecord)] = []
            for (ai, a) in (p["accounts"]?.arrayValue ?? []).enumerated() {
                do {
                    accounts.append(try Self.userRecord(a))
                } catch {
                    throw ImportError(description: "\(project) accounts[\(ai)]: \(error)")
                }
            }
            parsed.append((project, p["config"]?.objectValue, tenants, providerConfigs, accounts))
        }
        var count = 0
        do throws(AuthError) {
            try operations.store.write { tx in
                for p in parsed {
                    if let config = p.config { try tx.saveConfig(p.project, ProjectConfig(document: config)) }
                    for t in p.tenants { try tx.saveTenant(t) }
                    for c in p.providerConfigs { try tx.saveProviderConfig(c) }
                    for (tenant, user) in p.accounts {
                        let scope = AuthScope(projectID: p.project, tenantKey: tenant)
                        var user = user
                        // Refresh tokens issued before the import (same localId) stop working,
                        // as after any overwrite.
                        if let existing = try tx.user(scope, user.localId) { user.tokenEpoch = existing.tokenEpoch + 1 }
                        try tx.save(scope, user)
                        count += 1
                    }
                }
            }
        } catch {
            throw ImportError(description: error.message)
        }
        return count
    }

    /// Applies a Firebase Auth emulator export's `config.json` (`signIn.allowDuplicateEmails`,
    /// `emailPrivacyConfig.enableImprovedEmailPrivacy`) to `projectID`, as the emulator's import
    /// does through `PATCH /emulator/v1/projects/{p}/config`.
    public func importEmulatorConfig(_ config: JSON, projectID: String) throws {
        guard let o = config.objectValue else { throw ImportError(description: "config.json is not a JSON object") }
        do throws(AuthError) {
            _ = try operations.updateEmulatorConfig(projectID, RequestBody(o))
        } catch {
            throw ImportError(description: error.message)
        }
    }

    // MARK: One account

    /// An account with everything it is stored with; absent fields are omitted.
    static func exportJSON(_ u: UserRecord) -> JSON {
        var o = JSONObject([("localId", .string(u.localId))])
        func put(_ k: String, _ v: String?) { if let v { o[k] = .string(v) } }
        func put(_ k: String, _ v: Int64?) { if let v { o[k] = .string(String(v)) } }
        put("tenantId", u.tenantId)
        put("email", u.email)
        if let v = u.emailVerified { o["emailVerified"] = .bool(v) }
        put("displayName", u.displayName)
        put("photoUrl", u.photoUrl)
        put("phoneNumber", u.phoneNumber)
        put("passwordHash", u.passwordHash.map { Data($0).base64EncodedString() })
        put("salt", u.salt.map { Data($0).base64EncodedString() })
        put("passwordScheme", u.passwordScheme)
        put("passwordUpdatedAt", u.passwordUpdatedAt)
        put("validSince", u.validSince)
        if u.disabled { o["disabled"] = .bool(true) }
        put("createdAt", u.createdAt)
        put("lastLoginAt", u.lastLoginAt)
        put("lastRefreshAtMicros", u.lastRefreshAt)
        put("customAttributes", u.customAttributes)
        if let providers = u.providers { o["providerUserInfo"] = .array(providers.map(\.json)) }
        if u.emailLinkSignin { o["emailLinkSignin"] = .bool(true) }
        if u.customAuth { o["customAuth"] = .bool(true) }
        put("initialEmail", u.initialEmail)
        put("screenName", u.screenName)
        if let mfa = u.mfaInfo, !mfa.isEmpty {
            o["mfaInfo"] = .array(mfa.map { m in
                var j = m.json.objectValue ?? JSONObject()
                // Microseconds, so the round trip is exact (the API form stops at milliseconds).
                j["enrolledAtMicros"] = .string(String(m.enrolledAt))
                return .object(j)
            })
        }
        return .object(o)
    }

    /// Why one exported account does not load.
    struct AccountFormatError: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads `exportJSON` back: the tenant key (`""` for the project's own accounts) and the record.
    static func userRecord(_ j: JSON) throws -> (String, UserRecord) {
        guard let localId = j["localId"]?.stringValue, !localId.isEmpty else { throw AccountFormatError(description: "localId is missing") }
        func int(_ k: String) throws -> Int64? {
            guard let v = j[k] else { return nil }
            if let i = v.intValue { return i }
            if let s = v.stringValue, let i = Int64(s) { return i }
            throw AccountFormatError(description: "\(k) must be an integer (as a string)")
        }
        func bytes(_ k: String) throws -> [UInt8]? {
            guard let v = j[k] else { return nil }
            guard let s = v.stringValue, let d = AuthOperations.decodeBase64(s) else {
                throw AccountFormatError(description: "\(k) must be base64")
            }
            return d
        }
        guard let createdAt = try int("createdAt") else { throw AccountFormatError(description: "createdAt is missing") }
        var u = UserRecord(localId: localId, createdAt: createdAt)
        u.email = j["email"]?.stringValue
        u.emailVerified = j["emailVerified"]?.boolValue
        u.displayName = j["displayName"]?.stringValue
        u.photoUrl = j["photoUrl"]?.stringValue
        u.phoneNumber = j["phoneNumber"]?.stringValue
        u.passwordHash = try bytes("passwordHash")
        u.salt = try bytes("salt")
        u.passwordScheme = j["passwordScheme"]?.stringValue
        if u.passwordHash != nil, u.passwordScheme == nil {
            throw AccountFormatError(description: "passwordHash without passwordScheme")
        }
        u.passwordUpdatedAt = try int("passwordUpdatedAt")
        u.validSince = try int("validSince")
        u.disabled = j["disabled"]?.boolValue ?? false
        u.lastLoginAt = try int("lastLoginAt")
        u.lastRefreshAt = try int("lastRefreshAtMicros")
        if let claims = j["customAttributes"]?.stringValue {
            guard (try? JSON.parse(Data(claims.utf8)))?.objectValue != nil else {
                throw AccountFormatError(description: "customAttributes must be a serialized JSON object")
            }
            u.customAttributes = claims
        }
        if let items = j["providerUserInfo"]?.arrayValue {
            u.providers = try items.map { item in
                guard let p = ProviderUserInfo(json: item) else { throw AccountFormatError(description: "a providerUserInfo entry needs providerId and rawId") }
                return p
            }
        }
        u.emailLinkSignin = j["emailLinkSignin"]?.boolValue ?? false
        u.customAuth = j["customAuth"]?.boolValue ?? false
        u.initialEmail = j["initialEmail"]?.stringValue
        u.screenName = j["screenName"]?.stringValue
        if let items = j["mfaInfo"]?.arrayValue, !items.isEmpty {
            u.mfaInfo = try items.map { item in
                guard var m = MfaEnrollment(json: item) else { throw AccountFormatError(description: "an mfaInfo entry needs mfaEnrollmentId and phoneInfo") }
                if let micros = item["enrolledAtMicros"]?.stringValue.flatMap({ Int64($0) }) { m.enrolledAt = micros }
                return m
            }
        }
        let tenant = j["tenantId"]?.stringValue ?? ""
        return (tenant, u)
    }
}
