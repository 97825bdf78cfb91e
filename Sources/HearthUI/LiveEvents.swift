import Foundation
import HearthCore
import Synchronization

/// The hub's server-sent events (`GET /emulator/v1/events`): request-log entries as they are
/// logged and Firestore document changes as they commit, fanned out to every open stream.
///
/// Each stream has its own bounded outbox (`EventStream`), so one slow browser is dropped without
/// holding anyone else up; every stream gets a heartbeat comment so proxies and the browser keep
/// it open and a vanished client is noticed (a parked connection sees a disconnect only when it
/// next writes).
public final class LiveEvents: @unchecked Sendable {
    /// What one stream asked for.
    struct Subscription {
        let stream: EventStream
        var requests: RequestLog.Filter?
        var documents: Bool
    }

    let log: RequestLog
    /// Bytes one client may have waiting before it is dropped.
    let maxQueuedBytes: Int
    // Guarded by `lock`.
    private let lock = NSLock()
    private var subscriptions: [ObjectIdentifier: Subscription] = [:]
    /// `subscriptions.count`, read without `lock` by `logged`, which the log calls for every request
    /// of every service: with no stream open (nearly always) it returns without taking the lock.
    /// A stream is counted inside `follow` (under the log's lock) before any entry after its replay
    /// is appended, so an append that reads 0 here was appended before that stream existed.
    private let subscribed = Count()
    /// An atomic count the log's observer holds itself, so it answers "no stream" without reading its
    /// weak reference to this object (~0.2k instructions a logged request).
    final class Count: Sendable {
        let value = Atomic<Int>(0)
    }
    private var timer: (any DispatchSourceTimer)?

    /// Streams open now.
    public var streamCount: Int { lock.withLock { subscriptions.count } }

    /// Streams `log`'s entries and `documents`' changes.
    /// - Parameters:
    ///   - heartbeatSeconds: how often every stream gets a `: ping` comment.
    ///   - maxQueuedBytes: what may wait for one client before it is dropped.
    public init(log: RequestLog, documents: (any DocumentChangeFeed)?, heartbeatSeconds: Double = 15,
                maxQueuedBytes: Int = 1 << 20) {
        self.log = log
        self.maxQueuedBytes = maxQueuedBytes
        log.observe { [weak self, subscribed] entry in
            // Relaxed, as in `logged`.
            guard subscribed.value.load(ordering: .relaxed) > 0 else { return }
            self?.logged(entry)
        }
        documents?.watchDocumentChanges(when: { [weak self] in self?.wantsDocuments ?? false }) { [weak self] notices in
            self?.changed(notices)
        }
        let t = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "hearth.ui.events.heartbeat"))
        t.schedule(deadline: .now() + heartbeatSeconds, repeating: heartbeatSeconds)
        t.setEventHandler { [weak self] in self?.broadcast(": ping\n\n") }
        t.resume()
        timer = t
    }

    deinit { timer?.cancel() }

    /// Opens a stream: `retry`, a `hello` with the newest seq, the entries after `lastEventID`
    /// (a reconnect; a `reset` event when some of them are gone), then live events.
    func open(requests: RequestLog.Filter?, documents: Bool, lastEventID: Int?) -> EventStream {
        let stream = EventStream(maxQueuedBytes: maxQueuedBytes)
        let key = ObjectIdentifier(stream)
        stream.onClose = { [weak self] in
            guard let self else { return }
            lock.withLock {
                if subscriptions.removeValue(forKey: key) != nil { subscribed.value.subtract(1, ordering: .relaxed) }
            }
        }
        // Under the log's lock: no entry lands between the replay and the registration.
        log.follow(after: lastEventID ?? Int.max, filter: requests ?? RequestLog.Filter(), limit: 1000) { entries, latest, gap in
            var text = "retry: 2000\n"
            text += LiveEvents.event("hello", JSON.object(["latest": .int(Int64(latest)), "resumed": .bool(lastEventID != nil)]))
            if requests != nil, lastEventID != nil {
                if gap { text += LiveEvents.event("reset", JSON.object(["reason": .string("entries after Last-Event-ID were dropped from the log")])) }
                for e in entries { text += LiveEvents.requestEvent(e) }
            }
            stream.send(text)
            lock.withLock {
                if subscriptions.updateValue(Subscription(stream: stream, requests: requests, documents: documents), forKey: key) == nil {
                    subscribed.value.add(1, ordering: .relaxed)
                }
            }
        }
        return stream
    }

    /// A request-log entry was appended (under the log's lock).
    private func logged(_ entry: RequestLog.Entry) {
        // Relaxed: the log's lock, held by both this call and the counting of a new stream, orders them.
        guard subscribed.value.load(ordering: .relaxed) > 0 else { return }
        lock.lock()
        defer { lock.unlock() }
        guard !subscriptions.isEmpty else { return }
        var text: String?
        for s in subscriptions.values {
            guard let f = s.requests, f.matches(entry) else { continue }
            if text == nil { text = LiveEvents.requestEvent(entry) }
            s.stream.send(text!)
        }
    }

    /// Whether some stream asked for document changes (none: Firestore makes no notices).
    private var wantsDocuments: Bool {
        lock.withLock { subscriptions.values.contains(where: \.documents) }
    }

    /// A commit changed documents (on Firestore's delivery queue).
    private func changed(_ notices: [DocumentChangeNotice]) {
        lock.lock()
        defer { lock.unlock() }
        let targets = subscriptions.values.filter(\.documents)
        guard !targets.isEmpty else { return }
        var text = ""
        for n in notices {
            var o = JSONObject()
            o["database"] = n.database.map(JSON.string) ?? .null
            o["path"] = .string(n.path)
            o["change"] = .string(n.kind.rawValue)
            o["time"] = .string(n.time.rfc3339(fractionDigits: 6))
            text += LiveEvents.event("document", .object(o))
        }
        for s in targets { s.stream.send(text) }
    }

    private func broadcast(_ text: String) {
        lock.withLock { for s in subscriptions.values { s.stream.send(text) } }
    }

    /// Ends every stream (the hub is stopping).
    public func finishAll() {
        lock.withLock { for s in subscriptions.values { s.stream.finish() } }
    }

    static func requestEvent(_ e: RequestLog.Entry) -> String {
        "id: \(e.seq)\n" + event("request", RequestLog.json(e, withBody: false))
    }

    /// One event: `event:` and the JSON on one `data:` line (serialized JSON holds no newline).
    static func event(_ name: String, _ data: JSON) -> String {
        "event: \(name)\ndata: \(data.serialized())\n\n"
    }
}
