import Foundation
import HearthCore
import HearthGRPC

/// Listen and Write streams in the request log: an entry when a stream opens, one when it ends
/// (status, duration, targets or writes, messages each way), and one per Listen target removed for
/// a denial (REMOVE with cause PERMISSION_DENIED), carrying the rules' message as a denied REST
/// request's error body does.
extension RecordingGRPCService {
    func recordingStream(_ open: @escaping @Sendable (GRPCContext, any GRPCResponseStream) -> any GRPCRequestStream,
                         method: String, path: String) -> GRPCHandler {
        .bidirectional { [listener, log, clock] context, responses in
            let record = StreamRecord(listener: listener, method: method, path: path, context: context, log: log, clock: clock)
            record.opened()
            let inner = open(context, RecordingResponses(inner: responses, record: record))
            return RecordingRequests(inner: inner, record: record)
        }
    }
}

/// What one stream did, logged as it opens, as targets are denied, and once as it ends.
final class StreamRecord: @unchecked Sendable {
    let listener: String
    let method: String
    let path: String
    let context: GRPCContext
    let log: RequestLog
    let clock: Clock
    let user: String?
    let started = DispatchTime.now().uptimeNanoseconds

    // Guarded by `lock`. Unchecked: the lock keeps accesses apart, and the runtime's exclusivity
    // check cost ~100 instructions an access on every listener's snapshot.
    private let lock = NSLock()
    @exclusivity(unchecked) private var messagesIn = 0
    @exclusivity(unchecked) private var messagesOut = 0
    @exclusivity(unchecked) private var targetsAdded = 0
    @exclusivity(unchecked) private var targetsRemoved = 0
    @exclusivity(unchecked) private var documentsSent = 0
    @exclusivity(unchecked) private var writes = 0
    @exclusivity(unchecked) private var denied = 0
    @exclusivity(unchecked) private var targets: [Int32: String] = [:]
    @exclusivity(unchecked) private var ended = false
    /// The database the stream is for, from its first request (Listen's and Write's first field,
    /// which the first message of either stream carries); read once.
    @exclusivity(unchecked) private var database: String?
    @exclusivity(unchecked) private var firstReceived = true

    init(listener: String, method: String, path: String, context: GRPCContext, log: RequestLog, clock: Clock) {
        self.listener = listener
        self.method = method
        self.path = path
        self.context = context
        self.log = log
        self.clock = clock
        user = context["authorization"].flatMap(CallerName.ofAuthorization)
        isListen = method == "Listen"
    }

    /// Compared once: `sent` runs for every message of every listener.
    private let isListen: Bool

    func opened() {
        append(status: 200, micros: 0, fields: [("stream", .string("opened"))], errorBody: nil)
    }

    /// A request message from the client.
    func received(_ message: [UInt8]) {
        var description: (Int32, String)?
        var writeCount = 0
        switch method {
        case "Listen":
            let (added, removed) = FirestoreStreamWire.listenRequest(message)
            description = added
            lock.withLock {
                if added != nil { targetsAdded += 1 }
                if removed != nil { targetsRemoved += 1 }
            }
        case "Write": writeCount = FirestoreStreamWire.writeCount(message)
        default: break
        }
        lock.withLock {
            if firstReceived {
                // Once a stream, and a field-1 read: no lock hold of its own on every message.
                firstReceived = false
                database = FirestoreStreamWire.database(ofRequest: message)
            }
            messagesIn += 1
            writes += writeCount
            if let (id, what) = description { targets[id] = what }
        }
    }

    /// A response message to the client.
    func sent(_ message: [UInt8]) {
        guard isListen else {
            lock.withLock { messagesOut += 1 }
            return
        }
        let kind = Self.classify(message[...])
        var removals: [FirestoreStreamWire.ListenResponse] = []
        if case .removed = kind { removals.append(kind) }
        counted(messages: 1, documents: kind == .document ? 1 : 0, removals: removals)
    }

    /// The response messages of one batch (a listener's snapshot), counted under one lock: this
    /// runs once per listener per commit, and a lock and a method-name comparison per message were
    /// a visible part of a 1,000-listener fan-out.
    func sent(_ batch: GRPCMessageBatch) {
        guard isListen else {
            lock.withLock { messagesOut += batch.count }
            return
        }
        // The fan-out's messages (a document change and the global NO_CHANGE) are known by their
        // first bytes, read in place; only a message that may be a REMOVE is copied and read whole.
        var documents = 0
        var removals: [FirestoreStreamWire.ListenResponse] = []
        batch.framed.withUnsafeBufferPointer { all in
            var i = 0
            while i + 5 <= all.count {
                let n = Int(all[i + 1]) << 24 | Int(all[i + 2]) << 16 | Int(all[i + 3]) << 8 | Int(all[i + 4])
                let start = i + 5, end = min(start + n, all.count)
                let message = UnsafeBufferPointer(rebasing: all[start..<end])
                if message.first == 0x1a {
                    documents += 1
                } else if message.first != 0x12 || !Self.notRemove(message) {
                    let kind = FirestoreStreamWire.listenResponse(Array(message))
                    switch kind {
                    case .document: documents += 1
                    case .removed: removals.append(kind)
                    case .other: break
                    }
                }
                i = start + n
            }
        }
        if removals.isEmpty {
            lock.withLock {
                messagesOut += batch.count
                documentsSent += documents
            }
            return
        }
        counted(messages: batch.count, documents: documents, removals: removals)
    }

    /// What a Listen response is. What a fan-out sends every listener is known by its first bytes:
    /// a document change (field 3), and a target change (field 2) whose type (field 1, which
    /// Hearth's encoder writes first) is not REMOVE or is absent (NO_CHANGE). Only the rest are
    /// read whole.
    private static func classify(_ message: ArraySlice<UInt8>) -> FirestoreStreamWire.ListenResponse {
        if message.first == 0x1a { return .document }
        if message.first == 0x12, notRemove(message) { return .other }
        return FirestoreStreamWire.listenResponse(Array(message))
    }

    /// Adds sent messages to the counts; a target removed with a cause is logged as its own entry.
    private func counted(messages: Int, documents: Int, removals: [FirestoreStreamWire.ListenResponse]) {
        var deniedTargets: [(id: Int32, what: String, code: Int, message: String)] = []
        let database = lock.withLock {
            for case .removed(let ids, let code, let message) in removals {
                for id in ids {
                    deniedTargets.append((id, targets[id] ?? "?", code, message))
                    denied += 1
                }
            }
            messagesOut += messages
            documentsSent += documents
            return self.database
        }
        for d in deniedTargets {
            guard let code = GRPCStatus.Code(rawValue: d.code) else { continue }
            append(status: RecordingGRPCService.httpStatus(code), micros: elapsedMicros,
                   fields: [("stream", .string("target removed")), ("targetId", .int(Int64(d.id))), ("target", .string(d.what)),
                            ("grpc-status", .int(Int64(d.code)))] + (database.map { [("database", .string($0))] } ?? []),
                   errorBody: RecordingGRPCService.errorBody(code, d.message))
        }
    }

    /// `notRemove` of a message read in place.
    private static func notRemove(_ message: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 1
        // Skip the length varint.
        while i < message.count, message[i] & 0x80 != 0 { i += 1 }
        i += 1
        guard i < message.count else { return true }
        guard message[i] == 0x08 else { return true }
        return i + 1 < message.count && message[i + 1] != 2
    }

    /// A `target_change` message whose first field is not a type of REMOVE (2).
    private static func notRemove(_ message: ArraySlice<UInt8>) -> Bool {
        message.withUnsafeBufferPointer { notRemove($0) }
    }

    /// The stream ended with `status` (finished by the server, or cancelled).
    func ended(_ status: GRPCStatus) {
        let counts: [(String, JSON)]? = lock.withLock {
            guard !ended else { return nil }
            ended = true
            var c: [(String, JSON)] = [("messagesIn", .int(Int64(messagesIn))), ("messagesOut", .int(Int64(messagesOut)))]
            if method == "Listen" {
                c += [("targetsAdded", .int(Int64(targetsAdded))), ("targetsRemoved", .int(Int64(targetsRemoved))),
                      ("targetsDenied", .int(Int64(denied))), ("documentsSent", .int(Int64(documentsSent)))]
            } else if method == "Write" {
                c.append(("writes", .int(Int64(writes))))
            }
            if let database { c.append(("database", .string(database))) }
            return c
        }
        guard let counts else { return }
        append(status: RecordingGRPCService.httpStatus(status.code), micros: elapsedMicros,
               fields: [("stream", .string("ended"))] + counts + [("grpc-status", .int(Int64(status.code.rawValue)))],
               errorBody: status.code == .ok ? nil : RecordingGRPCService.errorBody(status.code, status.message))
    }

    private var elapsedMicros: Int64 { Int64((DispatchTime.now().uptimeNanoseconds &- started) / 1000) }

    private func append(status: Int, micros: Int64, fields: [(String, JSON)], errorBody: String?) {
        log.append(RequestLog.Entry(
            seq: 0, time: clock.now(), service: listener, method: "POST", path: path, status: status,
            durationMicros: micros, requestID: context.requestIDValue, user: user, fields: fields,
            errorBody: errorBody, errorContentType: errorBody == nil ? nil : "application/json"))
    }
}

/// The response side, counting what goes out and noting the status the stream ends with.
final class RecordingResponses: GRPCResponseStream, @unchecked Sendable {
    let inner: any GRPCResponseStream
    let record: StreamRecord

    init(inner: any GRPCResponseStream, record: StreamRecord) {
        self.inner = inner
        self.record = record
    }

    @discardableResult func send(_ message: [UInt8]) -> Bool {
        guard inner.send(message) else { return false }
        record.sent(message)
        return true
    }

    @discardableResult func send(_ batch: GRPCMessageBatch) -> Bool {
        guard inner.send(batch) else { return false }
        record.sent(batch)
        return true
    }

    func finish(_ status: GRPCStatus) {
        inner.finish(status)
        record.ended(status)
    }

    @discardableResult func waitUntilWritable() -> Bool { inner.waitUntilWritable() }
    var bufferedBytes: Int { inner.bufferedBytes }
    var isClosed: Bool { inner.isClosed }
    var affinity: ObjectIdentifier? { inner.affinity }
    // `produce` sends through this wrapper, so what it makes is recorded too.
    func produceSoon(_ produce: @escaping @Sendable () -> Void) { inner.produceSoon(produce) }
}

/// The request side, counting what comes in and noting a cancelled stream.
final class RecordingRequests: GRPCRequestStream, @unchecked Sendable {
    let inner: any GRPCRequestStream
    let record: StreamRecord

    init(inner: any GRPCRequestStream, record: StreamRecord) {
        self.inner = inner
        self.record = record
    }

    func received(_ message: [UInt8]) {
        record.received(message)
        inner.received(message)
    }

    func received(_ message: [UInt8], done: @escaping @Sendable () -> Void) {
        record.received(message)
        inner.received(message, done: done)
    }

    var takesMessagesOnLoop: Bool { inner.takesMessagesOnLoop }

    func receivedOnLoop(_ message: [UInt8], done: @escaping @Sendable () -> Void) {
        record.received(message)
        inner.receivedOnLoop(message, done: done)
    }

    func halfClosed() { inner.halfClosed() }

    func cancelled() {
        inner.cancelled()
        // The client went away (or the deadline passed, or hearth is stopping): CANCELLED, 499.
        record.ended(GRPCStatus(.cancelled, "The stream was cancelled by the client or the connection closed."))
    }
}
