import Foundation
import HearthCore
import Synchronization
internal import CMicroHTTPD

/// Why a server did not start.
public enum HTTPServerError: Error, CustomStringConvertible, Sendable {
    case addressInUse(host: String, port: Int)
    case badAddress(String)
    case startFailed(host: String, port: Int, reason: String)

    public var description: String {
        switch self {
        case .addressInUse(let host, let port): "port \(port) on \(host) is already in use"
        case .badAddress(let host): "cannot bind to host '\(host)': not an IPv4/IPv6 address or resolvable name"
        case .startFailed(let host, let port, let reason): "cannot listen on \(host):\(port): \(reason)"
        }
    }
}

/// A listener serving one `HTTPService` over HTTP/1.1 (libmicrohttpd) and, when given an
/// `HTTP2StreamHandler`, HTTP/2 with prior knowledge (h2c, libnghttp2) on the same port.
///
/// Plain listeners accept connections themselves (`ConnectionAcceptor`) and sniff the first bytes:
/// the HTTP/2 preface goes to `HTTP2Engine`, anything else to libmicrohttpd through
/// `MHD_add_connection`. TLS listeners keep libmicrohttpd's own listening socket (no HTTP/2 there).
///
/// libmicrohttpd parses HTTP (request line, headers, chunked bodies, `Expect: 100-continue`,
/// keep-alive, timeouts, header-size and connection caps); this class only moves requests and
/// responses between it and Swift. It runs a thread pool in epoll mode: a handler runs on the
/// pool thread that owns the connection, so handlers may block briefly (SQLite) but must not wait
/// on the network.
public final class HTTPServer: @unchecked Sendable {
    /// Listener settings.
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks any free port; read `port` after `start()`.
        public var port: Int
        public var threads: Int
        public var connectionLimit: Int
        /// Idle seconds before a connection (or a stalled upload) is closed.
        public var connectionTimeout: Int
        /// Per-connection memory for the request line and headers (caps header size).
        public var connectionMemoryLimit: Int
        /// How long a new connection may stay silent (or inside a prefix of the HTTP/2 preface)
        /// before it is handed to libmicrohttpd, whose idle timeout then applies.
        public var sniffTimeout: Double
        /// Accept connections on Hearth's own loop (sniffing for HTTP/2) even without an HTTP/2
        /// handler; listeners with one always do.
        public var ownAcceptLoop = false
        /// Serve `Response.Body.push` bodies (server-sent events): the connection is parked between
        /// events (libmicrohttpd's suspend/resume), holding no thread.
        public var allowsPush = false
        /// Park `RequestDisposition.collectDeferred` requests (libmicrohttpd's suspend/resume) until
        /// their answer is sent, holding no worker thread; without it a worker waits for the answer.
        public var allowsDeferred = false
        /// How long each HTTP/2 loop may poll for a client's next frame before it sleeps (`BusyPoll`; 0: never).
        public var http2BusyPollMicroseconds = BusyPoll.defaultCeilingMicroseconds
        /// How long a libmicrohttpd worker may poll an answered connection for its next request before
        /// it sleeps (`WorkerPoll`; 0: never, the default).
        public var http1BusyPollMicroseconds = 0
        /// PEM certificate and key: serve HTTPS.
        public var tlsCertificatePEM: String?
        public var tlsKeyPEM: String?

        public init(host: String = "127.0.0.1", port: Int = 0, threads: Int = 8, connectionLimit: Int = 1000,
                    connectionTimeout: Int = 60, connectionMemoryLimit: Int = 64 << 10, sniffTimeout: Double = 10,
                    tlsCertificatePEM: String? = nil, tlsKeyPEM: String? = nil) {
            self.sniffTimeout = sniffTimeout
            self.host = host
            self.port = port
            self.threads = threads
            self.connectionLimit = connectionLimit
            self.connectionTimeout = connectionTimeout
            self.connectionMemoryLimit = connectionMemoryLimit
            self.tlsCertificatePEM = tlsCertificatePEM
            self.tlsKeyPEM = tlsKeyPEM
        }
    }

    public let name: String
    public let configuration: Configuration
    let service: any HTTPService
    let logger: Logger?
    let ids: IDGenerator
    let clock: Clock?
    private var daemon: OpaquePointer?
    private var acceptor: ConnectionAcceptor?
    private let http2Handler: (any HTTP2StreamHandler)?
    private var http2: HTTP2Engine?
    private let stateLock = NSLock()
    /// Requests between `began` and `ended`: an atomic, as every request changes it twice (under
    /// `stateLock` that was two lock round trips a request; only `stop` waits on it).
    private let inFlight = Atomic<Int>(0)
    /// Whether one of the workers polls for a connection's next request (`WorkerPoll`): one at most.
    private let workerPolling = Atomic<Bool>(false)
    /// Connections libmicrohttpd holds (its notify callback counts them), for the shared cap.
    private var mhdConnections = 0
    /// With our own accept loop and a pool of workers: how many workers, and the one the next HTTP/1.1
    /// connection goes to (−1 before the first). The acceptor's thread alone uses them after `start`.
    /// libmicrohttpd gives an added socket to worker `fd % pool size`, so in a long-lived process the
    /// holes earlier connections left in the descriptor table decided which worker served whom: the
    /// transaction row's 16 connections once landed 13 on one worker (docs/benchmarks.md, txn37).
    private var workerPool = 1
    private var nextWorker = -1
    private(set) var stopping = false
    /// Push responses being served (`PushBox`), ended before the daemon stops: libmicrohttpd must
    /// not be stopped with a connection suspended.
    private var pushes: [ObjectIdentifier: PushBox] = [:]
    /// Requests parked for a deferred answer (`ParkedAnswer`), answered before the daemon stops.
    private var parks: [ObjectIdentifier: ParkedAnswer] = [:]
    /// Set by `endParks` (under `stateLock`): no request parks after it.
    private var parksEnded = false
    private var boundPort = 0

    /// A server named `name` (it appears in log lines) for `service`.
    /// - Parameter http2: serves HTTP/2 (prior knowledge) on the same port; nil leaves the preface to
    ///   libmicrohttpd, which answers 505.
    public init(name: String, configuration: Configuration, service: any HTTPService, logger: Logger? = nil,
                ids: IDGenerator = IDGenerator(), clock: Clock? = nil, http2: (any HTTP2StreamHandler)? = nil) {
        self.http2Handler = http2
        self.name = name
        self.configuration = configuration
        self.service = service
        self.logger = logger
        self.ids = ids
        self.clock = clock
    }

    deinit { stop(graceSeconds: 0) }

    /// The port it listens on (valid after `start()`).
    public var port: Int { boundPort }

    /// `http://host:port` (or https).
    public var url: String {
        let h = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(configuration.tlsCertificatePEM != nil ? "https" : "http")://\(h):\(port)"
    }

    /// Binds and starts serving.
    public func start() throws(HTTPServerError) {
        let (storage, length, isIPv6) = try HTTPServer.socketAddress(configuration.host, port: configuration.port)
        let tls = configuration.tlsCertificatePEM != nil
        // libmicrohttpd's own stderr chatter stays off (no MHD_USE_ERROR_LOG); we log per request.
        var flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue)
        if isIPv6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        if tls { flags |= UInt32(MHD_USE_TLS.rawValue) }
        if configuration.allowsPush || configuration.allowsDeferred { flags |= UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue) }
        var listenFD: Int32 = -1
        // Only listeners that serve HTTP/2 (the Firestore port) accept connections themselves; the others
        // keep libmicrohttpd's own listening socket, exactly as before HTTP/2 existed (see
        // docs/architecture.md: a shutdown after the connection cap was reached once hung inside
        // MHD_stop_daemon on the hand-over path, so that path is kept where it is needed).
        if !tls && (http2Handler != nil || configuration.ownAcceptLoop) {
            listenFD = try HTTPServer.listen(on: storage, length: length, host: configuration.host, port: configuration.port)
            // ITC makes added connections get served at once (microhttpd.h, MHD_add_connection).
            flags |= UInt32(MHD_USE_NO_LISTEN_SOCKET.rawValue | MHD_USE_ITC.rawValue)
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let cert = configuration.tlsCertificatePEM.map { strdup($0) } ?? nil
        let key = configuration.tlsKeyPEM.map { strdup($0) } ?? nil
        defer {
            free(cert)
            free(key)
        }
        // With our own listener the cap is enforced where we accept (`admit`), and libmicrohttpd gets
        // head-room: libmicrohttpd 0.9.75 (Debian 12) leaves a worker's cleanup mutex locked when a
        // connection given to MHD_add_connection fails the worker's own limit check, and that worker
        // then deadlocks on its next cleanup or in MHD_stop_daemon. A worker's limit is the total
        // divided among the pool, and a burst of hand-overs can land on one worker before it counts
        // them, so each worker may take the whole cap twice over.
        let mhdLimit = listenFD >= 0
            ? min(Int(UInt32.max / 2), configuration.connectionLimit * max(1, configuration.threads) * 2)
            : configuration.connectionLimit
        var storageCopy = storage
        let started: OpaquePointer? = withUnsafePointer(to: &storageCopy) { sp in
            sp.withMemoryRebound(to: sockaddr.self, capacity: 1) { addr in
                var cfg = hearth_mhd_config(
                    thread_pool_size: UInt32(max(1, configuration.threads)),
                    connection_limit: UInt32(mhdLimit),
                    connection_timeout_seconds: UInt32(configuration.connectionTimeout),
                    connection_memory_limit: configuration.connectionMemoryLimit,
                    bind_address: addr,
                    tls_cert_pem: UnsafePointer(cert),
                    tls_key_pem: UnsafePointer(key),
                    notify_connection: hearthConnectionNotify, notify_connection_cls: context)
                // With our own listener libmicrohttpd binds nothing; otherwise it binds the address itself.
                let ownListener = listenFD >= 0
                if ownListener { cfg.bind_address = nil }
                errno = 0
                return hearth_mhd_start_daemon(flags, ownListener ? 0 : UInt16(configuration.port), hearthAccessHandler, context,
                                               hearthRequestCompleted, context, hearthURILogger, context, &cfg)
            }
        }
        guard let started else {
            let e = errno
            if listenFD >= 0 { close(listenFD) }
            if e == EADDRINUSE { throw .addressInUse(host: configuration.host, port: configuration.port) }
            throw .startFailed(host: configuration.host, port: configuration.port,
                               reason: e != 0 ? String(cString: strerror(e)) : "libmicrohttpd refused the configuration")
        }
        daemon = started
        guard listenFD >= 0 else {
            boundPort = Int(hearth_mhd_daemon_port(started))
            return
        }
        boundPort = HTTPServer.boundPort(of: listenFD)
        let acceptor: ConnectionAcceptor
        do {
            if let http2Handler {
                var limits = HTTP2Engine.Limits()
                limits.busyPollMicroseconds = configuration.http2BusyPollMicroseconds
                http2 = try HTTP2Engine(name: name, handler: http2Handler, limits: limits)
            }
            acceptor = try ConnectionAcceptor(
                listenFD: listenFD, name: name, sniffTimeout: configuration.sniffTimeout,
                admit: { [unowned self] sniffing in openConnections + sniffing < configuration.connectionLimit },
                deliver: { [unowned self] accepted, route in hand(accepted, route) })
        } catch {
            close(listenFD)
            MHD_stop_daemon(started)
            daemon = nil
            throw error
        }
        workerPool = max(1, configuration.threads)
        self.acceptor = acceptor
        acceptor.start()
    }

    /// Gives a sniffed socket to the protocol it speaks.
    private func hand(_ accepted: ConnectionAcceptor.Accepted, _ route: ConnectionAcceptor.Route) {
        guard let daemon else {
            close(accepted.fd)
            return
        }
        var address = accepted.address
        if route == .http2, let http2 {
            http2.adopt(fd: accepted.fd, remoteAddress: withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { HTTPServer.describe($0, withPort: true) } })
            return
        }
        let fd = balanced(accepted.fd)
        // libmicrohttpd owns the socket from here, and closes it itself if it cannot take it.
        _ = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                MHD_add_connection(daemon, fd, $0, accepted.addressLength)
            }
        }
    }

    /// `fd`, or a duplicate of it (the original closed) numbered for the next worker in turn: the
    /// HTTP/1.1 connections go to libmicrohttpd's workers one after another, whatever numbers the
    /// kernel gives them. libmicrohttpd picks the worker of an added socket by its number modulo the
    /// pool's size and the kernel gives the lowest free number, so in a table with holes (descriptors
    /// closed below others still open) a burst of new connections went to whichever workers those
    /// numbers named. The turn starts at the first connection's own worker, so consecutive numbers —
    /// a fresh process's — are never duplicated; when no number of the right residue turns up, `fd`
    /// is kept and the turn goes on from its worker.
    private func balanced(_ fd: Int32) -> Int32 {
        let pool = workerPool
        guard pool > 1, fd >= 0 else { return fd }
        if nextWorker < 0 { nextWorker = Int(fd) % pool }
        let moved = HTTPServer.renumber(fd, residue: nextWorker, modulo: pool)
        nextWorker = (Int(moved) % pool + 1) % pool
        return moved
    }

    /// A duplicate of `fd` whose number is `residue` modulo `modulo` (close-on-exec, the same open
    /// socket), `fd` itself closed; `fd` when it already is, or when none is found among the lowest
    /// 64 free numbers (each duplicate tried and not taken is closed again: one `fcntl` a number, once
    /// per connection, not per request).
    static func renumber(_ fd: Int32, residue: Int, modulo: Int) -> Int32 {
        if Int(fd) % modulo == residue { return fd }
        var tried: [Int32] = []
        defer { for t in tried { close(t) } }
        var from: Int32 = 0
        for _ in 0..<64 {
            let d = fcntl(fd, F_DUPFD_CLOEXEC, from)
            guard d >= 0 else { return fd }
            if Int(d) % modulo == residue {
                close(fd)
                return d
            }
            tried.append(d)
            from = d + 1
        }
        return fd
    }

    /// Connections being served now, over every protocol.
    var openConnections: Int {
        stateLock.lock()
        defer { stateLock.unlock() }
        return mhdConnections + (http2?.connectionCount ?? 0)
    }

    func connectionOpened() {
        stateLock.lock()
        mhdConnections += 1
        stateLock.unlock()
    }

    func connectionClosed() {
        stateLock.lock()
        mhdConnections -= 1
        stateLock.unlock()
    }

    /// Stops accepting, waits up to `graceSeconds` for in-flight requests, then closes everything.
    public func stop(graceSeconds: Double = 5) {
        stateLock.lock()
        guard let d = daemon else { stateLock.unlock(); return }
        stopping = true
        let acceptor = self.acceptor
        self.acceptor = nil
        stateLock.unlock()
        // Stop listening first so no new connection arrives while in-flight ones finish. With our
        // own listener MHD_quiesce_daemon has no socket to close; closing ours does that job.
        if let acceptor { acceptor.stop() } else { _ = MHD_quiesce_daemon(d) }
        http2?.goAway()
        endPushes()
        let deadline = Date().addingTimeInterval(graceSeconds)
        while Date() < deadline {
            let n = inFlight.load(ordering: .acquiring)
            if n == 0 && (http2?.openStreams ?? 0) == 0 { break }
            usleep(5_000)
        }
        endParks()
        MHD_stop_daemon(d)
        http2?.close()
        http2 = nil
        stateLock.lock()
        daemon = nil
        stateLock.unlock()
    }

    /// Registers a push response; false when the server is stopping (the box must end at once: a
    /// keep-alive connection can still ask for a stream after `endPushes` ran).
    func pushOpened(_ box: PushBox) -> Bool {
        stateLock.lock()
        defer { stateLock.unlock() }
        pushes[ObjectIdentifier(box)] = box
        return !stopping
    }

    func pushClosed(_ box: PushBox) {
        stateLock.lock()
        pushes[ObjectIdentifier(box)] = nil
        stateLock.unlock()
    }

    /// Push responses being served now.
    public var pushCount: Int {
        stateLock.lock()
        defer { stateLock.unlock() }
        return pushes.count
    }

    /// Ends every push response and waits (up to 2 s) until libmicrohttpd has released them, so no
    /// connection is still suspended when the daemon stops.
    private func endPushes() {
        stateLock.lock()
        let boxes = Array(pushes.values)
        stateLock.unlock()
        guard !boxes.isEmpty else { return }
        for b in boxes { b.end() }
        let deadline = Date().addingTimeInterval(2)
        while pushCount > 0 && Date() < deadline { usleep(2_000) }
    }

    /// Registers a request about to be parked; false once `endParks` has answered the parked
    /// requests (the daemon is about to stop: the request must not be suspended now).
    func parkOpened(_ park: ParkedAnswer) -> Bool {
        stateLock.lock()
        defer { stateLock.unlock() }
        guard !parksEnded else { return false }
        parks[ObjectIdentifier(park)] = park
        return true
    }

    /// What a parked request gets when the server stops before its answer.
    static let stoppingAnswer = Response.text("the server is stopping\n", status: 503)

    func parkClosed(_ park: ParkedAnswer) {
        stateLock.lock()
        parks[ObjectIdentifier(park)] = nil
        stateLock.unlock()
    }

    /// Requests parked for their answer now.
    var parkCount: Int {
        stateLock.lock()
        defer { stateLock.unlock() }
        return parks.count
    }

    /// Answers every request still parked after the grace period (503) and waits (up to 2 s) until
    /// libmicrohttpd has taken the answers, so no connection is suspended when the daemon stops.
    private func endParks() {
        stateLock.lock()
        parksEnded = true
        let parked = Array(parks.values)
        stateLock.unlock()
        guard !parked.isEmpty else { return }
        for p in parked { p.deliver(Self.stoppingAnswer) }
        let deadline = Date().addingTimeInterval(2)
        while parkCount > 0 && Date() < deadline { usleep(2_000) }
    }

    /// Number of requests being handled now.
    public var inFlightCount: Int { inFlight.load(ordering: .acquiring) }

    func began() { inFlight.add(1, ordering: .acquiringAndReleasing) }

    func ended() { inFlight.subtract(1, ordering: .acquiringAndReleasing) }

    /// A worker may poll (`WorkerPoll`) only while no request is being handled and no other worker
    /// polls: then the CPU would go idle. Released with `endPolling`.
    func beginPolling() -> Bool {
        inFlightCount == 0 && workerPolling.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    func endPolling() { workerPolling.store(false, ordering: .releasing) }
}
