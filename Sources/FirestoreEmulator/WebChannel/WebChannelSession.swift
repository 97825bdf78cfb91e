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
    /// Held while a forward POST's messages go to `call`: the call takes one message at a time,
    /// and map ids say which a retried POST repeats.
    private let callLock = NSLock()
    /// Held while a call's producer runs (`produceSoon`).
    private let produceLock = NSLock()
    /// Under `callLock`: the map id the next new message has.
    private var nextMapID = 0

    // Under `lock`.
    private let lock = NSLock()
    private var unacked: [(id: Int, payload: String)] = []
    private var unackedBytes = 0
    private var lastArrayID = 0
    private var backchannel: WebChannelBackchannel?
    /// When the last array went to a backchannel (monotonic ns): a no-op follows a quiet spell.
    private var lastWrite: UInt64
    /// A Write answer went out (the handshake's: later ones carry no stream id).
    private var answeredWrite = false
    /// The call ended (`finish`): its last array is queued, nothing more is.
    private var finished = false
    /// The session is gone (terminated, expired, server stopping).
    private var terminated = false
    /// Since when no backchannel was open: Hearth's clock and the monotonic one (`idle(…)`).
    private var idleSince: (clock: Instant, wall: UInt64)?
    /// Hearth's clock, which expiry is measured on (besides real time).
    private let clock: Clock

    init(sid: String, rpc: RPC, clock: Clock) {
        self.sid = sid
        self.rpc = rpc
        self.clock = clock
        lastWrite = DispatchTime.now().uptimeNanoseconds
        idleSince = (clock.now(), lastWrite)
    }

    /// Sets the request side (once).
    func start(_ call: any GRPCRequestStream) {
        callLock.withLock { self.call = call }
    }

    // MARK: Requests

    /// Hands a forward body's new messages to the call, in order (those a retry repeats skipped).
    func receive(_ body: WebChannelWire.ForwardBody) {
        callLock.lock()
        defer { callLock.unlock() }
        guard let call else { return }
        for (k, text) in body.messages.enumerated() {
            let mapID = body.offset + k
            guard mapID >= nextMapID else { continue }
            nextMapID = mapID + 1
            if isClosed { return }
            guard case .object(let json)? = try? JSON.parse(text) else {
                // As a protobuf message gRPC cannot read ends its call (ProtoJSON's wording).
                finish(GRPCStatus(.invalidArgument, "Invalid JSON payload received: message \(mapID) is not a JSON object."))
                return
            }
            call.received(ProtoJSON.encode(json, rpc.requestSchema))
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
            idleSince = (clock.now(), DispatchTime.now().uptimeNanoseconds)
        }
    }

    /// Writes `arrays` as one chunk (lock held); a long poll that got data ends.
    private func write(_ arrays: ArraySlice<(id: Int, payload: String)>, to channel: WebChannelBackchannel) {
        let text = WebChannelWire.arrays(arrays.lazy.map { (id: $0.id, payload: $0.payload) })
        channel.push(WebChannelWire.chunk(text))
        lastWrite = DispatchTime.now().uptimeNanoseconds
        let data = arrays.contains { $0.payload != WebChannelWire.noop }
        if (channel.longPoll && data) || channel.pushedBytes >= WebChannelSessions.rotateBytes {
            // The client asks again with a newer AID, which also lets the arrays go.
            channel.end()
            backchannel = nil
            idleSince = (clock.now(), lastWrite)
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
    /// `longPollLimit`; true when the session has been without a backchannel for `expiry` of
    /// Hearth's clock or of real time (a client that went away), and should be reclaimed.
    func tick(now: Instant, expiry: Int64) -> Bool {
        let wall = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        if let backchannel {
            if backchannel.longPoll, wall &- backchannel.openedAt >= WebChannelSessions.longPollLimit {
                // A no-op ends it, as the emulator's long polls end.
                queue(WebChannelWire.noop)
                write(unacked[(unacked.count - 1)...], to: backchannel)
                backchannel.end()
                self.backchannel = nil
                idleSince = (now, wall)
            } else if wall &- lastWrite >= WebChannelSessions.noopInterval {
                lock.unlock()
                _ = append(WebChannelWire.noop)
                return false
            }
        }
        let expired = idle(now: now, wall: wall, expiry: expiry)
        lock.unlock()
        return expired
    }

    /// Whether the session has been without a backchannel for `expiry` seconds (lock held).
    private func idle(now: Instant, wall: UInt64, expiry: Int64) -> Bool {
        guard let since = idleSince else { return false }
        return now.unixMicros - since.clock.unixMicros >= expiry * 1_000_000
            || wall &- since.wall >= UInt64(expiry) * 1_000_000_000
    }

    /// `tick`'s expiry check alone (a request naming the session asks first).
    func expired(now: Instant, expiry: Int64) -> Bool {
        lock.withLock { idle(now: now, wall: DispatchTime.now().uptimeNanoseconds, expiry: expiry) }
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

    /// Runs `produce` at once, one pass at a time: with no connection thread of its own, a pass
    /// runs on whichever thread asks (a Listen shard's, a request's), and two passes at once could
    /// append the batches they took out of order.
    func produceSoon(_ produce: @escaping @Sendable () -> Void) {
        produceLock.withLock { produce() }
    }

    func waitUntilWritable() -> Bool { !isClosed }

    var bufferedBytes: Int { lock.withLock { unackedBytes } }

    var isClosed: Bool { lock.withLock { finished || terminated } }
}
