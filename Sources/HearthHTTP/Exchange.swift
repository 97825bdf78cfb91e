import Foundation
import HearthCore
internal import CMicroHTTPD

/// One request/response exchange on a connection: the state libmicrohttpd's callbacks share.
///
/// libmicrohttpd calls the access handler several times per request (headers, each body piece,
/// end of body); the exchange object is what `*con_cls` points to between those calls.
final class Exchange {
    enum State {
        case new
        /// Reading the body into `buffer`, up to `limit` bytes; then `collect`'s handler answers.
        /// The handler and the too-large answer stay in `collect`: as this case's payload they were
        /// copied (retained and released) on each of the request's calls.
        case collecting(limit: Int)
        case streaming(any RequestBodyConsumer)
        case discarding(Response)
        /// Answered on the next call: libmicrohttpd closes the connection when a response is queued
        /// in the first call, so a bodiless request that is answered at once would lose keep-alive.
        case ready(Response)
        /// A `collectDeferred` handler has the request: answered when its `DeferredAnswer` is sent
        /// (the connection suspended meanwhile, on listeners that allow it).
        case parked(ParkedAnswer)
        case done
    }

    /// What answers a collected body: a handler returning the response, or one sending it later.
    enum Collector {
        case now(@Sendable (Request) -> Response)
        case later(@Sendable (Request, DeferredAnswer) -> Void)
    }

    let server: HTTPServer
    /// The request target as received, split at its first `?` (`Request.split(target:)`).
    let target: (path: String, query: String, hasQuery: Bool)
    var state: State = .new
    var request: Request?
    var buffer: [UInt8] = []
    /// While `collecting`: the answer to a body over the limit and the handler of a whole body.
    var collect: (tooLarge: Response, handler: Collector)?
    var status = 0
    /// When the headers arrived (`begin`; the request carries the same reading).
    var started: UInt64 = 0
    var counted = false
    var responseLogFields: [(String, JSON)] = []

    init(server: HTTPServer, rawURI: UnsafePointer<CChar>?) {
        self.server = server
        if let rawURI {
            target = Request.split(target: UnsafeBufferPointer(start: UnsafeRawPointer(rawURI).assumingMemoryBound(to: UInt8.self),
                                                               count: strlen(rawURI)))
        } else {
            target = ("/", "", false)
        }
    }

    // MARK: Access handler

    /// - Parameters: method, version: libmicrohttpd's C strings, made Swift strings only for the
    ///   first call (a request with a body comes through here three times or more).
    func handle(_ connection: OpaquePointer, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
                data: UnsafePointer<CChar>?, size: UnsafeMutablePointer<Int>) -> MHD_Result {
        switch state {
        case .new:
            return begin(connection, method: method.map(Exchange.token) ?? "GET", version: version.map(Exchange.token) ?? "HTTP/1.1")
        case .collecting(let limit):
            if size.pointee > 0 {
                if buffer.count + size.pointee > limit {
                    buffer = []
                    guard let tooLarge = collect?.tooLarge else { return .NO }
                    state = .discarding(tooLarge)
                    collect = nil
                } else if let data {
                    buffer.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size.pointee))
                }
                size.pointee = 0
                return .YES
            }
            guard let request, let handler = collect?.handler else { return .NO }
            collect = nil
            request.body = buffer
            buffer = []
            switch handler {
            case .now(let answer):
                state = .done
                return queue(answer(request), on: connection)
            case .later(let start):
                return settle(park(request, start, on: connection), on: connection)
            }
        case .streaming(let consumer):
            if size.pointee > 0 {
                consumer.consume(UnsafeRawBufferPointer(start: data, count: size.pointee))
                size.pointee = 0
                return .YES
            }
            state = .done
            return queue(consumer.finish(), on: connection)
        case .discarding(let response):
            if size.pointee > 0 {
                size.pointee = 0
                return .YES
            }
            state = .done
            return queue(response, on: connection)
        case .ready(let response):
            size.pointee = 0
            state = .done
            return queue(response, on: connection)
        case .parked(let park):
            size.pointee = 0
            return settle(park, on: connection)
        case .done:
            size.pointee = 0
            return .YES
        }
    }

    /// A method or version as a Swift string: the ones clients send are literals (`String(cString:)`
    /// measured and validated them, ~150 instructions each a request); any other is copied.
    static func token(_ c: UnsafePointer<CChar>) -> String {
        let n = strlen(c)
        func equals(_ literal: StaticString) -> Bool {
            literal.utf8CodeUnitCount == n && memcmp(c, literal.utf8Start, n) == 0
        }
        if equals("GET") { return "GET" }
        if equals("POST") { return "POST" }
        if equals("HTTP/1.1") { return "HTTP/1.1" }
        if equals("PUT") { return "PUT" }
        if equals("PATCH") { return "PATCH" }
        if equals("DELETE") { return "DELETE" }
        if equals("HEAD") { return "HEAD" }
        if equals("OPTIONS") { return "OPTIONS" }
        if equals("HTTP/1.0") { return "HTTP/1.0" }
        return String(cString: c)
    }

    private func begin(_ connection: OpaquePointer, method: String, version: String) -> MHD_Result {
        server.began()
        counted = true
        started = DispatchTime.now().uptimeNanoseconds
        let ceiling = server.configuration.http1BusyPollMicroseconds
        if ceiling > 0 { WorkerPoll.current(ceilingMicroseconds: ceiling, server: server).requestBegan(at: started) }
        let memo = hearth_mhd_socket_context(connection).map { Unmanaged<ConnectionMemo>.fromOpaque($0).takeUnretainedValue() }
        let headers = Exchange.headers(of: connection, lastAuthorization: memo?.authorization)
        memo?.authorization = headers[known: .authorization]
        let (path, query, hasQuery) = target
        let request = Request(method: method, rawPath: path, rawQuery: query, hasQuery: hasQuery, headers: headers,
                              version: version, isTLS: hearth_mhd_connection_is_tls(connection) != 0,
                              remoteAddress: Exchange.remoteAddress(of: connection),
                              id: server.ids.requestID())
        request.receivedUptimeNanoseconds = started
        self.request = request
        let framing = Exchange.framing(of: headers)
        let declaredLength = framing.contentLength.flatMap(Exchange.contentLength)
        let hasBody = framing.transferEncoding?.lowercased().contains("chunked") == true || (declaredLength ?? 0) > 0
        let expectsContinue = framing.expect?.lowercased() == "100-continue"

        switch server.service.dispose(request) {
        case .respond(let response):
            // Answering before the body is read would make a client that is still sending see a reset
            // connection instead of our answer; only a client waiting on 100-continue can take it early.
            if hasBody && !expectsContinue {
                state = .discarding(response)
                return .YES
            }
            if hasBody {
                // Refusing a body the client has not sent yet (it waits on 100-continue): answer now.
                state = .done
                return queue(response, on: connection)
            }
            state = .ready(response)
            return .YES
        case .collect(let limit, let tooLarge, let handler):
            return beginCollecting(limit: limit, tooLarge: tooLarge, .now(handler), request, declaredLength: declaredLength,
                                   hasBody: hasBody, expectsContinue: expectsContinue, on: connection)
        case .collectDeferred(let limit, let tooLarge, let start):
            return beginCollecting(limit: limit, tooLarge: tooLarge, .later(start), request, declaredLength: declaredLength,
                                   hasBody: hasBody, expectsContinue: expectsContinue, on: connection)
        case .stream(let consumer):
            state = .streaming(consumer)
            return .YES
        }
    }

    /// The first call of a request whose body is collected for `handler` (`collect`, `collectDeferred`).
    private func beginCollecting(limit: Int, tooLarge: Response, _ handler: Collector, _ request: Request, declaredLength: Int64?,
                                 hasBody: Bool, expectsContinue: Bool, on connection: OpaquePointer) -> MHD_Result {
        if let declaredLength, declaredLength > Int64(limit) {
            if expectsContinue {
                state = .done
                return queue(tooLarge, on: connection)
            }
            state = .discarding(tooLarge)
            return .YES
        }
        if !hasBody {
            switch handler {
            case .now(let answer):
                state = .ready(answer(request))
            case .later(let start):
                // Settled on the next call: a response queued in this first one would lose keep-alive.
                park(request, start, on: connection)
            }
            return .YES
        }
        collect = (tooLarge, handler)
        state = .collecting(limit: limit)
        return .YES
    }

    /// Hands `request` to a deferred handler; the exchange is parked until its answer is sent.
    @discardableResult
    private func park(_ request: Request, _ start: @Sendable (Request, DeferredAnswer) -> Void,
                      on connection: OpaquePointer) -> ParkedAnswer {
        let park = ParkedAnswer(connection: connection, server: server)
        state = .parked(park)
        start(request, DeferredAnswer(park))
        return park
    }

    /// A parked request's answer, queued if it was sent; else the connection is suspended until it
    /// is (or, where the listener does not allow that, this worker waits for it).
    private func settle(_ park: ParkedAnswer, on connection: OpaquePointer) -> MHD_Result {
        guard let response = park.answerOrPark(suspending: server.configuration.allowsDeferred) else { return .YES }
        state = .done
        return queue(response, on: connection)
    }

    /// The first `Transfer-Encoding`, `Content-Length` and `Expect` fields (noted as the headers
    /// were received: a walk comparing every name cost ~1,900 instructions a request).
    static func framing(of headers: HTTPHeaders) -> (transferEncoding: String?, contentLength: String?, expect: String?) {
        (headers[known: .transferEncoding], headers[known: .contentLength], headers[known: .expect])
    }

    /// A Content-Length value as a number (surrounding white space allowed). Plain digits, what
    /// clients send, skip Foundation's trimming, which bridges to NSString.
    static func contentLength(_ text: String) -> Int64? {
        if !text.isEmpty && text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return Int64(text) }
        return Int64(text.trimmingCharacters(in: .whitespaces))
    }

    // MARK: Responses

    private func queue(_ response: Response, on connection: OpaquePointer) -> MHD_Result {
        status = response.status
        responseLogFields = response.logFields
        let mhdResponse: OpaquePointer?
        switch response.body {
        case .empty:
            mhdResponse = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
        case .bytes(let bytes):
            mhdResponse = bytes.isEmpty ? MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT) : LentBody.response(bytes)
        case .push(let source):
            guard server.configuration.allowsPush else {
                source.close()
                return queue(.text("this listener does not serve streamed (server-sent event) responses\n", status: 500), on: connection)
            }
            mhdResponse = PushBox.response(source, connection: connection, server: server)
        case .stream(let length, let source):
            let box = Unmanaged.passRetained(SourceBox(source)).toOpaque()
            mhdResponse = MHD_create_response_from_callback(
                length.map { UInt64($0) } ?? hearth_mhd_size_unknown(), 64 << 10,
                { cls, _, buf, max in
                    guard let cls, let buf else { return hearth_mhd_reader_end_with_error() }
                    let box = Unmanaged<SourceBox>.fromOpaque(cls).takeUnretainedValue()
                    do {
                        let n = try box.source.read(into: UnsafeMutableRawBufferPointer(start: buf, count: max))
                        return n == 0 ? hearth_mhd_reader_end_of_stream() : n
                    } catch {
                        return hearth_mhd_reader_end_with_error()
                    }
                },
                box,
                { cls in
                    guard let cls else { return }
                    let box = Unmanaged<SourceBox>.fromOpaque(cls).takeRetainedValue()
                    box.source.close()
                })
        }
        guard let mhdResponse else { return .NO }
        // The fields read in place from the array's storage: iterating the headers copied each
        // name and value out of it (a retain and a release of each, ~1k instructions an S3 answer).
        response.headers.fields.withUnsafeBufferPointer { fields in
            for i in fields.indices {
                // libmicrohttpd writes framing headers itself from the body it is given.
                // Compared in place: lower-casing each name allocated for every header of every answer.
                if HTTPHeaders.isFraming(fields[i].name) { continue }
                // libmicrohttpd refuses an empty value (the header would vanish, e.g. S3 metadata set
                // to ""); a lone space is the same field value on the wire (RFC 9110 §5.5 strips it).
                // `withCString` lends a native string's own bytes; passing the String itself made a
                // C copy (an allocation) of every name and value.
                fields[i].name.withCString { n in
                    if fields[i].value.isEmpty {
                        _ = MHD_add_response_header(mhdResponse, n, " ")
                    } else {
                        fields[i].value.withCString { v in _ = MHD_add_response_header(mhdResponse, n, v) }
                    }
                }
            }
        }
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }

    // MARK: Completion

    func completed(_ termination: MHD_RequestTerminationCode) {
        if case .streaming(let consumer) = state {
            consumer.abandon()  // the body never completed: undo partial work
            state = .done
        }
        if case .parked(let park) = state {
            park.close()  // the connection is gone: a later answer must not resume it
            state = .done
        }
        guard counted else { return }
        server.ended()
        // A quiet logger drops info lines; skip building one (this runs for every request).
        if let logger = server.logger, !logger.quiet, let request {
            let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
            let ok = termination == .REQUEST_TERMINATED_COMPLETED_OK
            var fields: [(String, JSON)] = [
                ("service", .string(server.name)), ("method", .string(request.method)), ("path", .string(request.rawPath)),
                ("status", .int(Int64(status))), ("ms", .double((ms * 100).rounded() / 100)), ("requestId", .string(request.id)),
            ]
            if !ok { fields.append(("terminated", .string(Exchange.terminationName(termination)))) }
            fields.append(contentsOf: request.logFields)
            fields.append(contentsOf: responseLogFields)
            logger.log(.info, "\(server.name) \(request.method) \(request.rawPath) \(status)", fields,
                       textOmits: ["service", "method", "path", "status"])
        }
    }

    static func terminationName(_ t: MHD_RequestTerminationCode) -> String {
        switch t {
        case .REQUEST_TERMINATED_COMPLETED_OK: "ok"
        case .REQUEST_TERMINATED_WITH_ERROR: "error"
        case .REQUEST_TERMINATED_TIMEOUT_REACHED: "timeout"
        case .REQUEST_TERMINATED_DAEMON_SHUTDOWN: "shutdown"
        case .REQUEST_TERMINATED_READ_ERROR: "read-error"
        case .REQUEST_TERMINATED_CLIENT_ABORT: "client-abort"
        default: "unknown"
        }
    }

    // MARK: Connection facts

    /// The request's header fields, with the `Known` ones noted on the way (one pass: the framing
    /// lookup and the services' `Origin`/`Authorization` lookups then cost an index each).
    /// - Parameter lastAuthorization: the connection's previous request's `Authorization` value
    ///   (`ConnectionMemo`): a field with the same bytes is that string (a client sends its
    ///   kilobyte token unchanged request after request; decoding it into a new string was an
    ///   allocation, a copy and a UTF-8 check, and the caller caches then compared it byte for byte
    ///   with the one they remembered, where the same string compares by its two words).
    static func headers(of connection: OpaquePointer, lastAuthorization: String? = nil) -> HTTPHeaders {
        struct Walk {
            // Room for a typical request's headers: appending from empty regrew the array four times.
            var headers = HTTPHeaders(receiving: 16)
            let reusing: String?
        }
        var walk = Walk(reusing: lastAuthorization)
        // The walk is synchronous, so the callback may write to this frame's variable directly
        // (a box object was one more allocation per request).
        withUnsafeMutablePointer(to: &walk) { target in
            hearth_mhd_headers(connection, { ctx, name, nameLength, value, valueLength in
                guard let ctx, let name else { return }
                let walk = ctx.assumingMemoryBound(to: Walk.self)
                walk.pointee.headers.appendReceived(
                    name: UnsafeRawBufferPointer(start: name, count: nameLength),
                    value: UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueLength),
                    reusing: walk.pointee.reusing)
            }, UnsafeMutableRawPointer(target))
        }
        return walk.headers
    }

    static func remoteAddress(of connection: OpaquePointer) -> String {
        guard let addr = hearth_mhd_client_address(connection) else { return "" }
        return HTTPServer.describe(addr, withPort: false)
    }
}

/// A parked request (`RequestDisposition.collectDeferred`) between its handler and its answer.
///
/// libmicrohttpd must not resume a connection that is not suspended, nor one whose request has
/// completed, nor stop with one suspended: `suspended` and `closed` (under `lock`) keep the first
/// two from happening — an answer sent before the worker settles is queued at once, one sent while
/// it is suspended resumes it (libmicrohttpd then calls the access handler, which queues it) — and
/// `HTTPServer.stop` answers every parked request before the daemon stops.
///
/// A park enters the server's registry (`HTTPServer.parkOpened`) only when its connection is
/// suspended: an answer sent inside the handler (a REST commit at one connection leads its own
/// batch) is queued at once and never needs `stop`'s help, so it takes neither the server's lock
/// nor the registry's dictionary (docs/benchmarks.md, commitc130). Once `stop` has answered the
/// parked requests, a request that would park now gets the same 503 at once.
final class ParkedAnswer: @unchecked Sendable {
    private let connection: OpaquePointer
    private weak var server: HTTPServer?
    /// Taken by the worker and by the thread that sends the answer, rarely at once: the lock lives in
    /// this object (an `NSLock` was two more allocations and frees per request).
    private let lock = InlineLock()
    private var response: Response?
    private var suspended = false
    private var closed = false
    /// In the server's registry (from its suspension until its answer is taken or it closed).
    private var registered = false
    /// Where the listener does not park: the worker waits on it.
    private var waiter: DispatchSemaphore?

    init(connection: OpaquePointer, server: HTTPServer) {
        self.connection = connection
        self.server = server
    }

    /// The answer, if sent; else nil after suspending the connection (`suspending`) — or, without
    /// it, the answer once sent, this thread waiting.
    func answerOrPark(suspending: Bool) -> Response? {
        lock.lock()
        if let r = response {
            response = nil
            let wasRegistered = registered
            registered = false
            lock.unlock()
            if wasRegistered { server?.parkClosed(self) }
            return r
        }
        if suspending {
            // Registered before it is suspended, so that `stop` answers it; refused once `stop` has
            // answered the parked requests (a keep-alive connection's next request): answered now.
            guard let server, server.parkOpened(self) else {
                lock.unlock()
                return HTTPServer.stoppingAnswer
            }
            registered = true
            // Under the lock: `deliver` on another thread sees `suspended` only once it is true.
            MHD_suspend_connection(connection)
            suspended = true
            lock.unlock()
            return nil
        }
        let wait = DispatchSemaphore(value: 0)
        waiter = wait
        lock.unlock()
        wait.wait()
        return answerOrPark(suspending: false)
    }

    /// The handler's answer (once, from any thread).
    func deliver(_ r: Response) {
        lock.lock()
        defer { lock.unlock() }
        if closed { return }
        response = r
        if suspended {
            suspended = false
            MHD_resume_connection(connection)
        }
        waiter?.signal()
        waiter = nil
    }

    /// The request completed (or its connection closed): nothing more may touch the connection.
    func close() {
        lock.lock()
        closed = true
        let wasRegistered = registered
        registered = false
        lock.unlock()
        if wasRegistered { server?.parkClosed(self) }
    }
}

/// A byte body libmicrohttpd sends from the array's own storage instead of a copy.
///
/// `MHD_RESPMEM_MUST_COPY` made libmicrohttpd `malloc` the body's size and copy it for every answer:
/// for the S3 GET's 4 KiB (shared with the object cache) a large-bin allocation that consolidated
/// glibc's fast bins each time, the copy, and the free (~5k instructions and 64 cache lines written
/// a request; docs/benchmarks.md, *s3get30*). The box holds the array — an immutable `let`, so its
/// heap storage neither moves nor changes while the box is alive — and libmicrohttpd releases the
/// box when it frees the response (after the last byte is sent, or when the connection closes).
final class LentBody {
    let bytes: [UInt8]

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// A response whose data are `bytes` (not empty), or nil when libmicrohttpd refuses it.
    static func response(_ bytes: [UInt8]) -> OpaquePointer? {
        let box = LentBody(bytes)
        guard let base = box.bytes.withUnsafeBytes({ $0.baseAddress }) else { return nil }
        let cls = Unmanaged.passRetained(box).toOpaque()
        let response = MHD_create_response_from_buffer_with_free_callback_cls(
            box.bytes.count, UnsafeMutableRawPointer(mutating: base),
            { cls in
                guard let cls else { return }
                Unmanaged<LentBody>.fromOpaque(cls).release()
            }, cls)
        // Refused (out of memory): nothing will call back; the box is ours to release.
        if response == nil { Unmanaged<LentBody>.fromOpaque(cls).release() }
        return response
    }
}

/// Keeps a response body source alive while libmicrohttpd reads from it.
final class SourceBox {
    let source: any ResponseBodySource
    init(_ source: any ResponseBodySource) { self.source = source }
}

// MARK: - libmicrohttpd callbacks (no captures: they convert to C function pointers)

/// Called with the raw request target before libmicrohttpd decodes it; the exchange it returns
/// becomes the request's `*con_cls`.
let hearthURILogger: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = { cls, uri, _ in
    guard let cls else { return nil }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let exchange = Exchange(server: server, rawURI: uri)
    return Unmanaged.passRetained(exchange).toOpaque()
}

let hearthAccessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, version, data, size, conCls in
    guard let cls, let connection, let size, let conCls else { return .NO }
    let exchange: Exchange
    if let existing = conCls.pointee {
        exchange = Unmanaged<Exchange>.fromOpaque(existing).takeUnretainedValue()
    } else {
        // No URI logger call happened (should not occur); fall back to the decoded URL.
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        exchange = Exchange(server: server, rawURI: url)
        conCls.pointee = Unmanaged.passRetained(exchange).toOpaque()
    }
    return exchange.handle(connection, method: method, version: version, data: data, size: size)
}

let hearthRequestCompleted: MHD_RequestCompletedCallback = { _, connection, conCls, termination in
    guard let conCls, let pointer = conCls.pointee else { return }
    let server: HTTPServer
    do {
        let exchange = Unmanaged<Exchange>.fromOpaque(pointer).takeRetainedValue()
        conCls.pointee = nil
        exchange.completed(termination)
        server = exchange.server
    }
    // Polls for the connection's next request before libmicrohttpd sleeps (`WorkerPoll`).
    let ceiling = server.configuration.http1BusyPollMicroseconds
    if ceiling > 0, termination == .REQUEST_TERMINATED_COMPLETED_OK, let connection {
        WorkerPoll.current(ceilingMicroseconds: ceiling, server: server).awaitNext(connection, server: server)
    }
}

/// What a connection's requests share: its last `Authorization` value (`Exchange.headers`).
/// Touched only by the worker serving the connection (libmicrohttpd calls a connection's callbacks
/// on one thread at a time), from its start to its close.
final class ConnectionMemo {
    var authorization: String?
}

/// Counts libmicrohttpd's connections, so the cap covers them and HTTP/2 ones together, and gives
/// each its `ConnectionMemo` (the connection's socket context) for as long as it is open.
let hearthConnectionNotify: MHD_NotifyConnectionCallback = { cls, _, socketContext, code in
    guard let cls else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    if code == .CONNECTION_NOTIFY_STARTED {
        server.connectionOpened()
        socketContext?.pointee = Unmanaged.passRetained(ConnectionMemo()).toOpaque()
    } else {
        server.connectionClosed()
        if let socketContext, let memo = socketContext.pointee {
            socketContext.pointee = nil
            Unmanaged<ConnectionMemo>.fromOpaque(memo).release()
        }
    }
}
