import Foundation
import HearthCore
import HearthGRPC
import Testing
@testable import FirestoreEmulator

/// A call's response side that records what is sent and how it ends; `buffered` stands for bytes
/// the client has not read.
final class RecordingResponses: GRPCResponseStream, @unchecked Sendable {
    private let lock = NSLock()
    private var _messages: [String] = []
    private var _status: GRPCStatus?
    private var _buffered = 0
    /// Set by the test while the engine's pump reads it on its own thread, so under the lock
    /// (ThreadSanitizer reported the unguarded field).
    var buffered: Int {
        get { lock.withLock { _buffered } }
        set { lock.withLock { _buffered = newValue } }
    }

    var messages: [String] { lock.withLock { _messages } }
    var status: GRPCStatus? { lock.withLock { _status } }

    func send(_ message: [UInt8]) -> Bool {
        lock.withLock {
            guard _status == nil else { return false }
            _messages.append(String(decoding: message, as: UTF8.self))
            return true
        }
    }
    func finish(_ status: GRPCStatus) { lock.withLock { if _status == nil { _status = status } } }
    func waitUntilWritable() -> Bool { !isClosed }
    var bufferedBytes: Int { buffered }
    var isClosed: Bool { status != nil }
}

/// A response side with a thread of its own (a connection's loop), stood in by the test: what the
/// engine hands over waits, unencoded, until the test runs the producer as the loop would.
final class DeferredResponses: GRPCResponseStream, @unchecked Sendable {
    let inner = RecordingResponses()
    private let lock = NSLock()
    private var producer: (@Sendable () -> Void)?
    private var asked = false
    private var _batches = 0

    /// Batches sent (one per producer pass that had something).
    var batches: Int { lock.withLock { _batches } }

    func send(_ message: [UInt8]) -> Bool { inner.send(message) }
    func send(_ batch: GRPCMessageBatch) -> Bool {
        lock.withLock { _batches += 1 }
        var ok = true
        batch.forEachMessage { if !inner.send(Array($0)) { ok = false } }
        return ok
    }
    func finish(_ status: GRPCStatus) {
        inner.finish(status)
        close()
    }
    func waitUntilWritable() -> Bool { !isClosed }
    var bufferedBytes: Int { inner.bufferedBytes }
    var isClosed: Bool { inner.isClosed }
    func produceSoon(_ produce: @escaping @Sendable () -> Void) {
        lock.withLock {
            if producer == nil && !closed { producer = produce }
            asked = true
        }
    }
    private var closed = false
    /// The stream closes (its end sent, or the client reset it): as `HTTP2Stream` does, it lets go
    /// of the producer, which holds the call, which holds this (LeakSanitizer reported the cycle).
    func close() {
        lock.withLock {
            closed = true
            producer = nil
        }
    }

    /// Runs the producer once if it was asked for since the last run (the loop's flush).
    func runProducer() {
        let p: (@Sendable () -> Void)? = lock.withLock {
            defer { asked = false }
            return asked ? producer : nil
        }
        p?()
    }
}

/// `ListenCall` and `WriteCall` over a recorded response side, with stand-in codecs (the real
/// protobuf codec is tested with the messages): ordering, errors, slow clients, teardown.
@Suite struct StreamCallTests {
    static let dbName = "projects/demo-test/databases/(default)"

    /// Requests are indexes into `actions`, so the test passes whole decoded requests through.
    static func listenCall(_ h: TestHarness, _ actions: [(String, ListenCall.Action?)], caller: Caller = .admin)
        -> (ListenCall, RecordingResponses) {
        let r = RecordingResponses()
        let call = ListenCall(engine: h.service.listeners, caller: caller, responses: r,
                              decode: { message throws(FirestoreError) in
                                  guard let i = message.first, Int(i) < actions.count else { throw .invalidArgument("bad request") }
                                  return actions[Int(i)]
                              },
                              encode: { event, _, batch in batch.append(Array(TestListener.describe(event).utf8)) })
        return (call, r)
    }

    static func target(_ h: TestHarness, _ id: Int32) throws -> ListenCall.Action {
        let db = DatabaseID(project: h.project, database: "(default)")
        let q = try QueryParser(database: db, parent: .root).parse(ProtoObject(json: ListenEngineTests.allOfC, path: "q"))
        return .add(ListenTarget(database: db, id: id, kind: .query(q)))
    }

    @Test func listenCallStreamsAndHalfCloseEndsOK() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        let (call, r) = Self.listenCall(h, [(Self.dbName, try Self.target(h, 1)), (Self.dbName, .remove(1))])
        call.received([0])
        h.put("c/b", ["n": int(1)])
        call.received([1])
        call.halfClosed()
        h.service.listeners.sync {}
        #expect(r.messages == ["ADD[1]", "CHANGE a [1]", "CURRENT[1]", "NO_CHANGE[]", "CHANGE b [1]", "NO_CHANGE[]", "REMOVE[1]"])
        #expect(r.status == .ok)
        #expect(h.service.listeners.sync { h.service.listeners.streams.isEmpty })
    }

    @Test func listenCallBadRequestsEndWithInvalidArgument() throws {
        let h = try TestHarness()
        let (call, r) = Self.listenCall(h, [(Self.dbName, try Self.target(h, 1)), (Self.dbName, try Self.target(h, 1)),
                                            ("projects/other/databases/(default)", nil)])
        call.received([0])
        call.received([1])
        h.service.listeners.sync {}
        #expect(r.status?.code == .invalidArgument)
        #expect(h.service.listeners.sync { h.service.listeners.indexedTargetCount } == 0)

        let (other, r2) = Self.listenCall(h, [(Self.dbName, try Self.target(h, 1)), ("projects/other/databases/(default)", nil)])
        other.received([0])
        other.received([1])
        #expect(r2.status?.code == .invalidArgument)
        let (garbled, r3) = Self.listenCall(h, [])
        garbled.received([9])
        #expect(r3.status == GRPCStatus(.invalidArgument, "bad request"))
    }

    /// Waits (a bounded time) until `condition` holds, for work the engine retries on its own.
    /// Polls `condition` every 2 ms for up to `seconds` (a hang guard, not a speed claim: a loaded
    /// machine — `make test` runs suites in parallel — may take several times a quiet one's time).
    static func eventually(seconds: Int = 30, _ condition: () -> Bool) -> Bool {
        for _ in 0..<(seconds * 500) {
            if condition() { return true }
            usleep(2000)
        }
        return condition()
    }

    /// A call on target 1 whose connection produces only when the test says (see `DeferredResponses`),
    /// its add already sent.
    static func deferredCall(_ h: TestHarness) throws -> (ListenCall, DeferredResponses) {
        let d = DeferredResponses()
        let add = try target(h, 1)
        let call = ListenCall(engine: h.service.listeners, caller: .admin, responses: d,
                              decode: { _ throws(FirestoreError) in (dbName, add) },
                              encode: { e, _, batch in batch.append(Array(TestListener.describe(e).utf8)) })
        call.received([0])
        return (call, d)
    }

    /// The engine only hands events over; the connection's pass encodes everything handed over
    /// since the last one as one batch, and a half-close ends the call after it.
    @Test func theConnectionsPassSendsWhatWasHandedOverThenEnds() throws {
        let h = try TestHarness()
        let (call, d) = try Self.deferredCall(h)
        // The add is read first (the harness's frozen clock gives the first commit the add's time).
        h.service.listeners.sync {}
        h.put("c/a", ["n": int(1)])
        h.put("c/b", ["n": int(1)])
        call.halfClosed()
        h.service.listeners.sync {}
        #expect(d.inner.messages.isEmpty && d.inner.status == nil)
        d.runProducer()
        #expect(d.inner.messages == ["ADD[1]", "CURRENT[1]", "NO_CHANGE[]", "CHANGE a [1]", "NO_CHANGE[]", "CHANGE b [1]", "NO_CHANGE[]"])
        #expect(d.inner.status == .ok)
        #expect(d.batches == 1)
        #expect(h.service.listeners.sync { h.service.listeners.streams.isEmpty })
    }

    /// Events handed over and not yet encoded count against the low-water mark: a connection that
    /// does not get to encode them leaves the rest in the engine's outbox (unencoded, bounded).
    @Test func eventsWaitingForTheConnectionCountAgainstTheLowWaterMark() throws {
        let h = try TestHarness()
        let (call, d) = try Self.deferredCall(h)
        h.service.listeners.sync {}
        let big = String(repeating: "x", count: 300_000)
        for k in 0..<6 { h.put("c/d\(k)", ["blob": str(big)]) }
        h.service.listeners.sync {}
        // About a mebibyte was handed over; the rest waits in the outbox.
        #expect(h.service.listeners.sync { h.service.listeners.streams.values.map(\.pending).reduce(0, +) } > 0)
        var passes = 0
        while d.inner.messages.count < 3 + 12, passes < 15_000 {
            d.runProducer()
            passes += 1
            usleep(2000)
        }
        #expect(d.inner.messages == ["ADD[1]", "CURRENT[1]", "NO_CHANGE[]"] + (0..<6).flatMap { ["CHANGE d\($0) [1]", "NO_CHANGE[]"] })
        #expect(d.batches >= 2)
        call.cancelled()
        d.close()
    }

    @Test func flowControlHoldsEventsUntilTheClientReads() throws {
        let h = try TestHarness()
        let (call, r) = Self.listenCall(h, [(Self.dbName, try Self.target(h, 1))])
        call.received([0])
        h.service.listeners.sync {}
        #expect(r.messages.count == 3)
        r.buffered = ListenCall.lowWater
        h.put("c/a", ["n": int(1)])
        h.put("c/b", ["n": int(1)])
        h.service.listeners.sync {}
        #expect(r.messages.count == 3)
        r.buffered = 0
        #expect(Self.eventually { r.messages.count == 7 })
        #expect(r.messages.suffix(4) == ["CHANGE a [1]", "NO_CHANGE[]", "CHANGE b [1]", "NO_CHANGE[]"])
    }

    @Test func aFirstResultWaitingForTheClientIsReadAsOfItsReadTime() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        h.put("c/b", ["n": int(1)])
        let r = RecordingResponses()
        let add = try Self.target(h, 1)
        let call = ListenCall(engine: h.service.listeners, caller: .admin, responses: r,
                              decode: { _ throws(FirestoreError) in (Self.dbName, add) },
                              encode: { e, _, batch in
                                  if case .documentChange(let d, _) = e, case .integer(let n)? = d.fields["n"] {
                                      return batch.append(Array("CHANGE \(d.path.lastSegment)=\(n)".utf8))
                                  }
                                  batch.append(Array(TestListener.describe(e).utf8))
                              })
        r.buffered = ListenCall.lowWater
        call.received([0])
        // While the first result waits (as names), one document changes and one is deleted.
        h.put("c/a", ["n": int(2)])
        h.delete("c/b")
        h.service.listeners.sync {}
        #expect(r.messages.isEmpty)
        r.buffered = 0
        #expect(Self.eventually { r.messages.count == 9 })
        // The snapshot as of the add, then what changed after it: never a mix of the two.
        #expect(r.messages == ["ADD[1]", "CHANGE a=1", "CHANGE b=1", "CURRENT[1]", "NO_CHANGE[]",
                               "CHANGE a=2", "NO_CHANGE[]", "DELETE b [1]", "NO_CHANGE[]"])
    }

    @Test func aClientThatStopsReadingIsCutAndOthersGoOn() throws {
        let h = try TestHarness()
        h.service.listeners.sync { h.service.listeners.maxOutboxBytes = 2000 }
        let (slow, slowR) = Self.listenCall(h, [(Self.dbName, try Self.target(h, 1))])
        let (fast, fastR) = Self.listenCall(h, [(Self.dbName, try Self.target(h, 1))])
        slow.received([0])
        fast.received([0])
        h.service.listeners.sync {}
        slowR.buffered = ListenCall.lowWater + 1
        for k in 0..<20 { h.put("c/d\(k)", ["n": int(Int64(k))]) }
        h.service.listeners.sync {}
        #expect(slowR.status?.code == .resourceExhausted)
        #expect(fastR.messages.count == 3 + 40)
        #expect(h.service.listeners.sync { h.service.listeners.indexedTargetCount } == 1)
        fast.cancelled()
        #expect(h.service.listeners.sync { h.service.listeners.indexedTargetCount } == 0)
    }

    @Test func cancelFreesEveryTargetAndTheBacklog() throws {
        let h = try TestHarness()
        let db = DatabaseID(project: h.project, database: "(default)")
        let group = try QueryParser(database: db, parent: .root).parse(ProtoObject(
            json: .object(["from": .array([.object(["collectionId": .string("c"), "allDescendants": .bool(true)])])]), path: "q"))
        let (call, r) = Self.listenCall(h, [(Self.dbName, try Self.target(h, 1)),
                                            (Self.dbName, .add(ListenTarget(database: db, id: 2, kind: .documents([ResourcePath(["c", "a"])])))),
                                            (Self.dbName, .add(ListenTarget(database: db, id: 3, kind: .query(group))))])
        for i in 0..<3 { call.received([UInt8(i)]) }
        h.service.listeners.sync {}
        #expect(h.service.listeners.sync { h.service.listeners.indexedTargetCount } == 3)
        // The client stops reading, so changes pile up in the stream's backlog; then it cancels
        // (RST_STREAM or a dropped connection both reach `cancelled`).
        r.buffered = ListenCall.lowWater
        for k in 0..<5 { h.put("c/a", ["n": int(Int64(k))]) }
        #expect(h.service.listeners.sync { h.service.listeners.streams.values.map(\.pending).reduce(0, +) } > 0)
        call.cancelled()
        h.service.listeners.sync {}
        #expect(h.service.listeners.sync { h.service.listeners.indexedTargetCount } == 0)
        #expect(h.service.listeners.sync { h.service.listeners.streams.isEmpty })
        // Later commits find nothing to do for it.
        r.buffered = 0
        let before = r.messages.count
        h.put("c/a", ["n": int(9)])
        h.service.listeners.sync {}
        #expect(r.messages.count == before)
    }

    @Test func writeCallEndsOnTheFirstFailureAndIgnoresTheRest() throws {
        let h = try TestHarness()
        let db = DatabaseID(project: h.project, database: "(default)")
        let requests: [WriteStreamSession.Request] = [
            .init(database: Self.dbName),
            .init(database: "", writes: [try WriteStreamSessionTests.write(h, "c/a", 1)]),
            .init(database: "", writes: [Write(path: ResourcePath(["c", "b"]), operation: .update(fields: [:], mask: nil),
                                               transforms: [], precondition: Precondition(exists: true, updateTime: nil))]),
            .init(database: "", writes: [try WriteStreamSessionTests.write(h, "c/c", 1)]),
        ]
        let r = RecordingResponses()
        let call = WriteCall(session: WriteStreamSession(service: h.service, caller: .admin, streamID: "s1"), responses: r,
                             decode: { m, known throws(FirestoreError) in
                                 if m[0] > 0 && known != db { throw .internal("no handshake database") }
                                 return requests[Int(m[0])]
                             },
                             encode: { resp in Array("\(resp.streamID):\(String(decoding: resp.streamToken, as: UTF8.self)):\(resp.results.count)".utf8) })
        for i in 0..<4 { call.received([UInt8(i)]) }
        #expect(r.messages == ["s1:0:0", "s1:1:1"])
        #expect(r.status == GRPCStatus(.notFound, "No document to update: \(Self.dbName)/documents/c/b"))
        #expect(h.call("GET", h.api("/c/c")).status == 404)
        #expect(h.call("GET", h.api("/c/a")).status == 200)
    }
}

/// The Write call as the gRPC server drives it (`received(_:done:)`: the next request only after
/// `done`): a commit waiting for the writer holds no thread, its answer goes out before `done`,
/// and a failure still ends the stream with nothing after it applied.
@Suite struct AsyncWriteCallTests {
    static func call(_ h: TestHarness, _ requests: [WriteStreamSession.Request], caller: Caller = .admin) -> (WriteCall, RecordingResponses) {
        let r = RecordingResponses()
        let call = WriteCall(session: WriteStreamSession(service: h.service, caller: caller, streamID: "s1"), responses: r,
                             decode: { m, _ throws(FirestoreError) in requests[Int(m[0])] },
                             encode: { resp in Array("\(String(decoding: resp.streamToken, as: UTF8.self)):\(resp.results.count)".utf8) })
        return (call, r)
    }

    /// Hands `message` over and waits for its `done`.
    static func deliver(_ call: WriteCall, _ message: UInt8) {
        let done = DispatchSemaphore(value: 0)
        call.received([message], done: { done.signal() })
        done.wait()
    }

    @Test func aCommitWaitingForTheWriterHoldsNoThreadAndAnswersBeforeDone() throws {
        let h = try TestHarness()
        let (call, r) = Self.call(h, [.init(database: StreamCallTests.dbName),
                                      .init(database: "", writes: [try WriteStreamSessionTests.write(h, "c/a", 1)])])
        Self.deliver(call, 0)
        // Another write holds the single writer (its batch is leading).
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? h.service.storage.write { _ in
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        let done = DispatchSemaphore(value: 0)
        let answeredAtDone = LockedFlag()
        call.received([1], done: {
            answeredAtDone.set(r.messages.count == 2)
            done.signal()
        })
        // Returned without waiting for the commit, and not done yet.
        #expect(done.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
        #expect(r.messages == ["0:0"])
        release.signal()
        done.wait()
        #expect(answeredAtDone.value)
        #expect(r.messages == ["0:0", "1:1"])
        #expect(h.call("GET", h.api("/c/a")).status == 200)
    }

    @Test func aFailedBatchEndsTheStreamAndNothingAfterItIsApplied() throws {
        let h = try TestHarness(rules: RulesEnforcementTests.rules("""
            match /users/{uid}/{d=**} { allow read, write: if request.auth.uid == uid; }
        """))
        let (call, r) = Self.call(h, [
            .init(database: StreamCallTests.dbName),
            .init(database: "", writes: [try WriteStreamSessionTests.write(h, "users/u1/f/a", 1)]),
            .init(database: "", writes: [try WriteStreamSessionTests.write(h, "users/u1/f/b", 1),
                                         try WriteStreamSessionTests.write(h, "users/u2/f/x", 1)]),
            .init(database: "", writes: [try WriteStreamSessionTests.write(h, "users/u1/f/c", 1)]),
            .init(database: ""),
        ], caller: try h.caller("u1"))
        for i in 0..<5 { Self.deliver(call, UInt8(i)) }
        #expect(r.messages == ["0:0", "1:1"])
        #expect(r.status?.code == .permissionDenied)
        #expect(h.call("GET", h.api("/users/u1/f/a")).status == 200)
        #expect(h.call("GET", h.api("/users/u1/f/b")).status == 404)
        #expect(h.call("GET", h.api("/users/u1/f/c")).status == 404)
    }

    /// Over a response side with a thread of its own, answers are encoded there (the producer),
    /// never on the thread that made them — the writer, for a commit — and leave in the order they
    /// were made, the call's end after them: a failure's status and the end of a half-closed call.
    @Test func answersAreEncodedByTheConnectionsThreadInOrder() throws {
        let h = try TestHarness(rules: RulesEnforcementTests.rules("""
            match /users/{uid}/{d=**} { allow read, write: if request.auth.uid == uid; }
        """))
        let requests: [WriteStreamSession.Request] = [
            .init(database: StreamCallTests.dbName),
            .init(database: "", writes: [try WriteStreamSessionTests.write(h, "users/u1/f/a", 1)]),
            .init(database: "", writes: [try WriteStreamSessionTests.write(h, "users/u1/f/b", 1)]),
            .init(database: "", writes: [try WriteStreamSessionTests.write(h, "users/u2/f/x", 1)]),
            .init(database: "", writes: [try WriteStreamSessionTests.write(h, "users/u1/f/c", 1)]),
        ]
        let encoded = LockedCount()
        func call(_ r: DeferredResponses) throws -> WriteCall {
            WriteCall(session: WriteStreamSession(service: h.service, caller: try h.caller("u1"), streamID: "s1"), responses: r,
                      decode: { m, _ throws(FirestoreError) in requests[Int(m[0])] },
                      encode: { resp in
                          encoded.add()
                          return Array("\(String(decoding: resp.streamToken, as: UTF8.self)):\(resp.results.count)".utf8)
                      })
        }
        let r = DeferredResponses()
        let failing = try call(r)
        for i in 0..<5 { Self.deliver(failing, UInt8(i)) }
        // Three answers made (the handshake and two commits) and the failure; nothing encoded yet.
        #expect(encoded.value == 0 && r.inner.messages.isEmpty && r.inner.status == nil)
        r.runProducer()
        #expect(encoded.value == 3)
        #expect(r.inner.messages == ["0:0", "1:1", "2:1"])
        #expect(r.inner.status?.code == .permissionDenied)
        #expect(h.call("GET", h.api("/users/u1/f/c")).status == 404)

        // A half-closed call ends with OK after its answers.
        let ok = DeferredResponses()
        let closing = try call(ok)
        Self.deliver(closing, 0)
        closing.halfClosed()
        #expect(ok.inner.messages.isEmpty && ok.inner.status == nil)
        ok.runProducer()
        #expect(ok.inner.messages == ["0:0"])
        #expect(ok.inner.status == .ok)
    }
}

/// A count kept across threads.
final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// A flag set on one thread and read on another.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    func set(_ v: Bool) { lock.withLock { flag = v } }
    var value: Bool { lock.withLock { flag } }
}

/// A listener on a 100,000-document collection: the first result goes out in bounded pieces, read
/// a page at a time and only as fast as the client reads.
@Suite struct LargeListenTests {
    @Test func hundredThousandDocumentsStreamInPiecesUnderFlowControl() throws {
        let h = try TestHarness()
        let db = DatabaseID(project: h.project, database: "(default)")
        for batch in 0..<200 {
            let writes = (0..<500).map { k in
                Write(path: ResourcePath(["c", "d\(batch * 500 + k)"]), operation: .update(fields: ["n": .integer(Int64(k))], mask: nil),
                      transforms: [], precondition: nil)
            }
            _ = try h.service.commit(db, writes: writes, transaction: nil, caller: .admin)
        }
        let r = RecordingResponses()
        let add = try StreamCallTests.target(h, 1)
        let call = ListenCall(engine: h.service.listeners, caller: .admin, responses: r,
                              decode: { _ throws(FirestoreError) in (StreamCallTests.dbName, add) },
                              encode: { e, _, batch in batch.append(Array(TestListener.describe(e).utf8)) })
        // A client that is not reading gets nothing past the first piece it was writable for.
        r.buffered = ListenCall.lowWater
        call.received([0])
        h.service.listeners.sync {}
        #expect(r.messages.isEmpty)
        // What waits for the client is one entry for the whole result (ADD, the result, CURRENT,
        // NO_CHANGE): not its documents, not even their names; pages are read as they go out.
        #expect(h.service.listeners.sync { h.service.listeners.streams.values.map(\.pending) } == [4])
        let held = h.service.listeners.sync {
            h.service.listeners.streams.values.flatMap(\.outbox).filter { if case .event = $0 { false } else { true } }.count
        }
        #expect(held == 1)
        #expect(h.service.listeners.sync { h.service.listeners.streams.values.map(\.outboxBytes) }.allSatisfy { $0 <= 4 * 64 })
        r.buffered = 0
        #expect(StreamCallTests.eventually(seconds: 120) { r.messages.count == 100_003 })
        #expect(r.messages.first == "ADD[1]" && r.messages.suffix(2) == ["CURRENT[1]", "NO_CHANGE[]"])
        #expect(r.messages.dropFirst().prefix(3) == ["CHANGE d0 [1]", "CHANGE d1 [1]", "CHANGE d10 [1]"])
        #expect(h.service.listeners.sync { h.service.listeners.streams.values.allSatisfy { $0.pending == 0 } })
    }
}
