import Foundation
import HearthCore

/// The Listen side of Firestore, transport-neutral: streams register targets, every committed
/// change from the `ChangeFeed` is matched against the targets it can touch, and each affected
/// stream gets its incremental changes as one batch of `ListenEvent`s ending with the global
/// NO_CHANGE.
///
/// The streams are split into shards (`ListenShard`), one per transport thread a stream's
/// connection is served by (its `affinity`; up to one per core): each shard matches, orders and
/// hands over the snapshots of its own streams on its own serial queue, so a commit reaching a
/// thousand listeners is not one queue's serial work in front of the threads that encode it (at
/// 1,000 listeners that queue had come to take as long as either HTTP/2 loop). Every shard gets
/// every change in commit order, so each stream still sees commits in commit order, each
/// snapshot whole and consistent at its read time.
final class ListenEngine: @unchecked Sendable {
    /// A collection or document of one database.
    struct Scope: Hashable {
        var database: DatabaseID
        var path: ResourcePath
    }

    /// Receives the feed's changes in commit order and hands each to every shard; also runs the
    /// feed's taps (the UI). Serial, on a thread of its own (`ListenQueue`).
    let feedQueue = ListenQueue(name: "listen-feed")
    private(set) var feed: ChangeFeed!
    /// Made once in `init`, never changed after.
    private(set) var shards: [ListenShard] = []
    /// Set once by the service right after it is built (and handed to the shards, which read through it).
    weak var service: FirestoreService? {
        didSet { for s in shards { s.service = service } }
    }

    // Under `lock`.
    private let lock = NSLock()
    private var nextStreamID: UInt64 = 1
    /// The shard of each transport thread seen, and the next shard to give a new one.
    private var shardOf: [ObjectIdentifier: Int] = [:]
    private var nextShard = 0

    /// Events per sink call (bounds what one call encodes at once).
    static let chunk = 500
    /// Bytes per sink call (with `chunk`): what the transport buffers beyond its low-water mark.
    static let chunkBytes = 1 << 20
    /// How often streams get Firestore's heartbeat (see `ListenShard.heartbeat()`).
    static let heartbeatNanos: UInt64 = 60_000_000_000
    /// Shards by default: one per core, as many as the HTTP/2 engine has loops (at most 4); at least
    /// two, so the sharded path is the one every machine (and every test) runs — an idle shard is a
    /// queue, not a thread.
    static var defaultShardCount: Int { min(4, max(2, ProcessInfo.processInfo.activeProcessorCount)) }

    init(shards count: Int = ListenEngine.defaultShardCount) {
        var made: [ListenShard] = []
        for i in 0..<max(1, count) { made.append(ListenShard(index: i)) }
        shards = made
        let shards = made
        // Enqueued in feed order on every shard's serial queue: each sees every change in commit
        // order. With no stream open the feed skips changes (nothing to match them against) and
        // tells the shards only the newest time skipped, before the next stream's first target.
        feed = ChangeFeed(queue: feedQueue, catchUp: { time in
            for s in shards { s.catchUp(to: time) }
        }) { change in
            for s in shards { s.queue.async { s.apply(change) } }
        }
        for s in shards { s.feed = feed }
    }

    /// Starts at the service's current time (nothing is in flight yet when it is built).
    func start(at time: Instant) {
        for s in shards { s.start(at: time) }
    }

    // MARK: Streams (callable from any thread)

    /// Opens a stream for `caller`; `sink` receives its events on its shard's queue, handed over
    /// only while `writable` says the client keeps up (`offer`, when given, checks and hands over
    /// in one call: see `ListenStream.offer`). Streams with the same `affinity` (the transport
    /// thread serving their connection) share a shard; without one, streams are spread one by one.
    func open(caller: Caller, affinity: ObjectIdentifier? = nil, writable: @escaping @Sendable () -> Bool = { true },
              offer: (@Sendable (_ batch: ListenBatch, _ bytes: Int) -> ListenStream.Offered)? = nil,
              sink: @escaping @Sendable (_ batch: ListenBatch, _ bytes: Int) -> Bool) -> ListenStream {
        let (id, index): (UInt64, Int) = lock.withLock {
            let id = nextStreamID
            nextStreamID += 1
            let index: Int
            if let affinity {
                if let known = shardOf[affinity] { index = known } else {
                    index = nextShard % shards.count
                    nextShard += 1
                    shardOf[affinity] = index
                }
            } else {
                index = Int(id % UInt64(shards.count))
            }
            return (id, index)
        }
        // Before anything of the stream goes through the feed queue: its first target reads at
        // or after every commit the feed skipped, and every later commit reaches its shard.
        feed.listenerOpened()
        let shard = shards[index]
        let s = ListenStream(id: id, shard: shard, caller: caller, writable: writable, offer: offer, sink: sink)
        shard.queue.sync { shard.opened(s) }
        return s
    }

    // A stream's adds, removes and ends go through the feed queue on their way to its shard, as
    // changes do: what was published before one is on the shard's queue before it (a client that
    // half-closes after its own write still gets that write's snapshot, as with one queue).

    /// Adds a target: ADD, then its documents, CURRENT and the global NO_CHANGE (or a REMOVE
    /// with the rules' denial).
    func add(_ target: ListenTarget, to stream: ListenStream) {
        feedQueue.async { stream.shard.add(target, to: stream) }
    }

    /// Removes a target: REMOVE (an unknown id ends the stream with INVALID_ARGUMENT).
    func remove(_ targetID: Int32, from stream: ListenStream) {
        feedQueue.async { stream.shard.remove(targetID, from: stream) }
    }

    /// Refuses a target the client cannot listen to: ADD, then REMOVE with `error` as its cause.
    func reject(_ targetID: Int32, _ error: FirestoreError, on stream: ListenStream) {
        feedQueue.async { stream.shard.reject(targetID, error, on: stream) }
    }

    /// Frees everything the stream holds (client cancelled, connection gone).
    func close(_ stream: ListenStream) {
        feedQueue.async { stream.shard.close(stream) }
    }

    /// Ends the stream once what is already queued for it has been handed over (the client
    /// half-closed), then runs `then`.
    func finish(_ stream: ListenStream, then: @escaping @Sendable () -> Void) {
        feedQueue.async { stream.shard.finish(stream, then: then) }
    }

    /// Runs `body` once every change published so far has been handed to the shards and every
    /// shard has done what was queued on it, with every shard's queue held (tests wait on it and
    /// read any shard's state in `body`).
    func sync<T>(_ body: () throws -> T) rethrows -> T {
        feedQueue.sync {}
        func hold(_ i: Int) throws -> T {
            i == shards.count ? try body() : try shards[i].queue.sync { try hold(i + 1) }
        }
        return try hold(0)
    }

    // MARK: Every shard (inside `sync`)

    /// Streams that have not been closed, of every shard.
    var streams: [UInt64: ListenStream] {
        shards.reduce(into: [:]) { all, s in all.merge(s.streams) { a, _ in a } }
    }

    /// Targets open across every stream (tests check that closing frees them).
    var indexedTargetCount: Int { shards.reduce(0) { $0 + $1.indexedTargetCount } }

    /// Every shard's heartbeat (see `ListenShard.heartbeat()`).
    func heartbeat() {
        for s in shards { s.heartbeat() }
    }

    /// What a stream's outbox may hold before the stream is cut as too slow (every shard's bound).
    var maxOutboxBytes: Int {
        get { shards[0].maxOutboxBytes }
        set { for s in shards { s.maxOutboxBytes = newValue } }
    }
}
