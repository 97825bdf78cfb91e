import Foundation
import HearthCore
import HearthGRPC

/// One gRPC Listen call: feeds decoded requests to the `ListenEngine` and writes its events to
/// the call, with the message codec passed in (the google.firestore.v1 messages live with the
/// other RPCs in `GRPC/`).
///
/// The engine's shard only hands events over; they are encoded and framed on the connection's own
/// thread (`GRPCResponseStream.produceSoon`), every event handed over since the last pass in one
/// buffer, so a commit reaching a thousand listeners is not one thread's serial work and the first
/// connections' bytes leave while the engine still matches the rest.
///
/// Flow control: the engine hands events over only while fewer than `lowWater` bytes wait for the
/// client's socket (counting those handed over and not yet encoded), keeping the rest unencoded in
/// the stream's outbox; a client that stops reading is cut when that outbox outgrows its bound, and
/// other listeners go on meanwhile.
final class ListenCall: GRPCRequestStream, @unchecked Sendable {
    /// What one `ListenRequest` asks.
    enum Action: Sendable {
        case add(ListenTarget)
        case remove(Int32)
        /// A target the request names but cannot be listened to (a bad query or document name):
        /// ADD and REMOVE with the error as its cause, and the stream goes on (as Firestore and its
        /// emulator answer; the mobile SDKs share one stream among all their listeners).
        case reject(targetID: Int32, FirestoreError)
    }

    /// Decodes one `ListenRequest`: its `database` and what it asks (nil: neither add nor remove).
    typealias Decode = @Sendable (_ message: [UInt8]) throws(FirestoreError) -> (database: String, action: Action?)
    /// Encodes one event as a `ListenResponse` (document names in `database`) appended to `batch`.
    typealias Encode = @Sendable (_ event: ListenEvent, _ database: DatabaseID, _ batch: inout GRPCMessageBatch) -> Void
    /// Encodes a shared snapshot for a stream whose target is `targetIDs`: the responses `Encode`
    /// makes of `snapshot.events(targetIDs)`, from bytes made once per snapshot.
    typealias EncodeShared = @Sendable (_ snapshot: ListenBatch.Shared, _ targetIDs: [Int32], _ database: DatabaseID,
                                        _ batch: inout GRPCMessageBatch) -> Void

    /// Bytes waiting for the socket below which the client takes more events.
    static let lowWater = 1 << 20

    private let engine: ListenEngine
    private let responses: any GRPCResponseStream
    private let decode: Decode
    private var stream: ListenStream!
    // Set by the first request; requests arrive one at a time.
    private var database: DatabaseID?

    /// - Parameter encodeShared: nil: a shared snapshot is written out as events and encoded with `encode`.
    init(engine: ListenEngine, caller: Caller, responses: any GRPCResponseStream, decode: @escaping Decode,
         encode: @escaping Encode, encodeShared: EncodeShared? = nil) {
        self.engine = engine
        self.responses = responses
        self.decode = decode
        // The database is fixed before any event can exist (events follow an add).
        let box = Outgoing()
        self.box = box
        // Runs on the connection's thread: encodes and sends what the engine handed over since.
        let produce: @Sendable () -> Void = { [responses] in
            var first: ListenBatch?
            var more: [ListenBatch] = []
            let taken = box.take(&first, &more)
            if let db = taken.database, let first {
                // One buffer and one write for what the engine handed over (a snapshot, usually).
                var batch: GRPCMessageBatch
                if more.isEmpty, encodeShared != nil, case .shared = first.content {
                    // The encoder lays a shared snapshot out at its exact size into an empty batch.
                    batch = GRPCMessageBatch()
                } else {
                    batch = GRPCMessageBatch(capacity: min(taken.bytes, 1 << 20) + 16 * taken.count)
                }
                // Appends `b`'s responses; the error an `.end` event carries (nothing after it is sent).
                func append(_ b: ListenBatch) -> FirestoreError? {
                    switch b.content {
                    case .shared(let snapshot, let ids):
                        if let encodeShared {
                            encodeShared(snapshot, ids, db, &batch)
                        } else {
                            for e in snapshot.events(ids) { encode(e, db, &batch) }
                        }
                    case .events(let events):
                        for e in events {
                            if case .end(let error) = e { return error }
                            encode(e, db, &batch)
                        }
                    }
                    return nil
                }
                var failed = append(first)
                for b in more where failed == nil { failed = append(b) }
                if !responses.send(batch) { return box.markGone() }
                if let failed {
                    responses.finish(failed.grpcStatus)
                    return box.markGone()
                }
            }
            if let end = taken.end { responses.finish(end) }
        }
        self.produce = produce
        // The stream's shard is its connection's thread's: the thread that encodes its snapshots
        // is fed by one shard, and the streams of one connection are handed over together.
        stream = engine.open(caller: caller, affinity: responses.affinity,
                             writable: { [responses] in responses.bufferedBytes + box.queuedBytes < Self.lowWater },
                             offer: { [responses] batch, bytes in
            // A commit's snapshot: the room check and the hand-over under the box's one lock.
            switch box.put(batch, bytes, ifBelow: Self.lowWater - responses.bufferedBytes) {
            case .gone: return .gone
            case .full: return .full
            case .first: responses.produceSoon(produce)
            case .queued: break
            }
            return .taken
        }) { [responses] batch, bytes in
            // On the shard's queue: only queued here; the encoding and framing happen on the
            // connection's thread, so a commit's fan-out is not one thread's serial work.
            switch box.put(batch, bytes) {
            case .gone: return false
            case .first: responses.produceSoon(produce)
            case .queued, .full: break
            }
            return true
        }
    }

    private let box: Outgoing
    private let produce: @Sendable () -> Void

    /// The stream's database (set by the request thread, read where events are encoded) and the
    /// events the engine handed over that the connection's thread has not encoded yet.
    private final class Outgoing: @unchecked Sendable {
        // All under `lock`. Unchecked: the lock keeps accesses apart, and the runtime's exclusivity
        // check cost ~100 instructions an access, several per listener per commit.
        private let lock = NSLock()
        @exclusivity(unchecked) private var value: DatabaseID?
        /// The batches handed over and not yet taken: the first (usually the only one, a commit's
        /// snapshot: no array per listener per commit), then the rest in order.
        @exclusivity(unchecked) private var first: ListenBatch?
        @exclusivity(unchecked) private var more: [ListenBatch] = []
        /// The events in them, and roughly what they weigh on the wire (counted against the
        /// low-water mark).
        @exclusivity(unchecked) private var count = 0
        @exclusivity(unchecked) private var bytes = 0
        /// The status to end with after the batches (set once).
        @exclusivity(unchecked) private var end: GRPCStatus?
        @exclusivity(unchecked) private var gone = false

        enum Put {
            /// Queued into an empty box: the producer must be asked to run.
            case first
            /// Queued behind batches the producer has yet to take.
            case queued
            /// Not queued: no room below the limit given.
            case full
            /// Not queued: the call ended.
            case gone
        }

        /// What the producer takes at once besides the batches.
        struct Taken {
            var count: Int
            var bytes: Int
            var database: DatabaseID?
            var end: GRPCStatus?
        }

        var database: DatabaseID? {
            get { lock.withLock { value } }
            set { lock.withLock { value = newValue } }
        }

        var queuedBytes: Int { lock.withLock { bytes } }

        /// Queues `batch`; `.first` when the producer must be asked to run. With `room`, only when
        /// what the box holds stays below it (`.full` otherwise).
        func put(_ batch: ListenBatch, _ weight: Int, ifBelow room: Int = .max) -> Put {
            lock.lock()
            defer { lock.unlock() }
            if gone || end != nil { return .gone }
            if bytes >= room { return .full }
            count += batch.count
            bytes += weight
            guard first != nil else {
                first = batch
                return .first
            }
            more.append(batch)
            return .queued
        }

        /// Ends the call with `status` once the queued events are sent; false when it had ended.
        func finish(_ status: GRPCStatus) -> Bool {
            lock.withLock {
                if gone || end != nil { return false }
                end = status
                return true
            }
        }

        /// Takes what was handed over: the batches moved into `first` and `more` (both empty on
        /// entry), not copied out and released here (a retain and a release per listener per commit).
        func take(_ first: inout ListenBatch?, _ more: inout [ListenBatch]) -> Taken {
            lock.lock()
            defer { lock.unlock() }
            let taken = Taken(count: count, bytes: bytes, database: value, end: end)
            swap(&first, &self.first)
            if !self.more.isEmpty { swap(&more, &self.more) }
            count = 0
            bytes = 0
            if end != nil { gone = true }
            return taken
        }

        func markGone() { lock.withLock { gone = true } }
    }

    /// Ends the call with `status` after what was handed over for it (on the connection's thread).
    private func end(_ status: GRPCStatus) {
        if box.finish(status) { responses.produceSoon(produce) }
    }

    func received(_ message: [UInt8]) {
        do throws(FirestoreError) {
            let (name, action) = try decode(message)
            let db = try WriteStreamSession.database(named: name)
            if let database, database != db {
                throw .invalidArgument("The database of a Listen request (\(db.name)) does not match the stream's (\(database.name)).")
            }
            database = db
            box.database = db
            switch action {
            case .add(let target):
                guard target.database == db else {
                    throw .invalidArgument("A target's documents must be in the stream's database (\(db.name)).")
                }
                engine.add(target, to: stream)
            case .remove(let id):
                engine.remove(id, from: stream)
            case .reject(let id, let error):
                engine.reject(id, error, on: stream)
            case nil:
                // Only labels or the database: nothing to answer.
                break
            }
        } catch {
            engine.close(stream)
            end(error.grpcStatus)
        }
    }

    func halfClosed() {
        // After what is queued on the engine for this stream, so its answers go out first.
        engine.finish(stream) { [self] in end(.ok) }
    }

    func cancelled() {
        engine.close(stream)
    }
}
