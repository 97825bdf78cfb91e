/// What a service does with a request once its headers have arrived.
public enum RequestDisposition {
    /// Answer now; any request body is read and discarded by the server.
    case respond(Response)
    /// Collect up to `limit` body bytes into `request.body`, then call `handler`.
    /// A larger body gets `tooLarge`'s response (the server drains the rest).
    case collect(limit: Int, tooLarge: Response, handler: @Sendable (Request) -> Response)
    /// Hand every body chunk to `consumer` as it arrives (bounded memory for any size).
    case stream(any RequestBodyConsumer)
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
