/// How a connection's streams reach it: shared by them, holding the connection from its start
/// until its shutdown (`HTTP2Connection.start`, `shutdown`), then nil.
///
/// A stream used to hold its connection weakly. A weak reference gives the object a side table,
/// and from then on every retain and release of the connection took the runtime's slow path
/// (~50 instructions instead of ~5), besides ~50 for each weak load: ~1k instructions a unary
/// gRPC call (callgrind, bench/callgrind_get.py). A stream left holding this link after the
/// shutdown (a call that has not ended) keeps the link, not the connection: the connection goes
/// when its loop and engine let go of it, as before.
final class HTTP2ConnectionLink: @unchecked Sendable {
    private let lock = InlineLock()
    // Under `lock` (unchecked: the lock keeps accesses apart).
    @exclusivity(unchecked) private var target: HTTP2Connection?

    /// The connection until its shutdown (any thread).
    var connection: HTTP2Connection? {
        lock.lock()
        defer { lock.unlock() }
        return target
    }

    /// The connection has started: its streams may reach it.
    func attach(_ connection: HTTP2Connection) {
        lock.lock()
        target = connection
        lock.unlock()
    }

    /// The connection shut down: nothing reaches it through here any more (and this link, which
    /// the connection holds, no longer holds it).
    func cut() {
        lock.lock()
        let last = target
        target = nil
        lock.unlock()
        // Released outside the lock (the caller holds the connection anyway).
        _ = last
    }
}
