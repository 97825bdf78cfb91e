import Foundation
import HearthCore
import HearthSQLite

/// One account, as stored and as Identity Toolkit's `UserInfo` message describes it.
///
/// Times follow the API's units: `createdAt`, `lastLoginAt`, `passwordUpdatedAt` in milliseconds,
/// `validSince` in seconds, `lastRefreshAt` kept in microseconds and rendered as RFC 3339.
struct UserRecord: Sendable, Equatable {
    var localId: String
    var email: String?
    var emailVerified: Bool?
    var displayName: String?
    var photoUrl: String?
    var phoneNumber: String?
    var passwordHash: [UInt8]?
    var salt: [UInt8]?
    /// How `passwordHash` was computed (see `PasswordHasher`).
    var passwordScheme: String?
    var passwordUpdatedAt: Int64?
    var validSince: Int64?
    var disabled: Bool = false
    var createdAt: Int64
    var lastLoginAt: Int64?
    var lastRefreshAt: Int64?
    var customAttributes: String?
    /// nil when the account never had a linked identity (the API then omits the field).
    var providers: [ProviderUserInfo]?
    var emailLinkSignin: Bool = false
    var customAuth: Bool = false
    var initialEmail: String?
    var screenName: String?
    /// Bumped by every change that invalidates refresh tokens (password, email, revocation).
    var tokenEpoch: Int64 = 0
    /// Enrolled second factors; nil (or empty) when the account has none.
    var mfaInfo: [MfaEnrollment]?
    /// The tenant the account belongs to, nil for the project's own accounts. Set from the scope
    /// the account is read from or saved in.
    var tenantId: String?

    init(localId: String, createdAt: Int64) {
        self.localId = localId
        self.createdAt = createdAt
    }

    var hasPassword: Bool { passwordHash != nil }

    /// Whether the account has at least one second factor.
    var hasSecondFactors: Bool { !(mfaInfo ?? []).isEmpty }

    // MARK: Storage

    static let columns = """
        local_id, email, email_verified, display_name, photo_url, phone_number, password_hash, salt, password_scheme, \
        password_updated_at, valid_since, disabled, created_at, last_login_at, last_refresh_at, custom_attributes, \
        providers, email_link_signin, custom_auth, initial_email, screen_name, token_epoch, mfa_info, tenant_id
        """

    /// How many names `columns` lists.
    static let columnCount = 24

    /// Reads a row selected with `columns`.
    init(row s: Statement) {
        localId = s.text(0)
        email = s.optionalText(1)
        emailVerified = s.isNull(2) ? nil : s.bool(2)
        displayName = s.optionalText(3)
        photoUrl = s.optionalText(4)
        phoneNumber = s.optionalText(5)
        passwordHash = s.isNull(6) ? nil : s.blob(6)
        salt = s.isNull(7) ? nil : s.blob(7)
        passwordScheme = s.optionalText(8)
        passwordUpdatedAt = s.isNull(9) ? nil : s.int64(9)
        validSince = s.isNull(10) ? nil : s.int64(10)
        disabled = s.bool(11)
        createdAt = s.int64(12)
        lastLoginAt = s.isNull(13) ? nil : s.int64(13)
        lastRefreshAt = s.isNull(14) ? nil : s.int64(14)
        customAttributes = s.optionalText(15)
        if let text = s.optionalText(16), let parsed = try? JSON.parse(text), let items = parsed.arrayValue {
            providers = items.compactMap(ProviderUserInfo.init(json:))
        }
        emailLinkSignin = s.bool(17)
        customAuth = s.bool(18)
        initialEmail = s.optionalText(19)
        screenName = s.optionalText(20)
        tokenEpoch = s.int64(21)
        if let text = s.optionalText(22), let parsed = try? JSON.parse(text), let items = parsed.arrayValue {
            let list = items.compactMap(MfaEnrollment.init(json:))
            mfaInfo = list.isEmpty ? nil : list
        }
        let tenant = s.text(23)
        tenantId = tenant.isEmpty ? nil : tenant
    }

    /// Values for `columns`, in order.
    var rowValues: [any SQLBindable] {
        let providersText: String? = providers.map { JSON.array($0.map(\.json)).serialized() }
        let mfaText: String? = hasSecondFactors ? JSON.array((mfaInfo ?? []).map(\.json)).serialized() : nil
        return [localId, email, emailVerified, displayName, photoUrl, phoneNumber, passwordHash, salt, passwordScheme,
                passwordUpdatedAt, validSince, disabled, createdAt, lastLoginAt, lastRefreshAt, customAttributes,
                providersText, emailLinkSignin, customAuth, initialEmail, screenName, tokenEpoch, mfaText, tenantId ?? ""]
    }

    // MARK: Wire form

    /// How much of the password material a response may show.
    enum PasswordDisclosure {
        /// Admin (bearer) requests: the hash and salt, base64, as `accounts:batchGet` exports them.
        case full
        /// End-user requests: production's redacted placeholder and no salt.
        case redacted
    }

    /// Production's placeholder hash ("REDACTED" in base64).
    static let redactedHash = "UkVEQUNURUQ="

    /// The `UserInfo` JSON.
    func json(disclosure: PasswordDisclosure) -> JSON {
        var o = JSONObject([("localId", .string(localId))])
        if let email { o["email"] = .string(email) }
        if let displayName { o["displayName"] = .string(displayName) }
        if let photoUrl { o["photoUrl"] = .string(photoUrl) }
        if let phoneNumber { o["phoneNumber"] = .string(phoneNumber) }
        if let passwordHash {
            switch disclosure {
            case .full:
                o["passwordHash"] = .string(Data(passwordHash).base64EncodedString())
                if let salt { o["salt"] = .string(Data(salt).base64EncodedString()) }
            case .redacted:
                o["passwordHash"] = .string(Self.redactedHash)
            }
        }
        if let emailVerified { o["emailVerified"] = .bool(emailVerified) }
        if let passwordUpdatedAt { o["passwordUpdatedAt"] = .int(passwordUpdatedAt) }
        if let providers { o["providerUserInfo"] = .array(providers.map(\.json)) }
        if let validSince { o["validSince"] = .string(String(validSince)) }
        if disabled { o["disabled"] = .bool(true) }
        if let lastLoginAt { o["lastLoginAt"] = .string(String(lastLoginAt)) }
        o["createdAt"] = .string(String(createdAt))
        if let customAttributes { o["customAttributes"] = .string(customAttributes) }
        if customAuth { o["customAuth"] = .bool(true) }
        if emailLinkSignin { o["emailLinkSignin"] = .bool(true) }
        if let initialEmail { o["initialEmail"] = .string(initialEmail) }
        if let screenName { o["screenName"] = .string(screenName) }
        if let lastRefreshAt { o["lastRefreshAt"] = .string(Instant(unixMicros: lastRefreshAt).rfc3339(fractionDigits: 3)) }
        if let mfaInfo, !mfaInfo.isEmpty { o["mfaInfo"] = .array(mfaInfo.map(\.json)) }
        if let tenantId { o["tenantId"] = .string(tenantId) }
        return .object(o)
    }

    // MARK: Derived

    /// Re-derives the `password` and `phone` provider entries from the top-level fields, as the
    /// Firebase emulator does after every change.
    mutating func syncBuiltInProviders() {
        var list = providers ?? []
        if let email, hasPassword || emailLinkSignin {
            let entry = ProviderUserInfo(providerId: "password", rawId: email, federatedId: email, email: email,
                                         displayName: displayName, photoUrl: photoUrl)
            upsert(entry, into: &list)
        } else {
            list.removeAll { $0.providerId == "password" }
        }
        if let phoneNumber {
            upsert(ProviderUserInfo(providerId: "phone", rawId: phoneNumber, phoneNumber: phoneNumber), into: &list)
        } else {
            list.removeAll { $0.providerId == "phone" }
        }
        if providers != nil || !list.isEmpty { providers = list }
    }

    /// Adds or replaces the entry for `entry.providerId`.
    mutating func upsertProvider(_ entry: ProviderUserInfo) {
        var list = providers ?? []
        upsert(entry, into: &list)
        providers = list
    }

    /// Removes the entries of the given providers.
    mutating func removeProviders(_ ids: [String]) {
        guard var list = providers else { return }
        list.removeAll { ids.contains($0.providerId) }
        providers = list
    }

    private func upsert(_ entry: ProviderUserInfo, into list: inout [ProviderUserInfo]) {
        if let i = list.firstIndex(where: { $0.providerId == entry.providerId }) {
            list[i] = entry
        } else {
            list.append(entry)
        }
    }

    /// The custom claims object, or an empty one.
    var customClaims: JSONObject {
        guard let customAttributes, let parsed = try? JSON.parse(customAttributes), let o = parsed.objectValue else { return [:] }
        return o
    }
}
