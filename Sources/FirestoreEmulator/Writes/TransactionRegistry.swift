import Foundation
import HearthCore

/// Open transactions: their database, mode, and the version of every document they read.
///
/// Transactions are optimistic: reads take no locks; a commit fails with ABORTED when a
/// document the transaction read has changed since (a different update time, or created or
/// deleted). An idle transaction expires after 270 seconds on the emulator clock, as Firestore's do.
final class TransactionRegistry: @unchecked Sendable {
    struct State {
        let database: DatabaseID
        let readOnly: Bool
        let readTime: Instant?
        /// Path → update time in microseconds when read, or -1 when the document was missing.
        var reads: [ResourcePath: Int64] = [:]
        var lastUsed: Instant
    }

    static let idleLimitSeconds: Int64 = 270

    // Guarded by `lock`.
    private let lock = NSLock()
    private var open: [String: State] = [:]
    private var begun = 0
    private let clock: Clock
    private let ids: IDGenerator

    init(clock: Clock, ids: IDGenerator) {
        self.clock = clock
        self.ids = ids
    }

    /// The message Firestore answers for an unknown, finished or expired transaction.
    static let invalidMessage = "The referenced transaction has expired or is no longer valid."

    /// Opens a transaction; `retrying` (a previous transaction's id) is closed.
    func begin(_ database: DatabaseID, readOnly: Bool, readTime: Instant?, retrying: String? = nil) -> String {
        let id = Data(ids.bytes(24)).base64EncodedString()
        let now = clock.now()
        lock.lock()
        if let retrying { open[retrying] = nil }
        // Abandoned transactions (a client that never commits) would pile up; drop expired ones now and then.
        begun &+= 1
        if begun % 256 == 0 {
            open = open.filter { now.unixMicros - $0.value.lastUsed.unixMicros <= Self.idleLimitSeconds * 1_000_000 }
        }
        open[id] = State(database: database, readOnly: readOnly, readTime: readTime, lastUsed: now)
        lock.unlock()
        return id
    }

    /// The open transaction `id` of `database`, refreshed; throws when unknown or expired.
    func use(_ id: String, database: DatabaseID) throws(FirestoreError) -> State {
        let now = clock.now()
        lock.lock()
        defer { lock.unlock() }
        guard var state = open[id] else { throw .invalidArgument(Self.invalidMessage) }
        if now.unixMicros - state.lastUsed.unixMicros > Self.idleLimitSeconds * 1_000_000 {
            open[id] = nil
            throw .invalidArgument(Self.invalidMessage)
        }
        guard state.database == database else {
            throw .invalidArgument("The transaction belongs to database \(state.database.name), not \(database.name).")
        }
        state.lastUsed = now
        open[id] = state
        return state
    }

    /// Records that the transaction read `path` at `version` (update time, or nil when missing).
    /// The first read of a document is the one a commit checks.
    func recordRead(_ id: String, path: ResourcePath, updateTime: Instant?) {
        lock.lock()
        if open[id] != nil, open[id]?.reads[path] == nil {
            open[id]?.reads[path] = updateTime?.unixMicros ?? -1
        }
        lock.unlock()
    }

    /// Closes a transaction (commit or rollback); returns its state when it was open.
    @discardableResult
    func finish(_ id: String) -> State? {
        lock.lock()
        defer { lock.unlock() }
        return open.removeValue(forKey: id)
    }

    /// Forgets every transaction of `database` (it was cleared), or all.
    func removeAll(database: DatabaseID? = nil) {
        lock.lock()
        if let database {
            open = open.filter { $0.value.database != database }
        } else {
            open.removeAll()
        }
        lock.unlock()
    }
}
