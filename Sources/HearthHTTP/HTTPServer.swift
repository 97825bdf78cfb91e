import Foundation
import HearthCore
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

/// An HTTP/1.1 listener over libmicrohttpd serving one `HTTPService`.
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
        /// PEM certificate and key: serve HTTPS.
        public var tlsCertificatePEM: String?
        public var tlsKeyPEM: String?

        public init(host: String = "127.0.0.1", port: Int = 0, threads: Int = 8, connectionLimit: Int = 1000,
                    connectionTimeout: Int = 60, connectionMemoryLimit: Int = 64 << 10,
                    tlsCertificatePEM: String? = nil, tlsKeyPEM: String? = nil) {
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
    private let stateLock = NSLock()
    private var inFlight = 0
    private(set) var stopping = false
    private var boundPort = 0

    /// A server named `name` (it appears in log lines) for `service`.
    public init(name: String, configuration: Configuration, service: any HTTPService, logger: Logger? = nil,
                ids: IDGenerator = IDGenerator(), clock: Clock? = nil) {
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
        var flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ERROR_LOG.rawValue)
        flags &= ~UInt32(MHD_USE_ERROR_LOG.rawValue)  // libmicrohttpd's own stderr chatter stays off; we log per request
        if isIPv6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        if configuration.tlsCertificatePEM != nil { flags |= UInt32(MHD_USE_TLS.rawValue) }
        _ = length
        let context = Unmanaged.passUnretained(self).toOpaque()
        let cert = configuration.tlsCertificatePEM.map { strdup($0) } ?? nil
        let key = configuration.tlsKeyPEM.map { strdup($0) } ?? nil
        defer {
            free(cert)
            free(key)
        }
        var storageCopy = storage
        let started: OpaquePointer? = withUnsafePointer(to: &storageCopy) { sp in
            sp.withMemoryRebound(to: sockaddr.self, capacity: 1) { addr in
                var cfg = hearth_mhd_config(
                    thread_pool_size: UInt32(max(1, configuration.threads)),
                    connection_limit: UInt32(configuration.connectionLimit),
                    connection_timeout_seconds: UInt32(configuration.connectionTimeout),
                    connection_memory_limit: configuration.connectionMemoryLimit,
                    bind_address: addr,
                    tls_cert_pem: UnsafePointer(cert),
                    tls_key_pem: UnsafePointer(key))
                errno = 0
                return hearth_mhd_start_daemon(flags, UInt16(configuration.port), hearthAccessHandler, context,
                                               hearthRequestCompleted, context, hearthURILogger, context, &cfg)
            }
        }
        guard let started else {
            let e = errno
            if e == EADDRINUSE { throw .addressInUse(host: configuration.host, port: configuration.port) }
            throw .startFailed(host: configuration.host, port: configuration.port,
                               reason: e != 0 ? String(cString: strerror(e)) : "libmicrohttpd refused the configuration")
        }
        daemon = started
        boundPort = Int(hearth_mhd_daemon_port(started))
    }

    /// Stops accepting, waits up to `graceSeconds` for in-flight requests, then closes everything.
    public func stop(graceSeconds: Double = 5) {
        stateLock.lock()
        guard let d = daemon else { stateLock.unlock(); return }
        stopping = true
        stateLock.unlock()
        // Stop listening first so no new connection arrives while in-flight ones finish.
        _ = MHD_quiesce_daemon(d)
        let deadline = Date().addingTimeInterval(graceSeconds)
        while Date() < deadline {
            stateLock.lock()
            let n = inFlight
            stateLock.unlock()
            if n == 0 { break }
            usleep(5_000)
        }
        MHD_stop_daemon(d)
        stateLock.lock()
        daemon = nil
        stateLock.unlock()
    }

    /// Number of requests being handled now.
    public var inFlightCount: Int {
        stateLock.lock()
        defer { stateLock.unlock() }
        return inFlight
    }

    func began() {
        stateLock.lock()
        inFlight += 1
        stateLock.unlock()
    }

    func ended() {
        stateLock.lock()
        inFlight -= 1
        stateLock.unlock()
    }

    private static func socketAddress(_ host: String, port: Int) throws(HTTPServerError) -> (sockaddr_storage, Int, Bool) {
        var storage = sockaddr_storage()
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            withUnsafeMutablePointer(to: &storage) { p in
                p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { s in
                    s.pointee.sin_family = sa_family_t(AF_INET)
                    s.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
                    s.pointee.sin_addr = v4
                }
            }
            return (storage, MemoryLayout<sockaddr_in>.size, false)
        }
        var v6 = in6_addr()
        let bare = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        if inet_pton(AF_INET6, bare, &v6) == 1 {
            withUnsafeMutablePointer(to: &storage) { p in
                p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { s in
                    s.pointee.sin6_family = sa_family_t(AF_INET6)
                    s.pointee.sin6_port = in_port_t(UInt16(port).bigEndian)
                    s.pointee.sin6_addr = v6
                }
            }
            return (storage, MemoryLayout<sockaddr_in6>.size, true)
        }
        throw .badAddress(host)
    }
}
