/// How the Firestore emulator is set up.
public struct FirestoreConfiguration: Sendable {
    /// The default project (the one the rules file belongs to and server-side writes target).
    public var projectID: String
    /// A rules file to load at start and watch; reloaded when its modification time changes.
    public var rulesPath: String?
    /// Rules source used when there is no rules file (or until it appears). With neither,
    /// every request is allowed, as the Firebase emulator does without rules; a `rulesPath` that
    /// does not exist (and no source) denies every request until the file appears.
    public var rulesSource: String?
    /// Whether to poll `rulesPath` for changes.
    public var watchRules: Bool
    /// Seconds between polls of the rules file.
    public var rulesPollInterval: Double
    /// The host the Firestore listener is reachable at (for URLs the emulator prints).
    public var host: String
    /// The Firestore listener's port.
    public var port: Int

    public init(projectID: String = "demo-hearth", rulesPath: String? = nil, rulesSource: String? = nil,
                watchRules: Bool = true, rulesPollInterval: Double = 0.5, host: String = "127.0.0.1", port: Int = 8080) {
        self.projectID = projectID
        self.rulesPath = rulesPath
        self.rulesSource = rulesSource
        self.watchRules = watchRules
        self.rulesPollInterval = rulesPollInterval
        self.host = host
        self.port = port
    }

    /// `host:port`, the value of `FIRESTORE_EMULATOR_HOST`.
    public var emulatorHost: String { "\(host):\(port)" }
}
