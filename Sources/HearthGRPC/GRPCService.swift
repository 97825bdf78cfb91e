import HearthCore

/// One gRPC service (`google.firestore.v1.Firestore`): the seam between the gRPC server and a
/// service's transport-neutral core. Messages cross it as serialized protobuf bytes, so the
/// transport knows nothing of any message type.
public protocol GRPCService: Sendable {
    /// The fully qualified service name, as in the `:path` `/{name}/{method}`.
    var name: String { get }
    /// The handler of one method (the part of `:path` after the service name); nil makes the
    /// server answer UNIMPLEMENTED `Method not found: {name}/{method}`.
    func handler(for method: String) -> GRPCHandler?
}

/// How a method is called.
public enum GRPCHandler: Sendable {
    /// One request message, one response message. Runs on a worker thread, never a loop thread.
    case unary(@Sendable (_ request: [UInt8], _ context: GRPCContext) throws(GRPCStatus) -> [UInt8])
    /// A unary method whose common requests are answered on the connection's loop thread the moment
    /// they are complete, with no hand-off to a worker and back (two thread wake-ups, most of a
    /// short call's latency). `quick` must do only bounded work that never waits: no lock another
    /// call may hold for long, no disk writer, no network, no decompression; it returns nil for a
    /// request it cannot answer so, and `run` answers that one on a worker thread.
    case unaryQuick(quick: @Sendable (_ request: [UInt8], _ context: GRPCContext) throws(GRPCStatus) -> [UInt8]?,
                    run: @Sendable (_ request: [UInt8], _ context: GRPCContext) throws(GRPCStatus) -> [UInt8])
    /// One request message, one response message, answered later: `run` is called on a worker
    /// thread and calls `reply` exactly once, from any thread, without holding the worker while it
    /// waits (a commit waiting for its batch: a worker held there is one fewer request decoded
    /// meanwhile, which capped the batch at the worker count).
    case unaryAsync(@Sendable (_ request: [UInt8], _ context: GRPCContext,
                               _ reply: @escaping @Sendable (Result<[UInt8], GRPCStatus>) -> Void) -> Void)
    /// `unaryAsync` whose common requests are started on the connection's loop thread the moment
    /// they are complete (a commit decoded, checked and queued for the writer there), with no
    /// hand-off to a worker: that hand-off was a thread wake-up per call. `start` must do only
    /// bounded work that never waits (as `unaryQuick`'s `quick`; it must not run a write batch
    /// itself) and returns false, having done nothing, for a request it leaves to `run` on a worker.
    /// Compressed and large requests always go to `run`.
    case unaryAsyncQuick(start: @Sendable (_ request: [UInt8], _ context: GRPCContext,
                                           _ reply: @escaping @Sendable (Result<[UInt8], GRPCStatus>) -> Void) -> Bool,
                         run: @Sendable (_ request: [UInt8], _ context: GRPCContext,
                                         _ reply: @escaping @Sendable (Result<[UInt8], GRPCStatus>) -> Void) -> Void)
    /// One request message, any number of responses sent through `responses`; returning ends the
    /// call with OK, throwing ends it with that status. Runs on a worker thread, and may block in
    /// `responses.waitUntilWritable()` while the client reads slowly.
    case serverStreaming(@Sendable (_ request: [UInt8], _ context: GRPCContext, _ responses: any GRPCResponseStream) throws(GRPCStatus) -> Void)
    /// A server-streaming method whose small, common requests are answered on the connection's loop
    /// thread the moment they are complete, as `unaryQuick`'s are (a query with a few results: the
    /// hand-off to a worker and back was two thread wake-ups a call). `quick` must do only bounded
    /// work that never waits (as `unaryQuick`'s); it returns every response message at once
    /// (`.answered`), or `.rest` to finish the call on a worker thread from where it stopped (a
    /// query that turned out larger than the loop may take), or nil, having done nothing, for a
    /// request it leaves to `run` on a worker. Compressed and large requests always go to `run`.
    case serverStreamingQuick(quick: @Sendable (_ request: [UInt8], _ context: GRPCContext) throws(GRPCStatus) -> GRPCQuickStream?,
                              run: @Sendable (_ request: [UInt8], _ context: GRPCContext, _ responses: any GRPCResponseStream) throws(GRPCStatus) -> Void)
    /// A stream of requests and responses (Listen, Write). Called once when the stream opens; the
    /// returned object receives the request messages. No thread is held while the stream waits.
    case bidirectional(@Sendable (_ context: GRPCContext, _ responses: any GRPCResponseStream) -> any GRPCRequestStream)
}

/// What a `serverStreamingQuick` handler's `quick` made of a call on the loop thread.
public enum GRPCQuickStream: Sendable {
    /// Every response message; they leave with the headers and the OK trailers in one change of the stream.
    case answered(GRPCMessageBatch)
    /// The rest of the call, run on a worker thread as a `serverStreaming` handler is (returning
    /// ends it with OK, throwing with that status).
    case rest(@Sendable (_ responses: any GRPCResponseStream) throws(GRPCStatus) -> Void)
}

/// What a call carries besides its messages.
public struct GRPCContext: Sendable {
    /// Request metadata (headers other than pseudo-headers), names lower-case, in arrival order.
    public var metadata: [(name: String, value: String)] {
        get { metadataStart == 0 ? fields : Array(fields[metadataStart...]) }
        set {
            fields = newValue
            metadataStart = 0
            authorizationAt = nil
        }
    }
    /// The fields `metadata` is made of: from `metadataStart` on. A call's context keeps its
    /// request's whole header list, pseudo-headers first (RFC 9113 §8.3, which nghttp2 enforces),
    /// instead of a copy without them: that copy cost an allocation, a retain of every name and
    /// value, and their releases one by one when the call ended (~1k instructions a gRPC get).
    var fields: [(name: String, value: String)]
    var metadataStart: Int
    /// Where the first `authorization` field is in `fields` (-1: none), when the call found it while
    /// reading its headers (`RequestFields`); nil: `authorization` looks it up.
    var authorizationAt: Int?
    /// When the call's `grpc-timeout` runs out, in `DispatchTime.now().uptimeNanoseconds`; nil: none.
    public var deadlineNanos: UInt64?
    /// The peer, `ip:port`.
    public var remoteAddress: String
    /// The call's id for the request log and log lines, its text made only when read.
    public var requestIDValue: RequestID
    /// An id for log lines.
    public var requestID: String {
        get { requestIDValue.text }
        set { requestIDValue = .text(newValue) }
    }

    public init(metadata: [(name: String, value: String)], deadlineNanos: UInt64?, remoteAddress: String, requestID: String) {
        self.init(fields: metadata, metadataStart: 0, deadlineNanos: deadlineNanos, remoteAddress: remoteAddress,
                  requestID: .text(requestID))
    }

    /// A context whose metadata are `fields` from `metadataStart` on.
    init(fields: [(name: String, value: String)], metadataStart: Int, deadlineNanos: UInt64?, remoteAddress: String,
         requestID: RequestID) {
        self.fields = fields
        self.metadataStart = metadataStart
        self.deadlineNanos = deadlineNanos
        self.remoteAddress = remoteAddress
        self.requestIDValue = requestID
    }

    /// `self["authorization"]`: the caller's credentials, asked for by the service and the request log
    /// on every call, found without walking the fields again when the call found them already.
    public var authorization: String? {
        guard let at = authorizationAt else { return self["authorization"] }
        return at < 0 ? nil : fields[at].value
    }

    /// The first value of metadata `name` (lower-case).
    public subscript(_ name: String) -> String? {
        // Lengths first: a name of another length is not compared at all (comparing strings whose
        // contents differ is a call into the runtime's general comparison, ~200 instructions, and
        // a gRPC get asks for five names, three of them absent, among ~7 fields).
        let count = name.utf8.count
        for i in metadataStart..<fields.count where fields[i].name.utf8.count == count && fields[i].name == name {
            return fields[i].value
        }
        return nil
    }
}

/// The response side of a call. Thread-safe: any thread may send (a commit's thread feeding a
/// listener, say); messages go out in the order `send` was called.
public protocol GRPCResponseStream: AnyObject, Sendable {
    /// Queues one response message; false (and nothing queued) once the call has ended
    /// (finished, cancelled by the client, reset, deadline passed, server shutting down).
    @discardableResult func send(_ message: [UInt8]) -> Bool
    /// Ends the call with `status` (`.ok` included) after the queued messages; later calls are ignored.
    /// (Unary and server-streaming handlers need not call it: returning or throwing does.)
    func finish(_ status: GRPCStatus)
    /// Blocks the calling thread until the queued bytes fall below the low-water mark, or the call
    /// ends (then false). Only for worker threads of server-streaming handlers.
    @discardableResult func waitUntilWritable() -> Bool
    /// Bytes queued and not yet handed to the socket.
    var bufferedBytes: Int { get }
    /// Whether the call has ended.
    var isClosed: Bool { get }
    /// Queues several messages at once, in order (one write to the transport); false (and nothing
    /// queued) once the call has ended.
    @discardableResult func send(_ batch: GRPCMessageBatch) -> Bool
    /// Runs `produce` soon on the transport's own thread (the connection's event loop), where it
    /// `send`s what it makes. Asks before it runs coalesce into one run, and the calls of one
    /// connection asked together run in one pass and leave in one socket write: a thread fanning
    /// one change out to many calls hands each call's encoding and framing to its connection
    /// instead of doing them all itself. Pass the same closure every time (the first one is kept).
    func produceSoon(_ produce: @escaping @Sendable () -> Void)
    /// The transport thread serving the call's connection, as an identity (calls with the same
    /// value are written by one thread): a handler feeding many calls groups them by it. Nil when
    /// unknown.
    var affinity: ObjectIdentifier? { get }
}

extension GRPCResponseStream {
    /// One `send` per message.
    @discardableResult public func send(_ batch: GRPCMessageBatch) -> Bool {
        var ok = true
        batch.forEachMessage { m in if ok { ok = send(Array(m)) } }
        return ok
    }

    /// A response side without a thread of its own produces at once, on the caller's thread.
    public func produceSoon(_ produce: @escaping @Sendable () -> Void) { produce() }

    /// A response side without a thread of its own has no affinity.
    public var affinity: ObjectIdentifier? { nil }
}

/// The request side of a bidirectional call.
///
/// The server calls these one at a time (never concurrently) on a worker thread, in order:
/// `received` for each message, then exactly one of `halfClosed` (the client ended its side; the
/// handler should `finish` when done) or `cancelled` (RST_STREAM, connection lost, deadline,
/// shutdown: free what the stream holds; `finish` is not needed).
public protocol GRPCRequestStream: AnyObject, Sendable {
    func received(_ message: [UInt8])
    /// `received` for a handler that finishes with a message later (a write waiting for its
    /// commit) without holding the worker: it calls `done` once, from any thread, when the server
    /// may deliver the next message (or the end); nothing more is delivered until then. The
    /// server calls this one; by default it is `received` followed by `done`.
    func received(_ message: [UInt8], done: @escaping @Sendable () -> Void)
    /// Whether `receivedOnLoop` may be called (asked as each message arrives).
    var takesMessagesOnLoop: Bool { get }
    /// `received(_:done:)` called on the connection's loop thread, for an uncompressed message
    /// within `GRPCServer.loopMessageLimit` that arrived while nothing else of this stream was
    /// queued or running: no worker is woken for it. Only for handlers whose `takesMessagesOnLoop`
    /// is true; it must do only bounded work that never waits (decode, check, queue a commit
    /// without running its batch).
    func receivedOnLoop(_ message: [UInt8], done: @escaping @Sendable () -> Void)
    func halfClosed()
    func cancelled()
}

extension GRPCRequestStream {
    public func received(_ message: [UInt8], done: @escaping @Sendable () -> Void) {
        received(message)
        done()
    }

    public var takesMessagesOnLoop: Bool { false }

    public func receivedOnLoop(_ message: [UInt8], done: @escaping @Sendable () -> Void) {
        received(message, done: done)
    }
}
