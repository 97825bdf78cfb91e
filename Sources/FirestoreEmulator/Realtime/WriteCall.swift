import Foundation
import HearthCore
import HearthGRPC

/// One gRPC Write call: decoded requests go through a `WriteStreamSession`, each answer is
/// sent in the order it was made, and the first failure ends the call with its status.
///
/// `received` runs on a worker thread, one request at a time (the next only once the previous one's
/// commit has completed), so pipelined batches commit in order and a request after a failure is
/// never decoded, let alone applied.
///
/// Answers are encoded and sent on the connection's own thread (`produceSoon`), not where they
/// are made: a commit's answer is made on the single writer, inside its batch, and encoding it
/// there (a `WriteResponse` through proto3 JSON) was ~12% of the writer's time on the 16-stream
/// Write row (perf, docs/benchmarks.md grpccpu) — serial time every commit waited for, while the
/// loop that sends the answer had a core to spare.
final class WriteCall: GRPCRequestStream, @unchecked Sendable {
    /// Decodes one `WriteRequest`; `database` is the stream's once the handshake named it (the
    /// writes' document names are checked against it).
    typealias Decode = @Sendable (_ message: [UInt8], _ database: DatabaseID?) throws(FirestoreError) -> WriteStreamSession.Request
    /// Encodes one `WriteResponse`.
    typealias Encode = @Sendable (_ response: WriteStreamSession.Response) -> [UInt8]

    private let session: WriteStreamSession
    private let responses: any GRPCResponseStream
    private let decode: Decode
    private let encode: Encode

    /// What the call still has to send, in order: an answer, or the call's end (after every answer
    /// made before it).
    private enum Outgoing {
        case response(WriteStreamSession.Response)
        case end(GRPCStatus)
    }

    private let queueLock = NSLock()
    /// Under `queueLock`.
    private var outgoing: [Outgoing] = []
    /// Held while a producer pass sends: a response side without a thread of its own produces on
    /// the caller's thread, and two callers must not send their batches out of order.
    private let sendLock = NSLock()

    init(session: WriteStreamSession, responses: any GRPCResponseStream, decode: @escaping Decode, encode: @escaping Encode) {
        self.session = session
        self.responses = responses
        self.decode = decode
        self.encode = encode
    }

    func received(_ message: [UInt8]) {
        guard !session.ended, !responses.isClosed else { return }
        do throws(FirestoreError) {
            let request = try decode(message, session.database)
            guard let response = try session.handle(request) else { return }
            enqueue(.response(response))
        } catch {
            session.end()
            enqueue(.end(error.grpcStatus))
        }
    }

    /// The same without holding the worker while the commit waits for its batch: the answer (or
    /// the failure) goes out from the commit's completion, and `done` hands over the next request.
    func received(_ message: [UInt8], done: @escaping @Sendable () -> Void) {
        received(message, lead: true, done: done)
    }

    /// Requests are decoded and their commits queued on the connection's loop thread: a worker
    /// woken per request (and a drainer's hand-off after it) cost more than the decoding.
    var takesMessagesOnLoop: Bool { true }

    func receivedOnLoop(_ message: [UInt8], done: @escaping @Sendable () -> Void) {
        received(message, lead: false, done: done)
    }

    private func received(_ message: [UInt8], lead: Bool, done: @escaping @Sendable () -> Void) {
        guard !session.ended, !responses.isClosed else { return done() }
        let request: WriteStreamSession.Request
        do throws(FirestoreError) { request = try decode(message, session.database) } catch {
            session.end()
            enqueue(.end(error.grpcStatus))
            return done()
        }
        // A failure has ended the session already (`handle`), so a request pipelined behind it is
        // ignored even before the loop sends the call's end.
        session.handle(request, lead: lead) { [self] result in
            switch result {
            case .success(let response?): enqueue(.response(response))
            case .success(nil): break
            case .failure(let error): enqueue(.end(error.grpcStatus))
            }
            done()
        }
    }

    func halfClosed() {
        enqueue(.end(.ok))
    }

    /// Queues `item` for the connection's thread, which encodes and sends what is queued in order.
    private func enqueue(_ item: Outgoing) {
        queueLock.withLock { outgoing.append(item) }
        // The same closure every time (the first is kept); it holds this call until the stream
        // closes, which lets it go, so an answer queued after the request side let go still leaves.
        responses.produceSoon { [self] in produce() }
    }

    /// Encodes and sends everything queued so far (the connection's thread).
    private func produce() {
        sendLock.lock()
        defer { sendLock.unlock() }
        let batch = queueLock.withLock {
            let b = outgoing
            outgoing = []
            return b
        }
        for item in batch {
            switch item {
            case .response(let response): responses.send(encode(response))
            case .end(let status): responses.finish(status)
            }
        }
    }

    func cancelled() {
        session.end()
    }
}
