import Foundation
import HearthCore
import HearthGRPC

/// Records a gRPC service's unary and server-streaming calls in a `RequestLog`, as
/// `RecordingService` does for HTTP: Firestore's SDKs speak gRPC, and their denials are the ones
/// people debug. Bidirectional streams (Listen, Write) get an entry as they open, one as they end,
/// and one per Listen target denied (`RecordingGRPCService+Streams.swift`).
public struct RecordingGRPCService: GRPCService {
    let listener: String
    let inner: any GRPCService
    let log: RequestLog
    let clock: Clock

    /// Records `inner`'s calls under the listener name `listener` (`firestore`).
    public init(_ listener: String, _ inner: any GRPCService, log: RequestLog, clock: Clock) {
        self.listener = listener
        self.inner = inner
        self.log = log
        self.clock = clock
    }

    public var name: String { inner.name }

    public func handler(for method: String) -> GRPCHandler? {
        guard let handler = inner.handler(for: method) else { return nil }
        let path = "/\(inner.name)/\(method)"
        // `request` is read only for a failed call: its entry names the database the call was for
        // (the path names only the method), so a denial opens beside that database's rules.
        let record: @Sendable (GRPCContext, UInt64, GRPCStatus, [UInt8]) -> Void = { [listener, log, clock] context, started, status, request in
            let http = RecordingGRPCService.httpStatus(status.code)
            let body = status.code == .ok ? nil : RecordingGRPCService.errorBody(status.code, status.message)
            log.append(RequestLog.Entry(
                seq: 0, time: clock.now(), service: listener, method: "POST", path: path, status: http,
                durationMicros: Int64((Clock.monotonicNanos() &- started) / 1000), requestID: context.requestIDValue,
                user: context.authorization.flatMap(CallerName.ofAuthorization),
                fields: status.code == .ok ? RecordingGRPCService.okFields : RecordingGRPCService.failureFields(status, request: request),
                errorBody: body, errorContentType: body == nil ? nil : "application/json"))
        }
        switch handler {
        case .unary(let f):
            return .unary(recorded(f, record))
        case .unaryQuick(let quick, let f):
            // A request `quick` leaves (nil) is recorded by `f`, which answers it.
            return .unaryQuick(quick: { request, context throws(GRPCStatus) in
                let started = Clock.monotonicNanos()
                do throws(GRPCStatus) {
                    guard let response = try quick(request, context) else { return nil }
                    record(context, started, .ok, [])
                    return response
                } catch {
                    record(context, started, error, request)
                    throw error
                }
            }, run: recorded(f, record))
        case .unaryAsync(let f):
            return .unaryAsync(recordedAsync(f, record))
        case .unaryAsyncQuick(let start, let f):
            // A request `start` leaves (false) is recorded by `f`, which answers it.
            return .unaryAsyncQuick(start: { request, context, reply in
                let started = Clock.monotonicNanos()
                return start(request, context) { result in
                    Self.record(result, context, started, request, record)
                    reply(result)
                }
            }, run: recordedAsync(f, record))
        case .serverStreaming(let f):
            return .serverStreaming(recordedStream(f, record))
        case .serverStreamingQuick(let quick, let f):
            // A request `quick` leaves (nil) is recorded by `f`, which answers it; one it hands on
            // (`.rest`) when the rest ends.
            return .serverStreamingQuick(quick: { request, context throws(GRPCStatus) in
                let started = Clock.monotonicNanos()
                do throws(GRPCStatus) {
                    switch try quick(request, context) {
                    case nil:
                        return nil
                    case .answered(let batch)?:
                        record(context, started, .ok, [])
                        return .answered(batch)
                    case .rest(let rest)?:
                        return .rest { responses throws(GRPCStatus) in
                            do throws(GRPCStatus) {
                                try rest(responses)
                                record(context, started, .ok, [])
                            } catch {
                                record(context, started, error, request)
                                throw error
                            }
                        }
                    }
                } catch {
                    record(context, started, error, request)
                    throw error
                }
            }, run: recordedStream(f, record))
        case .bidirectional(let open):
            return recordingStream(open, method: method, path: path)
        }
    }

    /// An OK call's fields, shared by its entries: one array made per call was an allocation (and a
    /// free once the log's ring reused the slot) on every gRPC get.
    static let okFields: [(String, JSON)] = [("grpc-status", .int(0))]

    /// The error as the REST API would render it, so readers treat both transports alike.
    static func errorBody(_ code: GRPCStatus.Code, _ message: String) -> String {
        JSON.object(["error": .object(["code": .int(Int64(httpStatus(code))), "message": .string(message),
                                       "status": .string(statusName(code))])]).serialized()
    }

    private typealias Unary = @Sendable (_ request: [UInt8], _ context: GRPCContext) throws(GRPCStatus) -> [UInt8]

    private typealias Async = @Sendable (_ request: [UInt8], _ context: GRPCContext,
                                         _ reply: @escaping @Sendable (Result<[UInt8], GRPCStatus>) -> Void) -> Void

    /// `f` answering later, recording each call's outcome.
    private func recordedAsync(_ f: @escaping Async, _ record: @escaping @Sendable (GRPCContext, UInt64, GRPCStatus, [UInt8]) -> Void) -> Async {
        { request, context, reply in
            let started = Clock.monotonicNanos()
            f(request, context) { result in
                Self.record(result, context, started, request, record)
                reply(result)
            }
        }
    }

    private static func record(_ result: Result<[UInt8], GRPCStatus>, _ context: GRPCContext, _ started: UInt64, _ request: [UInt8],
                               _ record: @Sendable (GRPCContext, UInt64, GRPCStatus, [UInt8]) -> Void) {
        switch result {
        case .success: record(context, started, .ok, [])
        case .failure(let status): record(context, started, status, request)
        }
    }

    /// A failed call's fields: its gRPC status and, when the request names one, its database.
    static func failureFields(_ status: GRPCStatus, request: [UInt8]) -> [(String, JSON)] {
        var fields: [(String, JSON)] = [("grpc-status", .int(Int64(status.code.rawValue)))]
        if let database = FirestoreStreamWire.database(ofRequest: request) { fields.append(("database", .string(database))) }
        return fields
    }

    private typealias Streaming = @Sendable (_ request: [UInt8], _ context: GRPCContext, _ responses: any GRPCResponseStream) throws(GRPCStatus) -> Void

    /// Server-streaming `f`, recording each call's outcome.
    private func recordedStream(_ f: @escaping Streaming, _ record: @escaping @Sendable (GRPCContext, UInt64, GRPCStatus, [UInt8]) -> Void) -> Streaming {
        { request, context, responses throws(GRPCStatus) in
            let started = Clock.monotonicNanos()
            do throws(GRPCStatus) {
                try f(request, context, responses)
                record(context, started, .ok, [])
            } catch {
                record(context, started, error, request)
                throw error
            }
        }
    }

    /// `f`, recording each call's outcome.
    private func recorded(_ f: @escaping Unary, _ record: @escaping @Sendable (GRPCContext, UInt64, GRPCStatus, [UInt8]) -> Void) -> Unary {
        { request, context throws(GRPCStatus) in
            let started = Clock.monotonicNanos()
            do throws(GRPCStatus) {
                let response = try f(request, context)
                record(context, started, .ok, [])
                return response
            } catch {
                record(context, started, error, request)
                throw error
            }
        }
    }

    /// The HTTP status Google's APIs map each gRPC code to (google.rpc.Code).
    static func httpStatus(_ code: GRPCStatus.Code) -> Int {
        switch code {
        case .ok: 200
        case .cancelled: 499
        case .invalidArgument, .failedPrecondition, .outOfRange: 400
        case .unauthenticated: 401
        case .permissionDenied: 403
        case .notFound: 404
        case .alreadyExists, .aborted: 409
        case .resourceExhausted: 429
        case .unimplemented: 501
        case .unavailable: 503
        case .deadlineExceeded: 504
        case .unknown, .internal, .dataLoss: 500
        }
    }

    /// `PERMISSION_DENIED` for `.permissionDenied`.
    static func statusName(_ code: GRPCStatus.Code) -> String {
        var out = ""
        for c in "\(code)".replacingOccurrences(of: "`", with: "") {
            if c.isUppercase { out += "_" }
            out += c.uppercased()
        }
        return out
    }
}
