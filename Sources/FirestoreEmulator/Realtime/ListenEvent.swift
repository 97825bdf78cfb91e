import HearthCore

/// One message a Listen stream sends, transport-neutral (the gRPC adapter turns each into a
/// `ListenResponse`). Events reach a stream's sink in batches; a batch that forms a snapshot ends
/// with the global NO_CHANGE (empty `targetIDs`, a read time and a resume token), which is what
/// makes the SDKs raise it.
enum ListenEvent: Sendable, Equatable {
    /// `TargetChange.TargetChangeType`.
    enum TargetChangeKind: Int, Sendable {
        case noChange = 0
        case add = 1
        case remove = 2
        case current = 3
        case reset = 4
    }

    /// `target_change`; `cause` only on a REMOVE that denies.
    case targetChange(TargetChangeKind, targetIDs: [Int32], cause: FirestoreError?, readTime: Instant?, resumeToken: [UInt8]?)
    /// `document_change`: the document entered or changed in `targetIDs`.
    case documentChange(StoredDocument, targetIDs: [Int32])
    /// `document_delete`: the document was deleted (or is missing, for a documents target).
    case documentDelete(ResourcePath, removedTargetIDs: [Int32], readTime: Instant)
    /// `document_remove`: the document still exists but left these targets.
    case documentRemove(ResourcePath, removedTargetIDs: [Int32], readTime: Instant)
    /// `filter`: how many documents the target holds now, and a bloom filter of their names.
    case existenceFilter(targetID: Int32, count: Int, unchangedNames: BloomFilter?)
    /// The stream must end with this status (bad request); nothing follows it.
    case end(FirestoreError)
}
