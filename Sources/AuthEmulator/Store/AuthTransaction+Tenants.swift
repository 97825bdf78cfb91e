import HearthCore

extension AuthTransaction {
    // MARK: Tenants

    func tenant(_ project: String, _ tenantID: String) throws -> Tenant? {
        try conn.first("SELECT config FROM auth_tenants WHERE project_id = ? AND tenant_id = ?", [project, tenantID]) { s in
            Tenant(projectID: project, tenantID: tenantID, document: (try? JSON.parse(s.text(0)))?.objectValue ?? JSONObject())
        }
    }

    /// The project's tenants in id order, after `startAfter`, at most `limit`.
    func tenants(_ project: String, after startAfter: String?, limit: Int) throws -> [Tenant] {
        try conn.rows("SELECT tenant_id, config FROM auth_tenants WHERE project_id = ? AND tenant_id > ? ORDER BY tenant_id LIMIT ?",
                      [project, startAfter ?? "", Int64(limit)]) { s in
            Tenant(projectID: project, tenantID: s.text(0), document: (try? JSON.parse(s.text(1)))?.objectValue ?? JSONObject())
        }
    }

    /// Inserts or replaces the tenant.
    func saveTenant(_ t: Tenant) throws {
        var document = t.json.objectValue ?? JSONObject()
        document["name"] = nil
        try conn.run("INSERT OR REPLACE INTO auth_tenants (project_id, tenant_id, config) VALUES (?, ?, ?)",
                     [t.projectID, t.tenantID, JSON.object(document).serialized()])
    }

    /// Deletes the tenant and everything in it: accounts, tokens, codes, pending sign-ins,
    /// provider configurations.
    func deleteTenant(_ project: String, _ tenantID: String) throws {
        try conn.run("DELETE FROM auth_tenants WHERE project_id = ? AND tenant_id = ?", [project, tenantID])
        for table in ["auth_users", "auth_user_providers", "auth_refresh_tokens", "auth_oob_codes", "auth_verification_codes",
                      "auth_mfa_pending", "auth_provider_configs"] {
            try conn.run("DELETE FROM \(table) WHERE project_id = ? AND tenant_id = ?", [project, tenantID])
        }
    }
}
