import Foundation
import HearthCore
import HearthHTTP

/// One gRPC call on one HTTP/2 stream: decodes the length-prefixed request messages, runs the
/// handler on the worker pool and encodes responses, trailers and Trailers-Only errors.
///
/// The `HTTP2StreamDelegate` side runs on the connection's loop thread; the `GRPCResponseStream`
/// side on any thread. `lock` guards what both touch.
final class GRPCCall: HTTP2StreamDelegate, GRPCResponseStream, @unchecked Sendable {
    let server: GRPCServer
    let stream: HTTP2Stream
    /// What the call's request fields ask (`:path`'s method, the metadata `begin` checks), read once
    /// per distinct list of fields on a connection and shared by the calls that repeat it.
    let template: GRPCCallTemplate
    var path: String { template.path }
    private let lock = InlineLock()
    /// The method, once `begin` accepted the call (nil before, and for a call it answered at once).
    /// Written once on the loop thread before any worker reads it (unchecked: no runtime
    /// exclusivity check at each of the call's reads).
    @exclusivity(unchecked) private var route: GRPCRoute?
    /// Unchecked: written on the loop thread in `init` and `begin` before any worker copies it.
    @exclusivity(unchecked) private var context: GRPCContext
    /// A bidirectional call's worker queue (nil for the others, which never queue more than one job).
    private let jobs: SerialJobs?
    /// When the call began, for its log line's duration (0 when no line is written: a clock read
    /// per call for nothing).
    private let started: UInt64
    // Loop thread only (unchecked: no runtime exclusivity check at each access of every call).
    @exclusivity(unchecked) private var inbound: [UInt8] = []
    /// The single request message of a unary or server-streaming call, and whether it is compressed.
    @exclusivity(unchecked) private var request: (bytes: [UInt8], compressed: Bool)?
    /// The request's `grpc-encoding` when it is one we inflate (nil: identity).
    @exclusivity(unchecked) private var compression: String?
    // Under `lock`. Unchecked: the lock keeps accesses apart, and the runtime's exclusivity check
    // cost ~100 instructions an access on every listener's snapshot.
    @exclusivity(unchecked) private var ended = false
    @exclusivity(unchecked) private var headersSent = false
    @exclusivity(unchecked) private var finalStatus: GRPCStatus?
    @exclusivity(unchecked) private var requestStream: (any GRPCRequestStream)?
    /// Whether `halfClosed` or `cancelled` has been queued for a bidirectional handler.
    @exclusivity(unchecked) private var requestSideDone = false
    @exclusivity(unchecked) private var logged = false
    @exclusivity(unchecked) private var producerSet = false

    /// A call on `stream` whose request fields are `headers`, which `template` was made of (or of a
    /// list with the same names and values in the same order).
    init(server: GRPCServer, stream: HTTP2Stream, headers: [(name: String, value: String)], template: GRPCCallTemplate) {
        self.server = server
        self.stream = stream
        self.template = template
        started = server.logger.map { $0.quiet } == false ? DispatchTime.now().uptimeNanoseconds : 0
        jobs = template.bidirectional ? SerialJobs(pool: server.pool) : nil
        // The metadata are the fields after the pseudo-headers, which come first (RFC 9113 §8.3;
        // nghttp2 resets a stream whose pseudo-header follows a regular field): the list is shared,
        // not copied. Should one follow anyway, the metadata are a copy without them, as before.
        if template.pseudoAfterMetadata {
            self.context = GRPCContext(fields: headers.filter { $0.name.utf8.first != UInt8(ascii: ":") }, metadataStart: 0,
                                       deadlineNanos: nil, remoteAddress: stream.remoteAddress, requestID: server.ids.nextRequestID())
        } else {
            self.context = GRPCContext(fields: headers, metadataStart: template.metadataStart, deadlineNanos: nil,
                                       remoteAddress: stream.remoteAddress, requestID: server.ids.nextRequestID())
            context.authorizationAt = template.authorization
        }
    }

    /// Responses are sent uncompressed (the spec lets a server answer identity to any client);
    /// requests may come gzip- or deflate-compressed.
    static let responseHeaders = [(":status", "200"), ("content-type", "application/grpc"), ("grpc-accept-encoding", "identity,deflate,gzip")]
    /// The headers and OK trailers of every successful unary answer, laid out for nghttp2 once.
    static let responseHeaderBlock = HTTP2HeaderBlock(responseHeaders)
    static let okTrailerBlock = HTTP2HeaderBlock(GRPCStatus.okTrailerFields)

    /// Checks the request headers and starts the call, or answers at once (loop thread).
    func begin() {
        guard template.isGRPCContentType else {
            // The spec's answer to a non-gRPC content-type is HTTP 415, not a gRPC status.
            lock.lock()
            ended = true
            finalStatus = GRPCStatus(.unknown, "415")
            lock.unlock()
            stream.respond(headers: [(":status", "415"), ("content-type", "text/plain")], endStream: true)
            return
        }
        if let encoding = template.encoding, encoding != "identity" {
            // The spec's answer to an encoding we cannot inflate; the headers list the ones we can.
            guard MessageDecompressor.encodings.contains(encoding) else {
                return finish(GRPCStatus(.unimplemented, "Unsupported grpc-encoding: \(encoding)"))
            }
            compression = encoding
        }
        if let timeout = template.timeout {
            guard let nanos = GRPCStatus.timeoutNanos(timeout) else {
                return finish(GRPCStatus(.internal, "Invalid grpc-timeout: \(timeout)"))
            }
            let now = DispatchTime.now().uptimeNanoseconds
            let (deadline, overflow) = now.addingReportingOverflow(nanos)
            if !overflow {
                context.deadlineNanos = deadline
                server.timers.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline)) { [weak self] in self?.deadlineReached() }
            }
        }
        switch template.routed {
        case .failure(let status):
            finish(status)
        case .success(let found):
            route = found
            // The flag first: matching the handler copied the enum (a retain and a release of its
            // closures) on every unary call too.
            if template.bidirectional, let jobs, case .bidirectional(let open) = found.handler {
                let context = self.context
                // The handler has its copy; a long-lived stream need not keep the request's headers
                // (an ID token alone is a kilobyte, times every idle listener).
                self.context.metadata = []
                jobs.submit { [self] in
                    let rs = open(context, self)
                    lock.lock()
                    requestStream = rs
                    lock.unlock()
                }
            }
        }
    }

    // MARK: HTTP2StreamDelegate (loop thread)

    /// A DATA frame's bytes where nghttp2 holds them. The usual unary request is one whole message
    /// in one frame: its message is copied out once, as `received(_: [UInt8])` would keep it, where
    /// an array of the frame and then one of the message were made (an allocation, a copy and a
    /// free more per call). Anything else takes the general path with the frame as an array.
    func received(_ bytes: UnsafeBufferPointer<UInt8>) {
        if inbound.isEmpty, request == nil, bytes.count >= 5, bytes[0] == 0, route != nil {
            let length = Int(bytes[1]) << 24 | Int(bytes[2]) << 16 | Int(bytes[3]) << 8 | Int(bytes[4])
            if !template.bidirectional, length == bytes.count - 5, length <= server.configuration.maxReceiveMessageBytes, !isClosed {
                request = (Array(UnsafeBufferPointer(rebasing: bytes[5...])), false)
                stream.consume(bytes.count)
                return
            }
        }
        received(Array(bytes))
    }

    func received(_ bytes: [UInt8]) {
        if isClosed || route == nil {
            stream.consume(bytes.count)
            return
        }
        // The usual request arrives whole in one DATA frame: take that array rather than copy it.
        if inbound.isEmpty { inbound = bytes } else { inbound.append(contentsOf: bytes) }
        while inbound.count >= 5 {
            let flag = inbound[0]
            let length = Int(inbound[1]) << 24 | Int(inbound[2]) << 16 | Int(inbound[3]) << 8 | Int(inbound[4])
            if length > server.configuration.maxReceiveMessageBytes {
                stream.consume(bytes.count)
                inbound = []
                return finish(GRPCStatus(.resourceExhausted,
                                         "Received message larger than max (\(length) vs. \(server.configuration.maxReceiveMessageBytes))"))
            }
            if flag > 1 || (flag == 1 && compression == nil) {
                stream.consume(bytes.count)
                inbound = []
                // The spec: a compressed flag without a grpc-encoding to decode it is INTERNAL.
                return finish(GRPCStatus(.internal, flag > 1 ? "Invalid gRPC message flag \(flag)"
                    : "Compressed message received with grpc-encoding identity"))
            }
            guard inbound.count >= 5 + length else { break }
            let message = Array(inbound[5..<(5 + length)])
            let compressed = flag == 1
            if inbound.count == 5 + length { inbound = [] } else { inbound.removeFirst(5 + length) }
            if template.bidirectional, let jobs {
                let size = 5 + length
                if !compressed, length <= GRPCServer.loopMessageLimit, let rs = loopRequestStream(),
                   jobs.runHereIfIdle({ done in
                       rs.receivedOnLoop(message, done: done)
                       stream.consume(size)
                   }) {
                    continue
                }
                // Inflating runs here on the call's worker queue, never on the connection's loop.
                // The next message waits for `done` (a write answered when its batch commits).
                jobs.submit(async: { [self] done in
                    defer { stream.consume(size) }  // flow control opens once the handler has taken it
                    switch decoded(message, compressed: compressed) {
                    case .success(let plain):
                        lock.lock()
                        let rs = requestStream
                        lock.unlock()
                        guard let rs else { return done() }
                        rs.received(plain, done: done)
                    case .failure(let status):
                        finish(status)
                        done()
                    }
                })
            } else {
                guard request == nil else {
                    return finish(GRPCStatus(.unimplemented, "More than one request message for a call with a single request"))
                }
                request = (message, compressed)
            }
        }
        // Let go of the buffer between messages (an idle stream keeps nothing).
        if inbound.isEmpty { inbound = [] }
        // A unary request is bounded by the size limit, so its bytes are taken as they come.
        if !template.bidirectional {
            stream.consume(bytes.count)
        }
    }

    func endOfStream() {
        guard let route, !isClosed else { return }
        if !inbound.isEmpty { return finish(GRPCStatus(.internal, "Stream ended inside a message")) }
        // Read in place from the route (kept for the server's life): binding its closures retained
        // and released each, as copying the handler did.
        switch route.handler {
        case .unary(let run):
            guard let request else { return finish(GRPCStatus(.internal, "No request message")) }
            runOnWorker(run, request)
        case .unaryQuick:
            guard let request else { return finish(GRPCStatus(.internal, "No request message")) }
            // A compressed request is inflated on a worker, never on the loop. The worker's handler
            // is bound only then: a binding retains and releases its closure's context.
            if request.compressed, case .unaryQuick(_, let run) = route.handler { return runOnWorker(run, request) }
            server.quickCalls.add(QuickCall(call: self, request: request.bytes), stream: stream)
        case .unaryAsync(let run):
            guard let request else { return finish(GRPCStatus(.internal, "No request message")) }
            runAsyncOnWorker(run, request)
        case .unaryAsyncQuick(let start, let run):
            guard let request else { return finish(GRPCStatus(.internal, "No request message")) }
            if !request.compressed, request.bytes.count <= GRPCServer.loopMessageLimit,
               start(request.bytes, context, { [self] result in replied(result) }) {
                return
            }
            runAsyncOnWorker(run, request)
        case .serverStreaming(let run):
            guard let request else { return finish(GRPCStatus(.internal, "No request message")) }
            runStreamOnWorker(run, request)
        case .serverStreamingQuick(_, let run):
            guard let request else { return finish(GRPCStatus(.internal, "No request message")) }
            // A compressed request is inflated on a worker, never on the loop; a large one is decoded there.
            guard !request.compressed, request.bytes.count <= GRPCServer.loopMessageLimit else { return runStreamOnWorker(run, request) }
            server.quickCalls.add(QuickCall(call: self, request: request.bytes), stream: stream)
        case .bidirectional:
            deliverRequestSideEnd(cancelled: false)
        }
    }

    /// Answers a quick call: `quick` here (the loop thread, or a worker sharing a batch), else `run`
    /// on a worker.
    func answer(_ q: QuickCall) {
        guard let route, !isClosed else { return }
        switch route.handler {
        case .unaryQuick(let quick, _):
            do throws(GRPCStatus) {
                if let response = try quick(q.request, context) { return answerWhole(response) }
            } catch {
                return finish(error)
            }
            // The worker's handler bound only when the quick one left the call (see `endOfStream`).
            if case .unaryQuick(_, let run) = route.handler { runOnWorker(run, (q.request, false)) }
        case .serverStreamingQuick(let quick, let run):
            let started: GRPCQuickStream?
            do throws(GRPCStatus) {
                started = try quick(q.request, context)
            } catch {
                return finish(error)
            }
            switch started {
            case .answered(let batch)?:
                // No message: Trailers-Only, as a handler that returns without sending answers.
                if batch.count == 0 { return finish(.ok) }
                answerWhole(framed: batch.framed)
            case .rest(let rest)?:
                server.pool.submit { [self] in
                    guard !isClosed else { return }
                    do throws(GRPCStatus) {
                        try rest(self)
                        finish(.ok)
                    } catch {
                        finish(error)
                    }
                }
            case nil:
                runStreamOnWorker(run, (q.request, false))
            }
        default:
            // Only the two quick kinds queue a quick call (`endOfStream`).
            return
        }
    }

    private func runStreamOnWorker(_ run: @escaping @Sendable ([UInt8], GRPCContext, any GRPCResponseStream) throws(GRPCStatus) -> Void,
                                   _ request: (bytes: [UInt8], compressed: Bool)) {
        let context = self.context
        server.pool.submit { [self] in
            guard !isClosed else { return }
            do throws(GRPCStatus) {
                try run(try decoded(request.bytes, compressed: request.compressed).get(), context, self)
                finish(.ok)
            } catch {
                finish(error)
            }
        }
    }

    /// A unary answer made later (any thread).
    private func replied(_ result: Result<[UInt8], GRPCStatus>) {
        switch result {
        case .success(let response):
            answerWhole(response)
        case .failure(let status):
            finish(status)
        }
    }

    private func runAsyncOnWorker(_ run: @escaping @Sendable ([UInt8], GRPCContext, _ reply: @escaping @Sendable (Result<[UInt8], GRPCStatus>) -> Void) -> Void,
                                  _ request: (bytes: [UInt8], compressed: Bool)) {
        let context = self.context
        server.pool.submit { [self] in
            guard !isClosed else { return }
            switch decoded(request.bytes, compressed: request.compressed) {
            case .success(let plain):
                run(plain, context) { [self] result in replied(result) }
            case .failure(let status):
                finish(status)
            }
        }
    }

    /// The request side when it takes messages on the loop thread (and `open` has made it).
    private func loopRequestStream() -> (any GRPCRequestStream)? {
        lock.lock()
        let rs = requestStream
        lock.unlock()
        guard let rs, rs.takesMessagesOnLoop else { return nil }
        return rs
    }

    private func runOnWorker(_ run: @escaping @Sendable ([UInt8], GRPCContext) throws(GRPCStatus) -> [UInt8],
                             _ request: (bytes: [UInt8], compressed: Bool)) {
        let context = self.context
        server.pool.submit { [self] in
            guard !isClosed else { return }
            do throws(GRPCStatus) {
                answerWhole(try run(try decoded(request.bytes, compressed: request.compressed).get(), context))
            } catch {
                finish(error)
            }
        }
    }

    func closed(errorCode: UInt32) {
        lock.lock()
        let wasEnded = ended
        ended = true
        if finalStatus == nil { finalStatus = GRPCStatus(.cancelled, "Cancelled by the client (HTTP/2 error \(errorCode))") }
        lock.unlock()
        if !wasEnded || errorCode != 0 { deliverRequestSideEnd(cancelled: true) }
        // The stream is gone (also when the handler ended the call before the client's side
        // ended, so no request-side end was delivered): a bidirectional handler holds this call (its
        // response stream) and the call held the handler's request side, a cycle that kept both alive
        // after every stream. Release it after whatever is queued for it, `open` included.
        jobs?.submit { [self] in lock.withLock { requestStream = nil } }
        log()
    }

    // MARK: GRPCResponseStream (any thread)

    @discardableResult func send(_ message: [UInt8]) -> Bool {
        write(Self.framed(message))
    }

    /// `message` with its 5-byte prefix (uncompressed, big-endian length).
    static func framed(_ message: [UInt8]) -> [UInt8] {
        let n = message.count
        var out: [UInt8] = []
        out.reserveCapacity(5 + n)
        // Byte by byte: appending the prefix as an array literal made (and freed) that array too.
        out.append(0)
        out.append(UInt8(truncatingIfNeeded: n >> 24))
        out.append(UInt8(truncatingIfNeeded: n >> 16))
        out.append(UInt8(truncatingIfNeeded: n >> 8))
        out.append(UInt8(truncatingIfNeeded: n))
        out.append(contentsOf: message)
        return out
    }

    /// A unary call's whole answer — headers, the one message, OK trailers — as one change of the
    /// stream (`HTTP2Stream.respond(headers:body:trailers:)`): what `send` then `finish(.ok)` do,
    /// without taking both locks and scheduling the flush three times.
    func answerWhole(_ message: [UInt8]) {
        lock.lock()
        // The usual answer: its 5-byte prefix goes ahead of the message's own array
        // (`HTTP2Stream.respond(headers:prefix:body:trailers:)`), which is often a cached encoding
        // shared with the read cache; a framed copy was an allocation, a copy and a free per call.
        guard !ended, !headersSent, 5 + message.count <= server.configuration.maxBufferedResponseBytes else {
            lock.unlock()
            return answerWhole(framed: Self.framed(message))
        }
        ended = true
        headersSent = true
        finalStatus = .ok
        let n = UInt64(truncatingIfNeeded: message.count)
        // Byte 0 (not compressed), then the length big-endian, the first byte in the lowest bits.
        let prefix = (n >> 24 & 0xFF) << 8 | (n >> 16 & 0xFF) << 16 | (n >> 8 & 0xFF) << 24 | (n & 0xFF) << 32
        stream.respond(headers: GRPCCall.responseHeaderBlock, prefix: prefix, body: message, trailers: GRPCCall.okTrailerBlock)
        lock.unlock()
    }

    /// `answerWhole` of messages already framed (a server-streaming call's every answer at once).
    func answerWhole(framed: [UInt8]) {
        lock.lock()
        // Headers already out, or a message over the queue's limit: the general path (its checks
        // and its RESOURCE_EXHAUSTED).
        guard !ended, !headersSent, framed.count <= server.configuration.maxBufferedResponseBytes else {
            let alreadyEnded = ended
            lock.unlock()
            guard !alreadyEnded else { return }
            if write(framed) { finish(.ok) }
            return
        }
        ended = true
        headersSent = true
        finalStatus = .ok
        stream.respond(headers: GRPCCall.responseHeaderBlock, body: framed, trailers: GRPCCall.okTrailerBlock)
        lock.unlock()
    }

    @discardableResult func send(_ batch: GRPCMessageBatch) -> Bool {
        batch.count == 0 ? !isClosed : write(batch.framed)
    }

    /// Queues framed messages.
    private func write(_ framed: [UInt8]) -> Bool {
        lock.lock()
        guard !ended else {
            lock.unlock()
            return false
        }
        guard stream.write(framed, bufferingAtMost: server.configuration.maxBufferedResponseBytes) else {
            lock.unlock()
            // The client stopped reading: end only this stream, dropping what it would never take.
            finish(GRPCStatus(.resourceExhausted, "Client is not reading responses; more than \(server.configuration.maxBufferedResponseBytes) bytes queued"),
                   discardingUnsent: true)
            return false
        }
        // After the bytes (a flush between the two sends nothing before the headers are there): a
        // first message over the limit still ends the call Trailers-Only.
        if !headersSent {
            headersSent = true
            stream.respond(headers: GRPCCall.responseHeaders)
        }
        lock.unlock()
        return true
    }

    var affinity: ObjectIdentifier? { stream.affinity }

    func produceSoon(_ produce: @escaping @Sendable () -> Void) {
        lock.lock()
        if ended {
            lock.unlock()
            return
        }
        if !producerSet {
            producerSet = true
            stream.setProducer(produce)
        }
        lock.unlock()
        stream.produceSoon()
    }

    func finish(_ status: GRPCStatus) { finish(status, discardingUnsent: false) }

    private func finish(_ status: GRPCStatus, discardingUnsent: Bool) {
        lock.lock()
        guard !ended else {
            lock.unlock()
            return
        }
        ended = true
        finalStatus = status
        if headersSent {
            stream.finish(trailers: status.trailerFields, discardingUnsent: discardingUnsent)
        } else {
            // Trailers-Only: one HEADERS frame ends the call.
            stream.respond(headers: GRPCCall.responseHeaders + status.trailerFields, endStream: true)
        }
        lock.unlock()
        if status.code != .ok { deliverRequestSideEnd(cancelled: true) }
    }

    @discardableResult func waitUntilWritable() -> Bool {
        stream.waitUntilBuffered(below: server.configuration.lowWaterBytes) && !isClosed
    }

    var bufferedBytes: Int { stream.bufferedBytes }

    var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }

    /// A request message as the handler sees it: inflated when it came compressed, within the size limit.
    private func decoded(_ message: [UInt8], compressed: Bool) -> Result<[UInt8], GRPCStatus> {
        guard compressed else { return .success(message) }
        let limit = server.configuration.maxReceiveMessageBytes
        switch MessageDecompressor.inflate(message, limit: limit) {
        case .success(let plain):
            return .success(plain)
        case .failure(.tooLarge):
            return .failure(GRPCStatus(.resourceExhausted, "Received message after decompression larger than max (\(limit))"))
        case .failure(.corrupt):
            return .failure(GRPCStatus(.internal, "Could not decompress the \(compression ?? "") request message"))
        }
    }

    // MARK: Ending

    private func deadlineReached() {
        finish(GRPCStatus(.deadlineExceeded, "Deadline Exceeded"))
    }

    /// Queues exactly one of `halfClosed` / `cancelled` for a bidirectional handler.
    private func deliverRequestSideEnd(cancelled: Bool) {
        guard template.bidirectional, route != nil else { return }
        lock.lock()
        let already = requestSideDone
        requestSideDone = true
        lock.unlock()
        guard !already, let jobs else { return }
        jobs.submit { [self] in
            lock.lock()
            let rs = requestStream
            // Nothing reaches the request side after this, and it holds this call (its response
            // stream): kept, the pair would be a cycle outliving the call (LeakSanitizer saw it).
            requestStream = nil
            lock.unlock()
            if cancelled { rs?.cancelled() } else { rs?.halfClosed() }
        }
    }

    /// One line per call, like the HTTP/1.1 request lines.
    private func log() {
        lock.lock()
        let status = finalStatus ?? .ok
        let first = !logged
        logged = true
        lock.unlock()
        guard first, let logger = server.logger, !logger.quiet else { return }
        let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        let service = server.name
        logger.log(.info, "\(service) POST \(path) grpc-status=\(status.code.rawValue)", [
            ("service", .string(service)), ("method", .string("POST")), ("path", .string(path)),
            ("grpcStatus", .int(Int64(status.code.rawValue))), ("ms", .double((ms * 100).rounded() / 100)),
            ("requestId", .string(context.requestID)),
        ], textOmits: ["service", "method", "path", "grpcStatus"])
    }
}
