import Foundation
import HearthCore
import HearthHTTP

/// gRPC over HearthHTTP's HTTP/2 streams: routes `:path` to a `GRPCService` method and runs the
/// call on a worker pool.
/// Related: https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md
public final class GRPCServer: HTTP2StreamHandler, @unchecked Sendable {
    /// Limits and pool size.
    public struct Configuration: Sendable {
        /// Firestore accepts requests up to 10 MiB; larger ones get RESOURCE_EXHAUSTED.
        public var maxReceiveMessageBytes: Int
        /// Response bytes one stream may queue while its client is not reading.
        public var maxBufferedResponseBytes: Int
        /// `waitUntilWritable` returns once a stream's queue falls below this.
        public var lowWaterBytes: Int
        public var workers: Int

        public init(maxReceiveMessageBytes: Int = 10 << 20, maxBufferedResponseBytes: Int = 8 << 20,
                    lowWaterBytes: Int = 1 << 20, workers: Int = 8) {
            self.maxReceiveMessageBytes = maxReceiveMessageBytes
            self.maxBufferedResponseBytes = maxBufferedResponseBytes
            self.lowWaterBytes = lowWaterBytes
            self.workers = workers
        }
    }

    /// The largest request message a handler may take on a loop thread (`unaryAsyncQuick`,
    /// `receivedOnLoop`): decoding a 10 MiB commit there would hold every other connection of the
    /// loop for milliseconds; a commit of a few documents is a few KiB.
    public static let loopMessageLimit = 64 << 10

    /// The listener's name in log lines.
    public let name: String
    let services: [String: any GRPCService]
    let configuration: Configuration
    let logger: Logger?
    let ids: IDGenerator
    let pool: WorkerPool
    let timers = DispatchQueue(label: "hearth.grpc.deadlines")
    /// Quick unary calls waiting for the end of the read that completed them.
    let quickCalls: QuickCalls
    /// `:path` → handler for the methods found so far (asking the service builds closures each time).
    private let routesLock = InlineLock()
    private var routes: [String: GRPCRoute] = [:]
    /// The method routed last: a client calls one method many times in a row, and comparing its
    /// path (a memcmp) spares hashing it on every call.
    private var lastRoute: (path: String, route: GRPCRoute)?

    public init(name: String = "grpc", services: [any GRPCService], configuration: Configuration = Configuration(), logger: Logger? = nil,
                ids: IDGenerator = IDGenerator()) {
        self.name = name
        self.services = Dictionary(services.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.configuration = configuration
        self.logger = logger
        self.ids = ids
        self.pool = WorkerPool(threads: configuration.workers, name: "grpc")
        self.quickCalls = QuickCalls(pool: pool)
    }

    public func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)]) -> any HTTP2StreamDelegate {
        let call = GRPCCall(server: self, stream: stream, headers: headers, template: GRPCCallTemplate(self, headers))
        call.begin()
        return call
    }

    /// A call whose fields repeat the previous request's on the connection shares that request's
    /// template (kept in `memo`): a client sends the same fields call after call, and reading them
    /// again — the walk for `:path` and the metadata, the method's lookup and the strings' copies —
    /// cost ~1k instructions a gRPC get.
    public func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)], repeated: Bool,
                     memo: inout AnyObject?) -> any HTTP2StreamDelegate {
        let template: GRPCCallTemplate
        if repeated, let kept = memo as? GRPCCallTemplate {
            template = kept
        } else {
            template = GRPCCallTemplate(self, headers)
            memo = template
        }
        let call = GRPCCall(server: self, stream: stream, headers: headers, template: template)
        call.begin()
        return call
    }

    /// The method named by `:path` `/{service}/{method}`, or the UNIMPLEMENTED status gRPC servers send.
    func route(_ fullPath: String) -> Result<GRPCRoute, GRPCStatus> {
        routesLock.lock()
        if let lastRoute, lastRoute.path == fullPath {
            routesLock.unlock()
            return .success(lastRoute.route)
        }
        let known = routes[fullPath]
        if let known { lastRoute = (fullPath, known) }
        routesLock.unlock()
        if let known { return .success(known) }
        guard let (service, method) = Self.split(fullPath), let handler = services[service]?.handler(for: method).map(GRPCRoute.init) else {
            // gRPC paths carry no query, but a stray one must not hide the method.
            let path = fullPath.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(fullPath[..<$0]) } ?? fullPath
            return .failure(GRPCStatus(.unimplemented, "Method not found: \(path.hasPrefix("/") ? String(path.dropFirst()) : path)"))
        }
        // Only found methods are remembered: a service has a fixed, small set, so the table stays small
        // whatever paths clients send.
        routesLock.lock()
        if routes.count < 256 { routes[fullPath] = handler }
        routesLock.unlock()
        return .success(handler)
    }

    /// `/{service}/{method}[?…]` split on bytes; nil for any other shape. Splitting Characters cost
    /// ~12% of a whole GetDocument; the two differ only where a combining mark follows a `/`, which
    /// no service or method name has, so such a path is UNIMPLEMENTED either way.
    static func split(_ fullPath: String) -> (service: String, method: String)? {
        let utf8 = fullPath.utf8
        let end = utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex
        guard utf8.first == UInt8(ascii: "/") else { return nil }
        let start = utf8.index(after: utf8.startIndex)
        guard let slash = utf8[start..<end].firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let after = utf8.index(after: slash)
        guard utf8[after..<end].firstIndex(of: UInt8(ascii: "/")) == nil else { return nil }
        return (String(fullPath[start..<slash]), String(fullPath[after..<end]))
    }
}

/// A method a `:path` names, made once per path and kept by the server: a call reads its handler
/// in place (copying the enum retained and released each of its closures, a dozen times a call).
final class GRPCRoute: Sendable {
    let handler: GRPCHandler
    /// Whether the handler is `.bidirectional`.
    let bidirectional: Bool

    init(_ handler: GRPCHandler) {
        self.handler = handler
        if case .bidirectional = handler { bidirectional = true } else { bidirectional = false }
    }
}

/// What a call's request fields ask, read once: where `:path` and the metadata are, the method
/// `:path` names and the metadata `GRPCCall.begin` checks. Made of one list of fields and shared by
/// the calls on the same connection whose fields repeat that list exactly
/// (`GRPCServer.open(_:headers:repeated:memo:)`).
final class GRPCCallTemplate: Sendable {
    /// `:path` ("" when absent).
    let path: String
    /// What `:path` names.
    let routed: Result<GRPCRoute, GRPCStatus>
    /// Whether the route is a bidirectional one.
    let bidirectional: Bool
    /// Whether `content-type` starts with `application/grpc` (a call without it is answered 415).
    let isGRPCContentType: Bool
    /// The `grpc-encoding` and `grpc-timeout` values.
    let encoding: String?
    let timeout: String?
    /// How many pseudo-headers lead the fields, and where the first `authorization` is (-1: none).
    let metadataStart: Int
    let authorization: Int
    /// Whether a pseudo-header follows a regular field (the metadata are then a copy without them).
    let pseudoAfterMetadata: Bool

    init(_ server: GRPCServer, _ headers: [(name: String, value: String)]) {
        let scan = RequestFields(headers)
        path = scan.path < 0 ? "" : headers[scan.path].value
        routed = server.route(path)
        if case .success(let route) = routed { bidirectional = route.bidirectional } else { bidirectional = false }
        isGRPCContentType = (scan.contentType < 0 ? "" : headers[scan.contentType].value).hasPrefix("application/grpc")
        encoding = scan.encoding < 0 ? nil : headers[scan.encoding].value
        timeout = scan.timeout < 0 ? nil : headers[scan.timeout].value
        metadataStart = scan.metadataStart
        authorization = scan.authorization
        pseudoAfterMetadata = scan.pseudoAfterMetadata
    }
}
