import Foundation
import HearthCore

/// The logic of one Write stream (what the iOS and Android SDKs send every write through),
/// transport-neutral: the handshake, stream tokens, and one atomic commit per request.
///
/// Requests are handled one at a time in arrival order. The first failing request ends the
/// stream with its status and every later request is ignored, so nothing pipelined after a
/// failure is applied (the SDK resends those batches on a new stream).
final class WriteStreamSession: @unchecked Sendable {
    /// One `WriteRequest`, decoded.
    struct Request: Sendable {
        /// `projects/{p}/databases/{d}`; required on the first request.
        var database: String
        var streamID: String = ""
        var writes: [Write] = []
        var streamToken: [UInt8] = []
    }

    /// One `WriteResponse`.
    struct Response: Sendable, Equatable {
        var streamID: String
        var streamToken: [UInt8]
        /// Nil on the handshake and on an empty request.
        var commitTime: Instant?
        var results: [Result]
    }

    /// One `WriteResult`.
    struct Result: Sendable, Equatable {
        /// The document's new update time, or the commit time for a delete (what the SDKs take
        /// as the version of a deleted document).
        var updateTime: Instant
        var transformResults: [FirestoreValue]
    }

    private let service: FirestoreService
    private let caller: Caller
    let streamID: String
    // Touched only by the serial request callbacks of one stream (and the completion of the
    // commit one of them started, before the next is handed over).
    private(set) var database: DatabaseID?
    private var sequence = 0
    private(set) var ended = false

    init(service: FirestoreService, caller: Caller, streamID: String) {
        self.service = service
        self.caller = caller
        self.streamID = streamID
    }

    /// Answers one request; a thrown error ends the stream with that status. Nil: the stream has
    /// already ended and the request is ignored.
    func handle(_ request: Request) throws(FirestoreError) -> Response? {
        guard !ended else { return nil }
        do {
            return try answer(request)
        } catch {
            ended = true
            throw error
        }
    }

    /// `handle` without holding the calling thread while a commit waits for its batch:
    /// `completion` gets the answer (or the error that ends the stream), once, on this thread or
    /// on the one that committed. The caller hands over the next request only after it. `lead:
    /// false` (a connection's loop thread): the commit is queued, its batch never run here.
    func handle(_ request: Request, lead: Bool = true, completion: @escaping (Swift.Result<Response?, FirestoreError>) -> Void) {
        guard !ended else { return completion(.success(nil)) }
        let step: Step
        do { step = try prepare(request) } catch {
            ended = true
            return completion(.failure(error))
        }
        switch step {
        case .answer(let response):
            completion(.success(response))
        case .commit(let writes, let db):
            service.commit(db, writes: writes, transaction: nil, caller: caller, lead: lead) { [self] result in
                switch result {
                case .success(let (commitTime, outcomes)):
                    completion(.success(committed(commitTime, outcomes)))
                case .failure(let error):
                    ended = true
                    completion(.failure(error))
                }
            }
        }
    }

    /// Marks the stream ended (a request that did not decode, a cancelled call): later requests are ignored.
    func end() { ended = true }

    /// Parses the database a handshake names (the adapter decodes the first request's writes
    /// against it).
    static func database(named name: String) throws(FirestoreError) -> DatabaseID {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "projects", !parts[1].isEmpty, parts[2] == "databases", !parts[3].isEmpty else {
            throw .invalidArgument("Invalid database name: \"\(name)\"; it must look like \"projects/{project_id}/databases/{database_id}\".")
        }
        return DatabaseID(project: String(parts[1]), database: String(parts[3]))
    }

    private func answer(_ request: Request) throws(FirestoreError) -> Response {
        switch try prepare(request) {
        case .answer(let response): return response
        case .commit(let writes, let db): return try commit(writes, db)
        }
    }

    /// What a request needs: an answer at once, or a commit first.
    private enum Step {
        case answer(Response)
        case commit([Write], DatabaseID)
    }

    private func prepare(_ request: Request) throws(FirestoreError) -> Step {
        guard let db = database else {
            // The handshake: a database, no token (streams cannot be resumed), and no writes.
            guard !request.database.isEmpty else {
                throw .invalidArgument("'database' must be set on an initial write request.")
            }
            guard request.streamToken.isEmpty else {
                throw .invalidArgument("Resuming streams is not supported, 'stream_token' must not be set on an initial write request.")
            }
            let db = try Self.database(named: request.database)
            database = db
            if !request.writes.isEmpty {
                // Not what the SDKs do, but a client may write on its first request: commit it.
                return .commit(request.writes, db)
            }
            return .answer(Response(streamID: streamID, streamToken: nextToken(), commitTime: nil, results: []))
        }
        if !request.database.isEmpty, request.database != db.name {
            throw .invalidArgument("The database of a write request (\(request.database)) does not match the stream's (\(db.name)).")
        }
        if request.writes.isEmpty {
            return .answer(Response(streamID: streamID, streamToken: nextToken(), commitTime: nil, results: []))
        }
        return .commit(request.writes, db)
    }

    /// One request's writes as one atomic commit, rules judged per write.
    private func commit(_ writes: [Write], _ db: DatabaseID) throws(FirestoreError) -> Response {
        let (commitTime, outcomes) = try service.commit(db, writes: writes, transaction: nil, caller: caller)
        return committed(commitTime, outcomes)
    }

    /// The answer to a committed request.
    private func committed(_ commitTime: Instant, _ outcomes: [FirestoreService.WriteOutcome]) -> Response {
        let results = outcomes.map { Result(updateTime: $0.updateTime ?? commitTime, transformResults: $0.transformResults) }
        return Response(streamID: streamID, streamToken: nextToken(), commitTime: commitTime, results: results)
    }

    /// Tokens count requests answered, as the official emulator's do ("0", "1", …).
    private func nextToken() -> [UInt8] {
        defer { sequence += 1 }
        return Array(String(sequence).utf8)
    }
}
