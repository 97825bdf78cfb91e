import HearthCore
import HearthGRPC

/// One gRPC Write call: decoded requests go through a `WriteStreamSession`, each answer is
/// sent as it is made, and the first failure ends the call with its status.
///
/// `received` runs on a worker thread, one request at a time (the next only once the previous one's
/// commit has completed), so pipelined batches commit in order and a request after a failure is
/// never decoded, let alone applied.
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
            responses.send(encode(response))
        } catch {
            session.end()
            responses.finish(error.grpcStatus)
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
            responses.finish(error.grpcStatus)
            return done()
        }
        session.handle(request, lead: lead) { [self] result in
            switch result {
            case .success(let response?): responses.send(encode(response))
            case .success(nil): break
            case .failure(let error): responses.finish(error.grpcStatus)
            }
            done()
        }
    }

    func halfClosed() {
        responses.finish(.ok)
    }

    func cancelled() {
        session.end()
    }
}
