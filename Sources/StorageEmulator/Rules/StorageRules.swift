import Foundation
import HearthCore
import SecurityRules

/// The storage.rules in force, its coverage, and the file watcher.
///
/// Never open: without rules that compile (as `service firebase.storage`) every Firebase API
/// request is denied. A file that stops compiling leaves the last good rules in force.
final class StorageRules: @unchecked Sendable {
    /// What decides requests.
    enum Active {
        case ruleset(Ruleset, RulesCoverage)
        case broken(String)
    }

    private let lock = NSLock()
    private var active: Active
    private let path: String?
    private var lastStamp: RulesFileStamp?
    private var timer: (any DispatchSourceTimer)?
    private let queue = DispatchQueue(label: "hearth.storage.rules-watch")
    private let logger: Logger

    init(path: String?, source: String?, logger: Logger) {
        self.path = path
        self.logger = logger
        active = .broken("Storage has no rules loaded.")
        if let source { install(source: source, fileName: "storage.rules", initial: true) }
        if path != nil { loadFile(initial: true) }
    }

    deinit { timer?.cancel() }

    /// The rules deciding requests now.
    var current: Active {
        lock.lock()
        defer { lock.unlock() }
        return active
    }

    /// Compiles `source`; when it compiles as storage rules it replaces the rules in force.
    @discardableResult
    func install(source: String, fileName: String, initial: Bool = false) -> [RulesIssue] {
        var (ruleset, issues) = Ruleset.compile(source, fileName: fileName, service: .storage)
        if let r = ruleset, r.service != .storage {
            issues.append(RulesIssue(fileName: fileName, line: 1, column: 1,
                                     description: "Storage rules must declare 'service firebase.storage'.", severity: .error))
            ruleset = nil
        }
        for issue in issues {
            logger.log(issue.severity == .error ? .error : .warning, "storage: rules \(issue.severity.rawValue.lowercased())", [
                ("file", .string(issue.fileName)), ("line", .int(Int64(issue.line))), ("column", .int(Int64(issue.column))),
                ("description", .string(issue.description)),
            ])
        }
        lock.lock()
        defer { lock.unlock() }
        if let ruleset, !issues.contains(where: { $0.severity == .error }) {
            active = .ruleset(ruleset, RulesCoverage())
            logger.info(initial ? "storage: rules loaded" : "storage: rules reloaded", [("file", .string(fileName))])
        } else if initial {
            active = .broken("The storage rules in \(fileName) do not compile: " + issues.map(\.description).joined(separator: "; "))
        }
        return issues
    }

    private func loadFile(initial: Bool) {
        guard let path else { return }
        let stamp = RulesFileStamp.of(path)
        lock.lock()
        lastStamp = stamp
        lock.unlock()
        guard stamp != nil, let data = FileManager.default.contents(atPath: path) else {
            if initial {
                lock.lock()
                active = .broken("The storage rules file \(path) does not exist.")
                lock.unlock()
                logger.warning("storage: rules file not found; requests are denied until it appears", [("path", .string(path))])
            }
            return
        }
        install(source: String(decoding: data, as: UTF8.self), fileName: (path as NSString).lastPathComponent, initial: initial)
    }

    /// Polls the rules file every `interval` seconds and reloads it when it changed.
    func startWatching(interval: Double = 0.5) {
        lock.lock()
        defer { lock.unlock() }
        guard let path, timer == nil else { return }
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
        t.setEventHandler { [weak self] in
            guard let self else { return }
            let stamp = RulesFileStamp.of(path)
            self.lock.lock()
            let changed = stamp != self.lastStamp
            self.lock.unlock()
            if changed { self.loadFile(initial: false) }
        }
        t.resume()
        timer = t
    }

    func stopWatching() {
        lock.lock()
        timer?.cancel()
        timer = nil
        lock.unlock()
    }

    /// The coverage report of the rules in force (nil when none compiled).
    func coverage() -> (Ruleset, RulesCoverage)? {
        if case .ruleset(let r, let c) = current { return (r, c) }
        return nil
    }
}
