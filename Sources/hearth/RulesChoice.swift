import Foundation

/// Where `hearth start` takes its Firestore rules from, decided once before anything listens.
///
/// A tool whose job is checking security rules must never end up allowing everything by accident
/// (a typo in `--rules`, started from another directory): a named file that is missing stops the
/// start, no file at all means the shipped rules, and allow-all needs the explicit word `open`.
enum RulesChoice: Equatable, Sendable {
    /// A rules file, watched and reloaded when it changes.
    case file(String)
    /// `ShippedRules`, compiled into the binary (no `--rules` and no `rules/firestore.rules` here).
    case shipped
    /// `--rules open`: no rules; every request is allowed, and every log line says so.
    case open

    /// The value of `--rules` that switches rules off (`./open` names a file called `open`).
    static let openKeyword = "open"
    /// The file used without `--rules` when it exists in the working directory.
    static let conventionalPath = "rules/firestore.rules"

    /// Resolves `--rules` (nil when not given) against `workingDirectory`.
    /// - Throws: `StartOptions.UsageError` when a named rules file does not exist or is a directory.
    static func resolve(_ flag: String?, workingDirectory: String) throws -> RulesChoice {
        let fm = FileManager.default
        func absolute(_ path: String) -> String {
            path.hasPrefix("/") ? path : (workingDirectory as NSString).appendingPathComponent(path)
        }
        guard let flag else {
            let path = absolute(conventionalPath)
            return fm.fileExists(atPath: path) ? .file(path) : .shipped
        }
        if flag == openKeyword { return .open }
        var isDirectory: ObjCBool = false
        guard !flag.isEmpty, fm.fileExists(atPath: absolute(flag), isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw StartOptions.UsageError(description: "rules file \(flag) does not exist (use --rules open to allow every request, or omit --rules for the shipped rules)")
        }
        return .file(absolute(flag))
    }

    /// The watched file, if any.
    var path: String? {
        if case .file(let path) = self { return path }
        return nil
    }

    /// `file`, `shipped` or `open`, as the ready file reports it.
    var mode: String {
        switch self {
        case .file: "file"
        case .shipped: "shipped"
        case .open: "open"
        }
    }

    /// The ready file's `rules` object.
    var readyJSON: [(String, String)] {
        switch self {
        case .file(let path): [("mode", mode), ("path", path)]
        case .shipped, .open: [("mode", mode)]
        }
    }

    /// The line the banner prints about the rules in force.
    var banner: String {
        switch self {
        case .file(let path): "rules \(path) (reloaded when it changes)"
        case .shipped: "shipped rules built into hearth (no --rules and no \(Self.conventionalPath) in the working directory)"
        case .open: "OPEN: security rules are OFF, every Firestore request is allowed (--rules open)"
        }
    }
}
