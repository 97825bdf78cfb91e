import Foundation
import HearthCore
import HearthGRPC

/// One WebChannel (a Listen or Write stream of the web SDK) by its SID: the response side of the
/// same `ListenCall` / `WriteCall` the gRPC streams drive, its messages proto3 JSON instead of
/// protobuf.
///
/// Every answer becomes a numbered array (`[id,[message]]`; 0 is the handshake's) kept until the
/// client acknowledges it with `AID` (a forward POST's or the next backchannel's), so arrays a
/// dropped backchannel had sent are sent again on the next. Arrays are written to the open
/// backchannel at once; without one they wait. `bufferedBytes` counts what is unacknowledged, so
/// a Listen whose client stops reading stops being fed (`ListenCall.lowWater`) rather than
/// growing this without end.
///
/// A forward POST hands its messages over and is answered at once: the call takes them one at a
/// time, each once the previous one is done, and a Write's commit is queued where the gRPC Write
/// stream's are (`receivedOnLoop`: the group commit's drainer runs the batch), so no HTTP worker
/// waits for a commit. A message queued behind a commit is handed over on the session's serial
/// dispatch queue when that commit completes (over a shared pool: no thread of the session's own).
final class WebChannelSession: GRPCResponseStream, @unchecked Sendable {
    /// The two streams served over WebChannel.
    enum RPC: String, Sendable {
        case listen = "Listen"
        case write = "Write"

        var requestSchema: String { FirestoreSchemas.v1 + (self == .listen ? "ListenRequest" : "WriteRequest") }
        var responseSchema: String { FirestoreSchemas.v1 + (self == .listen ? "ListenResponse" : "WriteResponse") }
    }

    let sid: String
    let rpc: RPC
    /// The request side, set once right after the session is made (before any request reaches it).
    private var call: (any GRPCRequestStream)?
    /// Taken around `call`, `nextMapID`, `inbox` and `delivering` (never while the call runs).
    private let callLock = NSLock()
    /// Held while a call's producer runs (`produceSoon`).
    private let produceLock = NSLock()
    /// Under `callLock`: the map id the next new message has.
    private var nextMapID = 0

    /// What the call is handed, in order: a message, or the end a message that did not read calls for.
    private enum Inbound {
        case message([UInt8])
        case invalid(GRPCStatus)
    }
    /// Under `callLock`: what waits for the message being handed over to be done.
    private var inbox: [Inbound] = []
    /// Under `callLock`: a message is with the call (the next waits for its `done`).
    private var delivering = false
    /// Where a message queued behind a commit is handed over once the commit completes, and a
    /// Write's answers are encoded: never the committing thread (its completions delay the next
    /// batch), in order, on a serial queue of the session's over a shared pool (no thread of its own).
    private let serial: DispatchQueue
    private static let pool = DispatchQueue(label: "hearth.firestore.webchannel", attributes: .concurrent)

    // Under `lock`.
    private let lock = NSLock()
    private var unacked: [(id: Int, payload: String)] = []
    private var unackedBytes = 0
    private var lastArrayID = 0
    private var backchannel: WebChannelBackchannel?
    /// When the last array went to a backchannel: a no-op follows a quiet spell.
    private var lastWrite: WebChannelSessions.Moment
    /// A Write answer went out (the handshake's: later ones carry no stream id).
    private var answeredWrite = false
    /// The call ended (`finish`): its last array is queued, nothing more is.
    private var finished = false
    /// The session is gone (terminated, expired, server stopping).
    private var terminated = false
    /// Since when no backchannel was open (`idle(…)`).
    private var idleSince: WebChannelSessions.Moment?
    /// Hearth's clock, which the timers are measured on (besides real time).
    private let clock: Clock

    init(sid: String, rpc: RPC, clock: Clock) {
        self.sid = sid
        self.rpc = rpc
        self.clock = clock
        serial = DispatchQueue(label: "hearth.firestore.webchannel.session", target: Self.pool)
        lastWrite = .now(clock)
        idleSince = lastWrite
    }

    /// Sets the request side (once).
    func start(_ call: any GRPCRequestStream) {
        callLock.withLock { self.call = call }
    }

    // MARK: Requests

    /// Queues a forward body's new messages for the call, in order (those a retry repeats
    /// skipped), and hands the first over on this thread if none is with the call: it returns
    /// once that one is taken (a Write's commit queued, not committed).
    func receive(_ body: WebChannelWire.ForwardBody) {
        callLock.lock()
        guard call != nil else { return callLock.unlock() }
        for (k, text) in body.messages.enumerated() {
            let mapID = body.offset + k
            guard mapID >= nextMapID else { continue }
            nextMapID = mapID + 1
            guard case .object(let json)? = try? JSON.parse(text) else {
                // As a protobuf message gRPC cannot read ends its call (ProtoJSON's wording), after
                // the messages before it; nothing after it is handed over.
                inbox.append(.invalid(GRPCStatus(.invalidArgument, "Invalid JSON payload received: message \(mapID) is not a JSON object.")))
                break
            }
            inbox.append(.message(ProtoJSON.encode(json, rpc.requestSchema)))
        }
        var first: Inbound?
        if !delivering, !inbox.isEmpty {
            delivering = true
            first = inbox.removeFirst()
        }
        callLock.unlock()
        if let first { deliver(first) }
    }

    /// Hands `first` to the call, then what is queued behind it, for as long as each is done before
    /// the call returns; one done later (a commit) is followed up on `serial`.
    private func deliver(_ first: Inbound) {
        var item = first
        while true {
            guard let call = callLock.withLock({ self.call }), !isClosed else { return clearInbox() }
            switch item {
            case .invalid(let status):
                // After the answers to the messages before it, which a Write encodes on `serial`.
                serial.async { self.finish(status) }
                return clearInbox()
            case .message(let message):
                let handOver = HandOver()
                let done: @Sendable () -> Void = { [self] in
                    guard handOver.doneReturnedAlready() else { return }
                    if let next = nextInbound() { serial.async { self.deliver(next) } }
                }
                // `receivedOnLoop` queues a commit for the group commit's drainer; a call that
                // cannot take messages that way (Listen) takes them here, as before.
                if call.takesMessagesOnLoop { call.receivedOnLoop(message, done: done) } else { call.received(message, done: done) }
                guard handOver.returnedDoneAlready() else { return }
            }
            guard let next = nextInbound() else { return }
            item = next
        }
    }

    /// The next queued message, or nil (then none is with the call any more).
    private func nextInbound() -> Inbound? {
        callLock.withLock {
            guard !inbox.isEmpty, call != nil else {
                delivering = false
                return nil
            }
            return inbox.removeFirst()
        }
    }

    private func clearInbox() {
        callLock.withLock {
            inbox = []
            delivering = false
        }
    }

    /// Which of a message's `done` and the call's return came first: the later one goes on to the
    /// next message (a `done` inside the call lets the loop go on; a later one, the delivery queue).
    private final class HandOver: @unchecked Sendable {
        private let lock = NSLock()
        private var done = false
        private var returned = false

        /// `done` was called: whether the call had returned already.
        func doneReturnedAlready() -> Bool {
            lock.withLock {
                done = true
                return returned
            }
        }

        /// The call returned: whether `done` had been called already.
        func returnedDoneAlready() -> Bool {
            lock.withLock {
                returned = true
                return done
            }
        }
    }

    /// Drops the arrays the client has (`AID`).
    func acknowledge(_ aid: Int) {
        lock.withLock { dropAcknowledged(aid) }
    }

    private func dropAcknowledged(_ aid: Int) {
        var n = 0
        while n < unacked.count, unacked[n].id <= aid {
            unackedBytes -= unacked[n].payload.utf8.count
            n += 1
        }
        if n > 0 { unacked.removeFirst(n) }
    }

    /// A forward POST's answer: `[backchannel present, last array id, outstanding bytes]`.
    func forwardAnswer() -> String {
        lock.withLock {
            WebChannelWire.forwardAnswer(backchannel: backchannel != nil, lastArrayID: lastArrayID,
                                         outstanding: backchannel?.unsentBytes ?? 0)
        }
    }

    /// Makes `channel` the session's backchannel (ending an older one) after dropping what `aid`
    /// acknowledges, and writes every array the client lacks to it.
    func attach(_ channel: WebChannelBackchannel, acknowledged aid: Int) {
        lock.lock()
        let old = backchannel
        dropAcknowledged(aid)
        if terminated {
            lock.unlock()
            old?.end()
            channel.end()
            return
        }
        backchannel = channel
        idleSince = nil
        // A backchannel opens with what the client lacks, or with a no-op (as the official
        // emulator's do): the first bytes tell the client it is through.
        if unacked.isEmpty { queue(WebChannelWire.noop) }
        write(unacked[...], to: channel)
        lock.unlock()
        if let old, old !== channel { old.end() }
    }

    /// The backchannel's connection is done.
    func detach(_ channel: WebChannelBackchannel) {
        lock.withLock {
            guard backchannel === channel else { return }
            backchannel = nil
            idleSince = .now(clock)
        }
    }

    /// Writes `arrays` as one chunk (lock held); a long poll that got data ends.
    private func write(_ arrays: ArraySlice<(id: Int, payload: String)>, to channel: WebChannelBackchannel) {
        let text = WebChannelWire.arrays(arrays.lazy.map { (id: $0.id, payload: $0.payload) })
        channel.push(WebChannelWire.chunk(text))
        lastWrite = .now(clock)
        let data = arrays.contains { $0.payload != WebChannelWire.noop }
        if (channel.longPoll && data) || channel.pushedBytes >= WebChannelSessions.rotateBytes {
            // The client asks again with a newer AID, which also lets the arrays go.
            channel.end()
            backchannel = nil
            idleSince = lastWrite
        }
    }

    /// Queues one array and writes it to the backchannel, if one is open.
    private func append(_ payload: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if terminated { return false }
        queue(payload)
        if let backchannel { write(unacked[(unacked.count - 1)...], to: backchannel) }
        return true
    }

    /// Numbers and keeps one array (lock held).
    private func queue(_ payload: String) {
        lastArrayID += 1
        unacked.append((lastArrayID, payload))
        unackedBytes += payload.utf8.count
    }

    // MARK: Timers (`WebChannelSessions`)

    /// A no-op on a backchannel quiet for `noopInterval`, the end of a long poll open for
    /// `longPollLimit`; true when the session has been without a backchannel for `expiry`, and
    /// should be reclaimed. Each is measured on Hearth's clock or on real time, whichever has
    /// gone further (`Moment`): a test moves the clock instead of waiting, a frozen clock stops none.
    func tick(now: WebChannelSessions.Moment, expiry: Int64) -> Bool {
        lock.lock()
        if let backchannel {
            if backchannel.longPoll, now.passed(WebChannelSessions.longPollLimit, since: backchannel.openedAt) {
                // A no-op ends it, as the emulator's long polls end.
                queue(WebChannelWire.noop)
                write(unacked[(unacked.count - 1)...], to: backchannel)
                backchannel.end()
                self.backchannel = nil
                idleSince = now
            } else if now.passed(WebChannelSessions.noopInterval, since: lastWrite) {
                lock.unlock()
                _ = append(WebChannelWire.noop)
                return false
            }
        }
        let expired = idle(now: now, expiry: expiry)
        lock.unlock()
        return expired
    }

    /// Whether the session has been without a backchannel for `expiry` seconds (lock held).
    private func idle(now: WebChannelSessions.Moment, expiry: Int64) -> Bool {
        guard let since = idleSince else { return false }
        return now.passed(UInt64(expiry) * 1_000_000_000, since: since)
    }

    /// `tick`'s expiry check alone (a request naming the session asks first).
    func expired(now: WebChannelSessions.Moment, expiry: Int64) -> Bool {
        lock.withLock { idle(now: now, expiry: expiry) }
    }

    /// Ends the session: the backchannel closes, the call is cancelled (its listeners and
    /// session freed), later requests naming it are told its SID is unknown.
    func terminate() {
        lock.lock()
        let first = !terminated
        terminated = true
        let channel = backchannel
        backchannel = nil
        unacked = []
        unackedBytes = 0
        lock.unlock()
        channel?.end()
        guard first else { return }
        callLock.withLock {
            call?.cancelled()
            call = nil
        }
    }

    // MARK: GRPCResponseStream

    func send(_ message: [UInt8]) -> Bool {
        if isClosed { return false }
        // The call's protobuf answer, in the proto3 JSON the web SDK reads.
        guard var json = try? ProtoJSON.decode(message, rpc.responseSchema) else { return false }
        if rpc == .write {
            // The stream id is the handshake answer's alone, as the official emulator sends it
            // here (Hearth's protobuf answers repeat it; an empty string is what proto3 omits).
            if lock.withLock({ answeredWrite }) { json["streamId"] = nil }
            lock.withLock { answeredWrite = true }
        }
        return append(WebChannelWire.message(json))
    }

    func finish(_ status: GRPCStatus) {
        let first = lock.withLock {
            if finished || terminated { return false }
            finished = true
            return true
        }
        guard first else { return }
        _ = append(status.code == .ok ? WebChannelWire.close : WebChannelWire.error(status))
    }

    /// Runs `produce` one pass at a time: with no connection thread of its own, a Listen's pass
    /// runs on whichever thread asks (a shard's, a request's), and two passes at once could append
    /// the batches they took out of order. A Write's runs on `serial`: it is asked from the commit's
    /// completion, on the writer, which turning the answer into JSON would hold up.
    func produceSoon(_ produce: @escaping @Sendable () -> Void) {
        if rpc == .write {
            serial.async { [self] in produceLock.withLock { produce() } }
        } else {
            produceLock.withLock { produce() }
        }
    }

    func waitUntilWritable() -> Bool { !isClosed }

    var bufferedBytes: Int { lock.withLock { unackedBytes } }

    var isClosed: Bool { lock.withLock { finished || terminated } }
}
