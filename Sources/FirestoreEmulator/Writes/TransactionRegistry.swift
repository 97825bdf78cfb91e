import Foundation
import HearthCore

/// Open transactions: their database, mode, snapshot, and what their reads returned.
///
/// Read-write transactions are optimistic: reads take no locks; a commit fails with ABORTED when
/// a document the transaction read has changed since (a different update time, or created or
/// deleted), or when a query it ran would now return something else (a document that newly
/// matches, no longer matches, or changed: phantoms). Read-only transactions read one snapshot:
/// their `readTime`, or the time of their first read. An idle transaction expires after 270
/// seconds on the emulator clock, as Firestore's do.
final class TransactionRegistry: @unchecked Sendable {
    struct State {
        let database: DatabaseID
        let readOnly: Bool
        /// The snapshot a read-only transaction reads (set at its first read when not given).
        var readTime: Instant?
        /// Path → update time in microseconds when read, or -1 when the document was missing.
        var reads = Reads()
        /// Queries run in the transaction, with what they returned.
        var queries: [RecordedQuery] = []
        var lastUsed: Instant
    }

    /// The first read of each path a transaction read: path → update time in microseconds, or -1
    /// when the document was missing. Most transactions read one document, kept inline; a
    /// dictionary is made from the second path on (one made per transaction for its single read
    /// cost an allocation, two hashes of the path and its release).
    struct Reads: Sequence {
        private var first: (path: ResourcePath, version: Int64)?
        private var more: [ResourcePath: Int64] = [:]

        init() {}

        /// Notes `version` for `path` unless `path` was read before (the first read is the one a commit checks).
        mutating func noteFirst(_ path: ResourcePath, _ version: Int64) {
            guard let first else {
                self.first = (path, version)
                return
            }
            if first.path == path || more[path] != nil { return }
            more[path] = version
        }

        /// The version noted for `path`, if any.
        subscript(path: ResourcePath) -> Int64? {
            if let first, first.path == path { return first.version }
            return more[path]
        }

        var count: Int { first == nil ? 0 : 1 + more.count }

        func makeIterator() -> Iterator { Iterator(first: first, more: more.makeIterator()) }

        /// The first path, then the others in the dictionary's order (a commit checks them all).
        struct Iterator: IteratorProtocol {
            fileprivate var first: (path: ResourcePath, version: Int64)?
            fileprivate var more: Dictionary<ResourcePath, Int64>.Iterator

            mutating func next() -> (ResourcePath, Int64)? {
                if let f = first {
                    first = nil
                    return (f.path, f.version)
                }
                return more.next().map { ($0.key, $0.value) }
            }
        }
    }

    /// A query read in a read-write transaction: the commit runs it again and compares.
    struct RecordedQuery {
        let query: Query
        /// Only documents this many segments deep count (`list` of the documents directly under a
        /// document or the root); nil: all the query returns.
        let depth: Int?
        /// Each returned document with its update time, in order.
        let results: [Version]

        struct Version: Equatable {
            let path: ResourcePath
            let updateTime: Int64
        }

        static func versions(_ documents: [StoredDocument], depth: Int?) -> [Version] {
            documents.compactMap { d in
                if let depth, d.path.segments.count != depth { return nil }
                return Version(path: d.path, updateTime: d.updateTime.unixMicros)
            }
        }
    }

    static let idleLimitSeconds: Int64 = 270

    // Guarded by `lock`.
    private let lock = NSLock()
    private var open: [String: State] = [:]
    /// Recently finished transactions (oldest first, bounded): committing one again is "closed",
    /// rolling one back again succeeds, as Firestore answers; an id never issued is "invalid".
    private var closed: Set<String> = []
    /// `closed` in the order finished, as a ring: once full, `closedNext` is the oldest, which the
    /// next finished id replaces. (An array shifted by `removeFirst` moved all 4,096 ids, 64 KiB,
    /// on every commit once a busy client had finished that many.)
    private var closedOrder: [String] = []
    private var closedNext = 0
    static let closedLimit = 4096
    private var begun = 0
    private let clock: Clock
    private let ids: IDGenerator

    init(clock: Clock, ids: IDGenerator) {
        self.clock = clock
        self.ids = ids
    }

    /// The message Firestore answers for an expired transaction.
    static let invalidMessage = "The referenced transaction has expired or is no longer valid."
    /// For an id no transaction ever had.
    static let unknownMessage = "Invalid transaction."
    /// For a transaction already committed or rolled back.
    static let closedMessage = "Transaction is invalid or closed."

    /// Opens a transaction; `retrying` (a previous transaction's id) is closed.
    func begin(_ database: DatabaseID, readOnly: Bool, readTime: Instant?, retrying: String? = nil) -> String {
        let id = Base64.encode(ids.bytes(24))
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
        // Found once and changed in place: every read and the commit of a transaction come here.
        guard let i = open.index(forKey: id) else {
            throw .invalidArgument(closed.contains(id) ? Self.closedMessage : Self.unknownMessage)
        }
        let state = open.values[i]
        if now.unixMicros - state.lastUsed.unixMicros > Self.idleLimitSeconds * 1_000_000 {
            open.remove(at: i)
            throw .invalidArgument(Self.invalidMessage)
        }
        guard state.database == database else {
            throw .invalidArgument("The transaction belongs to database \(state.database.name), not \(database.name).")
        }
        open.values[i].lastUsed = now
        return open.values[i]
    }

    /// The snapshot of read-only transaction `id`: its read time, fixed to `now` by the first read
    /// when it had none (so every read of the transaction sees the same data).
    func snapshot(_ id: String, now: Instant) -> Instant? {
        lock.lock()
        defer { lock.unlock() }
        guard let state = open[id], state.readOnly else { return nil }
        if let t = state.readTime { return t }
        open[id]?.readTime = now
        return now
    }

    /// Records that the transaction read `path` at `version` (update time, or nil when missing).
    /// The first read of a document is the one a commit checks.
    func recordRead(_ id: String, path: ResourcePath, updateTime: Instant?) {
        lock.lock()
        if let i = open.index(forKey: id), !open.values[i].readOnly {
            open.values[i].reads.noteFirst(path, updateTime?.unixMicros ?? -1)
        }
        lock.unlock()
    }

    /// Records a query the transaction ran and what it returned (read-write transactions only).
    func recordQuery(_ id: String, _ query: RecordedQuery) {
        lock.lock()
        if let state = open[id], !state.readOnly {
            open[id]?.queries.append(query)
        }
        lock.unlock()
    }

    /// Whether `id` is an open read-write transaction (its reads must be recorded).
    func isReadWrite(_ id: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return open[id].map { !$0.readOnly } ?? false
    }

    /// Closes a transaction (commit or rollback); returns its state when it was open.
    @discardableResult
    func finish(_ id: String) -> State? {
        lock.lock()
        defer { lock.unlock() }
        guard let state = open.removeValue(forKey: id) else { return nil }
        if closed.insert(id).inserted {
            if closedOrder.count < Self.closedLimit {
                closedOrder.append(id)
            } else {
                closed.remove(closedOrder[closedNext])
                closedOrder[closedNext] = id
                closedNext = (closedNext + 1) % Self.closedLimit
            }
        }
        return state
    }

    /// Whether `id` was issued and has since finished.
    func isClosed(_ id: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed.contains(id)
    }

    /// Whether `id` names a transaction open or recently finished.
    func isKnown(_ id: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return open[id] != nil || closed.contains(id)
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
