import Foundation
import HearthCore
import HearthGRPC

/// One gRPC Listen call: feeds decoded requests to the `ListenEngine` and writes its events to
/// the call, with the message codec passed in (the google.firestore.v1 messages live with the
/// other RPCs in `GRPC/`).
///
/// Flow control: the engine hands events over only while fewer than `lowWater` bytes wait for the
/// client's socket, keeping the rest unencoded in the stream's outbox; a client that stops reading
/// is cut when that outbox outgrows its bound, and other listeners go on meanwhile.
final class ListenCall: GRPCRequestStream, @unchecked Sendable {
    /// What one `ListenRequest` asks.
    enum Action: Sendable {
        case add(ListenTarget)
        case remove(Int32)
    }

    /// Decodes one `ListenRequest`: its `database` and what it asks (nil: neither add nor remove).
    typealias Decode = @Sendable (_ message: [UInt8]) throws(FirestoreError) -> (database: String, action: Action?)
    /// Encodes one event as a `ListenResponse` (document names in `database`).
    typealias Encode = @Sendable (_ event: ListenEvent, _ database: DatabaseID) -> [UInt8]

    /// Bytes waiting for the socket below which the client takes more events.
    static let lowWater = 1 << 20

    private let engine: ListenEngine
    private let responses: any GRPCResponseStream
    private let decode: Decode
    private var stream: ListenStream!
    // Set by the first request; requests arrive one at a time.
    private var database: DatabaseID?

    init(engine: ListenEngine, caller: Caller, responses: any GRPCResponseStream, decode: @escaping Decode,
         encode: @escaping Encode) {
        self.engine = engine
        self.responses = responses
        self.decode = decode
        // The database is fixed before any event can exist (events follow an add).
        let box = DatabaseBox()
        self.box = box
        stream = engine.open(caller: caller, writable: { [responses] in responses.bufferedBytes < Self.lowWater }) { [responses] events in
            guard let db = box.database else { return false }
            for e in events {
                if case .end(let error) = e {
                    responses.finish(error.grpcStatus)
                    return false
                }
                if !responses.send(encode(e, db)) { return false }
            }
            return true
        }
    }

    private let box: DatabaseBox

    /// The stream's database, read by the sink on the engine's queue after the request thread set it.
    private final class DatabaseBox: @unchecked Sendable {
        private let lock = NSLock()
        private var value: DatabaseID?
        var database: DatabaseID? {
            get { lock.withLock { value } }
            set { lock.withLock { value = newValue } }
        }
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
            case nil:
                // Only labels or the database: nothing to answer.
                break
            }
        } catch {
            engine.close(stream)
            responses.finish(error.grpcStatus)
        }
    }

    func halfClosed() {
        // After what is queued on the engine for this stream, so its answers go out first.
        let responses = self.responses
        engine.finish(stream) { responses.finish(.ok) }
    }

    func cancelled() {
        engine.close(stream)
    }
}
