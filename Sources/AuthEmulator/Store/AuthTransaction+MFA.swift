import HearthCore

/// A first factor passed by an account with second factors: what `mfaPendingCredential` stands
/// for until `mfaSignIn:finalize` completes the sign-in.
struct PendingSecondFactorSignIn: Sendable, Equatable {
    /// The opaque credential handed to the client.
    var credential: String
    var scope: AuthScope
    var localId: String
    /// The first factor's provider (`password`, `google.com`, …), the token's `sign_in_provider`.
    var provider: String
    /// Unix seconds.
    var createdAt: Int64
}

extension AuthTransaction {
    // MARK: Pending second-factor sign-ins

    func insertPendingSignIn(_ p: PendingSecondFactorSignIn) throws {
        try conn.run("INSERT INTO auth_mfa_pending (credential, project_id, tenant_id, local_id, provider, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                     [p.credential, p.scope.projectID, p.scope.tenantKey, p.localId, p.provider, p.createdAt])
    }

    func pendingSignIn(_ credential: String) throws -> PendingSecondFactorSignIn? {
        try conn.first("SELECT credential, project_id, tenant_id, local_id, provider, created_at FROM auth_mfa_pending WHERE credential = ?",
                       [credential]) { s in
            PendingSecondFactorSignIn(credential: s.text(0), scope: AuthScope(projectID: s.text(1), tenantKey: s.text(2)),
                                      localId: s.text(3), provider: s.text(4), createdAt: s.int64(5))
        }
    }
}
