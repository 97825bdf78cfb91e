import Foundation
import HearthCore
import HearthSQLite

/// One shard of the `ListenEngine`: the streams of the connections one transport thread serves,
/// their targets and indexes, and everything done for them, on the shard's own serial queue.
///
/// Every shard sees every committed change, in commit order (the engine hands each change to all
/// of them, in feed order; while no stream of any shard is open the feed skips changes and hands
/// on only the newest time, `catchUp(to:)`, before the next stream's first target); adds, removes
/// and closes of its streams are ordered with them, so a target's initial result (read at the time
/// of the last change this shard delivered, from the versioned storage) is followed by exactly the
/// commits after it. Shards share nothing mutable: a commit reaching a thousand listeners on two
/// connections' threads is matched and handed over by two shards side by side instead of one queue
/// in front of both threads. Targets are indexed by collection (plain collection queries), by
/// document (documents targets) and by database (collection-group queries), so a commit looks at
/// the targets of the collections it wrote rather than at every listener.
final class ListenShard: @unchecked Sendable {
    typealias Scope = ListenEngine.Scope

    /// Serial, on a thread of its own (`ListenQueue`: one thread however many wake-ups a burst of
    /// adds makes, at the process's nice value, which libdispatch's pool threads do not keep).
    let queue: ListenQueue
    /// Set by the engine with its own (the shard reads through it). Weak: work still queued on
    /// a shard when the service goes away finds it gone.
    weak var service: FirestoreService?
    /// The engine's feed, set once by the engine before any stream opens: a stream closing here
    /// tells it (`ChangeFeed.listenerClosed`). Weak: the feed's delivery holds the shards.
    weak var feed: ChangeFeed?

    // Below: only on `queue`, which keeps accesses apart (so no runtime exclusivity checks, ~100
    // instructions an access).
    /// Streams of this shard that have not been closed.
    @exclusivity(unchecked) private(set) var streams: [UInt64: ListenStream] = [:]
    @exclusivity(unchecked) private var byCollection: [Scope: [ObjectIdentifier: ListenStream.Target]] = [:]
    @exclusivity(unchecked) private var byDocument: [Scope: [ObjectIdentifier: ListenStream.Target]] = [:]
    @exclusivity(unchecked) private var groups: [DatabaseID: [ObjectIdentifier: ListenStream.Target]] = [:]
    /// The commit time of the last change this shard delivered: its new targets read at it.
    @exclusivity(unchecked) var deliveredTime = Instant(unixMicros: 0)
    /// The resume token of the last snapshot's read time (see `snapshotEnd`).
    @exclusivity(unchecked) var lastToken: (time: Instant, token: [UInt8])?
    /// Counts `apply` passes (see `ListenStream.applyPass`).
    @exclusivity(unchecked) var applyPass: UInt64 = 0
    /// The document version `weigh` saw last, and its weight.
    @exclusivity(unchecked) private var lastWeighed: (path: ResourcePath, updateTime: Instant, bytes: Int)?

    static let chunk = ListenEngine.chunk
    static let chunkBytes = ListenEngine.chunkBytes
    /// What a stream's outbox may hold (estimated bytes) before the stream is cut as too slow:
    /// a client that stops reading costs at most this, and nobody else waits for it.
    var maxOutboxBytes = 64 << 20
    /// How soon a stream that was not writable is tried again.
    static let retryNanos: UInt64 = 2_000_000

    init(index: Int) {
        queue = ListenQueue(name: "listen-\(index)")
    }

    /// Starts the shard at `time`. Its heartbeat is armed with its first stream (`opened`): a
    /// heartbeat only speaks to streams, and armed here its timer would start the shard's thread in
    /// a process nobody listens to.
    func start(at time: Instant) {
        // No queue hop: the service starts the engine as it is built, before any stream or change
        // can reach the shard, and the shard's thread starts with its first task after this.
        deliveredTime = time
    }

    /// Whether the heartbeat's timer runs (queue-confined).
    private var heartbeatArmed = false

    private func scheduleHeartbeat() {
        queue.asyncAfter(nanoseconds: ListenEngine.heartbeatNanos) { [weak self] in
            guard let self else { return }
            heartbeat()
            scheduleHeartbeat()
        }
    }

    /// Firestore's heartbeat: a stream whose last snapshot is older than the last delivered commit
    /// (commits elsewhere moved on) gets a bare global NO_CHANGE at that commit's time, so its resume
    /// token keeps up and a resume long after its own targets last changed stays incremental. The
    /// SDKs raise no snapshot for it (nothing changed). Safe at `deliveredTime`: commits are
    /// delivered in commit order, so none at or before it is still to come. Streams with a backlog
    /// are skipped (it would only lengthen it). Queue-confined.
    func heartbeat() {
        for s in streams.values.sorted(by: { $0.id < $1.id })
        where !s.closed && !s.targets.isEmpty && s.pending == 0 && s.lastReadTime < deliveredTime {
            send(s, [snapshotEnd(s, deliveredTime)])
        }
    }

    /// Registers a new stream (queue-confined); the engine told the feed of it already.
    func opened(_ s: ListenStream) {
        streams[s.id] = s
        if !heartbeatArmed {
            heartbeatArmed = true
            scheduleHeartbeat()
        }
    }

    /// Commits up to `time` were skipped while no stream was open (see `ChangeFeed`): new targets
    /// read at it, as if they had been delivered. Queued by the engine's feed queue in feed order.
    func catchUp(to time: Instant) {
        queue.async { [self] in deliveredTime = max(deliveredTime, time) }
    }

    // MARK: Streams (the engine calls these on its feed queue, see `ListenEngine.add`)

    /// Adds a target: ADD, then its documents, CURRENT and the global NO_CHANGE (or a REMOVE
    /// with the rules' denial).
    func add(_ target: ListenTarget, to stream: ListenStream) {
        queue.async { [self] in
            guard !stream.closed else { return }
            addNow(target, to: stream)
        }
    }

    /// Removes a target: REMOVE. An id the stream does not hold is ignored and the stream goes on,
    /// as the official emulator answers: a client may remove a target the server has just removed
    /// (a refused target, a rules denial) before it reads that REMOVE.
    func remove(_ targetID: Int32, from stream: ListenStream) {
        queue.async { [self] in
            guard !stream.closed, let t = stream.targets.removeValue(forKey: targetID) else { return }
            unindex(t)
            send(stream, [.targetChange(.remove, targetIDs: [targetID], cause: nil, readTime: nil, resumeToken: nil)])
        }
    }

    /// Refuses a target: ADD, then REMOVE with `error` as its cause; the stream and its other
    /// targets go on. Its id is taken as an added target's would be (an id in use still ends the
    /// stream), and nothing is kept for it.
    func reject(_ targetID: Int32, _ error: FirestoreError, on stream: ListenStream) {
        queue.async { [self] in
            guard !stream.closed, let id = assignID(targetID, on: stream) else { return }
            send(stream, [.targetChange(.add, targetIDs: [id], cause: nil, readTime: nil, resumeToken: nil),
                          .targetChange(.remove, targetIDs: [id], cause: error, readTime: nil, resumeToken: nil)])
        }
    }

    /// Frees everything the stream holds (client cancelled, connection gone).
    func close(_ stream: ListenStream) {
        queue.async { [self] in closeNow(stream) }
    }

    /// Ends the stream once what is already queued for it has been handed over (the client
    /// half-closed), then runs `then`.
    func finish(_ stream: ListenStream, then: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            if !stream.closed {
                // Nothing more will be added: hand the rest over now, the transport queues it.
                while stream.pending > 0, deliver(stream) {}
            }
            closeNow(stream)
            then()
        }
    }

    // MARK: Queue-confined

    func closeNow(_ stream: ListenStream) {
        guard !stream.closed else { return }
        stream.closed = true
        // Once per stream (`closed` is set once): commits from now on may skip the engine if it
        // was the last one open. Changes already queued to this shard still reach the others.
        feed?.listenerClosed()
        for t in stream.targets.values { unindex(t) }
        stream.targets.removeAll()
        stream.outbox = []
        stream.outboxStart = 0
        stream.outboxBytes = 0
        streams[stream.id] = nil
    }

    /// Queues `events` for the stream and hands over what the client can take now.
    func send(_ stream: ListenStream, _ events: [ListenEvent]) {
        send(stream, ListenBatch(events))
    }

    /// Queues `batch` for the stream and hands over what the client can take now.
    func send(_ stream: ListenStream, _ batch: ListenBatch) {
        guard !stream.closed, batch.count > 0 else { return }
        // The common case of a commit's snapshot for a client that keeps up: straight to the sink.
        if stream.pending == 0, batch.count <= Self.chunk {
            let bytes: Int
            switch batch.content {
            case .events(let events):
                var sum = 0
                for e in events { sum += weigh(e) }
                bytes = sum
            case .shared(let shared, _):
                bytes = shared.weight
            }
            if bytes <= Self.chunkBytes, handOver(stream, batch, bytes) { return }
        }
        enqueue(stream, batch.events.map { .event($0) })
    }

    /// Offers `batch` (weighing `bytes`, at most a chunk) to a stream with nothing waiting: true
    /// when it was handed over, or the stream is gone (and freed); false when the client has no
    /// room now (the caller queues it).
    @inline(__always)
    func handOver(_ stream: ListenStream, _ batch: ListenBatch, _ bytes: Int) -> Bool {
        switch stream.offer(batch, bytes) {
        case .taken: return true
        case .gone:
            closeNow(stream)
            return true
        case .full: return false
        }
    }

    /// `weight(.event(e))`, remembering the last document weighed: a commit's snapshot carries the
    /// same document version to every listener, and weighing one walks all its fields.
    private func weigh(_ e: ListenEvent) -> Int {
        guard case .documentChange(let d, _) = e else { return Self.weight(.event(e)) }
        if let w = lastWeighed, w.updateTime == d.updateTime, w.path == d.path { return w.bytes }
        let bytes = Self.weight(.event(e))
        lastWeighed = (d.path, d.updateTime, bytes)
        return bytes
    }

    /// Queues `items` and hands over what the client can take now; a stream whose backlog then
    /// outweighs `maxOutboxBytes` is cut with RESOURCE_EXHAUSTED (the client stopped reading).
    func enqueue(_ stream: ListenStream, _ items: [ListenStream.Pending]) {
        guard !stream.closed, !items.isEmpty else { return }
        // The common case of a commit's snapshot for a client that keeps up: straight to the sink.
        if stream.pending == 0, items.count <= Self.chunk, stream.writable() {
            var events: [ListenEvent] = []
            events.reserveCapacity(items.count)
            var bytes = 0
            for case .event(let e) in items {
                events.append(e)
                bytes += Self.weight(.event(e))
            }
            if events.count == items.count, bytes <= Self.chunkBytes {
                if !stream.sink(ListenBatch(events), bytes) { closeNow(stream) }
                return
            }
        }
        stream.outbox.append(contentsOf: items)
        for e in items { stream.outboxBytes += Self.weight(e) }
        pump(stream)
        if !stream.closed, stream.outboxBytes > maxOutboxBytes {
            fail(stream, .resourceExhausted("The client is not reading its Listen stream fast enough; the stream was closed."))
        }
    }

    /// Hands the outbox over in chunks while the client is writable; otherwise tries again soon
    /// (other streams are served meanwhile: nothing waits on one client).
    func pump(_ stream: ListenStream) {
        while !stream.closed, stream.pending > 0 {
            guard stream.writable() else {
                if !stream.pumpScheduled {
                    stream.pumpScheduled = true
                    queue.asyncAfter(nanoseconds: Self.retryNanos) { [self] in
                        stream.pumpScheduled = false
                        pump(stream)
                    }
                }
                return
            }
            if !deliver(stream) { return }
        }
    }

    /// Hands the next chunk of the outbox (at most `chunk` events and about `chunkBytes`, counted
    /// on the documents as read) to the sink; false (and the stream freed) when refused.
    private func deliver(_ stream: ListenStream) -> Bool {
        var chunk: [ListenEvent] = []
        var bytes = 0
        var end = stream.outboxStart
        // Takes entries in order, reading the documents of a first result through `conn`.
        func take(_ conn: Connection?) throws(FirestoreError) {
            while end < stream.outbox.count, chunk.count < Self.chunk, bytes < Self.chunkBytes {
                let item = stream.outbox[end]
                switch item {
                case .event(let e):
                    chunk.append(e)
                    bytes += Self.weight(item)
                case .document(let path, let target, let space, let time):
                    guard let conn, let service else { throw .internal("The Firestore service is gone.") }
                    // Gone only when the stream outlived the history kept (or a clear dropped the
                    // space): the client listens again, as after any stream error.
                    let doc: StoredDocument?
                    do { doc = try service.load(space, path, at: time, conn) } catch { throw .internal("\(error)") }
                    guard let doc, doc.updateTime <= time else { throw Self.fellBehind }
                    chunk.append(.documentChange(doc, targetIDs: [target]))
                    bytes += doc.storageSize + 32
                case .page(var page):
                    guard let conn, let service else { throw .internal("The Firestore service is gone.") }
                    // Read as of `at`, which needs the versions of then (kept for the history window)
                    // in the space of then (a clear since hands it to the collector: a page read there
                    // could come back short, a snapshot that never existed).
                    let current: Int64?
                    do { current = try service.storage.space(of: page.database, conn) } catch { throw .internal("\(error)") }
                    guard page.at.unixMicros >= service.latestTime().unixMicros - FirestoreStorage.historyMicros,
                          page.space == nil || current == page.space else {
                        throw Self.fellBehind
                    }
                    var q = page.query
                    q.startAt = page.after
                    let want = min(page.pageSize, Self.chunk - chunk.count)
                    q.limit = want
                    let docs: [StoredDocument]
                    do {
                        docs = try QueryExecutor(storage: service.storage, database: page.database)
                            .run(q, space: page.space, conn, at: page.at).documents
                    } catch { throw .internal("\(error)") }
                    var largest = 0
                    var taken = 0
                    for d in docs {
                        // The chunk is full by bytes: the rest of this page is read again next time.
                        if bytes >= Self.chunkBytes { break }
                        chunk.append(.documentChange(d, targetIDs: [page.targetID]))
                        bytes += d.storageSize + 32
                        largest = max(largest, d.storageSize + 32)
                        taken += 1
                    }
                    if taken > 0, taken < docs.count || docs.count == want {
                        // More may follow: the entry stays first in line, moved past what went out.
                        page.after = Self.cursor(after: docs[taken - 1], in: page.query, page.database)
                        page.pageSize = max(1, min(Self.chunk, Self.chunkBytes / largest))
                        stream.outbox[end] = .page(page)
                        continue
                    }
                }
                stream.outboxBytes -= Self.weight(item)
                end += 1
            }
        }
        do throws(FirestoreError) {
            let next = stream.outbox[stream.outboxStart..<min(stream.outbox.count, stream.outboxStart + Self.chunk)]
            if next.contains(where: { if case .event = $0 { false } else { true } }) {
                guard let service else { throw .internal("The Firestore service is gone.") }
                try service.read { conn in try take(conn) }
            } else {
                try take(nil)
            }
        } catch {
            fail(stream, error)
            return false
        }
        stream.outboxStart = end
        if stream.outboxStart == stream.outbox.count {
            stream.outbox.removeAll(keepingCapacity: false)
            stream.outboxStart = 0
        } else if stream.outboxStart >= 4 * Self.chunk {
            // Drop what was handed over, so a long outbox does not keep it alive.
            stream.outbox.removeFirst(stream.outboxStart)
            stream.outboxStart = 0
        }
        if !stream.sink(ListenBatch(chunk), bytes) {
            closeNow(stream)
            return false
        }
        return true
    }

    /// A first result can no longer be read as of its read time.
    static let fellBehind = FirestoreError.aborted("The Listen stream fell too far behind its read time; listen again.")

    /// The position just after `doc` in `query`'s order (a `startAfter` of its ordered values).
    static func cursor(after doc: StoredDocument, in query: Query, _ db: DatabaseID) -> Cursor {
        Cursor(values: query.order.map { o in
            o.field.isDocumentKey ? .reference(db.name(of: doc.path)) : DocumentFields.value(at: o.field, in: doc.fields) ?? .null
        }, before: false)
    }

    /// Roughly what an entry costs on the wire (a document of a first result not read yet: only
    /// its name).
    static func weight(_ e: ListenStream.Pending) -> Int {
        switch e {
        case .event(.documentChange(let d, _)): d.storageSize + 32
        case .event, .document, .page: 64
        }
    }

    /// Ends the stream with `error` (bad request, too slow) and frees it; what was queued for it is dropped.
    func fail(_ stream: ListenStream, _ error: FirestoreError) {
        if !stream.closed { _ = stream.sink(ListenBatch([.end(error)]), 0) }
        closeNow(stream)
    }

    func index(_ t: ListenStream.Target) {
        let key = ObjectIdentifier(t)
        switch t.kind {
        case .documents(let paths):
            for p in paths { byDocument[Scope(database: t.database, path: p), default: [:]][key] = t }
        case .query(let q):
            if q.allDescendants {
                groups[t.database, default: [:]][key] = t
            } else {
                byCollection[Scope(database: t.database, path: q.collectionPath), default: [:]][key] = t
            }
        }
    }

    func unindex(_ t: ListenStream.Target) {
        let key = ObjectIdentifier(t)
        switch t.kind {
        case .documents(let paths):
            for p in paths {
                let s = Scope(database: t.database, path: p)
                byDocument[s]?[key] = nil
                if byDocument[s]?.isEmpty == true { byDocument[s] = nil }
            }
        case .query(let q):
            if q.allDescendants {
                groups[t.database]?[key] = nil
                if groups[t.database]?.isEmpty == true { groups[t.database] = nil }
            } else {
                let s = Scope(database: t.database, path: q.collectionPath)
                byCollection[s]?[key] = nil
                if byCollection[s]?.isEmpty == true { byCollection[s] = nil }
            }
        }
    }

    /// Calls `body` with each target a change of `path` in `db` can touch.
    func targets(touchedBy path: ResourcePath, in db: DatabaseID, _ body: (ListenStream.Target) -> Void) {
        if let d = byDocument[Scope(database: db, path: path)] { for t in d.values { body(t) } }
        if let c = byCollection[Scope(database: db, path: path.parent)] { for t in c.values { body(t) } }
        if let g = groups[db] {
            for t in g.values {
                guard case .query(let q) = t.kind else { continue }
                if q.parent.isAncestor(of: path) && (q.collectionID.isEmpty || ExactString.equal(q.collectionID, path.collectionID)) {
                    body(t)
                }
            }
        }
    }

    /// Every target of `db` (every target at all when nil).
    func allTargets(in db: DatabaseID?) -> [ListenStream.Target] {
        streams.values.flatMap { s in s.targets.values.filter { db == nil || $0.database == db } }
    }

    /// Targets open across every stream (tests check that closing frees them).
    var indexedTargetCount: Int {
        byDocument.values.reduce(0) { $0 + $1.count } + byCollection.values.reduce(0) { $0 + $1.count }
            + groups.values.reduce(0) { $0 + $1.count }
    }
}
