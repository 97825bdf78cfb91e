import HearthCore

/// Seed accounts from the Firebase Auth emulator's own export (`auth_export/accounts.json`,
/// written by `firebase emulators:export` or `--export-on-exit`), for `hearth start --import`.
extension AuthService {
    /// Why an import was refused: the first row the emulator's batchCreate rules reject.
    public struct ImportError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Imports the `users` of a `DownloadAccountResponse` into `projectID`'s accounts, exactly as
    /// `accounts:batchCreate` with `allowOverwrite` does: `fakeHash:salt=…:password=…` hashes keep
    /// their passwords working, providers, claims, MFA and flags are kept.
    /// - Returns: how many accounts were written.
    @discardableResult
    public func importEmulatorAccounts(_ export: JSON, projectID: String, now: Instant) throws -> Int {
        guard let users = export["users"]?.arrayValue else { return 0 }
        guard !users.isEmpty else { return 0 }
        let ctx = OperationContext(projectID: projectID, privileged: true, baseURL: "", now: now)
        let reply: JSON
        do throws(AuthError) {
            reply = try operations.batchCreate(ctx, RequestBody(JSONObject([("users", .array(users)), ("allowOverwrite", .bool(true))])))
        } catch {
            throw ImportError(description: error.message)
        }
        if let first = reply["error"]?.arrayValue?.first {
            throw ImportError(description: "account \(first["index"]?.serialized() ?? "?"): \(first["message"]?.stringValue ?? "refused")")
        }
        return users.count
    }
}
