/// What a commit reports.
public struct CommitResult: Sendable, Equatable {
    /// The server time of the commit (what `serverTimestamp` fields hold, `request.time` in rules).
    public let commitTime: Timestamp?
    /// One result per write: its update time and, for writes with transforms, their results.
    public let writeResults: [WriteResult]
}

/// The outcome of one write in a commit.
public struct WriteResult: Sendable, Equatable, Decodable {
    public let updateTime: Timestamp?
    /// The values the transforms produced (e.g. the server timestamp), in transform order.
    public let transformResults: [FirestoreValue]?
}
