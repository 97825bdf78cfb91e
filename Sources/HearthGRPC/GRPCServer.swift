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

    /// The listener's name in log lines.
    public let name: String
    let services: [String: any GRPCService]
    let configuration: Configuration
    let logger: Logger?
    let ids: IDGenerator
    let pool: WorkerPool
    let timers = DispatchQueue(label: "hearth.grpc.deadlines")

    public init(name: String = "grpc", services: [any GRPCService], configuration: Configuration = Configuration(), logger: Logger? = nil,
                ids: IDGenerator = IDGenerator()) {
        self.name = name
        self.services = Dictionary(services.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.configuration = configuration
        self.logger = logger
        self.ids = ids
        self.pool = WorkerPool(threads: configuration.workers, name: "grpc")
    }

    public func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)]) -> any HTTP2StreamDelegate {
        let call = GRPCCall(server: self, stream: stream, headers: headers)
        call.begin()
        return call
    }

    /// The method named by `:path` `/{service}/{method}`, or the UNIMPLEMENTED status gRPC servers send.
    func route(_ fullPath: String) -> Result<GRPCHandler, GRPCStatus> {
        // gRPC paths carry no query, but a stray one must not hide the method.
        let path = fullPath.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let name = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard parts.count == 3, parts[0].isEmpty, let service = services[String(parts[1])],
              let handler = service.handler(for: String(parts[2])) else {
            return .failure(GRPCStatus(.unimplemented, "Method not found: \(name)"))
        }
        return .success(handler)
    }
}
