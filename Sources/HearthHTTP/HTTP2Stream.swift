import Foundation

/// Receives the streams of HTTP/2 connections (gRPC implements it; this layer knows nothing of gRPC).
public protocol HTTP2StreamHandler: Sendable {
    /// A new stream with its request headers (pseudo-headers included, names lower-case, in order).
    /// Called on the connection's loop thread: must not block.
    func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)]) -> any HTTP2StreamDelegate
}

/// The request side of one stream. Called on the connection's loop thread, one call at a time: must not block.
public protocol HTTP2StreamDelegate: AnyObject {
    /// Request body bytes. They count against the stream's receive window until `HTTP2Stream.consume`.
    func received(_ bytes: [UInt8])
    /// `received` of bytes valid only during the call (a DATA frame where nghttp2 holds it): a
    /// delegate that keeps only part of them copies that part alone. By default, `received` of a copy.
    func received(_ bytes: UnsafeBufferPointer<UInt8>)
    /// The client ended its side (END_STREAM).
    func endOfStream()
    /// The stream is gone: 0 after a completed response, else the RST_STREAM / connection error code.
    func closed(errorCode: UInt32)
}

extension HTTP2StreamDelegate {
    public func received(_ bytes: UnsafeBufferPointer<UInt8>) { received(Array(bytes)) }
}

/// One HTTP/2 stream's response side. Thread-safe: any thread may respond, write or finish; the
/// operations reach the connection's loop in the order they were made.
public final class HTTP2Stream: @unchecked Sendable {
    /// The stream id.
    public let id: Int32
    /// The peer, `ip:port`.
    public let remoteAddress: String
    /// Its connection until the connection shuts down (`HTTP2ConnectionLink`: not a weak reference,
    /// whose side table slowed every retain of the connection).
    let link: HTTP2ConnectionLink
    var connection: HTTP2Connection? { link.connection }

    let lock = InlineLock()
    // Below, up to `isClosed`: under `lock`. Unchecked: the lock is what keeps accesses apart, and
    // the runtime's exclusivity check (swift_beginAccess, ~100 instructions) ran at every access of
    // every listener's snapshot, on the shard handing it over and on the loop framing it.
    /// Made by the first waiter (under `lock`): only server-streaming handlers wait, so thousands
    /// of idle bidirectional streams carry none.
    @exclusivity(unchecked) private var writable: NSCondition?
    /// Response headers not yet submitted, and whether they end the stream.
    @exclusivity(unchecked) var pendingHeaders: (fields: HTTP2Fields, endStream: Bool)?
    @exclusivity(unchecked) var headersSubmitted = false
    /// Body bytes not yet handed to nghttp2 (`outboundStart` is how many of them went).
    @exclusivity(unchecked) var outbound: [UInt8] = []
    @exclusivity(unchecked) var outboundStart = 0
    /// Bytes after `outboundStart` that nghttp2's data callback promised to a DATA frame (read
    /// without a copy, `NGHTTP2_DATA_FLAG_NO_COPY`) and the send callback has not copied out yet:
    /// a discard keeps them, or the frame would be shorter than its header says.
    @exclusivity(unchecked) var reserved = 0
    @exclusivity(unchecked) var trailers: HTTP2Fields?
    @exclusivity(unchecked) var resetCode: UInt32?
    @exclusivity(unchecked) var consumed = 0
    @exclusivity(unchecked) var wakeScheduled = false
    /// Writes this stream's body on the loop thread (`setProducer`), run at the next flush after
    /// `produceSoon` asked for it.
    @exclusivity(unchecked) var producer: (() -> Void)?
    @exclusivity(unchecked) var produceWanted = false
    @exclusivity(unchecked) private(set) var isClosed = false
    // Loop thread only (unchecked: read for every DATA frame and flush of every stream).
    /// Whether nghttp2 holds this stream's data provider (`HTTP2Connection.submit`/`submitData`):
    /// it lets go of it when the data callback reports the body drained (EOF without END_STREAM),
    /// so the next write attaches it again instead of nghttp2 asking a drained stream once more
    /// (DEFERRED) and waiting to be resumed.
    @exclusivity(unchecked) var providerAttached = false
    /// Its place in its connection's `streams` while open (`HTTP2Connection.keep`, `letGo`).
    @exclusivity(unchecked) var slot = 0
    /// Whether the last frame of the response (END_STREAM or trailers) is handed to nghttp2.
    @exclusivity(unchecked) var responseEnded = false
    /// Whether the client's side ended before the response did: counted in the loop's
    /// `answersAwaited` until the response ends or the stream closes.
    @exclusivity(unchecked) var awaitingAnswer = false
    /// Who takes the request side, from the end of the request's header block until the stream
    /// closes (`HTTP2Connection`, which then lets go of it: the delegate usually holds this stream).
    /// Kept here, so a frame reaches it through nghttp2's stream user data instead of a hash of the
    /// stream id.
    @exclusivity(unchecked) var delegate: (any HTTP2StreamDelegate)?

    init(id: Int32, remoteAddress: String, connection: HTTP2Connection) {
        self.id = id
        self.remoteAddress = remoteAddress
        self.link = connection.link
    }

    /// The thread serving this stream's connection (its event loop), as an identity: streams with
    /// the same value are written by one thread. Nil once the connection is gone.
    public var affinity: ObjectIdentifier? { connection.map { ObjectIdentifier($0.loop) } }

    /// Bytes written and not yet handed to the socket layer.
    public var bufferedBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return outbound.count - outboundStart
    }

    /// Sends the response headers; `endStream` makes them the whole response (no body, no trailers).
    public func respond(headers: [(String, String)], endStream: Bool = false) {
        change { pendingHeaders = (.list(headers), endStream) }
    }

    /// A whole response at once: headers, body bytes and trailers. One change of the stream (one
    /// lock, one flush scheduled) where `respond`, `write` and `finish` took three — a unary answer.
    public func respond(headers: [(String, String)], body: [UInt8], trailers: [(String, String)]) {
        respond(.list(headers), body: body, trailers: .list(trailers))
    }

    /// A whole response at once, its headers and trailers laid out beforehand (`HTTP2HeaderBlock`):
    /// a unary gRPC answer, whose fields are the same every time.
    public func respond(headers: HTTP2HeaderBlock, body: [UInt8], trailers: HTTP2HeaderBlock) {
        respond(.block(headers), body: body, trailers: .block(trailers))
    }

    private func respond(_ headers: HTTP2Fields, body: [UInt8], trailers: HTTP2Fields) {
        change {
            pendingHeaders = (headers, false)
            if outbound.isEmpty { outbound = body } else { outbound.append(contentsOf: body) }
            self.trailers = trailers
        }
    }

    /// Queues body bytes (after `respond`).
    public func write(_ bytes: [UInt8]) {
        // Nothing waiting (the usual case between a listener's snapshots): take the array as it is.
        change { if outbound.isEmpty { outbound = bytes } else { outbound.append(contentsOf: bytes) } }
    }

    /// Queues body bytes unless that would leave more than `limit` bytes buffered: `bufferedBytes`
    /// and `write` under one lock (a listener's snapshot takes both, once per commit); false, and
    /// nothing queued, over the limit.
    public func write(_ bytes: [UInt8], bufferingAtMost limit: Int) -> Bool {
        var fits = true
        change {
            fits = outbound.count - outboundStart + bytes.count <= limit
            if !fits { return }
            if outbound.isEmpty { outbound = bytes } else { outbound.append(contentsOf: bytes) }
        }
        return fits
    }

    /// Ends the response with trailers after the queued bytes; `discardingUnsent` drops the bytes not
    /// yet handed on first (a client that stopped reading gets its trailers at once: HEADERS are not
    /// flow-controlled).
    public func finish(trailers: [(String, String)], discardingUnsent: Bool = false) {
        change {
            if discardingUnsent {
                // What nghttp2 already framed (`reserved`) still goes; the rest is dropped.
                outbound = reserved > 0 ? Array(outbound[outboundStart..<(outboundStart + reserved)]) : []
                outboundStart = 0
            }
            self.trailers = .list(trailers)
        }
    }

    /// Resets the stream (RST_STREAM with `errorCode`, 8 = CANCEL).
    public func reset(errorCode: UInt32 = 8) {
        change { resetCode = errorCode }
    }

    /// Sets what writes this stream's body on the connection's loop thread: `produce` runs there
    /// (calling `write`, `respond`, `finish`) at the flush after each `produceSoon`.
    public func setProducer(_ produce: @escaping () -> Void) {
        lock.lock()
        producer = produce
        lock.unlock()
    }

    /// Has the producer run on the loop thread soon. Asks before it runs coalesce into one run, and
    /// the streams of one connection asked together are produced and flushed by one loop task: the
    /// thread that asks (a thousand listeners' snapshots) hands the framing of each stream's bytes
    /// to the loop instead of doing it itself.
    public func produceSoon() {
        change { produceWanted = true }
    }

    /// Returns `count` received bytes to the flow-control window: the client may send that much more.
    public func consume(_ count: Int) {
        // Taken while the loop reads (a request's DATA handed to its handler there, as every unary
        // call's is): returned to nghttp2 at once, and the read's own send carries any WINDOW_UPDATE.
        // Through a flush it cost a scheduled task and a second, empty pass of `send` per call
        // (~3k instructions a gRPC get; callgrind, bench/callgrind_get.py).
        if let connection, connection.consumeWhileReading(self, count) { return }
        change { consumed += count }
    }

    /// Runs `task` on this stream's loop thread once the frames of the read being handled are all
    /// delivered (so a handler can see every call that one read completed before answering any).
    /// Call it only from a delegate method (the loop thread); false when the connection is gone.
    @discardableResult public func afterCurrentRead(_ task: any EventLoopTask) -> Bool {
        guard let connection else { return false }
        connection.loop.executeSoon(task)
        return true
    }

    /// Applies and sends now what this stream's connection was asked so far — this stream's and the
    /// others' — instead of after the current handler. Call it only from a task queued with
    /// `afterCurrentRead` (the loop thread, outside nghttp2's callbacks): a handler answering many
    /// calls of one read lets the client have the first answers while it computes the rest.
    public func sendQueued() {
        connection?.flushNow()
    }

    /// Blocks until fewer than `bytes` are buffered, or the stream closes (then false). Worker threads only.
    public func waitUntilBuffered(below bytes: Int) -> Bool {
        lock.lock()
        let condition = writable ?? NSCondition()
        writable = condition
        lock.unlock()
        condition.lock()
        defer { condition.unlock() }
        while true {
            // Both under `lock`, which `markClosed` and `take` write them under: `isClosed` read under
            // the condition's lock alone raced the loop thread closing the stream (a client's reset
            // while a streaming answer waited). The condition's lock, held from this check to the
            // wait, is what keeps their wake-up from falling between the two.
            let (closed, buffered) = lock.withLock { (isClosed, outbound.count - outboundStart) }
            if closed { return false }
            if buffered < bytes { return true }
            condition.wait()
        }
    }

    private func change(_ body: () -> Void) {
        lock.lock()
        body()
        let schedule = !wakeScheduled && !isClosed
        if schedule { wakeScheduled = true }
        lock.unlock()
        if schedule, let connection { connection.scheduleFlush(self) }
    }

    // MARK: Loop side

    /// Promises up to `max` queued bytes to a DATA frame, copied later by `copyReserved` (nghttp2's
    /// data source callback, which copies nothing: `NGHTTP2_DATA_FLAG_NO_COPY`); the trailers when
    /// the promised bytes are the last, and whether more bytes wait after them.
    func reserve(max: Int) -> (count: Int, trailers: HTTP2Fields?, more: Bool) {
        lock.lock()
        let available = outbound.count - outboundStart
        let n = min(available, max)
        reserved = n
        let drained = n == available
        let t = drained ? trailers : nil
        lock.unlock()
        return (n, t, !drained)
    }

    /// Copies the `count` reserved bytes to `buffer` and lets them go (nghttp2's send-data
    /// callback, writing the frame); false when fewer were there (never: a discard keeps them).
    func copyReserved(into buffer: UnsafeMutableRawPointer, count: Int) -> Bool {
        lock.lock()
        // `reserve` promised them and nothing but this call takes bytes, so they are there.
        let n = min(count, outbound.count - outboundStart)
        if n > 0 {
            outbound.withUnsafeBytes { p in buffer.copyMemory(from: p.baseAddress! + outboundStart, byteCount: n) }
            outboundStart += n
            if outboundStart == outbound.count {
                outbound = []
                outboundStart = 0
            } else if outboundStart > 1 << 20 {
                outbound.removeFirst(outboundStart)
                outboundStart = 0
            }
        }
        reserved = 0
        // Only a server-streaming handler ever waits (most streams have no condition to signal).
        let waiter = n > 0 ? writable : nil
        lock.unlock()
        if let waiter {
            waiter.lock()
            waiter.broadcast()
            waiter.unlock()
        }
        return n == count
    }

    /// Whether body bytes or trailers wait to be handed to nghttp2 (under `lock`).
    var hasUnsentBody: Bool { outbound.count > outboundStart || trailers != nil }

    func markClosed() {
        lock.lock()
        isClosed = true
        // The producer usually holds what holds this stream (the call): let the cycle go.
        let producer = self.producer
        self.producer = nil
        // Read under the same lock as `isClosed` is set: a waiter either saw it closed or made its
        // condition first, and then hears it below.
        let condition = writable
        lock.unlock()
        _ = producer
        guard let condition else { return }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}
