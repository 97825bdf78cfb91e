import Foundation
import HearthCore
import HearthGRPC
import HearthSQLite
@testable import FirestoreEmulator

/// Sequences of Listen and Write requests, encoded as the SDKs send them, through the gRPC calls'
/// own codecs into the realtime core of a fresh in-memory Firestore: targets added (queries,
/// documents, given or server-assigned ids, duplicate ids, unknown resume tokens) and removed
/// (known and unknown ids), Write handshakes and batches with right and wrong stream tokens,
/// connections dropped and resumed from the last token, garbage messages.
///
/// Invariants: no crash; every response is a well-formed `ListenResponse` / `WriteResponse`;
/// a stream ends only with OK, INVALID_ARGUMENT, FAILED_PRECONDITION, NOT_FOUND or
/// ALREADY_EXISTS (never INTERNAL or UNKNOWN); read times never go back on a stream; and at
/// every snapshot (the global NO_CHANGE) each current target's view, built from the events alone
/// as a client builds it, equals the target read afresh at that snapshot's read time.
extension FuzzTargets {
    static func listenWrite(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        var input = FuzzInput(bytes)
        let h: ListenWriteHarness
        do { h = try ListenWriteHarness() } catch { throw FuzzFailure("no Firestore: \(error)") }
        defer { h.tearDown() }
        var listeners = [h.openListen(), h.openListen()]
        var writers = [h.openWrite()]
        for step in 0..<40 where !input.isAtEnd {
            let l = input.below(listeners.count)
            let c = listeners[l]
            switch input.below(12) {
            case 0, 1, 2:
                c.add(&input, h)
            case 3:
                let id = input.bool() ? input.pick(Array(c.targets.keys.sorted()) + [0, 99, -1]) : Int32(input.below(4))
                c.send(["database": .string(h.dbName), "removeTarget": .int(Int64(id))])
                if c.targets[id] != nil { c.removed(id) }
            case 4:
                // Garbage or a request for another database.
                if input.bool() {
                    c.call.received(input.raw(max: 24))
                } else {
                    c.send(["database": .string("projects/other/databases/(default)"), "removeTarget": .int(1)])
                }
            case 5 where c.lastToken != nil && !c.targets.isEmpty && c.status == nil:
                listeners[l] = c.resume(h)
            case 6:
                if input.bool() { c.call.halfClosed() } else { c.call.cancelled() }
                c.closedByClient = true
                listeners[l] = h.openListen()
            case 7:
                h.service.listeners.sync { h.service.listeners.heartbeat() }
            default:
                let w = writers[input.below(writers.count)]
                if w.status != nil || input.below(10) == 0 {
                    writers.append(h.openWrite())
                    if writers.count > 3 { writers.removeFirst() }
                } else {
                    w.send(&input, h)
                }
            }
            h.service.listeners.sync {}
            for c in listeners { try c.drain(h, step: step) }
            for w in writers { try w.check(step: step) }
        }
    }
}

/// The in-memory Firestore and the checks shared by a sequence's streams.
final class ListenWriteHarness: @unchecked Sendable {
    let service: FirestoreService
    let project = "demo-fuzz"
    var dbName: String { "projects/\(project)/databases/(default)" }
    var root: String { dbName + "/documents" }
    var db: DatabaseID { DatabaseID(project: project, database: "(default)") }
    private var streamNumber = 0

    struct NoTokens: IDTokenVerifier {
        func verify(idToken token: String, projectID: String, checkRevoked: Bool) throws(IDTokenError) -> VerifiedIDToken {
            throw .malformed("no tokens in the fuzz target")
        }
    }

    init() throws {
        let database = try Database(path: nil)
        try database.migrate(FirestoreService.migrations)
        let clock = Clock(frozenAt: Instant(unixSeconds: 1_767_225_600))
        service = FirestoreService(database: database, clock: clock, ids: IDGenerator(seed: 7), logger: Logger(quiet: true),
                                   configuration: FirestoreConfiguration(projectID: project), tokenVerifier: NoTokens())
    }

    func tearDown() {
        for s in service.listeners.sync({ Array(service.listeners.streams.values) }) { service.listeners.close(s) }
        service.listeners.sync {}
    }

    func openListen() -> ListenClient { ListenClient(self) }

    func openWrite() -> WriteClient {
        streamNumber += 1
        return WriteClient(self, id: "fuzz\(streamNumber)")
    }

    /// What `kind` holds at `time`, read directly: document → update time.
    func truth(_ kind: ListenTarget.Kind, at time: Instant) throws -> [ResourcePath: Instant] {
        try service.read { conn in
            let space = try service.storage.space(of: db, conn)
            var out: [ResourcePath: Instant] = [:]
            switch kind {
            case .query(let q):
                for d in try QueryExecutor(storage: service.storage, database: db).run(q, space: space, conn, at: time).documents {
                    out[d.path] = d.updateTime
                }
            case .documents(let paths):
                for p in paths { if let d = try service.load(space, p, at: time, conn) { out[p] = d.updateTime } }
            }
            return out
        }
    }

    /// The query shapes targets pick from.
    static let shapes: [JSON] = [
        .object(["from": .array([.object(["collectionId": .string("c")])])]),
        .object(["from": .array([.object(["collectionId": .string("c")])]),
                 "where": .object(["fieldFilter": .object(["field": .object(["fieldPath": .string("color")]), "op": .string("EQUAL"),
                                                          "value": .object(["stringValue": .string("red")])])])]),
        .object(["from": .array([.object(["collectionId": .string("c")])]),
                 "orderBy": .array([.object(["field": .object(["fieldPath": .string("n")]), "direction": .string("ASCENDING")])]),
                 "limit": .int(2)]),
        .object(["from": .array([.object(["collectionId": .string("c")])]),
                 "orderBy": .array([.object(["field": .object(["fieldPath": .string("n")]), "direction": .string("DESCENDING")])]),
                 "limit": .int(3)]),
        .object(["from": .array([.object(["collectionId": .string("c"), "allDescendants": .bool(true)])])]),
        .object(["from": .array([.object(["collectionId": .string("c")])]),
                 "where": .object(["fieldFilter": .object(["field": .object(["fieldPath": .string("n")]), "op": .string("GREATER_THAN"),
                                                          "value": .object(["integerValue": .string("2")])])]),
                 "orderBy": .array([.object(["field": .object(["fieldPath": .string("n")]), "direction": .string("ASCENDING")])]),
                 "startAt": .object(["values": .array([.object(["integerValue": .string("3")])]), "before": .bool(true)])]),
    ]

    /// Documents the writes touch (a subcollection one for the collection-group shape).
    static let documents = ["c/d0", "c/d1", "c/d2", "c/d3", "c/d4", "x/y/c/d5", "e/f"]
}

/// A call's response side that keeps every message and how the call ended.
final class RecordedResponses: GRPCResponseStream, @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [[UInt8]] = []
    private var status: GRPCStatus?

    func send(_ message: [UInt8]) -> Bool {
        lock.withLock {
            guard status == nil else { return false }
            messages.append(message)
            return true
        }
    }
    func finish(_ s: GRPCStatus) { lock.withLock { if status == nil { status = s } } }
    func waitUntilWritable() -> Bool { !isClosed }
    var bufferedBytes: Int { 0 }
    var isClosed: Bool { lock.withLock { status != nil } }

    /// Messages since the last call, and the status if the call ended.
    func take() -> ([[UInt8]], GRPCStatus?) {
        lock.withLock {
            defer { messages = [] }
            return (messages, status)
        }
    }

    /// A stream may end with these; anything else (INTERNAL, UNKNOWN…) is a finding.
    static let acceptable: Set<GRPCStatus.Code> = [.ok, .invalidArgument, .failedPrecondition, .notFound, .alreadyExists, .cancelled]
}

/// One Listen stream and the client's view of it, kept as an SDK keeps it.
final class ListenClient: @unchecked Sendable {
    let responses = RecordedResponses()
    let call: ListenCall
    private let events = EventLog()
    /// Target id → what it watches and whether CURRENT came (views are checked once it has).
    var targets: [Int32: (kind: ListenTarget.Kind, spec: (String, JSON), current: Bool)] = [:]
    var views: [Int32: [ResourcePath: Instant]] = [:]
    /// Adds sent and not yet answered, in order: requested id (0: the server picks) and kind.
    var pending: [(id: Int32, kind: ListenTarget.Kind, spec: (String, JSON))] = []
    var lastReadTime = Instant(unixMicros: 0)
    var lastToken: [UInt8]?
    var status: GRPCStatus?
    var closedByClient = false
    private let db: DatabaseID

    final class EventLog: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [ListenEvent] = []
        func append(_ e: ListenEvent) { lock.withLock { events.append(e) } }
        func take() -> [ListenEvent] { lock.withLock { defer { events = [] }; return events } }
    }

    init(_ h: ListenWriteHarness) {
        db = h.db
        let log = events
        call = ListenCall(engine: h.service.listeners, caller: .admin, responses: responses,
                          decode: FirestoreGRPCService.decodeListen,
                          encode: { event, db, batch in
                              log.append(event)
                              batch.append(FirestoreGRPCService.encodeListen(event, db))
                          })
    }

    func send(_ request: JSONObject) {
        call.received(ProtoJSON.encode(request, FirestoreSchemas.v1 + "ListenRequest"))
    }

    /// An add_target chosen by the input.
    func add(_ input: inout FuzzInput, _ h: ListenWriteHarness) {
        var target: [(String, JSON)] = []
        let id = input.pick([0, 0, 1, 2, 3, 1 << 30] as [Int32])
        if id != 0 { target.append(("targetId", .int(Int64(id)))) }
        let kind: ListenTarget.Kind
        let spec: (String, JSON)
        if input.below(3) == 0 {
            let names = (0..<(1 + input.below(2))).map { _ in input.pick(ListenWriteHarness.documents) }
            spec = ("documents", .object(["documents": .array(names.map { .string(h.root + "/" + $0) })]))
            kind = .documents(names.map { ResourcePath($0.split(separator: "/").map(String.init)) })
        } else {
            let shape = input.pick(ListenWriteHarness.shapes)
            spec = ("query", .object(["parent": .string(h.root), "structuredQuery": shape]))
            guard let q = try? QueryParser(database: h.db, parent: .root).parse(ProtoObject(json: shape, path: "q")) else { return }
            kind = .query(q)
        }
        target.append(spec)
        if input.below(4) == 0 {
            // A token from elsewhere that cannot be ours: the server must start over (RESET).
            var junk = input.raw(max: 20)
            if ResumeToken.decode(junk) != nil { junk.append(0) }
            target.append(("resumeToken", .string(Data(junk).base64EncodedString())))
        }
        if input.below(8) == 0 { target.append(("labels", .object(["goog-listen-tags": .string("x")]))) }
        pending.append((id, kind, spec))
        send(["database": .string(h.dbName), "addTarget": .object(JSONObject(target))])
    }

    func removed(_ id: Int32) {
        targets[id] = nil
        views[id] = nil
    }

    /// The connection drops: a new stream resumes every target from the last snapshot, keeping
    /// what the client holds (targets still waiting for CURRENT start over).
    func resume(_ h: ListenWriteHarness) -> ListenClient {
        call.cancelled()
        let next = ListenClient(h)
        next.lastReadTime = lastReadTime
        next.lastToken = lastToken
        for (id, t) in targets.sorted(by: { $0.key < $1.key }) {
            var target: [(String, JSON)] = [("targetId", .int(Int64(id))), t.spec]
            if t.current, let token = lastToken {
                target.append(("resumeToken", .string(Data(token).base64EncodedString())))
                target.append(("expectedCount", .int(Int64(views[id, default: [:]].count))))
                next.views[id] = views[id]
            } else {
                next.views[id] = [:]
            }
            next.pending.append((id, t.kind, t.spec))
            next.send(["database": .string(h.dbName), "addTarget": .object(JSONObject(target))])
        }
        return next
    }

    /// Applies what arrived, as an SDK does, checking every message and every snapshot.
    func drain(_ h: ListenWriteHarness, step: Int) throws(FuzzFailure) {
        let (messages, status) = responses.take()
        for m in messages {
            guard (try? ProtoJSON.decode(m, FirestoreSchemas.v1 + "ListenResponse")) != nil else {
                throw FuzzFailure("step \(step): a ListenResponse that does not decode: \(m)")
            }
        }
        if let status, self.status == nil {
            self.status = status
            guard RecordedResponses.acceptable.contains(status.code) else {
                throw FuzzFailure("step \(step): a Listen stream ended with \(status)")
            }
        }
        for event in events.take() {
            switch event {
            case .targetChange(.add, let ids, _, _, _):
                for id in ids {
                    guard let i = pending.firstIndex(where: { $0.id == id || $0.id == 0 }) else {
                        throw FuzzFailure("step \(step): ADD for target \(id), which was not asked for")
                    }
                    targets[id] = (pending[i].kind, pending[i].spec, false)
                    if views[id] == nil { views[id] = [:] }
                    pending.remove(at: i)
                }
            case .targetChange(.remove, let ids, _, _, _):
                for id in ids {
                    removed(id)
                    pending.removeAll { $0.id == id }
                }
            case .targetChange(.reset, let ids, _, _, _):
                for id in ids { views[id] = [:] }
            case .targetChange(.current, let ids, _, _, _):
                for id in ids { targets[id]?.current = true }
            case .targetChange(.noChange, let ids, _, _, _) where !ids.isEmpty:
                break
            case .targetChange(.noChange, _, _, let readTime?, let token):
                guard readTime >= lastReadTime else { throw FuzzFailure("step \(step): read time went back from \(lastReadTime) to \(readTime)") }
                lastReadTime = readTime
                lastToken = token
                for (id, t) in targets where t.current {
                    let want: [ResourcePath: Instant]
                    do { want = try h.truth(t.kind, at: readTime) } catch { throw FuzzFailure("step \(step): fresh read failed: \(error)") }
                    let view = views[id, default: [:]]
                    guard view == want else {
                        throw FuzzFailure("step \(step) target \(id): view \(view.keys.map(\.description).sorted()) != fresh read \(want.keys.map(\.description).sorted())")
                    }
                    // Only views with documents in them count: an empty one proves little.
                    if !view.isEmpty { FuzzChecks.count("listen-write") }
                }
            case .targetChange(.noChange, _, _, nil, _):
                throw FuzzFailure("step \(step): a global NO_CHANGE without a read time")
            case .targetChange:
                break
            case .documentChange(let d, let ids):
                for id in ids where targets[id] != nil { views[id, default: [:]][d.path] = d.updateTime }
            case .documentDelete(let p, let ids, _), .documentRemove(let p, let ids, _):
                for id in ids { views[id]?[p] = nil }
            case .existenceFilter(let id, let count, _):
                guard count == views[id, default: [:]].count else {
                    throw FuzzFailure("step \(step): existence filter of target \(id) counts \(count), the client holds \(views[id, default: [:]].count)")
                }
            case .end:
                break
            }
        }
    }
}

/// One Write stream, as the iOS SDK drives it.
final class WriteClient: @unchecked Sendable {
    let responses = RecordedResponses()
    let call: WriteCall
    var token: [UInt8]?
    var streamID = ""
    var status: GRPCStatus?

    init(_ h: ListenWriteHarness, id: String) {
        let session = WriteStreamSession(service: h.service, caller: .admin, streamID: id)
        call = WriteCall(session: session, responses: responses, decode: FirestoreGRPCService.decodeWrite,
                         encode: FirestoreGRPCService.encodeWrite)
    }

    /// A handshake, a batch (with the right token, a stale or wrong one, or none), or garbage.
    func send(_ input: inout FuzzInput, _ h: ListenWriteHarness) {
        if input.below(12) == 0 {
            call.received(input.raw(max: 24))
            return
        }
        var request: [(String, JSON)] = [("database", .string(input.below(16) == 0 ? "projects/other/databases/(default)" : h.dbName))]
        if token == nil && input.below(4) != 0 {
            call.received(ProtoJSON.encode(JSONObject(request), FirestoreSchemas.v1 + "WriteRequest"))
            return
        }
        if let token, input.below(8) != 0 { request.append(("streamToken", .string(Data(token).base64EncodedString()))) }
        if !streamID.isEmpty, input.bool() { request.append(("streamId", .string(streamID))) }
        var writes: [JSON] = []
        for _ in 0..<input.below(4) {
            let name = h.root + "/" + input.pick(ListenWriteHarness.documents)
            switch input.below(5) {
            case 0:
                writes.append(.object(["delete": .string(name)]))
            case 1:
                writes.append(.object(["update": .object(["name": .string(name), "fields": .object(["n": .object(["integerValue": .string(String(input.below(6)))])])]),
                                       "updateMask": .object(["fieldPaths": .array([.string("n")])]),
                                       "currentDocument": .object(["exists": .bool(input.bool())])]))
            case 2:
                writes.append(.object(["update": .object(["name": .string(name)]),
                                       "updateTransforms": .array([.object(["fieldPath": .string("t"), "setToServerValue": .string("REQUEST_TIME")]),
                                                                   .object(["fieldPath": .string("n"), "increment": .object(["integerValue": .string("1")])])])]))
            default:
                writes.append(.object(["update": .object(["name": .string(name), "fields": .object([
                    "n": .object(["integerValue": .string(String(input.below(6)))]),
                    "color": .object(["stringValue": .string(input.bool() ? "red" : "blue")]),
                ])])]))
            }
        }
        if !writes.isEmpty { request.append(("writes", .array(writes))) }
        call.received(ProtoJSON.encode(JSONObject(request), FirestoreSchemas.v1 + "WriteRequest"))
    }

    func check(step: Int) throws(FuzzFailure) {
        let (messages, status) = responses.take()
        for m in messages {
            guard let o = try? ProtoJSON.decode(m, FirestoreSchemas.v1 + "WriteResponse") else {
                throw FuzzFailure("step \(step): a WriteResponse that does not decode: \(m)")
            }
            guard let t = o["streamToken"]?.stringValue.flatMap({ Data(base64Encoded: $0) }), !t.isEmpty else {
                throw FuzzFailure("step \(step): a WriteResponse without a stream token")
            }
            token = [UInt8](t)
            streamID = o["streamId"]?.stringValue ?? streamID
        }
        if let status, self.status == nil {
            self.status = status
            guard RecordedResponses.acceptable.contains(status.code) else {
                throw FuzzFailure("step \(step): a Write stream ended with \(status)")
            }
        }
    }
}
