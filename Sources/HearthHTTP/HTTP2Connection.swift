import Foundation
internal import CNGHTTP2
internal import CLinuxIO

/// One HTTP/2 connection: a nonblocking socket and its `nghttp2_session`, both confined to one loop thread.
///
/// nghttp2 does the framing, HPACK, flow control, SETTINGS, PING and GOAWAY; this class moves bytes
/// between it and the socket and between its callbacks and `HTTP2Stream`s.
/// Related: https://nghttp2.org/documentation/programmers-guide.html
final class HTTP2Connection: EventLoopTask, @unchecked Sendable {
    let fd: Int32
    let loop: EventLoop
    let remoteAddress: String
    let handler: any HTTP2StreamHandler
    let limits: HTTP2Engine.Limits
    // Loop thread only, as `streams` below and the loop-only state after it (unchecked likewise:
    // each is read for every stream a commit's fan-out flushes).
    @exclusivity(unchecked) var session: OpaquePointer?
    // Both touched only on the loop thread, several times per request frame (by the callbacks
    // below): unchecked, they cost no runtime exclusivity check per access (~4k instructions a
    // gRPC get in swift_beginAccess; callgrind, bench/callgrind_get.py --width 16).
    // The table owns the streams; a frame finds its stream through nghttp2's stream user data
    // (`withStream`), which points at the same object, without hashing the id (~7 lookups a call).
    // In no order: a stream knows its place (`HTTP2Stream.slot`) and leaves by trading places with
    // the last, so a call's stream is kept and let go without its id hashed (a dictionary by id
    // hashed it twice per call, to insert and to remove, and only `shutdown` ever read it whole).
    @exclusivity(unchecked) var streams: [HTTP2Stream] = []
    /// The request header block being received: its stream, its fields (the first `count` of
    /// `headers`; see `previousHeaders`) and their RFC 9113 size. A block (HEADERS and its
    /// CONTINUATIONs) arrives whole before any other frame (RFC 9113 §6.10), so one list per
    /// connection serves every stream, and a field costs no lookup in `streams` (a hash of the id
    /// and a checked access to the entry, per field).
    @exclusivity(unchecked) var incoming: (id: Int32, headers: [(name: String, value: String)], count: Int, bytes: Int) = (0, [], 0, 0)
    /// The fields of the last request header block handed to the handler, in order. The next block
    /// starts from this list and changes only the fields that differ (`h2Header`): a client sends
    /// the same fields call after call, so the usual request's list is the previous one, shared —
    /// no array made, no string made or retained, none released — where each call built a list of
    /// its own and freed the last (~2k instructions a gRPC get). A field that differs is replaced
    /// (the list copied first while a live call still shares it), reusing the previous string
    /// where the bytes match (`HTTP2FieldText`).
    @exclusivity(unchecked) var previousHeaders: [(name: String, value: String)] = []
    /// The nghttp2 buffers the fields of that list (`incoming.headers` while a block arrives) were
    /// read from, field by field.
    @exclusivity(unchecked) var fieldBuffers = HTTP2FieldBuffers()
    /// Whether the block being received changed any field of `previousHeaders` (a field replaced,
    /// added or dropped): when not, the handler hears that the list repeats the previous request's.
    @exclusivity(unchecked) var incomingChanged = true
    /// What the handler keeps from one request of this connection to the next
    /// (`HTTP2StreamHandler.open(_:headers:repeated:memo:)`).
    @exclusivity(unchecked) var handlerMemo: AnyObject?
    /// Bytes nghttp2 produced that the socket has not taken yet.
    @exclusivity(unchecked) private var unsent: [UInt8] = []
    /// How much of the loop's send buffer the current pass of `send` filled: frames nghttp2
    /// returns and the DATA frames the send-data callback writes there go side by side, in order.
    @exclusivity(unchecked) private var gathered = 0
    /// Whether the send-data callback wrote a DATA frame in the current pass.
    @exclusivity(unchecked) private var gatheredData = false
    /// Whether a DATA frame written by the send-data callback could not be kept (the socket failed).
    private var gatherFailed = false
    private var interest: UInt32 = 0
    @exclusivity(unchecked) private var closed = false
    /// Inside `nghttp2_session_mem_recv`, whose callbacks must not call nghttp2 (`flushNow`).
    private var receiving = false
    /// Inside `send`: streams nghttp2 closes then (a unary answer's trailers end its stream inside
    /// the `nghttp2_session_mem_send` call that returns them) are told so once the pass is written.
    @exclusivity(unchecked) private var sending = false
    /// Streams closed during the current `send`, with their error codes, whose delegates hear
    /// `closed` after the socket write: the delegate's end of call (the gRPC call's log line and
    /// end of its request side) and the call's and stream's deallocation, ~3k instructions a
    /// unary call, ran between the answer's last frame and its write, delaying the answer by as much.
    @exclusivity(unchecked) private var closedDuringSend: [(stream: HTTP2Stream, errorCode: UInt32)] = []
    /// The buffer `closedDuringSend` gets back after its batch is told.
    @exclusivity(unchecked) private var spareClosed: [(stream: HTTP2Stream, errorCode: UInt32)] = []
    /// How this connection's streams reach it, from `start` until `shutdown`.
    let link = HTTP2ConnectionLink()
    var onClose: (HTTP2Connection) -> Void = { _ in }
    /// Its engine's count of open streams, changed as streams open and close: a counter held, not a
    /// closure holding the engine unowned (its call and the unowned reference's strong load and
    /// release, twice a stream).
    @exclusivity(unchecked) var streamCount = HTTP2StreamCount()

    init(fd: Int32, loop: EventLoop, remoteAddress: String, handler: any HTTP2StreamHandler, limits: HTTP2Engine.Limits) {
        self.fd = fd
        self.loop = loop
        self.remoteAddress = remoteAddress
        self.handler = handler
        self.limits = limits
    }

    /// Creates the session, queues our SETTINGS and starts watching the socket (loop thread).
    func start() -> Bool {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, h2BeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback2(callbacks, h2Header)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, h2FrameReceived)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, h2DataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, h2StreamClosed)
        nghttp2_session_callbacks_set_send_data_callback(callbacks, h2SendData)
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        // The window opens only as the application takes the bytes (HTTP2Stream.consume): a flood is bounded.
        nghttp2_option_set_no_auto_window_update(option, 1)
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new2(&session, callbacks, me, option) == 0 else { return false }
        // Cut in `shutdown`, which every started connection reaches (the engine's `close` too).
        link.attach(self)
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: UInt32(limits.maxConcurrentStreams)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: UInt32(limits.initialWindowSize)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: UInt32(limits.maxHeaderListSize)),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        // The connection window starts at 65535 whatever SETTINGS say; widen it to match the streams'.
        nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Int32(limits.connectionWindowSize))
        interest = hearth_epollin()
        loop.register(fd, events: interest, readsAhead: true) { [unowned self] events in ready(events) }
        send()
        return true
    }

    // MARK: Socket

    private func ready(_ events: UInt32) {
        if events & hearth_epollout() != 0 { send() }
        if events & hearth_epollin() != 0 || events & hearth_epollerr() != 0 { receive() }
    }

    private func receive() {
        // nghttp2 copies what it keeps, and the callbacks copy request bytes out, so the loop's one
        // buffer serves every read.
        let buffer = loop.scratch
        let n: Int
        if let ahead = loop.takeReadAhead(fd) {
            // The loop's polling read the socket already, into the same buffer.
            n = ahead.result
            if n < 0 { errno = ahead.error }
        } else {
            n = recv(fd, buffer.baseAddress, buffer.count, 0)
        }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
        guard n > 0 else { return shutdown(errorCode: 8) }
        receiving = true
        let used = nghttp2_session_mem_recv(session, buffer.baseAddress, n)
        receiving = false
        if used < 0 {
            // Bad preface, garbage frames, a flood: nghttp2 has queued a GOAWAY; send it, then close.
            send()
            return shutdown(errorCode: 1)
        }
        // A request's answer is made after this read (a quick call) or on another thread, and its
        // flush sends. A pass now has something to do only when nghttp2 queued a frame of its own
        // (SETTINGS ACK, PING ACK, WINDOW_UPDATE, RST_STREAM, GOAWAY), when bytes wait for the
        // socket, or when the session is done (`sendFrames` closes it): otherwise it pulled
        // nothing, at ~0.4k instructions a gRPC call.
        if !unsent.isEmpty || nghttp2_session_want_write(session) != 0 || nghttp2_session_want_read(session) == 0 {
            send()
        }
    }

    /// Pulls frames out of nghttp2 and writes what the socket takes; the rest waits for EPOLLOUT.
    /// Streams that closed meanwhile are told so after the write (`closedDuringSend`).
    func send() {
        sending = true
        sendFrames()
        sending = false
        while !closedDuringSend.isEmpty {
            // Swapped with the kept spare, as `flushDirty` swaps `dirty`: emptying a list the batch
            // still shared allocated a new buffer for it every call.
            var batch = spareClosed
            spareClosed = []
            swap(&batch, &closedDuringSend)
            for (stream, errorCode) in batch { tellClosed(stream, errorCode: errorCode) }
            batch.removeAll(keepingCapacity: true)
            spareClosed = batch
        }
    }

    /// Tells `stream`'s delegate that nghttp2 closed it: after the write when that happened inside
    /// `send`, else now.
    func streamClosed(_ stream: HTTP2Stream, errorCode: UInt32) {
        if sending {
            closedDuringSend.append((stream, errorCode))
        } else {
            tellClosed(stream, errorCode: errorCode)
        }
    }

    /// The delegate of a closed stream hears it, and the stream lets go of it.
    func tellClosed(_ stream: HTTP2Stream, errorCode: UInt32) {
        let delegate = stream.delegate
        stream.delegate = nil
        delegate?.closed(errorCode: errorCode)
    }

    /// `send`'s work: frames out of nghttp2 into the socket.
    private func sendFrames() {
        guard let session, !closed else { return }
        // While the socket is backed up, leave frames inside nghttp2 (and bytes in the streams' buffers).
        // Once the socket took everything, pull again: nghttp2 may hold more (a pass larger than the
        // gathering buffer), and nothing else would wake this connection to send it.
        while true {
            if !unsent.isEmpty {
                guard let n = unsent.withUnsafeBytes({ write($0) }) else { return shutdown(errorCode: 8) }
                if n == unsent.count {
                    // Keep a small buffer for the next backlog; a burst's large one goes back.
                    unsent.removeAll(keepingCapacity: unsent.capacity <= 16 << 10)
                } else {
                    unsent.removeFirst(n)
                    break
                }
            }
            // Gathered in the loop's buffer and written from there; only what the socket does not
            // take is copied into `unsent`. Gathered in `unsent` itself, a pass larger than the
            // capacity it keeps regrew it from empty each time (a commit to 100 listeners: ~33 KB,
            // eight reallocations and copies per connection per commit).
            // DATA frames are written there by `sendData` (nghttp2's send-data callback, inside
            // `nghttp2_session_mem_send`), the other frames copied below, in the order nghttp2 makes them.
            let buffer = UnsafeMutableRawBufferPointer(loop.sendBuffer)
            gathered = 0
            gatheredData = false
            var pulled = false
            // A frame that did not fit: nghttp2's bytes, valid until its next call.
            var spill: UnsafeRawBufferPointer?
            while gathered < buffer.count {
                var data: UnsafePointer<UInt8>?
                let n = nghttp2_session_mem_send(session, &data)
                if gatherFailed { return shutdown(errorCode: 8) }
                if n < 0 { return shutdown(errorCode: 2) }
                guard n > 0, let data else { break }
                pulled = true
                if gathered + n > buffer.count {
                    spill = UnsafeRawBufferPointer(start: data, count: n)
                    break
                }
                (buffer.baseAddress! + gathered).copyMemory(from: data, byteCount: n)
                gathered += n
            }
            guard pulled || gatheredData else { break }
            guard keep(UnsafeRawBufferPointer(rebasing: buffer[0..<gathered])), spill.map(keep) ?? true else {
                return shutdown(errorCode: 8)
            }
            if !unsent.isEmpty { break }
        }
        if unsent.isEmpty && nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
            return shutdown(errorCode: 0)
        }
        // A client that does not read gets no more reading from us either: its PINGs and requests
        // stay in the kernel instead of growing our buffers.
        var wanted: UInt32 = unsent.count < 256 << 10 ? hearth_epollin() : 0
        if !unsent.isEmpty { wanted |= hearth_epollout() }
        if wanted != interest {
            interest = wanted
            loop.modify(fd, events: wanted)
        }
    }

    /// Writes `bytes` after what waits in `unsent`, keeping there what the socket does not take now;
    /// false when the connection failed.
    private func keep(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var taken = 0
        if unsent.isEmpty {
            guard let n = write(bytes) else { return false }
            taken = n
        }
        if taken < bytes.count { unsent.append(contentsOf: bytes[taken...]) }
        return true
    }

    /// Writes what the socket takes of `bytes` now: how many it took (0 when it is full), nil when
    /// the connection failed.
    private func write(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var at = 0
        while at < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress! + at, bytes.count - at, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { break }
                return nil
            }
            at += n
        }
        return at
    }

    /// Queues GOAWAY (NO_ERROR, last stream accepted so far): in-flight streams may finish.
    func goAway() {
        guard let session, !closed else { return }
        nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(session), 0, nil, 0)
        send()
    }

    /// Closes the socket and tells every open stream's delegate.
    func shutdown(errorCode: UInt32) {
        guard !closed else { return }
        closed = true
        loop.unregister(fd)
        close(fd)
        let open = streams
        streams = []
        if !open.isEmpty { streamCount.add(-open.count) }
        for stream in open {
            answerSettled(stream)
            stream.markClosed()
            tellClosed(stream, errorCode: errorCode == 0 ? 8 : errorCode)
        }
        // nghttp2's buffers are freed through the session's allocator: let go of them first.
        fieldBuffers.removeAll()
        nghttp2_session_del(session)
        session = nil
        // After the streams' delegates heard it, as they did while the connection was weakly held.
        link.cut()
        onClose(self)
    }

    // MARK: Streams

    /// Streams changed since the loop last flushed them (under `dirtyLock`).
    private let dirtyLock = InlineLock()
    // Unchecked: `dirtyLock` keeps accesses apart (a shard appends every stream it hands a snapshot).
    @exclusivity(unchecked) private var dirty: [HTTP2Stream] = []
    /// The buffer `dirty` gets back at the next flush (loop thread only).
    @exclusivity(unchecked) private var spareDirty: [HTTP2Stream] = []

    /// Has the loop apply what was asked of `stream` (any thread). Streams changed together — one
    /// commit fanned out to a hundred listeners on this connection, or the quick calls one read
    /// completed — are flushed by one loop task and leave in one socket write. On the loop thread
    /// (a handler answering there) the flush runs after the current handler, with no eventfd wake-up.
    func scheduleFlush(_ stream: HTTP2Stream) {
        dirtyLock.lock()
        let first = dirty.isEmpty
        dirty.append(stream)
        dirtyLock.unlock()
        guard first else { return }
        if loop.isLoopThread {
            loop.executeSoon(self)
        } else {
            loop.execute { [self] in flushDirty() }
        }
    }

    /// Applies and sends what was asked of this connection's streams so far, now rather than after
    /// the current handler (loop thread, outside nghttp2's callbacks: `HTTP2Stream.sendQueued`).
    func flushNow() {
        // Inside nghttp2's callbacks (a delegate method) nghttp2 may not be called again: the flush
        // after the current handler sends it. The thread first: another loop answering a batch of
        // the server's `QuickCalls` may hold this connection's call, and `closed` and `receiving`
        // are this loop's (read from that thread they raced this loop setting them).
        guard loop.isLoopThread, !closed, !receiving else { return }
        flushDirty()
    }

    /// `flushDirty`, queued after the current handler (`scheduleFlush` on the loop thread).
    func runOnLoop() { flushDirty() }

    private func flushDirty() {
        // The batch is swapped with the kept spare: `dirty` keeps a buffer for the next change, where
        // emptied it was allocated again by the next append and this batch's freed (per unary call).
        // A flush nested in a producer finds the spare taken and works with a new array.
        var batch = spareDirty
        spareDirty = []
        dirtyLock.lock()
        swap(&batch, &dirty)
        dirtyLock.unlock()
        for stream in batch { flush(stream) }
        batch.removeAll(keepingCapacity: true)
        spareDirty = batch
        send()
    }

    /// Applies what was asked of `stream` (loop thread); the caller sends.
    private func flush(_ stream: HTTP2Stream) {
        stream.lock.lock()
        let produce = stream.produceWanted ? stream.producer : nil
        stream.produceWanted = false
        // Whether `streams` holds it, without hashing its id: a stream leaves the table only with
        // `markClosed` (nghttp2's close callback, `shutdown`), both on this thread. Read once: a
        // producer only queues (nghttp2, which closes streams, is not called here).
        let open = !closed && !stream.isClosed
        stream.lock.unlock()
        // Still marked scheduled while it runs: what the producer writes is applied below, not by
        // another flush.
        if let produce, open { produce() }
        stream.lock.lock()
        stream.wakeScheduled = false
        // Asked again (another thread) while the producer ran: it runs again at the next flush.
        let again = stream.produceWanted && !stream.isClosed
        if again { stream.wakeScheduled = true }
        let headers = stream.pendingHeaders
        stream.pendingHeaders = nil
        let reset = stream.resetCode
        stream.resetCode = nil
        let consumed = stream.consumed
        stream.consumed = 0
        let submitted = stream.headersSubmitted
        if headers != nil { stream.headersSubmitted = true }
        let body = stream.hasUnsentBody
        stream.lock.unlock()
        if again { scheduleFlush(stream) }
        guard let session, open, !closed else { return }
        if consumed > 0 { nghttp2_session_consume(session, stream.id, consumed) }
        if let reset {
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, reset)
        } else if let headers, !submitted {
            submit(headers.fields, on: stream, endStream: headers.endStream)
        } else if submitted, !stream.responseEnded {
            if stream.providerAttached {
                nghttp2_session_resume_data(session, stream.id)
            } else if body {
                submitData(stream)
            }
        }
    }

    /// Attaches the stream's data provider again (its body was drained, and more came): END_STREAM
    /// as the response's own provider has, unless the data callback sends trailers.
    private func submitData(_ stream: HTTP2Stream) {
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: Unmanaged.passUnretained(stream).toOpaque()),
                                             read_callback: h2ReadData)
        if nghttp2_submit_data(session, UInt8(NGHTTP2_FLAG_END_STREAM.rawValue), stream.id, &provider) == 0 {
            stream.providerAttached = true
        }
    }

    private func submit(_ headers: HTTP2Fields, on stream: HTTP2Stream, endStream: Bool) {
        let id = stream.id
        withVector(headers) { nva, count in
            if endStream {
                // No RST_STREAM(NO_ERROR) here: nghttp2 may send it ahead of this HEADERS frame, and
                // gRPC clients then report "Stream removed" instead of the Trailers-Only status. The
                // client's remaining request DATA is read and dropped on the half-closed stream.
                _ = nghttp2_submit_response(session, id, nva, count, nil)
                responseEnded(stream)
            } else {
                // The source is the stream itself (unretained: `streams` holds it until nghttp2's
                // close callback, after which nghttp2 reads no more), so a DATA frame costs no lookup.
                var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: Unmanaged.passUnretained(stream).toOpaque()),
                                                     read_callback: h2ReadData)
                if nghttp2_submit_response(session, id, nva, count, &provider) == 0 { stream.providerAttached = true }
            }
        }
    }

    /// Returns `count` received bytes of `stream` to the flow-control windows now, when called on
    /// the loop thread inside `nghttp2_session_mem_recv` (a delegate method): `receive` sends right
    /// after, so a WINDOW_UPDATE this queues leaves with that read's answer. False anywhere else
    /// (another thread, or the loop outside a read, where nothing would send it): the caller queues it.
    func consumeWhileReading(_ stream: HTTP2Stream, _ count: Int) -> Bool {
        guard loop.isLoopThread, receiving else { return false }
        // A closed stream's bytes are dropped, as `flush` drops them. `isClosed` is written on this
        // thread only (`markClosed`), so it is read here without the stream's lock.
        guard let session, !closed, !stream.isClosed else { return true }
        nghttp2_session_consume(session, stream.id, count)
        return true
    }

    /// Runs `body` with stream `id` of `session` (this connection's), found through nghttp2's
    /// stream user data (set when its request header block began) rather than a hash of the id in
    /// `streams`, which holds it; nil when it is not one of ours.
    @inline(__always)
    func withStream<R>(_ session: OpaquePointer?, _ id: Int32, _ body: (HTTP2Stream) -> R) -> R? {
        guard let p = nghttp2_session_get_stream_user_data(session, id) else { return nil }
        return Unmanaged<HTTP2Stream>.fromOpaque(p)._withUnsafeGuaranteedRef(body)
    }

    /// Puts a new stream in `streams`.
    func keep(_ stream: HTTP2Stream) {
        stream.slot = streams.count
        streams.append(stream)
    }

    /// Takes the stream nghttp2's user data points at out of `streams` (it trades places with the
    /// last) and returns it, now held by the caller only; nil when `streams` no longer holds it
    /// (`shutdown` emptied the table).
    func letGo(_ unmanaged: Unmanaged<HTTP2Stream>) -> HTTP2Stream? {
        let slot = unmanaged._withUnsafeGuaranteedRef { $0.slot }
        guard slot < streams.count, Unmanaged.passUnretained(streams[slot]).toOpaque() == unmanaged.toOpaque() else { return nil }
        let last = streams.count - 1
        if slot != last {
            streams.swapAt(slot, last)
            streams[slot].slot = slot
        }
        return streams.removeLast()
    }

    /// The client sent its whole request (END_STREAM): until the response ends, the loop waits
    /// for whoever answers it (`EventLoop.answersAwaited`).
    func requestEnded(_ stream: HTTP2Stream) {
        guard !stream.responseEnded, !stream.awaitingAnswer else { return }
        stream.awaitingAnswer = true
        loop.answersAwaited += 1
    }

    /// The last frame of `stream`'s response is handed to nghttp2.
    private func responseEnded(_ stream: HTTP2Stream) {
        stream.responseEnded = true
        answerSettled(stream)
    }

    /// `stream` no longer waits for an answer (it has one, or it closed).
    func answerSettled(_ stream: HTTP2Stream) {
        guard stream.awaitingAnswer else { return }
        stream.awaitingAnswer = false
        loop.answersAwaited -= 1
    }

    /// nghttp2's data source callback body: how many body bytes the next DATA frame carries (copied
    /// by `sendData`, not here), or DEFERRED until more are written; trailers after the last.
    ///
    /// A drained stream's provider ends with the frame (EOF without END_STREAM) and `flush` attaches
    /// it again when more is written: kept attached, nghttp2 asked it once more in the same pass,
    /// only to hear DEFERRED and take it out of its queue, and a write resumed it (a second callback
    /// and two queue changes per listener per commit).
    func read(_ stream: HTTP2Stream, length: Int, flags: UnsafeMutablePointer<UInt32>) -> Int {
        let id = stream.id
        let (n, trailers, more) = stream.reserve(max: length)
        // An empty frame (only END_STREAM) is nghttp2's to make.
        if n > 0 { flags.pointee |= NGHTTP2_DATA_FLAG_NO_COPY.rawValue }
        if more { return n }
        if let trailers {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            stream.providerAttached = false
            responseEnded(stream)
            if trailers.isEmpty { return n }
            flags.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
            withVector(trailers) { nva, count in _ = nghttp2_submit_trailer(session, id, nva, count) }
            // No RST_STREAM(NO_ERROR) after the trailers either (see `submit`): the client's remaining
            // request DATA is read and dropped on the half-closed stream.
            return n
        }
        if n == 0 { return Int(NGHTTP2_ERR_DEFERRED.rawValue) }
        // nghttp2 lets go of the provider once this frame is written, within this same
        // `nghttp2_session_mem_send` call (`sendData` never defers a frame), so no `flush` runs
        // between here and there.
        flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue | NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
        stream.providerAttached = false
        return n
    }

    /// nghttp2's send-data callback body: writes one DATA frame — the 9-byte header nghttp2 made,
    /// padding if any, and the `length` bytes `read` promised, copied once, from the stream's queue
    /// straight into the gathering buffer. Never WOULDBLOCK: a frame that does not fit sends what
    /// is gathered first, so the frame and the provider's end (`read`) happen in one pass.
    func sendData(_ stream: HTTP2Stream, header: UnsafePointer<UInt8>, length: Int, padding: Int) -> Int32 {
        let total = 9 + length + padding
        let buffer = UnsafeMutableRawBufferPointer(loop.sendBuffer)
        if gathered + total > buffer.count {
            guard keep(UnsafeRawBufferPointer(rebasing: buffer[0..<gathered])) else { return failGather() }
            gathered = 0
        }
        func write(_ at: UnsafeMutableRawPointer) -> Bool {
            at.copyMemory(from: header, byteCount: 9)
            var p = at + 9
            // RFC 9113 §6.1: the Pad Length byte, then the data, then the padding's zeros.
            if padding > 0 {
                p.storeBytes(of: UInt8(truncatingIfNeeded: padding - 1), as: UInt8.self)
                p += 1
            }
            guard stream.copyReserved(into: p, count: length) else { return false }
            if padding > 1 { (p + length).initializeMemory(as: UInt8.self, repeating: 0, count: padding - 1) }
            return true
        }
        gatheredData = true
        if total <= buffer.count {
            guard write(buffer.baseAddress! + gathered) else { return failGather() }
            gathered += total
            return 0
        }
        // Larger than the whole buffer (a peer allowing frames over 64 KiB): through an array of its own.
        var frame = [UInt8](repeating: 0, count: total)
        let ok = frame.withUnsafeMutableBytes { write($0.baseAddress!) }
        guard ok, frame.withUnsafeBytes({ keep($0) }) else { return failGather() }
        return 0
    }

    private func failGather() -> Int32 {
        gatherFailed = true
        return Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
    }

    /// `fields` as nghttp2 takes them: a block as it was laid out, a list laid out now.
    private func withVector(_ fields: HTTP2Fields, _ body: (UnsafePointer<nghttp2_nv>, Int) -> Void) {
        switch fields {
        case .block(let block): body(block.vector, block.fields.count)
        case .list(let list): withHeaderVector(list, body)
        }
    }

    /// Lays header names and values out in one buffer and points an `nghttp2_nv` array into it
    /// (nghttp2 copies them during the call). Both live on the stack when small, as a unary call's
    /// headers and trailers are: three growing heap arrays per HEADERS frame were a visible part of
    /// a GetDocument.
    private func withHeaderVector(_ headers: [(String, String)], _ body: (UnsafePointer<nghttp2_nv>, Int) -> Void) {
        var total = 0
        for (name, value) in headers { total += name.utf8.count + value.utf8.count }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(total, 1)) { bytes in
            withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: max(headers.count, 1)) { nva in
                // Force-unwraps safe: both capacities are at least 1.
                let base = bytes.baseAddress!
                var at = 0
                func place(_ text: String) -> (UnsafeMutablePointer<UInt8>, Int) {
                    var text = text
                    let start = base + at
                    let count = text.withUTF8 { utf8 in
                        if let source = utf8.baseAddress { start.initialize(from: source, count: utf8.count) }
                        return utf8.count
                    }
                    at += count
                    return (start, count)
                }
                for (i, (name, value)) in headers.enumerated() {
                    let (n, nl) = place(name)
                    let (v, vl) = place(value)
                    (nva.baseAddress! + i).initialize(to: nghttp2_nv(name: n, value: v, namelen: nl, valuelen: vl,
                                                                     flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
                }
                body(nva.baseAddress!, headers.count)
            }
        }
    }
}

// MARK: - nghttp2 callbacks (no captures: they convert to C function pointers)

/// Runs `body` with the connection whose session called back, without a retain and release around
/// it: callbacks run only inside the connection's own `nghttp2_session_*` calls, which hold it.
private func withConnection<R>(_ userData: UnsafeMutableRawPointer?, _ body: (HTTP2Connection) -> R) -> R {
    Unmanaged<HTTP2Connection>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
}

private let h2BeginHeaders: nghttp2_on_begin_headers_callback = { session, frame, userData in
    guard let frame, hearth_frame_is_request_headers(frame) != 0 else { return 0 }
    return withConnection(userData) { c in
        let id = hearth_frame_stream_id(frame)
        // Starts from the previous request's fields (`previousHeaders`), changed in place below.
        var headers = c.previousHeaders
        c.previousHeaders = []
        // No list kept (a block abandoned): nor are the buffers that described it.
        if headers.isEmpty { c.fieldBuffers.removeAll() }
        // Room for a gRPC call's usual fields (pseudo-headers, content-type, te, authorization, a
        // user-agent and a few more): appending to an empty array regrew it four times per request.
        if headers.isEmpty { headers.reserveCapacity(12) }
        // Unchanged until a field differs (`h2Header`), or fewer arrive (`h2FrameReceived`). A list
        // not kept (empty: the first request, or a block abandoned) is made anew.
        c.incomingChanged = headers.isEmpty
        c.incoming = (id, headers, 0, 0)
        let stream = HTTP2Stream(id: id, remoteAddress: c.remoteAddress, connection: c)
        c.keep(stream)
        // Unretained: `streams` holds the stream until nghttp2's close callback, after which
        // nghttp2 has no frame of it to deliver (and frees its user data with the stream).
        nghttp2_session_set_stream_user_data(session, id, Unmanaged.passUnretained(stream).toOpaque())
        c.streamCount.add(1)
        return 0
    }
}

private let h2Header: nghttp2_on_header_callback2 = { _, frame, nameBuffer, valueBuffer, _, userData in
    guard let frame, let nameBuffer, let valueBuffer, hearth_frame_is_request_headers(frame) != 0 else { return 0 }
    return withConnection(userData) { c in
        guard c.incoming.id == hearth_frame_stream_id(frame) else { return 0 }
        let name = nghttp2_rcbuf_get_buf(nameBuffer)
        let value = nghttp2_rcbuf_get_buf(valueBuffer)
        // RFC 9113 §6.5.2 counts 32 bytes of overhead per field.
        c.incoming.bytes += name.len + value.len + 32
        if c.incoming.bytes > c.limits.maxHeaderListSize {
            c.incoming = (0, [], 0, 0)  // the rest of this block is not delivered
            c.fieldBuffers.removeAll()  // nor is the list they describe kept
            return Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)  // resets this stream only
        }
        let i = c.incoming.count
        c.incoming.count = i + 1
        // Changed in place: a copy would copy the list at every field.
        guard i < c.incoming.headers.count else {
            c.incomingChanged = true
            c.incoming.headers.append((HTTP2FieldText.name(name.base, count: name.len),
                                       HTTP2FieldText.value(value.base, count: value.len)))
            c.fieldBuffers.append(name: nameBuffer, value: valueBuffer)
            return 0
        }
        // The previous request's field in this place: kept when its bytes come in the same buffers
        // of nghttp2's header table (`HTTP2FieldBuffers`) or are its bytes (no write, so a list a
        // live call shares is not copied), else replaced.
        let buffered = c.fieldBuffers.same(i, name: nameBuffer, value: valueBuffer)
        if buffered.name && buffered.value { return 0 }
        let (sameName, sameValue) = c.incoming.headers.withUnsafeBufferPointer { fields in
            (buffered.name || HTTP2FieldText.matches(fields[i].name, name.base, name.len),
             buffered.value || HTTP2FieldText.matches(fields[i].value, value.base, value.len))
        }
        // The same bytes in other buffers (a literal, sent anew each time): the held ones still
        // describe the field, and holding these instead would only free the others per call.
        if sameName && sameValue { return 0 }
        c.incomingChanged = true
        c.fieldBuffers.replace(i, name: nameBuffer, value: valueBuffer)
        let previous = c.incoming.headers[i]
        c.incoming.headers[i] = (sameName ? previous.name : HTTP2FieldText.name(name.base, count: name.len),
                                 sameValue ? previous.value : HTTP2FieldText.value(value.base, count: value.len))
        return 0
    }
}

private let h2FrameReceived: nghttp2_on_frame_recv_callback = { session, frame, userData in
    guard let frame else { return 0 }
    let type = hearth_frame_type(frame)
    guard type == UInt8(NGHTTP2_HEADERS.rawValue) || type == UInt8(NGHTTP2_DATA.rawValue) else { return 0 }
    return withConnection(userData) { c in
        let id = hearth_frame_stream_id(frame)
        return c.withStream(session, id) { stream in
            if hearth_frame_is_request_headers(frame) != 0 {
                guard c.incoming.id == id else { return 0 }
                var headers = c.incoming.headers
                let count = c.incoming.count
                c.incoming = (0, [], 0, 0)
                // The previous request had more fields: the rest are not this one's.
                if headers.count > count {
                    headers.removeSubrange(count...)
                    c.incomingChanged = true
                }
                c.fieldBuffers.truncate(to: count)
                c.previousHeaders = headers
                stream.delegate = c.handler.open(stream, headers: headers, repeated: !c.incomingChanged, memo: &c.handlerMemo)
            }
            if hearth_frame_flags(frame) & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0 {
                // Held here for the call: the delegate may reach the connection again.
                let delegate = stream.delegate
                c.requestEnded(stream)
                delegate?.endOfStream()
            }
            return 0
        } ?? 0
    }
}

private let h2DataChunk: nghttp2_on_data_chunk_recv_callback = { session, _, id, data, length, userData in
    withConnection(userData) { c in
        guard let data else { return 0 }
        return c.withStream(session, id) { stream in
            if let delegate = stream.delegate {
                delegate.received(UnsafeBufferPointer(start: data, count: length))
            } else {
                nghttp2_session_consume(session, id, length)
            }
            return 0
        } ?? 0
    }
}

private let h2StreamClosed: nghttp2_on_stream_close_callback = { session, id, errorCode, userData in
    withConnection(userData) { c in
        // Ours when its user data is set (its request header block began), which `streams` holds.
        guard let p = nghttp2_session_get_stream_user_data(session, id) else { return 0 }
        guard let stream = c.letGo(Unmanaged<HTTP2Stream>.fromOpaque(p)) else { return 0 }
        // nghttp2 finds no closed stream, but its pointer to the object released below goes too.
        nghttp2_session_set_stream_user_data(session, id, nil)
        c.streamCount.add(-1)
        c.answerSettled(stream)
        stream.markClosed()
        c.streamClosed(stream, errorCode: errorCode)
        return 0
    }
}

private let h2ReadData: nghttp2_data_source_read_callback = { _, _, _, length, flags, source, userData in
    guard let flags, let stream = source?.pointee.ptr else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
    return withConnection(userData) { c in
        // Unretained as the connection: `streams` holds the stream until nghttp2's close callback.
        Unmanaged<HTTP2Stream>.fromOpaque(stream)._withUnsafeGuaranteedRef { c.read($0, length: length, flags: flags) }
    }
}

private let h2SendData: nghttp2_send_data_callback = { _, frame, header, length, source, userData in
    guard let frame, let header, let stream = source?.pointee.ptr else { return Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
    return withConnection(userData) { c in
        // nghttp2 calls it only for an open stream, which `streams` holds.
        Unmanaged<HTTP2Stream>.fromOpaque(stream)._withUnsafeGuaranteedRef {
            c.sendData($0, header: header, length: length, padding: hearth_frame_data_padlen(frame))
        }
    }
}
