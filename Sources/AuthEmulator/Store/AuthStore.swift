import HearthCore
import HearthSQLite

/// The Auth emulator's persistent state in the SQLite database it shares with S3 and Storage (`hearth.sqlite`).
final class AuthStore: Sendable {
    let database: Database

    init(database: Database) {
        self.database = database
    }

    /// Runs `body` in one write transaction; an `AuthError` thrown inside rolls it back and is
    /// rethrown as is, any storage failure becomes `.internalError`.
    func write<T>(_ body: (AuthTransaction) throws -> T) throws(AuthError) -> T {
        do {
            return try database.write { conn in try body(AuthTransaction(conn: conn)) }
        } catch let e as AuthError {
            throw e
        } catch {
            throw .internalError("Storage failure: \(error)")
        }
    }

    /// Runs `body` on a consistent snapshot.
    func read<T>(_ body: (AuthTransaction) throws -> T) throws(AuthError) -> T {
        do {
            return try database.read { conn in try body(AuthTransaction(conn: conn)) }
        } catch let e as AuthError {
            throw e
        } catch {
            throw .internalError("Storage failure: \(error)")
        }
    }
}

/// A stored refresh token.
struct RefreshTokenRecord: Sendable, Equatable {
    var token: String
    var scope: AuthScope
    var localId: String
    var provider: String
    var extraClaims: JSONObject
    /// The account's `tokenEpoch` when the token was issued.
    var epoch: Int64
    /// Unix seconds.
    var issuedAt: Int64
    /// The second factor the session was completed with, kept across refreshes.
    var secondFactor: SecondFactor?
}

/// A recorded out-of-band code (password reset, email verification, email sign-in link).
struct OobRecord: Sendable, Equatable {
    var oobCode: String
    var email: String
    var newEmail: String?
    var requestType: String
    var oobLink: String

    var json: JSON {
        var o = JSONObject([("email", .string(email))])
        if let newEmail { o["newEmail"] = .string(newEmail) }
        o["requestType"] = .string(requestType)
        o["oobCode"] = .string(oobCode)
        o["oobLink"] = .string(oobLink)
        return .object(o)
    }
}

/// A recorded SMS verification code.
struct VerificationCodeRecord: Sendable, Equatable {
    var sessionInfo: String
    var phoneNumber: String
    var code: String

    var json: JSON {
        .object(JSONObject([("code", .string(code)), ("phoneNumber", .string(phoneNumber)), ("sessionInfo", .string(sessionInfo))]))
    }
}

/// A stored signing key.
struct StoredSigningKey: Sendable, Equatable {
    var kid: String
    var purpose: String
    var privateKeyPEM: String
    var certificatePEM: String
    var createdAt: Int64
}

/// Typed access to the auth tables inside one transaction.
///
/// Account data is addressed by `AuthScope` (project and tenant); configuration and signing keys
/// by project only.
struct AuthTransaction {
    let conn: Connection

    // MARK: Users

    private static let selectUser = "SELECT \(UserRecord.columns) FROM auth_users"

    func user(_ scope: AuthScope, _ localId: String) throws -> UserRecord? {
        try conn.first("\(Self.selectUser) WHERE project_id = ? AND tenant_id = ? AND local_id = ?",
                       [scope.projectID, scope.tenantKey, localId], UserRecord.init(row:))
    }

    func userByEmail(_ scope: AuthScope, _ email: String) throws -> UserRecord? {
        try conn.first("\(Self.selectUser) WHERE project_id = ? AND tenant_id = ? AND email = ? ORDER BY created_at, local_id LIMIT 1",
                       [scope.projectID, scope.tenantKey, email], UserRecord.init(row:))
    }

    func userByPhone(_ scope: AuthScope, _ phone: String) throws -> UserRecord? {
        try conn.first("\(Self.selectUser) WHERE project_id = ? AND tenant_id = ? AND phone_number = ? ORDER BY created_at, local_id LIMIT 1",
                       [scope.projectID, scope.tenantKey, phone], UserRecord.init(row:))
    }

    func userByInitialEmail(_ scope: AuthScope, _ email: String) throws -> UserRecord? {
        try conn.first("\(Self.selectUser) WHERE project_id = ? AND tenant_id = ? AND initial_email = ? LIMIT 1",
                       [scope.projectID, scope.tenantKey, email], UserRecord.init(row:))
    }

    func userByProvider(_ scope: AuthScope, providerId: String, rawId: String) throws -> UserRecord? {
        guard let localId = try conn.first("SELECT local_id FROM auth_user_providers WHERE project_id = ? AND tenant_id = ? AND provider_id = ? AND raw_id = ?",
                                           [scope.projectID, scope.tenantKey, providerId, rawId], { $0.text(0) }) else { return nil }
        return try user(scope, localId)
    }

    /// Accounts whose email, or one of whose linked identities' email, is `email`.
    func usersByEmailOrProviderEmail(_ scope: AuthScope, _ email: String) throws -> [UserRecord] {
        var out: [UserRecord] = []
        if let u = try userByEmail(scope, email) { out.append(u) }
        let ids = try conn.rows("SELECT DISTINCT local_id FROM auth_user_providers WHERE project_id = ? AND tenant_id = ? AND email = ?",
                                [scope.projectID, scope.tenantKey, email]) { $0.text(0) }
        for id in ids where !out.contains(where: { $0.localId == id }) {
            if let u = try user(scope, id) { out.append(u) }
        }
        return out
    }

    /// Inserts or replaces the account (in `scope`, whatever its `tenantId` says) and re-indexes
    /// its linked identities.
    func save(_ scope: AuthScope, _ user: UserRecord) throws {
        var user = user
        user.tenantId = scope.tenantID
        let placeholders = Array(repeating: "?", count: UserRecord.columnCount).joined(separator: ", ")
        try conn.run("INSERT OR REPLACE INTO auth_users (project_id, \(UserRecord.columns)) VALUES (?, \(placeholders))",
                     [scope.projectID] + user.rowValues)
        try conn.run("DELETE FROM auth_user_providers WHERE project_id = ? AND tenant_id = ? AND local_id = ?",
                     [scope.projectID, scope.tenantKey, user.localId])
        for p in user.providers ?? [] {
            try conn.run("INSERT OR REPLACE INTO auth_user_providers (project_id, tenant_id, provider_id, raw_id, local_id, email) VALUES (?, ?, ?, ?, ?, ?)",
                         [scope.projectID, scope.tenantKey, p.providerId, p.rawId, user.localId, p.email])
        }
    }

    /// Records a sign-in or refresh without rewriting the whole account (the hot path).
    func touch(_ scope: AuthScope, _ localId: String, lastLoginAt: Int64?, lastRefreshAt: Int64) throws {
        if let lastLoginAt {
            try conn.run("UPDATE auth_users SET last_login_at = ?, last_refresh_at = ? WHERE project_id = ? AND tenant_id = ? AND local_id = ?",
                         [lastLoginAt, lastRefreshAt, scope.projectID, scope.tenantKey, localId])
        } else {
            try conn.run("UPDATE auth_users SET last_refresh_at = ? WHERE project_id = ? AND tenant_id = ? AND local_id = ?",
                         [lastRefreshAt, scope.projectID, scope.tenantKey, localId])
        }
    }

    /// Deletes an account; its refresh tokens stay so that using one reports USER_NOT_FOUND.
    func deleteUser(_ scope: AuthScope, _ localId: String) throws {
        try conn.run("DELETE FROM auth_users WHERE project_id = ? AND tenant_id = ? AND local_id = ?", [scope.projectID, scope.tenantKey, localId])
        try conn.run("DELETE FROM auth_user_providers WHERE project_id = ? AND tenant_id = ? AND local_id = ?",
                     [scope.projectID, scope.tenantKey, localId])
    }

    func userCount(_ scope: AuthScope) throws -> Int {
        Int(try conn.scalarInt("SELECT count(*) FROM auth_users WHERE project_id = ? AND tenant_id = ?", [scope.projectID, scope.tenantKey]) ?? 0)
    }

    /// Accounts ordered by `localId`, after `startAfter`, at most `limit` (nil: all).
    func users(_ scope: AuthScope, after startAfter: String?, limit: Int?) throws -> [UserRecord] {
        let limitValue = limit.map { Int64($0) } ?? -1
        return try conn.rows("\(Self.selectUser) WHERE project_id = ? AND tenant_id = ? AND local_id > ? ORDER BY local_id LIMIT ?",
                             [scope.projectID, scope.tenantKey, startAfter ?? "", limitValue], UserRecord.init(row:))
    }

    /// Deletes every account of the scope and their refresh tokens and pending second-factor
    /// sign-ins (oob and SMS codes stay, as the Firebase emulator keeps them).
    func deleteAllUsers(_ scope: AuthScope) throws {
        for table in ["auth_users", "auth_user_providers", "auth_refresh_tokens", "auth_mfa_pending"] {
            try conn.run("DELETE FROM \(table) WHERE project_id = ? AND tenant_id = ?", [scope.projectID, scope.tenantKey])
        }
    }

    // MARK: Refresh tokens

    private static let selectRefreshToken = """
        SELECT token, project_id, tenant_id, local_id, provider, extra_claims, epoch, issued_at, second_factor_id, second_factor_provider
        FROM auth_refresh_tokens
        """

    func insertRefreshToken(_ r: RefreshTokenRecord) throws {
        let claims: String? = r.extraClaims.isEmpty ? nil : JSON.object(r.extraClaims).serialized()
        try conn.run("""
            INSERT INTO auth_refresh_tokens (token, project_id, tenant_id, local_id, provider, extra_claims, epoch, issued_at,
                second_factor_id, second_factor_provider) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
                     [r.token, r.scope.projectID, r.scope.tenantKey, r.localId, r.provider, claims, r.epoch, r.issuedAt,
                      r.secondFactor?.identifier, r.secondFactor?.provider])
    }

    func refreshToken(_ token: String) throws -> RefreshTokenRecord? {
        try conn.first("\(Self.selectRefreshToken) WHERE token = ?", [token]) { s in
            var claims = JSONObject()
            if let text = s.optionalText(5), let parsed = try? JSON.parse(text), let o = parsed.objectValue { claims = o }
            var secondFactor: SecondFactor?
            if let id = s.optionalText(8), let provider = s.optionalText(9) { secondFactor = SecondFactor(identifier: id, provider: provider) }
            return RefreshTokenRecord(token: s.text(0), scope: AuthScope(projectID: s.text(1), tenantKey: s.text(2)), localId: s.text(3),
                                      provider: s.text(4), extraClaims: claims, epoch: s.int64(6), issuedAt: s.int64(7),
                                      secondFactor: secondFactor)
        }
    }

    // MARK: Out-of-band codes

    func insertOob(_ scope: AuthScope, _ r: OobRecord) throws {
        try conn.run("INSERT INTO auth_oob_codes (oob_code, project_id, tenant_id, email, new_email, request_type, oob_link) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     [r.oobCode, scope.projectID, scope.tenantKey, r.email, r.newEmail, r.requestType, r.oobLink])
    }

    func oob(_ scope: AuthScope, _ code: String) throws -> OobRecord? {
        try conn.first("SELECT oob_code, email, new_email, request_type, oob_link FROM auth_oob_codes WHERE project_id = ? AND tenant_id = ? AND oob_code = ?",
                       [scope.projectID, scope.tenantKey, code]) { s in
            OobRecord(oobCode: s.text(0), email: s.text(1), newEmail: s.optionalText(2), requestType: s.text(3), oobLink: s.text(4))
        }
    }

    func deleteOob(_ code: String) throws {
        try conn.run("DELETE FROM auth_oob_codes WHERE oob_code = ?", [code])
    }

    func oobCodes(_ scope: AuthScope) throws -> [OobRecord] {
        try conn.rows("SELECT oob_code, email, new_email, request_type, oob_link FROM auth_oob_codes WHERE project_id = ? AND tenant_id = ? ORDER BY rowid",
                      [scope.projectID, scope.tenantKey]) { s in
            OobRecord(oobCode: s.text(0), email: s.text(1), newEmail: s.optionalText(2), requestType: s.text(3), oobLink: s.text(4))
        }
    }

    // MARK: SMS verification codes

    func insertVerificationCode(_ scope: AuthScope, _ r: VerificationCodeRecord) throws {
        try conn.run("INSERT INTO auth_verification_codes (session_info, project_id, tenant_id, phone_number, code) VALUES (?, ?, ?, ?, ?)",
                     [r.sessionInfo, scope.projectID, scope.tenantKey, r.phoneNumber, r.code])
    }

    func verificationCode(_ scope: AuthScope, sessionInfo: String) throws -> VerificationCodeRecord? {
        try conn.first("SELECT session_info, phone_number, code FROM auth_verification_codes WHERE project_id = ? AND tenant_id = ? AND session_info = ?",
                       [scope.projectID, scope.tenantKey, sessionInfo]) { s in
            VerificationCodeRecord(sessionInfo: s.text(0), phoneNumber: s.text(1), code: s.text(2))
        }
    }

    func deleteVerificationCode(_ sessionInfo: String) throws {
        try conn.run("DELETE FROM auth_verification_codes WHERE session_info = ?", [sessionInfo])
    }

    func verificationCodes(_ scope: AuthScope) throws -> [VerificationCodeRecord] {
        try conn.rows("SELECT session_info, phone_number, code FROM auth_verification_codes WHERE project_id = ? AND tenant_id = ? ORDER BY rowid",
                      [scope.projectID, scope.tenantKey]) { s in
            VerificationCodeRecord(sessionInfo: s.text(0), phoneNumber: s.text(1), code: s.text(2))
        }
    }

    // MARK: Configuration

    func config(_ project: String) throws -> ProjectConfig {
        guard let text = try conn.first("SELECT config FROM auth_project_config WHERE project_id = ?", [project], { $0.text(0) }),
              let parsed = try? JSON.parse(text), let o = parsed.objectValue else { return .defaults }
        return ProjectConfig(document: o)
    }

    func saveConfig(_ project: String, _ config: ProjectConfig) throws {
        try conn.run("INSERT OR REPLACE INTO auth_project_config (project_id, config) VALUES (?, ?)",
                     [project, JSON.object(config.document).serialized()])
    }

    // MARK: Signing keys

    func signingKeys(purpose: String) throws -> [StoredSigningKey] {
        try conn.rows("SELECT kid, purpose, private_key_pem, certificate_pem, created_at FROM auth_signing_keys WHERE purpose = ? ORDER BY created_at, kid",
                      [purpose]) { s in
            StoredSigningKey(kid: s.text(0), purpose: s.text(1), privateKeyPEM: s.text(2), certificatePEM: s.text(3), createdAt: s.int64(4))
        }
    }

    func insertSigningKey(_ k: StoredSigningKey) throws {
        try conn.run("INSERT INTO auth_signing_keys (kid, purpose, private_key_pem, certificate_pem, created_at) VALUES (?, ?, ?, ?, ?)",
                     [k.kid, k.purpose, k.privateKeyPEM, k.certificatePEM, k.createdAt])
    }

    // MARK: Reset

    /// Wipes all accounts, tenants, tokens, codes, provider and project configuration; signing keys stay, so
    /// backends that cached the published keys keep verifying new tokens.
    func wipe() throws {
        try conn.execute("""
            DELETE FROM auth_users; DELETE FROM auth_user_providers; DELETE FROM auth_refresh_tokens;
            DELETE FROM auth_oob_codes; DELETE FROM auth_verification_codes; DELETE FROM auth_project_config;
            DELETE FROM auth_tenants; DELETE FROM auth_mfa_pending; DELETE FROM auth_provider_configs;
            """)
    }
}
