import HearthCore
import HearthGRPC

/// One gRPC Write call: decoded requests go through a `WriteStreamSession`, each answer is
/// sent as it is made, and the first failure ends the call with its status.
///
/// `received` runs on a worker thread, one request at a time, so pipelined batches commit in
/// order and a request after a failure is never decoded, let alone applied.
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

    func halfClosed() {
        responses.finish(.ok)
    }

    func cancelled() {
        session.end()
    }
}
