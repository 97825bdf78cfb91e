import Foundation
import HearthHTTP

/// One browser's server-sent event stream: a bounded outbox the hub appends events to and the
/// listener drains as the socket takes them (`PushBodySource`).
///
/// A client that does not keep up is dropped, never buffered without end: once more than
/// `maxQueuedBytes` wait, what waits is discarded, an `overflow` event is queued instead and the
/// stream ends (EventSource reconnects, with `Last-Event-ID`, and the page reloads what it shows).
public final class EventStream: PushBodySource, @unchecked Sendable {
    /// Bytes that may wait for one client before it is dropped.
    public let maxQueuedBytes: Int
    /// Called once when the stream is closed (client gone, dropped, server stopping).
    var onClose: (@Sendable () -> Void)?

    // Guarded by `lock`.
    private let lock = NSLock()
    private var outbox: [UInt8] = []
    private var sent = 0
    private var waker: PushWaker?
    private var wakePending = false
    private var ending = false
    private var closed = false
    private(set) var dropped = false

    /// Wakes run here, never under a caller's lock (the request log calls in holding its own).
    private static let wakeQueue = DispatchQueue(label: "hearth.ui.events.wake")

    /// An empty stream that drops its client once more than `maxQueuedBytes` wait.
    public init(maxQueuedBytes: Int = 1 << 20) {
        self.maxQueuedBytes = maxQueuedBytes
    }

    /// Queues raw event-stream text (one or more complete events); false once the stream is over.
    @discardableResult
    public func send(_ text: String) -> Bool {
        lock.lock()
        guard !ending && !closed else { lock.unlock(); return false }
        if outbox.count - sent + text.utf8.count > maxQueuedBytes {
            // Too slow: what waits is dropped with it; the client learns why and reconnects.
            outbox = Array("event: overflow\ndata: {\"reason\":\"the client did not keep up; reload\"}\n\n".utf8)
            sent = 0
            ending = true
            dropped = true
        } else {
            if sent > 0 && sent * 2 > outbox.count {
                outbox.removeFirst(sent)
                sent = 0
            }
            outbox.append(contentsOf: text.utf8)
        }
        let wake = takeWake()
        lock.unlock()
        wake.map { w in EventStream.wakeQueue.async { w.wake() } }
        return !dropped
    }

    /// Ends the stream after what is queued.
    public func finish() {
        lock.lock()
        ending = true
        let wake = takeWake(force: true)
        lock.unlock()
        wake.map { w in EventStream.wakeQueue.async { w.wake() } }
    }

    /// Bytes waiting for the client.
    public var queuedBytes: Int { lock.withLock { outbox.count - sent } }

    /// The waker, once per wait (caller holds the lock).
    private func takeWake(force: Bool = false) -> PushWaker? {
        guard let waker, force || !wakePending else { return nil }
        wakePending = true
        return waker
    }

    // MARK: PushBodySource

    public func attach(_ waker: PushWaker) {
        lock.withLock { self.waker = waker }
    }

    public func next(into buffer: UnsafeMutableRawBufferPointer) -> PushRead {
        lock.lock()
        defer { lock.unlock() }
        let available = outbox.count - sent
        if available == 0 {
            if ending { return .end }
            wakePending = false
            return .wait
        }
        let n = min(available, buffer.count)
        outbox.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + sent, byteCount: n)
        }
        sent += n
        if sent == outbox.count {
            outbox.removeAll(keepingCapacity: outbox.capacity <= 64 << 10)
            sent = 0
        }
        return .bytes(n)
    }

    public func close() {
        lock.lock()
        let first = !closed
        closed = true
        outbox = []
        sent = 0
        let onClose = self.onClose
        lock.unlock()
        if first { onClose?() }
    }
}
