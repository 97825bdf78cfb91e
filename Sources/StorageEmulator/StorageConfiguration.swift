/// What the Storage emulator is configured with at start.
public struct StorageConfiguration: Sendable {
    /// The project whose ID tokens the Firebase API accepts and whose Firestore the rules read.
    public var projectID: String
    /// Buckets that exist from the start (and again after a reset): the project's default buckets.
    public var defaultBuckets: [String]
    /// The storage.rules file (watched and reloaded on change); nil: `rulesSource` only.
    public var rulesPath: String?
    /// Rules source used when there is no file (the copy shipped in the binary).
    public var rulesSource: String?
    /// JSON request bodies (metadata, resumable session starts) are held in memory up to this
    /// size; uploads of any size stream (media, multipart and resumable alike).
    public var maxBufferedBody: Int

    public init(projectID: String, defaultBuckets: [String]? = nil, rulesPath: String? = nil, rulesSource: String? = nil,
                maxBufferedBody: Int = 64 << 20) {
        self.projectID = projectID
        self.defaultBuckets = defaultBuckets ?? ["\(projectID).appspot.com", "\(projectID).firebasestorage.app"]
        self.rulesPath = rulesPath
        self.rulesSource = rulesSource
        self.maxBufferedBody = maxBufferedBody
    }
}
