// Child processes exist on macOS and Linux only: on iOS, tests talk to a hearth started on the Mac
// through `HearthInstance` instead.
#if os(macOS) || os(Linux)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `hearth` child process on free ports, for XCTest and Swift Testing suites.
///
/// ```swift
/// let hearth = try await HearthTestServer.start()
/// defer { hearth.stop() }
/// let session = try await hearth.instance.auth().signUp(email: "a@example.com", password: "secret1")
/// ```
///
/// The binary comes from `Options.binary`, else `$HEARTH_BIN` (an absolute path to a `hearth`
/// you built, e.g. `.build/release/hearth` of a Hearth checkout), else the nearest
/// `.build/debug/hearth` above the calling source file (when the tests live in Hearth's own package).
///
/// The rules are never silently off: `Options.rules` nil means `rules/firestore.rules` in the current
/// directory or above the calling source file, else the shipped rules built into hearth; a file
/// that does not exist makes `start` throw; only `"open"` allows every request.
public final class HearthTestServer: @unchecked Sendable {
    // `process` is touched only under `lock` (stop may race with deinit).

    /// How to start it.
    public struct Options: Sendable {
        /// Path to the `hearth` executable (default: `$HEARTH_BIN` or `<repo>/.build/debug/hearth`).
        public var binary: String?
        /// `--seed`: reproducible ids (nil: random).
        public var seed: UInt64?
        /// `--in-memory` (default) or a temporary data directory, removed at stop.
        public var inMemory: Bool
        /// `--rules`: a rules file (relative paths are taken from the current directory) or `"open"` (no rules;
        /// every request allowed). nil: `rules/firestore.rules` in the current directory or above the calling
        /// source file, else the shipped rules built into hearth.
        public var rules: String?
        /// `--project`.
        public var project: String?
        /// More flags, e.g. `["--token-signing", "rs256"]` or `["--require-app-check"]`.
        public var arguments: [String]
        /// How long to wait for the ready file.
        public var startTimeout: TimeInterval
        /// `--threads`: HTTP worker threads per listener (a test needs few; suites start many servers).
        public var threads: Int?

        public init(binary: String? = nil, seed: UInt64? = 1, inMemory: Bool = true, rules: String? = nil, project: String? = nil,
                    arguments: [String] = [], startTimeout: TimeInterval = 30, threads: Int? = 2) {
            self.binary = binary
            self.seed = seed
            self.inMemory = inMemory
            self.rules = rules
            self.project = project
            self.arguments = arguments
            self.startTimeout = startTimeout
            self.threads = threads
        }
    }

    /// The running instance: URLs, clients, clock and reset.
    public let instance: HearthInstance
    /// The temporary directory holding the ready file, the log and (without `inMemory`) the data.
    public let directory: String
    private let lock = NSLock()
    private var process: Process?

    private init(instance: HearthInstance, directory: String, process: Process) {
        self.instance = instance
        self.directory = directory
        self.process = process
    }

    deinit { stop() }

    /// Finds the `hearth` binary: `explicit`, `$HEARTH_BIN`, or `.build/debug/hearth` in a directory
    /// above `filePath` (pass `#filePath` from your test file).
    public static func locateBinary(explicit: String? = nil, filePath: String = #filePath) -> String? {
        let fm = FileManager.default
        if let explicit { return fm.isExecutableFile(atPath: explicit) ? explicit : nil }
        if let env = ProcessInfo.processInfo.environment["HEARTH_BIN"], !env.isEmpty {
            return fm.isExecutableFile(atPath: env) ? env : nil
        }
        var dir = (filePath as NSString).deletingLastPathComponent
        while dir.count > 1 {
            let candidate = (dir as NSString).appendingPathComponent(".build/debug/hearth")
            if fm.isExecutableFile(atPath: candidate) { return candidate }
            dir = (dir as NSString).deletingLastPathComponent
        }
        return nil
    }

    /// Starts `hearth start --in-memory --seed N --*-port 0 --ready-file … --quiet` and waits until it is ready.
    /// - Throws: `HearthClientError.invalidArgument` when no binary is found, `.transport` when it does not start.
    public static func start(_ options: Options = Options(), filePath: String = #filePath) async throws -> HearthTestServer {
        guard let binary = locateBinary(explicit: options.binary, filePath: filePath) else {
            throw HearthClientError.invalidArgument("no hearth binary: set HEARTH_BIN or build it (swift build --product hearth)")
        }
        let fm = FileManager.default
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("hearth-test-\(UUID().uuidString)")
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let readyPath = (directory as NSString).appendingPathComponent("ready.json")
        let logPath = (directory as NSString).appendingPathComponent("hearth.log")

        // --exit-with-parent: a test process that crashes (or is killed) takes its server with it.
        var args = ["start", "--ready-file", readyPath, "--quiet", "--exit-with-parent",
                    "--hub-port", "0", "--auth-port", "0", "--firestore-port", "0", "--s3-port", "0", "--api-port", "0", "--ui-port", "0", "--storage-port", "0"]
        if options.inMemory {
            args.append("--in-memory")
        } else {
            args += ["--data-dir", (directory as NSString).appendingPathComponent("data")]
        }
        if let seed = options.seed { args += ["--seed", String(seed)] }
        if let rules = options.rules.map(absoluteRulesPath) ?? defaultRules(filePath: filePath) { args += ["--rules", rules] }
        if let project = options.project { args += ["--project", project] }
        if let threads = options.threads { args += ["--threads", String(threads)] }
        args += options.arguments

        guard fm.createFile(atPath: logPath, contents: nil) else {
            throw HearthClientError.invalidArgument("cannot create \(logPath)")
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = args
        // Its own directory, so a firebase.json where the tests run does not change its ports.
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw HearthClientError.transport("cannot run \(binary): \(error)")
        }
        try? log.close()

        let deadline = Date().addingTimeInterval(options.startTimeout)
        // The file is looked at once more after the deadline: on a busy machine this task can be
        // starved of its cooperative thread for longer than the timeout (other tests blocking theirs),
        // and a server that became ready meanwhile must not be reported as "not ready".
        var lastLook = false
        while !lastLook {
            lastLook = Date() >= deadline
            if let data = fm.contents(atPath: readyPath), !data.isEmpty {
                let instance = try HearthInstance(readyJSON: data)
                return HearthTestServer(instance: instance, directory: directory, process: process)
            }
            if lastLook { break }
            if !process.isRunning {
                process.waitUntilExit()  // frees the Process (see `end`)
                let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                try? fm.removeItem(atPath: directory)
                throw HearthClientError.transport("hearth exited with status \(process.terminationStatus) before it was ready:\n\(output)")
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        end(process)
        throw HearthClientError.transport("hearth was not ready after \(options.startTimeout) s (log in \(logPath))")
    }

    /// hearth runs in its own temporary directory: a relative rules path is resolved here, where the
    /// caller meant it; `open` passes through.
    static func absoluteRulesPath(_ rules: String) -> String {
        if rules == "open" || rules.hasPrefix("/") { return rules }
        return (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(rules)
    }

    /// The app's rules: `rules/firestore.rules` in the current directory (as `hearth start` looks),
    /// else the nearest one above the test's source file. nil lets hearth use its shipped rules.
    static func defaultRules(filePath: String) -> String? {
        let fm = FileManager.default
        let here = absoluteRulesPath("rules/firestore.rules")
        if fm.fileExists(atPath: here) { return here }
        var dir = (filePath as NSString).deletingLastPathComponent
        while dir.count > 1 {
            let candidate = (dir as NSString).appendingPathComponent("rules/firestore.rules")
            if fm.fileExists(atPath: candidate) { return candidate }
            dir = (dir as NSString).deletingLastPathComponent
        }
        return nil
    }

    /// What hearth wrote to stdout and stderr so far.
    public var log: String {
        (try? String(contentsOfFile: (directory as NSString).appendingPathComponent("hearth.log"), encoding: .utf8)) ?? ""
    }

    /// Stops the process (SIGTERM, then SIGKILL after 10 s) and removes the temporary directory.
    public func stop() {
        lock.lock()
        let p = process
        process = nil
        lock.unlock()
        guard let p else { return }
        Self.end(p)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// SIGTERM, SIGKILL after 10 s, then `waitUntilExit`, which is what frees the `Process`:
    /// swift-corelibs-foundation's `run()` makes a run-loop source that retains the Process while
    /// the Process holds the source, and only `waitUntilExit` lets go of it. Polling `isRunning`
    /// alone left every stopped server's Process, log handle and arguments behind (LeakSanitizer,
    /// docs/reliability.md).
    private static func end(_ p: Process) {
        if p.isRunning {
            p.terminate()
            let deadline = Date().addingTimeInterval(10)
            while p.isRunning && Date() < deadline { usleep(10_000) }
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        }
        p.waitUntilExit()
    }

    /// The child while it runs; nil once stopped (for the lifetime test).
    var runningProcess: Process? {
        lock.lock()
        defer { lock.unlock() }
        return process
    }

    // Shortcuts to the instance.

    /// `instance.reset()`.
    public func reset() async throws { try await instance.reset() }
    /// `instance.freezeClock(at:)`.
    public func freezeClock(at date: Date) async throws { try await instance.freezeClock(at: date) }
    /// `instance.advanceClock(by:)`.
    public func advanceClock(by seconds: Int) async throws { try await instance.advanceClock(by: seconds) }
    /// `instance.useSystemClock()`.
    public func useSystemClock() async throws { try await instance.useSystemClock() }
}
#endif
