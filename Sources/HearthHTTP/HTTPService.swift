import Foundation
import Synchronization

/// What a service does with a request once its headers have arrived.
public enum RequestDisposition {
    /// Answer now; any request body is read and discarded by the server.
    case respond(Response)
    /// Collect up to `limit` body bytes into `request.body`, then call `handler`.
    /// A larger body gets `tooLarge`'s response (the server drains the rest).
    case collect(limit: Int, tooLarge: Response, handler: @Sendable (Request) -> Response)
    /// Hand every body chunk to `consumer` as it arrives (bounded memory for any size).
    case stream(any RequestBodyConsumer)
    /// `collect`, answered later: `handler` gets the whole request and a `DeferredAnswer` to send the
    /// response through, now or later, from any thread. On a listener with
    /// `HTTPServer.Configuration.allowsDeferred` the connection is parked meanwhile (libmicrohttpd's
    /// suspend/resume) and no worker thread waits for the answer; elsewhere the worker waits for it.
    case collectDeferred(limit: Int, tooLarge: Response, handler: @Sendable (Request, DeferredAnswer) -> Void)
}

/// The response to a `collectDeferred` request: `send` it once, from any thread (later sends are
/// ignored).
public final class DeferredAnswer: Sendable {
    /// Where the answer goes: a closure, a parked exchange, or another answer after a transform.
    /// The last two are stored as they are: as closures each was one more allocation per answer
    /// (its captures' box), and a REST commit's answer passed through both.
    private enum Target: Sendable {
        case deliver(@Sendable (Response) -> Void)
        case parked(ParkedAnswer)
        case mapped(DeferredAnswer, @Sendable (Response) -> Response)
    }

    private let target: Target
    /// Whether it was sent: one atomic exchange decides which send is the first (an `NSLock` here
    /// was two allocations and their frees per answer, and a REST commit makes two answers).
    private let sent = Atomic<Bool>(false)

    public init(_ deliver: @escaping @Sendable (Response) -> Void) {
        target = .deliver(deliver)
    }

    /// The answer of a parked exchange: `park.deliver`.
    init(_ park: ParkedAnswer) {
        target = .parked(park)
    }

    private init(_ inner: DeferredAnswer, _ transform: @escaping @Sendable (Response) -> Response) {
        target = .mapped(inner, transform)
    }

    public func send(_ response: Response) {
        guard !sent.exchange(true, ordering: .acquiringAndReleasing) else { return }
        switch target {
        case .deliver(let deliver): deliver(response)
        case .parked(let park): park.deliver(response)
        case .mapped(let inner, let transform): inner.send(transform(response))
        }
    }

    /// An answer that sends `transform`'s version of what it is given through this one (a wrapper
    /// adding headers, recording the answer).
    public func mapping(_ transform: @escaping @Sendable (Response) -> Response) -> DeferredAnswer {
        DeferredAnswer(self, transform)
    }

    /// Runs `start` with an answer and waits for it (callers that must answer synchronously).
    public static func wait(_ start: (DeferredAnswer) -> Void) -> Response {
        let box = WaitBox()
        start(DeferredAnswer { r in box.put(r) })
        return box.take()
    }

    private final class WaitBox: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var response: Response?
        func put(_ r: Response) {
            response = r
            done.signal()
        }
        func take() -> Response {
            done.wait()
            return response!
        }
    }
}

/// Receives a request body chunk by chunk.
///
/// Calls come from one server thread at a time for a given request, in order:
/// `consume` zero or more times, then exactly one of `finish` or `abandon`.
public protocol RequestBodyConsumer: AnyObject {
    /// The next bytes of the body (already de-chunked from HTTP chunked framing).
    func consume(_ chunk: UnsafeRawBufferPointer)
    /// The body is complete; return the response.
    func finish() -> Response
    /// The client went away or the request failed before the body was complete; undo partial work.
    func abandon()
}

/// One listener's request handling: the seam between the server and a service.
public protocol HTTPService: Sendable {
    /// Decides how to handle a request whose headers have been received.
    func dispose(_ request: Request) -> RequestDisposition
}

extension HTTPService {
    /// Answers a request whose whole body is at hand, as the server would deliver it: a body past
    /// a collecting disposition's limit gets its too-large answer, a streaming one gets the body in
    /// one piece. For drivers without a socket (fuzz targets, tests).
    public func answer(_ request: Request) -> Response {
        switch dispose(request) {
        case .respond(let r): return r
        case .collect(let limit, let tooLarge, let handler): return request.body.count > limit ? tooLarge : handler(request)
        case .collectDeferred(let limit, let tooLarge, let handler):
            return request.body.count > limit ? tooLarge : DeferredAnswer.wait { handler(request, $0) }
        case .stream(let consumer):
            request.body.withUnsafeBytes { consumer.consume($0) }
            return consumer.finish()
        }
    }
}
