import HearthCore

/// A sign-in provider configuration of a project or a tenant: an OIDC provider (the Admin v2
/// `OAuthIdpConfig`) or a SAML one (`InboundSamlConfig`).
///
/// Stored as the resource's JSON members (all but the derived `name`), in the reference's order.
/// Related: https://cloud.google.com/identity-platform/docs/reference/rest/v2/projects.oauthIdpConfigs
/// and …/projects.inboundSamlConfigs
struct ProviderConfig: Sendable, Equatable {
    /// The two resource types, which differ in id prefix, path and members.
    enum Kind: String, Sendable, CaseIterable {
        case oidc
        case saml

        /// The collection in resource paths (`projects/{p}/oauthIdpConfigs/{id}`), which is also
        /// the member listing them in a list response.
        var collection: String {
            switch self {
            case .oidc: "oauthIdpConfigs"
            case .saml: "inboundSamlConfigs"
            }
        }

        /// The query parameter carrying the new id on create.
        var idParameter: String {
            switch self {
            case .oidc: "oauthIdpConfigId"
            case .saml: "inboundSamlConfigId"
            }
        }

        /// Every id of this kind starts so (`oidc.my-idp`, `saml.my-idp`): the prefix is how
        /// `signInWithIdp` and the client SDKs tell the two apart.
        var idPrefix: String { rawValue + "." }

        /// The members the resource carries, in the order they are answered. Anything else in a
        /// request is ignored.
        var members: [String] {
            switch self {
            case .oidc: ["clientId", "issuer", "displayName", "enabled", "clientSecret", "responseType"]
            case .saml: ["idpConfig", "spConfig", "displayName", "enabled"]
            }
        }
    }

    let kind: Kind
    /// The project and tenant it belongs to.
    let scope: AuthScope
    let providerID: String
    /// The resource members, `name` excluded.
    private(set) var document: JSONObject

    init(kind: Kind, scope: AuthScope, providerID: String, document: JSONObject) {
        self.kind = kind
        self.scope = scope
        self.providerID = providerID
        self.document = Self.normalized(document, kind: kind)
    }

    /// `projects/{p}/oauthIdpConfigs/{id}`, or `projects/{p}/tenants/{t}/…` in a tenant.
    var name: String {
        let parent = scope.tenantKey.isEmpty ? "projects/\(scope.projectID)" : "projects/\(scope.projectID)/tenants/\(scope.tenantKey)"
        return "\(parent)/\(kind.collection)/\(providerID)"
    }

    /// The resource as the API answers it.
    var json: JSON { FieldMask.resource(name: name, document) }

    /// Replaces the members named in `paths` (dotted, `responseType.code`) by their values in
    /// `update`; a path whose value is absent or null clears it.
    mutating func apply(_ update: JSONObject, paths: [[String]]) {
        document = Self.normalized(FieldMask.applying(update, paths: paths, to: document, members: kind.members), kind: kind)
    }

    /// Replaces every member by `update`'s (an update without a mask).
    mutating func replace(with update: JSONObject) {
        document = Self.normalized(update, kind: kind)
    }

    /// Known, non-null members only, in canonical order.
    private static func normalized(_ o: JSONObject, kind: Kind) -> JSONObject {
        var out = JSONObject()
        for m in kind.members {
            if let v = o[m], !v.isNull { out[m] = v }
        }
        return out
    }
}
