import Foundation
import Synchronization

/// The HTTP/2 side of a listener: a few event loops, each owning the connections adopted onto it
/// and their sessions.
///
/// A connection (its socket and its nghttp2 session, which is not thread-safe) lives on exactly
/// one loop for its whole life; connections are spread over up to one loop per core, so the
/// framing and socket writes of a fan-out (a commit reaching a thousand listeners on ten
/// connections) run on every core instead of queueing behind one thread. Handlers run elsewhere
/// (the gRPC worker pool), and an open stream costs memory, never a thread. A loop's thread starts
/// with its first connection: a listener nobody speaks HTTP/2 to holds no thread for it.
final class HTTP2Engine: @unchecked Sendable {
    /// What we announce in SETTINGS and enforce.
    struct Limits: Sendable {
        /// The SDKs multiplex Listen, Write and unary calls on one connection.
        var maxConcurrentStreams = 1000
        var initialWindowSize = 1 << 20
        var connectionWindowSize = 16 << 20
        var maxHeaderListSize = 16 << 10
        /// How long each loop may poll before it sleeps (`BusyPoll`; 0: never).
        var busyPollMicroseconds = BusyPoll.defaultCeilingMicroseconds
    }

    /// Loops per engine: one per core (more would only take turns on the cores), at most 4 (past
    /// that the engine's one serial queue feeding them is the limit, and each loop costs a thread).
    static let defaultLoopCount = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))

    /// One loop thread and the connections it serves.
    private final class Shard: @unchecked Sendable {
        let loop: EventLoop
        /// Loop thread only.
        var connections: [Int32: HTTP2Connection] = [:]
        /// Connections adopted onto this loop and not yet closed (under the engine's `countLock`).
        var load = 0
        /// Whether the loop's thread runs (under `countLock`).
        var started = false

        init(loop: EventLoop) { self.loop = loop }
    }

    let handler: any HTTP2StreamHandler
    let limits: Limits
    private let shards: [Shard]
    private let countLock = NSLock()
    private var count = 0
    /// Streams open on every connection. An atomic, not under `countLock`: every stream changes it
    /// twice (open, close), on the loop thread of each call.
    private let streams = HTTP2StreamCount()
    private var closing = false

    init(name: String, handler: any HTTP2StreamHandler, limits: Limits = Limits(),
         loops: Int = HTTP2Engine.defaultLoopCount) throws(HTTPServerError) {
        var shards: [Shard] = []
        let n = max(1, loops)
        for i in 0..<n {
            let loop = try EventLoop(name: n == 1 ? "\(name)-h2" : "\(name)-h2-\(i)")
            loop.busyPoll = BusyPoll(ceilingMicroseconds: limits.busyPollMicroseconds, name: loop.name)
            shards.append(Shard(loop: loop))
        }
        self.shards = shards
        self.handler = handler
        self.limits = limits
    }

    /// Open HTTP/2 connections (for the listener's connection cap).
    var connectionCount: Int {
        countLock.lock()
        defer { countLock.unlock() }
        return count
    }

    /// Streams open on every connection (shutdown waits for them within its grace period).
    var openStreams: Int { streams.value }

    /// Each loop's polling (tests, before any connection starts a loop).
    var loopsBusyPoll: [BusyPoll] { shards.map(\.loop.busyPoll) }

    /// Loops whose thread runs (tests check that connections spread and threads start lazily).
    var startedLoops: Int {
        countLock.lock()
        defer { countLock.unlock() }
        return shards.filter(\.started).count
    }

    /// Takes over a socket that sent the preface (the preface is still unread in the kernel), on
    /// the loop serving the fewest connections: connections that come and go keep the loops even,
    /// which round-robin would not.
    func adopt(fd: Int32, remoteAddress: String) {
        countLock.lock()
        guard !closing else {
            countLock.unlock()
            Glibc.close(fd)
            return
        }
        count += 1
        // Force-unwrap safe: there is at least one shard.
        let shard = shards.min { $0.load < $1.load }!
        shard.load += 1
        if !shard.started {
            // Under the lock, so `close` never finds a loop marked started whose thread is not.
            shard.started = true
            shard.loop.start()
        }
        countLock.unlock()
        let loop = shard.loop
        loop.execute { [self] in
            let c = HTTP2Connection(fd: fd, loop: loop, remoteAddress: remoteAddress, handler: handler, limits: limits)
            c.onClose = { [unowned self] c in
                shard.connections[c.fd] = nil
                countLock.lock()
                count -= 1
                shard.load -= 1
                countLock.unlock()
            }
            c.streamCount = streams
            shard.connections[fd] = c
            if !c.start() { c.shutdown(errorCode: 2) }
        }
    }

    /// Sends GOAWAY on every connection: no new streams, in-flight ones may finish.
    func goAway() {
        for shard in runningShards() {
            shard.loop.execute { for c in shard.connections.values { c.goAway() } }
        }
    }

    /// Closes every connection (open streams' delegates hear `closed`) and ends every loop.
    func close() {
        countLock.lock()
        closing = true
        countLock.unlock()
        let running = runningShards()
        for shard in running {
            shard.loop.execute { for c in Array(shard.connections.values) { c.shutdown(errorCode: 8) } }
        }
        // Every loop is asked first, then waited for: they close their connections side by side.
        for shard in running { shard.loop.stop() }
    }

    private func runningShards() -> [Shard] {
        countLock.lock()
        defer { countLock.unlock() }
        return shards.filter(\.started)
    }
}

/// Open streams, counted across an engine's connections.
final class HTTP2StreamCount: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func add(_ delta: Int) { count.add(delta, ordering: .relaxed) }
}
