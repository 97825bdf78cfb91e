/// Whose accounts an operation reads and writes: a project's own user pool, or one of its
/// tenants' (Identity Platform multi-tenancy). Accounts, refresh tokens, out-of-band and SMS codes
/// and pending second-factor sign-ins all belong to exactly one scope, so the same email or
/// `localId` may exist once in the project and once in every tenant.
struct AuthScope: Sendable, Hashable {
    /// The project.
    let projectID: String
    /// The tenant, or nil for the project's own accounts.
    let tenantID: String?

    init(projectID: String, tenantID: String? = nil) {
        self.projectID = projectID
        self.tenantID = tenantID
    }

    /// The stored `tenant_id` value: the tenant, or "" for the project's own accounts (a real
    /// value rather than NULL so that it can be part of primary keys).
    var tenantKey: String { tenantID ?? "" }

    /// The scope a stored `tenant_id` names.
    init(projectID: String, tenantKey: String) {
        self.init(projectID: projectID, tenantID: tenantKey.isEmpty ? nil : tenantKey)
    }
}
