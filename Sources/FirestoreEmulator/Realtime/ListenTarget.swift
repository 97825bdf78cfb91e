import HearthCore

/// One `add_target` of a Listen stream.
struct ListenTarget: Sendable {
    /// What the target watches.
    enum Kind: Sendable {
        /// A structured query (every shape runQuery takes; `limitToLast` arrives as a reversed, limited query).
        case query(Query)
        /// Named documents (the SDKs send one).
        case documents([ResourcePath])
    }

    var database: DatabaseID
    /// 0: the server picks one.
    var id: Int32
    var kind: Kind
    /// The client's last resume token for this target, if it resumes.
    var resumeToken: [UInt8]?
    /// Or the read time it resumes from.
    var readTime: Instant?
    /// How many documents the client holds for the target, when resuming.
    var expectedCount: Int?
}
