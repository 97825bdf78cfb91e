import Foundation
import HearthCore
import HearthHTTP

/// Records every request a service answers in a `RequestLog`, without the service knowing: a
/// decorator the `hearth` target puts around each service's listener.
public struct RecordingService: HTTPService {
    let name: String
    let inner: any HTTPService
    let log: RequestLog
    let clock: Clock

    /// Records `inner`'s requests under the service name `name`.
    public init(_ name: String, _ inner: any HTTPService, log: RequestLog, clock: Clock) {
        self.name = name
        self.inner = inner
        self.log = log
        self.clock = clock
    }

    public func dispose(_ request: Request) -> RequestDisposition {
        // The server's own reading of the arrival (one clock read a request fewer).
        let received = request.receivedUptimeNanoseconds
        let started = received != 0 ? received : DispatchTime.now().uptimeNanoseconds
        let recorder = Recorder(name: name, request: request, log: log, clock: clock, started: started)
        switch inner.dispose(request) {
        case .respond(let response):
            recorder.record(response)
            return .respond(response)
        case .collect(let limit, let tooLarge, let handler):
            return .collect(limit: limit, tooLarge: tooLarge) { req in
                let response = handler(req)
                recorder.record(response)
                return response
            }
        case .stream(let consumer):
            return .stream(RecordingConsumer(inner: consumer, recorder: recorder))
        case .collectDeferred(let limit, let tooLarge, let handler):
            return .collectDeferred(limit: limit, tooLarge: tooLarge) { req, answer in
                handler(req, answer.mapping { response in
                    recorder.record(response)
                    return response
                })
            }
        }
    }
}

/// The facts of one request, kept until its response is known.
struct Recorder: Sendable {
    let name: String
    let request: Request
    let log: RequestLog
    let clock: Clock
    let started: UInt64

    func record(_ response: Response, status: Int? = nil) {
        let status = status ?? response.status
        var body: String?
        var contentType: String?
        if status >= 400, let bytes = response.bodyBytes, !bytes.isEmpty {
            body = String(decoding: bytes.prefix(RequestLog.maxBodyBytes), as: UTF8.self)
            contentType = response.headers["Content-Type"]
        }
        log.append(RequestLog.Entry(
            seq: 0, time: clock.now(), service: name, method: request.method, path: request.rawPath, status: status,
            durationMicros: Int64((DispatchTime.now().uptimeNanoseconds &- started) / 1000), requestID: request.id,
            user: CallerName.of(request),
            // Most requests carry no fields of their own: `+` would allocate a new array anyway.
            fields: request.logFields.isEmpty ? response.logFields : response.logFields + request.logFields,
            errorBody: body, errorContentType: contentType))
    }
}

/// Passes a streamed body through and records the answer (or 499 when the client went away).
final class RecordingConsumer: RequestBodyConsumer {
    let inner: any RequestBodyConsumer
    let recorder: Recorder

    init(inner: any RequestBodyConsumer, recorder: Recorder) {
        self.inner = inner
        self.recorder = recorder
    }

    func consume(_ chunk: UnsafeRawBufferPointer) { inner.consume(chunk) }

    func finish() -> Response {
        let response = inner.finish()
        recorder.record(response)
        return response
    }

    func abandon() {
        inner.abandon()
        // 499: nginx's "client closed request", as the S3 log records it.
        recorder.record(Response(status: 499), status: 499)
    }
}
