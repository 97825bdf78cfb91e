import Foundation
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

extension AuthService {
    /// Reads the Auth part of a Firebase emulators export directory: the folder its
    /// `firebase-export-metadata.json` names (`auth.path`, default `auth_export`) with
    /// `accounts.json` (imported as `importEmulatorAccounts`) and `config.json` (as
    /// `importEmulatorConfig`), into `projectID`.
    /// - Returns: how many accounts were written, nil when the export has no Auth part.
    public func importFirebaseEmulatorExport(directory: String, projectID: String, now: Instant) throws -> Int? {
        let metadata = FileManager.default.contents(atPath: (directory as NSString).appendingPathComponent("firebase-export-metadata.json"))
            .flatMap { try? JSON.parse($0) }
        let folder = (directory as NSString).appendingPathComponent(metadata?["auth"]?["path"]?.stringValue ?? "auth_export")
        let accountsPath = (folder as NSString).appendingPathComponent("accounts.json")
        let configPath = (folder as NSString).appendingPathComponent("config.json")
        var found = false
        if let data = FileManager.default.contents(atPath: configPath) {
            found = true
            do { try importEmulatorConfig(try JSON.parse(data), projectID: projectID) } catch {
                throw ImportError(description: "\(configPath): \(error)")
            }
        }
        var count = 0
        if let data = FileManager.default.contents(atPath: accountsPath) {
            found = true
            do { count = try importEmulatorAccounts(try JSON.parse(data), projectID: projectID, now: now) } catch {
                throw ImportError(description: "\(accountsPath): \(error)")
            }
        }
        return found ? count : nil
    }
}
