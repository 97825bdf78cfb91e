import HearthCore
import HearthSQLite

/// The Auth emulator's persistent state in the process's one SQLite database.
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
    var projectID: String
    var localId: String
    var provider: String
    var extraClaims: JSONObject
    /// The account's `tokenEpoch` when the token was issued.
    var epoch: Int64
    /// Unix seconds.
    var issuedAt: Int64
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
struct AuthTransaction {
    let conn: Connection

    // MARK: Users

    private static let selectUser = "SELECT \(UserRecord.columns) FROM auth_users"

    func user(_ project: String, _ localId: String) throws -> UserRecord? {
        try conn.first("\(Self.selectUser) WHERE project_id = ? AND local_id = ?", [project, localId], UserRecord.init(row:))
    }

    func userByEmail(_ project: String, _ email: String) throws -> UserRecord? {
        try conn.first("\(Self.selectUser) WHERE project_id = ? AND email = ? ORDER BY created_at, local_id LIMIT 1",
                       [project, email], UserRecord.init(row:))
    }

    func userByPhone(_ project: String, _ phone: String) throws -> UserRecord? {
        try conn.first("\(Self.selectUser) WHERE project_id = ? AND phone_number = ? ORDER BY created_at, local_id LIMIT 1",
                       [project, phone], UserRecord.init(row:))
    }

    func userByInitialEmail(_ project: String, _ email: String) throws -> UserRecord? {
        try conn.first("\(Self.selectUser) WHERE project_id = ? AND initial_email = ? LIMIT 1", [project, email], UserRecord.init(row:))
    }

    func userByProvider(_ project: String, providerId: String, rawId: String) throws -> UserRecord? {
        guard let localId = try conn.first("SELECT local_id FROM auth_user_providers WHERE project_id = ? AND provider_id = ? AND raw_id = ?",
                                           [project, providerId, rawId], { $0.text(0) }) else { return nil }
        return try user(project, localId)
    }

    /// Accounts whose email, or one of whose linked identities' email, is `email`.
    func usersByEmailOrProviderEmail(_ project: String, _ email: String) throws -> [UserRecord] {
        var out: [UserRecord] = []
        if let u = try userByEmail(project, email) { out.append(u) }
        let ids = try conn.rows("SELECT DISTINCT local_id FROM auth_user_providers WHERE project_id = ? AND email = ?", [project, email]) { $0.text(0) }
        for id in ids where !out.contains(where: { $0.localId == id }) {
            if let u = try user(project, id) { out.append(u) }
        }
        return out
    }

    /// Inserts or replaces the account and re-indexes its linked identities.
    func save(_ project: String, _ user: UserRecord) throws {
        let placeholders = Array(repeating: "?", count: 22).joined(separator: ", ")
        try conn.run("INSERT OR REPLACE INTO auth_users (project_id, \(UserRecord.columns)) VALUES (?, \(placeholders))",
                     [project] + user.rowValues)
        try conn.run("DELETE FROM auth_user_providers WHERE project_id = ? AND local_id = ?", [project, user.localId])
        for p in user.providers ?? [] {
            try conn.run("INSERT OR REPLACE INTO auth_user_providers (project_id, provider_id, raw_id, local_id, email) VALUES (?, ?, ?, ?, ?)",
                         [project, p.providerId, p.rawId, user.localId, p.email])
        }
    }

    /// Records a sign-in or refresh without rewriting the whole account (the hot path).
    func touch(_ project: String, _ localId: String, lastLoginAt: Int64?, lastRefreshAt: Int64) throws {
        if let lastLoginAt {
            try conn.run("UPDATE auth_users SET last_login_at = ?, last_refresh_at = ? WHERE project_id = ? AND local_id = ?",
                         [lastLoginAt, lastRefreshAt, project, localId])
        } else {
            try conn.run("UPDATE auth_users SET last_refresh_at = ? WHERE project_id = ? AND local_id = ?",
                         [lastRefreshAt, project, localId])
        }
    }

    /// Deletes an account; its refresh tokens stay so that using one reports USER_NOT_FOUND.
    func deleteUser(_ project: String, _ localId: String) throws {
        try conn.run("DELETE FROM auth_users WHERE project_id = ? AND local_id = ?", [project, localId])
        try conn.run("DELETE FROM auth_user_providers WHERE project_id = ? AND local_id = ?", [project, localId])
    }

    func userCount(_ project: String) throws -> Int {
        Int(try conn.scalarInt("SELECT count(*) FROM auth_users WHERE project_id = ?", [project]) ?? 0)
    }

    /// Accounts ordered by `localId`, after `startAfter`, at most `limit` (nil: all).
    func users(_ project: String, after startAfter: String?, limit: Int?) throws -> [UserRecord] {
        let limitValue = limit.map { Int64($0) } ?? -1
        return try conn.rows("\(Self.selectUser) WHERE project_id = ? AND local_id > ? ORDER BY local_id LIMIT ?",
                             [project, startAfter ?? "", limitValue], UserRecord.init(row:))
    }

    /// Deletes every account of the project and their refresh tokens (oob and SMS codes stay, as
    /// the Firebase emulator keeps them).
    func deleteAllUsers(_ project: String) throws {
        try conn.run("DELETE FROM auth_users WHERE project_id = ?", [project])
        try conn.run("DELETE FROM auth_user_providers WHERE project_id = ?", [project])
        try conn.run("DELETE FROM auth_refresh_tokens WHERE project_id = ?", [project])
    }

    // MARK: Refresh tokens

    func insertRefreshToken(_ r: RefreshTokenRecord) throws {
        let claims: String? = r.extraClaims.isEmpty ? nil : JSON.object(r.extraClaims).serialized()
        try conn.run("INSERT INTO auth_refresh_tokens (token, project_id, local_id, provider, extra_claims, epoch, issued_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     [r.token, r.projectID, r.localId, r.provider, claims, r.epoch, r.issuedAt])
    }

    func refreshToken(_ token: String) throws -> RefreshTokenRecord? {
        try conn.first("SELECT token, project_id, local_id, provider, extra_claims, epoch, issued_at FROM auth_refresh_tokens WHERE token = ?", [token]) { s in
            var claims = JSONObject()
            if let text = s.optionalText(4), let parsed = try? JSON.parse(text), let o = parsed.objectValue { claims = o }
            return RefreshTokenRecord(token: s.text(0), projectID: s.text(1), localId: s.text(2), provider: s.text(3),
                                      extraClaims: claims, epoch: s.int64(5), issuedAt: s.int64(6))
        }
    }

    // MARK: Out-of-band codes

    func insertOob(_ project: String, _ r: OobRecord) throws {
        try conn.run("INSERT INTO auth_oob_codes (oob_code, project_id, email, new_email, request_type, oob_link) VALUES (?, ?, ?, ?, ?, ?)",
                     [r.oobCode, project, r.email, r.newEmail, r.requestType, r.oobLink])
    }

    func oob(_ project: String, _ code: String) throws -> OobRecord? {
        try conn.first("SELECT oob_code, email, new_email, request_type, oob_link FROM auth_oob_codes WHERE project_id = ? AND oob_code = ?",
                       [project, code]) { s in
            OobRecord(oobCode: s.text(0), email: s.text(1), newEmail: s.optionalText(2), requestType: s.text(3), oobLink: s.text(4))
        }
    }

    func deleteOob(_ code: String) throws {
        try conn.run("DELETE FROM auth_oob_codes WHERE oob_code = ?", [code])
    }

    func oobCodes(_ project: String) throws -> [OobRecord] {
        try conn.rows("SELECT oob_code, email, new_email, request_type, oob_link FROM auth_oob_codes WHERE project_id = ? ORDER BY rowid",
                      [project]) { s in
            OobRecord(oobCode: s.text(0), email: s.text(1), newEmail: s.optionalText(2), requestType: s.text(3), oobLink: s.text(4))
        }
    }

    // MARK: SMS verification codes

    func insertVerificationCode(_ project: String, _ r: VerificationCodeRecord) throws {
        try conn.run("INSERT INTO auth_verification_codes (session_info, project_id, phone_number, code) VALUES (?, ?, ?, ?)",
                     [r.sessionInfo, project, r.phoneNumber, r.code])
    }

    func verificationCode(_ project: String, sessionInfo: String) throws -> VerificationCodeRecord? {
        try conn.first("SELECT session_info, phone_number, code FROM auth_verification_codes WHERE project_id = ? AND session_info = ?",
                       [project, sessionInfo]) { s in
            VerificationCodeRecord(sessionInfo: s.text(0), phoneNumber: s.text(1), code: s.text(2))
        }
    }

    func deleteVerificationCode(_ sessionInfo: String) throws {
        try conn.run("DELETE FROM auth_verification_codes WHERE session_info = ?", [sessionInfo])
    }

    func verificationCodes(_ project: String) throws -> [VerificationCodeRecord] {
        try conn.rows("SELECT session_info, phone_number, code FROM auth_verification_codes WHERE project_id = ? ORDER BY rowid", [project]) { s in
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

    /// Wipes all accounts, tokens, codes and configuration; signing keys stay, so backends that
    /// cached the published keys keep verifying new tokens.
    func wipe() throws {
        try conn.execute("""
            DELETE FROM auth_users; DELETE FROM auth_user_providers; DELETE FROM auth_refresh_tokens;
            DELETE FROM auth_oob_codes; DELETE FROM auth_verification_codes; DELETE FROM auth_project_config;
            """)
    }
}
