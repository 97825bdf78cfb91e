import Foundation

/// Receives the streams of HTTP/2 connections (gRPC implements it; this layer knows nothing of gRPC).
public protocol HTTP2StreamHandler: Sendable {
    /// A new stream with its request headers (pseudo-headers included, names lower-case, in order).
    /// Called on the connection's loop thread: must not block.
    func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)]) -> any HTTP2StreamDelegate
    /// `open` with what the connection knows of the fields: `repeated` when they are exactly the
    /// previous request's on this connection (the same names and values, in the same order), and
    /// `memo`, which the connection keeps for its handler from one request to the next (nil at
    /// first): a handler may keep there what it made of the previous request's fields, and take it
    /// again for a repeated list instead of reading the fields anew. By default, `open`.
    func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)], repeated: Bool,
              memo: inout AnyObject?) -> any HTTP2StreamDelegate
}

extension HTTP2StreamHandler {
    public func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)], repeated: Bool,
                     memo: inout AnyObject?) -> any HTTP2StreamDelegate {
        open(stream, headers: headers)
    }
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
    /// Up to eight bytes that go before `outbound`'s, byte `i` in bits `8 * i` (bytes
    /// `headStart..<headEnd` not handed on yet): a unary gRPC answer's 5-byte message prefix, so the
    /// message leaves from the array its handler made (a read's cached encoding, shared) where a
    /// framed copy was allocated, written and freed per call.
    @exclusivity(unchecked) var head: UInt64 = 0
    @exclusivity(unchecked) var headStart = 0
    @exclusivity(unchecked) var headEnd = 0
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
        return unsentCount
    }

    /// Body bytes not handed on yet: `head`'s, then `outbound`'s (under `lock`).
    var unsentCount: Int { headEnd - headStart + outbound.count - outboundStart }

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

    /// `respond(headers:body:trailers:)` of the five bytes of `prefix` (the first in its lowest
    /// bits) followed by `body`, sent from `body` itself: a unary gRPC answer, whose message keeps
    /// the array it was made in.
    public func respond(headers: HTTP2HeaderBlock, prefix: UInt64, body: [UInt8], trailers: HTTP2HeaderBlock) {
        change {
            pendingHeaders = (.block(headers), false)
            if outbound.isEmpty && headStart == headEnd {
                head = prefix
                headStart = 0
                headEnd = 5
                outbound = body
            } else {
                for i in 0..<5 { outbound.append(UInt8(truncatingIfNeeded: prefix >> (8 * i))) }
                outbound.append(contentsOf: body)
            }
            self.trailers = .block(trailers)
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
            fits = unsentCount + bytes.count <= limit
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
                // What nghttp2 already framed (`reserved`) still goes — `head`'s first, then
                // `outbound`'s —; the rest is dropped.
                let fromHead = min(reserved, headEnd - headStart)
                headEnd = headStart + fromHead
                let fromBody = reserved - fromHead
                outbound = fromBody > 0 ? Array(outbound[outboundStart..<(outboundStart + fromBody)]) : []
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
            let (closed, buffered) = lock.withLock { (isClosed, unsentCount) }
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
        let available = unsentCount
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
        let n = min(count, unsentCount)
        var at = buffer
        var left = n
        while left > 0 && headStart < headEnd {
            at.storeBytes(of: UInt8(truncatingIfNeeded: head >> (8 * headStart)), as: UInt8.self)
            at += 1
            headStart += 1
            left -= 1
        }
        if headStart == headEnd {
            headStart = 0
            headEnd = 0
        }
        if left > 0 {
            outbound.withUnsafeBytes { p in at.copyMemory(from: p.baseAddress! + outboundStart, byteCount: left) }
            outboundStart += left
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
    var hasUnsentBody: Bool { outbound.count > outboundStart || headStart < headEnd || trailers != nil }

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
