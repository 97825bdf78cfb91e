import Foundation

extension RulesChoice {
    /// The storage rules file used without `--storage-rules` when it exists in the working directory.
    static let storageConventionalPath = "rules/storage.rules"

    /// Resolves `--storage-rules` (nil when not given) as `resolve` does for Firestore's rules:
    /// a named file must exist; without one, `rules/storage.rules` here, else the shipped rules.
    /// Storage has no open mode (`open` names a file like any other word).
    static func resolveStorage(_ flag: String?, workingDirectory: String) throws -> RulesChoice {
        guard let flag else {
            let path = (workingDirectory as NSString).appendingPathComponent(storageConventionalPath)
            return FileManager.default.fileExists(atPath: path) ? .file(path) : .shipped
        }
        let named = flag == openKeyword ? "./" + flag : flag
        guard let choice = try? resolve(named, workingDirectory: workingDirectory) else {
            throw StartOptions.UsageError(description: "storage rules file \(flag) does not exist (omit --storage-rules for the shipped rules)")
        }
        return choice
    }

    /// The banner's line about the storage rules in force.
    var storageBanner: String {
        switch self {
        case .file(let path): "\(path) (reloaded when it changes)"
        case .shipped, .open: "shipped rules built into hearth (no --storage-rules and no \(Self.storageConventionalPath) in the working directory)"
        }
    }
}
