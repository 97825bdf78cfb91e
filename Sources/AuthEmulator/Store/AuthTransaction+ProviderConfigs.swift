import HearthCore

extension AuthTransaction {
    // MARK: OIDC and SAML provider configurations

    func providerConfig(_ kind: ProviderConfig.Kind, _ scope: AuthScope, _ providerID: String) throws -> ProviderConfig? {
        try conn.first("SELECT config FROM auth_provider_configs WHERE project_id = ? AND tenant_id = ? AND kind = ? AND provider_id = ?",
                       [scope.projectID, scope.tenantKey, kind.rawValue, providerID]) { s in
            ProviderConfig(kind: kind, scope: scope, providerID: providerID,
                           document: (try? JSON.parse(s.text(0)))?.objectValue ?? JSONObject())
        }
    }

    /// The scope's configurations of `kind` in id order, after `startAfter`, at most `limit`.
    func providerConfigs(_ kind: ProviderConfig.Kind, _ scope: AuthScope, after startAfter: String?, limit: Int) throws -> [ProviderConfig] {
        try conn.rows("""
            SELECT provider_id, config FROM auth_provider_configs
            WHERE project_id = ? AND tenant_id = ? AND kind = ? AND provider_id > ? ORDER BY provider_id LIMIT ?
            """, [scope.projectID, scope.tenantKey, kind.rawValue, startAfter ?? "", Int64(limit)]) { s in
            ProviderConfig(kind: kind, scope: scope, providerID: s.text(0), document: (try? JSON.parse(s.text(1)))?.objectValue ?? JSONObject())
        }
    }

    /// Inserts or replaces the configuration.
    func saveProviderConfig(_ c: ProviderConfig) throws {
        try conn.run("INSERT OR REPLACE INTO auth_provider_configs (project_id, tenant_id, kind, provider_id, config) VALUES (?, ?, ?, ?, ?)",
                     [c.scope.projectID, c.scope.tenantKey, c.kind.rawValue, c.providerID, JSON.object(c.document).serialized()])
    }

    /// Deletes the configuration; false when there was none.
    func deleteProviderConfig(_ kind: ProviderConfig.Kind, _ scope: AuthScope, _ providerID: String) throws -> Bool {
        guard try providerConfig(kind, scope, providerID) != nil else { return false }
        try conn.run("DELETE FROM auth_provider_configs WHERE project_id = ? AND tenant_id = ? AND kind = ? AND provider_id = ?",
                     [scope.projectID, scope.tenantKey, kind.rawValue, providerID])
        return true
    }
}
