import Foundation
import HearthCore
import SecurityRules

/// The rules in force for each project, their coverage, and the rules-file watcher.
///
/// The base rules (from the rules file, else the configured source) apply to every project;
/// `PUT …/projects/{p}:securityRules` installs rules for one project on top, and
/// `PUT …/projects/{p}/databases/{d}:securityRules` for one database of it (production deploys
/// rules per database). A database is judged by its own rules, else its project's, else the base:
/// a named database without rules of its own is not open (fail closed; the official emulator
/// leaves it open). When the file changes, the base is recompiled and replaces the default
/// project's installed rules too, its per-database ones included (the file is that project's
/// rules); a file that does not compile leaves the last good rules in force and logs every issue.
final class RulesManager: @unchecked Sendable {
    /// What decides a project's requests.
    enum Active {
        /// No rules configured: everything is allowed (as the Firebase emulator without rules).
        case open
        case ruleset(Ruleset, RulesCoverage)
        /// Rules were configured but never compiled: everything is denied.
        case broken(String)
    }

    // Mutable state below is guarded by `lock`; the watcher timer runs on `queue`. Taken for every
    // decision (a batchGet of ten takes it ten times) from every server thread: an `NSLock` (a glibc
    // mutex, whose waiters can be overtaken), not an `InlineLock`, whose standard-library `Mutex`
    // waits on a priority-inheritance futex that hands the lock over in turns through the kernel:
    // under 16 connections the REST batchGet fell from 30,000 to 2,900 a second, 47% of the CPU in
    // `_MutexHandle._lockSlow` (docs/benchmarks.md, *Run of 5 December*).
    private let lock = NSLock()
    // The three read by every decision (`inForce`): unchecked, as `lock` keeps their accesses apart
    // and the runtime's exclusivity check cost two `swift_beginAccess` (~0.13k instructions) a get.
    @exclusivity(unchecked) private var base: RulesInForce
    /// Where `base` came from (the UI says which rules judge a database: `provenance`).
    private var baseSource: Source = .none
    /// Installed for a whole project (`PUT …/projects/{p}:securityRules`).
    @exclusivity(unchecked) private var installed: [String: RulesInForce] = [:]
    /// Installed for one database: project → database → rules. Nested, so that a decision hashes
    /// the two ids it has and builds no key; empty (one check) unless a per-database PUT came.
    @exclusivity(unchecked) private var installedByDatabase: [String: [String: RulesInForce]] = [:]
    private var watchedPath: String?
    private var lastStamp: RulesFileStamp?
    private var timer: (any DispatchSourceTimer)?
    private let queue = DispatchQueue(label: "hearth.firestore.rules-watch")
    private let logger: Logger
    private let defaultProject: String

    init(rulesPath: String?, source: String?, defaultProject: String, logger: Logger) {
        self.logger = logger
        self.defaultProject = defaultProject
        base = RulesInForce(.open)
        if let source {
            base = RulesInForce(compileBase(source, fileName: "firestore.rules"))
            baseSource = .configured
        }
        if let rulesPath {
            watchedPath = rulesPath
            loadFile(initial: true)
        }
    }

    deinit { timer?.cancel() }

    /// The rules deciding requests to `database` of `project` (nil: the project's own rules, those
    /// of every database without rules of its own).
    func active(for project: String, database: String?) -> Active {
        inForce(for: project, database: database).active
    }

    /// The same as one object, for decisions (`RulesInForce`: no copy of the enum's two references).
    /// The database's own rules, else the project's, else the base rules.
    func inForce(for project: String, database: String?) -> RulesInForce {
        lock.lock()
        defer { lock.unlock() }
        if let database, !installedByDatabase.isEmpty, let own = installedByDatabase[project]?[database] { return own }
        if let installed = installed[project] { return installed }
        return base
    }

    /// Where the rules judging a database come from, as the UI names them.
    enum Source: String {
        /// Its own (`PUT …/projects/{p}/databases/{d}:securityRules`).
        case database
        /// Its project's (`PUT …/projects/{p}:securityRules`).
        case project
        /// The rules file (`--rules FILE`), watched.
        case file
        /// The source hearth was configured with (the shipped rules).
        case configured
        /// None: every request is allowed.
        case none
    }

    /// The rules judging `database` of `project` and where they come from, read under one lock
    /// hold (so the two agree), for the UI; never on a decision's path.
    func provenance(for project: String, database: String) -> (source: Source, rules: RulesInForce) {
        lock.lock()
        defer { lock.unlock() }
        if let own = installedByDatabase[project]?[database] { return (.database, own) }
        if let installed = installed[project] { return (.project, installed) }
        return (baseSource, base)
    }

    /// The databases of `project` that have rules of their own.
    func databasesWithOwnRules(project: String) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return installedByDatabase[project].map { Array($0.keys) } ?? []
    }

    /// The rules file being watched (`--rules FILE`), if any.
    var rulesFilePath: String? {
        lock.lock()
        defer { lock.unlock() }
        return watchedPath
    }

    /// Compiles `source` and, when it has no errors, installs it for `database` of `project` (nil:
    /// for the project).
    func install(project: String, database: String?, source: String, fileName: String) -> [RulesIssue] {
        let (ruleset, issues) = Ruleset.compile(source, fileName: fileName, service: .firestore)
        if let ruleset, !issues.contains(where: { $0.severity == .error }) {
            let force = RulesInForce(.ruleset(ruleset, RulesCoverage()))
            lock.lock()
            if let database {
                installedByDatabase[project, default: [:]][database] = force
            } else {
                installed[project] = force
            }
            lock.unlock()
            logger.info("firestore: rules installed", [("project", .string(project)), ("database", .string(database ?? "*")),
                                                       ("file", .string(fileName))])
        }
        return issues
    }

    /// Drops every project's and database's installed rules (back to the base rules).
    func resetInstalled() {
        lock.lock()
        installed.removeAll()
        installedByDatabase.removeAll()
        lock.unlock()
    }

    private func compileBase(_ source: String, fileName: String) -> Active {
        let (ruleset, issues) = Ruleset.compile(source, fileName: fileName, service: .firestore)
        logIssues(issues, fileName: fileName)
        if let ruleset, !issues.contains(where: { $0.severity == .error }) { return .ruleset(ruleset, RulesCoverage()) }
        return .broken("The security rules in \(fileName) do not compile: " + issues.map(\.description).joined(separator: "; "))
    }

    private func logIssues(_ issues: [RulesIssue], fileName: String) {
        for issue in issues {
            let level: Logger.Level = issue.severity == .error ? .error : .warning
            logger.log(level, "firestore: rules \(issue.severity.rawValue.lowercased())", [
                ("file", .string(issue.fileName)), ("line", .int(Int64(issue.line))), ("column", .int(Int64(issue.column))),
                ("description", .string(issue.description)),
            ])
        }
    }

    // MARK: Watching

    /// Reads and compiles the rules file; keeps the last good rules when it does not compile.
    private func loadFile(initial: Bool) {
        guard let path = watchedPath else { return }
        let current = RulesFileStamp.of(path)
        lock.lock()
        lastStamp = current
        lock.unlock()
        guard current != nil, let data = FileManager.default.contents(atPath: path) else {
            if initial {
                // Fail closed: a named file that is missing must not mean "no rules". Without a
                // fallback source every request is denied until the file appears.
                lock.lock()
                if base.isOpen {
                    base = RulesInForce(.broken("The security rules file \(path) does not exist."))
                    baseSource = .file
                }
                lock.unlock()
                logger.warning("firestore: rules file not found; requests are denied until it appears", [("path", .string(path))])
            }
            return
        }
        let fileName = (path as NSString).lastPathComponent
        let source = String(decoding: data, as: UTF8.self)
        let (ruleset, issues) = Ruleset.compile(source, fileName: fileName, service: .firestore)
        logIssues(issues, fileName: fileName)
        lock.lock()
        defer { lock.unlock() }
        if let ruleset, !issues.contains(where: { $0.severity == .error }) {
            base = RulesInForce(.ruleset(ruleset, RulesCoverage()))
            baseSource = .file
            installed[defaultProject] = nil
            installedByDatabase[defaultProject] = nil
            logger.info(initial ? "firestore: rules loaded" : "firestore: rules reloaded", [("path", .string(path))])
        } else if initial {
            base = RulesInForce(.broken("The security rules in \(fileName) do not compile: "
                                        + issues.map(\.description).joined(separator: "; ")))
            baseSource = .file
        } else {
            logger.error("firestore: rules file does not compile; keeping the previous rules", [("path", .string(path))])
        }
    }

    /// Polls the rules file's modification time every `interval` seconds and reloads it on change.
    func startWatching(interval: Double = 0.5) {
        lock.lock()
        defer { lock.unlock() }
        guard watchedPath != nil, timer == nil else { return }
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
        t.setEventHandler { [weak self] in self?.poll() }
        t.resume()
        timer = t
    }

    /// Stops the watcher (idempotent).
    func stopWatching() {
        lock.lock()
        let t = timer
        timer = nil
        lock.unlock()
        t?.cancel()
    }

    /// Checks the file once (the timer's body; tests call it directly).
    func poll() {
        guard let path = watchedPath else { return }
        let current = RulesFileStamp.of(path)
        lock.lock()
        let changed = current != lastStamp
        lock.unlock()
        if changed { loadFile(initial: false) }
    }
}
