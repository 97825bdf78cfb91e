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
    private var routes: [String: GRPCHandler] = [:]
    /// The method routed last: a client calls one method many times in a row, and comparing its
    /// path (a memcmp) spares hashing it on every call.
    private var lastRoute: (path: String, handler: GRPCHandler)?

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
        let call = GRPCCall(server: self, stream: stream, headers: headers)
        call.begin()
        return call
    }

    /// The method named by `:path` `/{service}/{method}`, or the UNIMPLEMENTED status gRPC servers send.
    func route(_ fullPath: String) -> Result<GRPCHandler, GRPCStatus> {
        routesLock.lock()
        if let lastRoute, lastRoute.path == fullPath {
            routesLock.unlock()
            return .success(lastRoute.handler)
        }
        let known = routes[fullPath]
        if let known { lastRoute = (fullPath, known) }
        routesLock.unlock()
        if let known { return .success(known) }
        guard let (service, method) = Self.split(fullPath), let handler = services[service]?.handler(for: method) else {
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
