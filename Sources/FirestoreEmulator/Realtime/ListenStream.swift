import HearthCore

/// One Listen call's state in the engine: who listens, its targets, where its events go.
///
/// Everything but `id`, `shard`, `caller`, `sink`, `offer` and `writable` is touched only on its
/// shard's queue. That queue is what keeps accesses apart, so the queue-confined fields skip the
/// runtime's exclusivity check (`@exclusivity(unchecked)`): it cost ~100 instructions an access,
/// several per listener per commit on the shard.
final class ListenStream: @unchecked Sendable {
    /// One active target and what the client holds for it.
    final class Target {
        let id: Int32
        /// `[id]`, made once: every change event of the target carries it, and a commit reaching a
        /// thousand listeners made a thousand one-element arrays.
        let ids: [Int32]
        let database: DatabaseID
        let kind: ListenTarget.Kind
        /// Documents the client holds for the target, with the version it holds. Kept only for
        /// documents targets and limited or cursored queries: a plain query's changes follow from
        /// each commit's before and after alone, so an idle listener on a large collection holds
        /// nothing per document.
        @exclusivity(unchecked) var known: [ResourcePath: Instant] = [:]
        /// The time the client's view of the target is consistent at.
        @exclusivity(unchecked) var readTime: Instant
        unowned let stream: ListenStream

        /// A query target whose result can change only where a changed document now or before
        /// matched (no limit, offset or cursor): it is updated from the change alone. Decided once
        /// (asking the query each commit copied it, a retain per member, per listener).
        let isPlainQuery: Bool
        /// A plain query of one collection with no filter and no ordering by a field: every document
        /// of its collection matches, and a commit reaches it only through that collection's index
        /// (`ListenShard.index`), so a change's before and after decide without evaluating the query.
        let matchesWholeCollection: Bool

        init(id: Int32, database: DatabaseID, kind: ListenTarget.Kind, readTime: Instant, stream: ListenStream) {
            self.id = id
            ids = [id]
            self.database = database
            self.kind = kind
            self.readTime = readTime
            self.stream = stream
            if case .query(let q) = kind, q.limit == nil, q.offset == 0, q.startAt == nil, q.endAt == nil {
                isPlainQuery = true
                matchesWholeCollection = !q.allDescendants && q.filter == nil && q.order.allSatisfy { $0.field.isDocumentKey }
            } else {
                isPlainQuery = false
                matchesWholeCollection = false
            }
        }

        /// The query of a plain query target (see `isPlainQuery`).
        var plainQuery: Query? {
            guard isPlainQuery, case .query(let q) = kind else { return nil }
            return q
        }
    }

    let id: UInt64
    /// The shard that holds the stream (its queue orders everything done for it).
    let shard: ListenShard
    let caller: Caller
    /// Receives each batch of events with roughly what they weigh on the wire (`ListenShard.weight`);
    /// false when the client is gone (the engine then frees the stream).
    let sink: @Sendable (_ batch: ListenBatch, _ bytes: Int) -> Bool
    /// Whether the client reads fast enough to take more now (flow control: the transport's
    /// buffer is below its low-water mark).
    let writable: @Sendable () -> Bool
    /// `sink` for a batch the client may or may not have room for: hands it over only when
    /// `writable`, checking both at once (a commit's snapshot to a listener that keeps up: one
    /// hand-over instead of two calls, each through the transport's locks).
    let offer: @Sendable (_ batch: ListenBatch, _ bytes: Int) -> Offered
    @exclusivity(unchecked) var targets: [Int32: Target] = [:]
    /// One entry of the outbox.
    enum Pending {
        case event(ListenEvent)
        /// A document of a target's first result, read (as of `at`, from the versions kept) only
        /// when its turn to go out comes: a large result waiting for a slow client holds names,
        /// not documents.
        case document(ResourcePath, targetID: Int32, space: Int64?, at: Instant)
        /// The rest of a plain query's first result after `after` (nil: from its start), read a
        /// page at a time (as of `at`) when its turn comes: a first result of any size waits for a
        /// slow client as this one entry.
        case page(FirstResultPage)
    }

    /// Where a first result being paged out stands.
    struct FirstResultPage {
        var targetID: Int32
        var database: DatabaseID
        var query: Query
        var space: Int64?
        var at: Instant
        /// The last document sent, as a cursor in the query's order.
        var after: Cursor?
        /// Documents per read: sized from the documents read so far so one page stays near
        /// `ListenEngine.chunkBytes`.
        var pageSize: Int
    }

    /// What is not yet handed to the sink because the client was not writable, oldest first
    /// (`outboxStart` is the next one), and roughly what it weighs.
    @exclusivity(unchecked) var outbox: [Pending] = []
    @exclusivity(unchecked) var outboxStart = 0
    @exclusivity(unchecked) var outboxBytes = 0
    /// The read time of the last snapshot sent.
    @exclusivity(unchecked) var lastReadTime = Instant(unixMicros: 0)
    /// A retry of the outbox is scheduled.
    @exclusivity(unchecked) var pumpScheduled = false
    /// The last `ListenShard.apply` pass that saw one of its targets (finds streams with several).
    @exclusivity(unchecked) var applyPass: UInt64 = 0
    /// Server-assigned target ids count up from here.
    @exclusivity(unchecked) var nextAssigned: Int32 = 1
    @exclusivity(unchecked) var closed = false

    /// What `offer` did with a batch.
    enum Offered {
        /// Handed over.
        case taken
        /// Not handed over: the client has no room now (it waits in the outbox).
        case full
        /// The client is gone (the stream is freed).
        case gone
    }

    /// - Parameter offer: nil: `writable`, then `sink`.
    init(id: UInt64, shard: ListenShard, caller: Caller, writable: @escaping @Sendable () -> Bool,
         offer: (@Sendable (_ batch: ListenBatch, _ bytes: Int) -> Offered)? = nil,
         sink: @escaping @Sendable (_ batch: ListenBatch, _ bytes: Int) -> Bool) {
        self.id = id
        self.shard = shard
        self.caller = caller
        self.writable = writable
        self.sink = sink
        self.offer = offer ?? { batch, bytes in
            guard writable() else { return .full }
            return sink(batch, bytes) ? .taken : .gone
        }
    }

    /// Events waiting in the outbox.
    var pending: Int { outbox.count - outboxStart }
}
