import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP

/// Who is calling and for which project and tenant, as resolved from the path, the body, the
/// presented tokens and the credentials.
struct OperationContext: Sendable {
    /// The project the operation acts on.
    let projectID: String
    /// Whose accounts the operation touches: the project's own, or a tenant's.
    let scope: AuthScope
    /// The tenant's settings when `scope` names one that exists (emulator-only endpoints address
    /// tenants without looking them up).
    let tenant: Tenant?
    /// Whether the caller presented admin credentials (`Bearer owner` or a `ya29.` token).
    let privileged: Bool
    /// The emulator's own base URL as the client reached it (`http://127.0.0.1:9099`), for links.
    let baseURL: String
    /// The emulator time of the request.
    let now: Instant

    /// A context for the project's own accounts, or for `tenant`'s.
    init(projectID: String, tenant: Tenant? = nil, privileged: Bool, baseURL: String, now: Instant) {
        self.projectID = projectID
        self.scope = AuthScope(projectID: projectID, tenantID: tenant?.tenantID)
        self.tenant = tenant
        self.privileged = privileged
        self.baseURL = baseURL
        self.now = now
    }

    /// A context for `scope` whose tenant, if any, need not exist (emulator-only endpoints).
    init(scope: AuthScope, privileged: Bool, baseURL: String, now: Instant) {
        self.projectID = scope.projectID
        self.scope = scope
        self.tenant = nil
        self.privileged = privileged
        self.baseURL = baseURL
        self.now = now
    }

    /// The same request, acting on `tenant`'s accounts.
    func within(_ tenant: Tenant) -> OperationContext {
        OperationContext(projectID: projectID, tenant: tenant, privileged: privileged, baseURL: baseURL, now: now)
    }

    /// The tenant, nil for the project's own accounts.
    var tenantID: String? { scope.tenantID }

    // The sign-in switches: a project always allows these (the emulator fixes them on); a
    // tenant has its own, all off by default.

    /// Email/password sign-up and sign-in.
    var allowsPasswordSignup: Bool { tenant?.allowPasswordSignup ?? true }
    /// Email-link sign-in.
    var allowsEmailLinkSignin: Bool { tenant?.enableEmailLinkSignin ?? true }
    /// Anonymous sign-up.
    var allowsAnonymousUsers: Bool { tenant?.enableAnonymousUser ?? true }
}

/// Tokens decided inside a transaction and minted after it commits (signing stays outside the
/// single writer lock).
struct PendingTokens: Sendable {
    let user: UserRecord
    let provider: String
    let extraClaims: JSONObject
    let refreshToken: String
    let issuedAt: Int64
    var secondFactor: SecondFactor?
}

/// The Identity Toolkit, securetoken and emulator operations, shared by every route that maps to
/// them (v1 paths, legacy v3 paths, project-scoped admin paths).
final class AuthOperations: Sendable {
    let store: AuthStore
    let clock: Clock
    let ids: IDGenerator
    let logger: Logger
    let configuration: AuthConfiguration
    let issuer: IDTokenIssuer
    let verifier: AuthTokenVerifier
    let hasher: PasswordHasher
    let keys: SigningKeyRing

    /// The project number the emulator reports (`project_id` of securetoken, `projects`), an
    /// obviously fake value as in the Firebase emulator.
    static let projectNumber = "12345"
    /// Passwords shorter than this are WEAK_PASSWORD.
    static let minimumPasswordLength = 6

    init(store: AuthStore, clock: Clock, ids: IDGenerator, logger: Logger, configuration: AuthConfiguration,
         keys: SigningKeyRing, verifier: AuthTokenVerifier) {
        self.store = store
        self.clock = clock
        self.ids = ids
        self.logger = logger
        self.configuration = configuration
        self.keys = keys
        self.verifier = verifier
        self.issuer = IDTokenIssuer(signing: configuration.tokenSigning, keys: keys)
        self.hasher = PasswordHasher(iterations: configuration.passwordIterations, ids: ids)
    }

    // MARK: Identifiers

    /// A new 28-character `localId` not used in the scope.
    func newLocalId(_ tx: AuthTransaction, _ scope: AuthScope) throws -> String {
        for _ in 0..<10 {
            let id = ids.alphanumeric(28)
            if try tx.user(scope, id) == nil { return id }
        }
        throw AuthError.internalError("Cannot generate a unique localId after 10 tries.")
    }

    /// `length` characters of the base64url alphabet from the ID stream.
    func randomBase64URL(_ length: Int) -> String {
        let text = Base64URL.encode(ids.bytes((length * 3 + 3) / 4))
        return String(text.prefix(length))
    }

    /// `count` decimal digits from the ID stream.
    func randomDigits(_ count: Int) -> String {
        var out = ""
        while out.count < count {
            for b in ids.bytes(count) where out.count < count && b < 250 { out.append(Character(String(b % 10))) }
        }
        return out
    }

    // MARK: Validation helpers

    /// Firebase's check: something, one `@`, something (the emulator copies the JS SDK's regex).
    static func isValidEmail(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
    }

    /// Emails are compared in lower case.
    static func canonicalEmail(_ email: String) -> String { email.lowercased() }

    /// E.164-ish: the emulator only insists on a leading `+`.
    static func isValidPhoneNumber(_ phone: String) -> Bool { phone.hasPrefix("+") }

    /// An absolute URI with a scheme (`new URL(x)` succeeding in JavaScript).
    static func isAbsoluteURI(_ text: String) -> Bool {
        guard let c = URLComponents(string: text), let scheme = c.scheme, !scheme.isEmpty else { return false }
        return true
    }

    /// WEAK_PASSWORD below six characters (UTF-16 units, as JavaScript counts).
    static func checkPasswordStrength(_ password: String) throws(AuthError) {
        if password.utf16.count < minimumPasswordLength { throw .weakPassword }
    }

    // MARK: ID tokens presented to client endpoints

    /// Resolves the account an ID token names, as Identity Toolkit does for `idToken` fields.
    ///
    /// In `none` mode this is the Firebase emulator's check (no signature, no `exp`: tokens only
    /// die by revocation). In `rs256` mode the signature, `exp` (emulator clock) and audience must
    /// hold, as in production. A token of another tenant (or of the project's own accounts in a
    /// tenant's request) is TENANT_ID_MISMATCH.
    func parseIdToken(_ tx: AuthTransaction, _ ctx: OperationContext, _ token: String) throws -> (user: UserRecord, payload: JSONObject, provider: String) {
        let jwt: JWT
        do {
            jwt = try JWT(decoding: token)
        } catch {
            throw AuthError.invalidIdToken
        }
        let payload = jwt.payload
        // In both modes: a token from the future (clock moved back) is refused as production does.
        if AuthTokenVerifier.isIssuedInFuture(payload, now: ctx.now.unixSeconds) { throw AuthError.invalidIdToken }
        if configuration.tokenSigning == .rs256 {
            do {
                guard try verifier.checkSignature(jwt) else { throw AuthError.invalidIdToken }
            } catch {
                throw AuthError.invalidIdToken
            }
            guard let exp = payload["exp"]?.intValue, ctx.now.unixSeconds < exp else { throw AuthError.invalidIdToken }
            guard payload["aud"]?.stringValue == ctx.projectID else { throw AuthError.invalidIdToken }
        }
        guard let uid = payload["user_id"]?.stringValue ?? payload["sub"]?.stringValue else { throw AuthError.invalidIdToken }
        if payload["firebase"]?["tenant"]?.stringValue != ctx.tenantID { throw AuthError.tenantIdMismatch }
        guard let user = try tx.user(ctx.scope, uid) else { throw AuthError.userNotFound }
        if let validSince = user.validSince, (payload["iat"]?.intValue ?? 0) < validSince { throw AuthError.tokenExpired }
        if user.disabled { throw AuthError.userDisabled }
        let provider = payload["firebase"]?["sign_in_provider"]?.stringValue ?? "custom"
        return (user, payload, provider)
    }

    // MARK: Token issuance

    /// Records the refresh and creates a refresh token; the ID token is minted by `mint` after
    /// the transaction commits.
    func issueTokens(_ tx: AuthTransaction, _ ctx: OperationContext, user: UserRecord, provider: String,
                     extraClaims: JSONObject = [:], secondFactor: SecondFactor? = nil) throws -> PendingTokens {
        var user = user
        user.lastRefreshAt = ctx.now.unixMicros
        user.tenantId = ctx.tenantID
        try tx.touch(ctx.scope, user.localId, lastLoginAt: user.lastLoginAt, lastRefreshAt: ctx.now.unixMicros)
        let refresh = randomBase64URL(200)
        try tx.insertRefreshToken(RefreshTokenRecord(token: refresh, scope: ctx.scope, localId: user.localId, provider: provider,
                                                     extraClaims: extraClaims, epoch: user.tokenEpoch, issuedAt: ctx.now.unixSeconds,
                                                     secondFactor: secondFactor))
        return PendingTokens(user: user, provider: provider, extraClaims: extraClaims, refreshToken: refresh, issuedAt: ctx.now.unixSeconds,
                             secondFactor: secondFactor)
    }

    /// The `idToken`, `refreshToken`, `expiresIn` members of a sign-in response.
    func mint(_ p: PendingTokens, _ ctx: OperationContext) throws(AuthError) -> [(String, JSON)] {
        let idToken = try issuer.mint(user: p.user, projectID: ctx.projectID, provider: p.provider, extraClaims: p.extraClaims,
                                      issuedAt: p.issuedAt, secondFactor: p.secondFactor)
        return [("idToken", .string(idToken)), ("refreshToken", .string(p.refreshToken)),
                ("expiresIn", .string(String(IDTokenIssuer.lifetimeSeconds)))]
    }

    /// Appends the minted token members to `reply`.
    func appendTokens(_ pending: PendingTokens?, to reply: inout JSONObject, _ ctx: OperationContext) throws(AuthError) {
        guard let pending else { return }
        for (k, v) in try mint(pending, ctx) { reply[k] = v }
    }

    // MARK: Out-of-band links

    /// Creates and stores an OOB code with the emulator's action link.
    func createOob(_ tx: AuthTransaction, _ ctx: OperationContext, email: String, newEmail: String? = nil, requestType: String,
                   mode: String, continueUrl: String?) throws -> OobRecord {
        let code = randomBase64URL(54)
        var items = [("mode", mode), ("lang", "en"), ("oobCode", code), ("apiKey", "fake-api-key")]
        if let continueUrl { items.append(("continueUrl", continueUrl)) }
        // The link names the tenant, as production's action links do, so following it acts there.
        if let tenantID = ctx.tenantID { items.append(("tenantId", tenantID)) }
        let link = "\(ctx.baseURL)/emulator/action?" + Self.formEncode(items)
        let record = OobRecord(oobCode: code, email: email, newEmail: newEmail, requestType: requestType, oobLink: link)
        try tx.insertOob(ctx.scope, record)
        logger.info("auth oob code", [("requestType", .string(requestType)), ("email", .string(email)), ("link", .string(link))])
        return record
    }
}

extension AuthOperations {
    /// `application/x-www-form-urlencoded` serialisation, as JavaScript's URLSearchParams writes it.
    static func formEncode(_ items: [(String, String)]) -> String {
        items.map { formEscape($0.0) + "=" + formEscape($0.1) }.joined(separator: "&")
    }

    static func formEscape(_ text: String) -> String {
        var out = ""
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            case UInt8(ascii: " "):
                out.append("+")
            default:
                out += String(format: "%%%02X", b)
            }
        }
        return out
    }
}

extension JSONObject {
    /// Sets `key` when `value` is non-nil.
    mutating func put(_ key: String, _ value: JSON?) {
        if let value { self[key] = value }
    }

    /// Sets a string member when present.
    mutating func put(_ key: String, _ value: String?) {
        if let value { self[key] = .string(value) }
    }

    /// Sets a boolean member when present.
    mutating func put(_ key: String, _ value: Bool?) {
        if let value { self[key] = .bool(value) }
    }
}
