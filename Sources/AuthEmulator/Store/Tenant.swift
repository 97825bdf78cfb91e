import Foundation
import HearthCore

/// A tenant: an isolated pool of accounts inside a project with its own sign-in settings, as the
/// Identity Toolkit Admin v2 `Tenant` resource describes it.
///
/// Stored as the resource's JSON members (all but the derived `name`), in canonical order.
struct Tenant: Sendable, Equatable {
    let projectID: String
    let tenantID: String
    /// The resource members, `name` excluded.
    private(set) var document: JSONObject

    /// The members a tenant carries, in the order they are answered. Anything else in a request
    /// is ignored.
    static let members = ["displayName", "allowPasswordSignup", "enableEmailLinkSignin", "disableAuth", "enableAnonymousUser",
                          "mfaConfig", "testPhoneNumbers", "smsRegionConfig", "recaptchaConfig", "passwordPolicyConfig",
                          "emailPrivacyConfig", "inheritance", "monitoring", "client", "autodeleteAnonymousUsers",
                          "mobileLinksConfig"]

    /// The switches every tenant answers, false unless set.
    static let switches = ["allowPasswordSignup", "enableEmailLinkSignin", "disableAuth", "enableAnonymousUser"]

    init(projectID: String, tenantID: String, document: JSONObject) {
        self.projectID = projectID
        self.tenantID = tenantID
        self.document = Self.normalized(document)
    }

    /// `projects/{project}/tenants/{tenant}`.
    var name: String { "projects/\(projectID)/tenants/\(tenantID)" }

    var displayName: String? { document["displayName"]?.stringValue }
    /// Email/password sign-up and sign-in allowed (production's default for a new tenant: no).
    var allowPasswordSignup: Bool { document["allowPasswordSignup"]?.boolValue ?? false }
    /// Email-link sign-in allowed.
    var enableEmailLinkSignin: Bool { document["enableEmailLinkSignin"]?.boolValue ?? false }
    /// Whether the tenant's users may neither sign in nor be managed.
    var disableAuth: Bool { document["disableAuth"]?.boolValue ?? false }
    /// Anonymous sign-up allowed.
    var enableAnonymousUser: Bool { document["enableAnonymousUser"]?.boolValue ?? false }
    /// The tenant's multi-factor settings.
    var mfa: MfaConfig { document["mfaConfig"].map(MfaConfig.init(json:)) ?? .disabled }
    /// Phone numbers whose SMS code is fixed (`+15555550100` → `"123456"`); no message is sent.
    var testPhoneNumbers: [String: String] {
        var out: [String: String] = [:]
        for (phone, code) in document["testPhoneNumbers"]?.objectValue ?? [:] { out[phone] = code.stringValue }
        return out
    }

    /// The resource as the API answers it.
    var json: JSON { FieldMask.resource(name: name, document) }

    /// Replaces the members named in `paths` (dotted, `mfaConfig.state`) by their values in
    /// `update`; a path whose value is absent clears it.
    mutating func apply(_ update: JSONObject, paths: [[String]]) {
        document = Self.normalized(FieldMask.applying(update, paths: paths, to: document, members: Self.members))
    }

    /// Replaces every member by `update`'s (an update without a mask).
    mutating func replace(with update: JSONObject) {
        document = Self.normalized(update)
    }

    /// Known members only, in canonical order, with every switch present and an `mfaConfig`
    /// that has both `state` and `enabledProviders`.
    private static func normalized(_ o: JSONObject) -> JSONObject {
        var out = JSONObject()
        for m in members {
            if switches.contains(m) {
                out[m] = .bool(o[m]?.boolValue ?? false)
            } else if m == "mfaConfig" {
                var mfa = o[m]?.objectValue ?? JSONObject()
                if mfa["state"] == nil || mfa["state"] == .null { mfa["state"] = .string("DISABLED") }
                if mfa["enabledProviders"] == nil || mfa["enabledProviders"] == .null { mfa["enabledProviders"] = .array([]) }
                var ordered = JSONObject([("state", mfa["state"] ?? .null), ("enabledProviders", mfa["enabledProviders"] ?? .array([]))])
                for (k, v) in mfa where k != "state" && k != "enabledProviders" { ordered[k] = v }
                out[m] = .object(ordered)
            } else if let v = o[m], !v.isNull {
                out[m] = v
            }
        }
        return out
    }
}
