import Foundation
import HearthCore
import HearthHTTP

/// One backchannel GET (`RID=rpc`): the long-lived answer a session's arrays are written to as
/// chunks, the connection parked while there are none (`PushBodySource`).
///
/// Streaming (`CI=0`) stays open for many arrays; long polling (`CI=1`, the SDK's
/// `experimentalForceLongPolling`) ends after the first chunk with data, and the client asks again.
final class WebChannelBackchannel: PushBodySource, @unchecked Sendable {
    /// Whether it ends after the first chunk with data (`CI=1`).
    let longPoll: Bool
    /// When it opened: a long poll with nothing to say ends after a while.
    let openedAt: WebChannelSessions.Moment
    /// Told once, when the connection is done (the client went away, or the body ended).
    private let onClose: @Sendable (WebChannelBackchannel) -> Void

    // Under `lock`.
    private let lock = NSLock()
    private var pending: [UInt8] = []
    private var sent = 0
    private var ending = false
    private var closed = false
    private var waker: PushWaker?
    /// Bytes handed to it so far (a streaming backchannel is ended after `WebChannelSessions.rotateBytes`).
    private(set) var pushedBytes = 0

    /// Wakes run here, never under a session's lock: resuming a parked connection takes
    /// libmicrohttpd's own lock, which its threads hold when they call back into us.
    private static let wakeQueue = DispatchQueue(label: "hearth.firestore.webchannel.wake")

    init(longPoll: Bool, clock: Clock, onClose: @escaping @Sendable (WebChannelBackchannel) -> Void) {
        self.longPoll = longPoll
        self.openedAt = .now(clock)
        self.onClose = onClose
    }

    /// Queues a chunk; false when the body has ended (the session keeps the arrays for the next GET).
    @discardableResult
    func push(_ chunk: [UInt8]) -> Bool {
        lock.lock()
        guard !ending, !closed else { lock.unlock(); return false }
        if sent > 0 && sent * 2 > pending.count {
            pending.removeFirst(sent)
            sent = 0
        }
        pending.append(contentsOf: chunk)
        pushedBytes += chunk.count
        let w = waker
        lock.unlock()
        w.map { w in Self.wakeQueue.async { w.wake() } }
        return true
    }

    /// Ends the body after what is queued.
    func end() {
        lock.lock()
        ending = true
        let w = waker
        lock.unlock()
        w.map { w in Self.wakeQueue.async { w.wake() } }
    }

    /// Bytes queued and not yet taken by the server.
    var unsentBytes: Int { lock.withLock { pending.count - sent } }

    /// Whether the body is over (ended or its connection gone).
    var isOver: Bool { lock.withLock { ending || closed } }

    // MARK: PushBodySource

    func attach(_ waker: PushWaker) {
        lock.lock()
        self.waker = waker
        let wake = !pending.isEmpty || ending
        lock.unlock()
        if wake { Self.wakeQueue.async { waker.wake() } }
    }

    func next(into buffer: UnsafeMutableRawBufferPointer) -> PushRead {
        lock.lock()
        defer { lock.unlock() }
        let available = pending.count - sent
        if available == 0 { return ending ? .end : .wait }
        let n = min(available, buffer.count)
        pending.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + sent, byteCount: n)
        }
        sent += n
        return .bytes(n)
    }

    func close() {
        lock.lock()
        let first = !closed
        closed = true
        waker = nil
        lock.unlock()
        if first { onClose(self) }
    }
}
