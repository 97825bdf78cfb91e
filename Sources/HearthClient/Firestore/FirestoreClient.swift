import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cloud Firestore over its REST API (v1), against Hearth/the Firestore emulator or production,
/// with Codable documents.
///
/// Related: https://firebase.google.com/docs/firestore/reference/rest
public struct FirestoreClient: Sendable {
    /// Where the API lives.
    public enum Endpoint: Sendable, Equatable {
        /// `https://firestore.googleapis.com`.
        case production
        /// An emulator base URL (`http://127.0.0.1:8080`).
        case emulator(URL)
    }

    public let endpoint: Endpoint
    public let projectID: String
    public let databaseID: String
    /// The credential sent with every request (an ID token, `.owner` on emulators, or none).
    public let token: BearerToken
    let transport: HTTPTransport

    public init(endpoint: Endpoint, projectID: String, databaseID: String = "(default)", token: BearerToken = .none,
                session: URLSession = .shared) {
        self.endpoint = endpoint
        self.projectID = projectID
        self.databaseID = databaseID
        self.token = token
        transport = HTTPTransport(session: session)
    }

    /// A client for the emulator at `emulatorURL`.
    public init(emulatorURL: URL, projectID: String, token: BearerToken = .none, session: URLSession = .shared) {
        self.init(endpoint: .emulator(emulatorURL), projectID: projectID, token: token, session: session)
    }

    /// The same client with another credential.
    public func with(token: BearerToken) -> FirestoreClient {
        FirestoreClient(endpoint: endpoint, projectID: projectID, databaseID: databaseID, token: token, session: transport.session)
    }

    /// `projects/{p}/databases/{d}`.
    public var databaseRoot: String { "projects/\(projectID)/databases/\(databaseID)" }

    // MARK: Reads

    /// The document at `path`, or nil when it does not exist.
    /// - Throws: `HearthClientError.api` (`PERMISSION_DENIED` with the rules' message when refused).
    public func document(at path: String) async throws -> FirestoreDocument? {
        let ref = try DocumentReference(path)
        let result = try await send("GET", "/documents/" + URLBuilder.escapePath(ref.path))
        if result.status == 404, case .api(let e) = HearthClientError.from(result, method: "GET"), e.status == "NOT_FOUND" { return nil }
        guard result.isSuccess else { throw HearthClientError.from(result, method: "GET") }
        return try WireJSON.decode(FirestoreDocument.self, from: result, what: "document")
    }

    /// The document at `path` decoded as `T`, or nil when it does not exist.
    public func get<T: Decodable>(_ type: T.Type, at path: String) async throws -> T? {
        guard let doc = try await document(at: path) else { return nil }
        do { return try doc.data(as: type) } catch { throw HearthClientError.decoding("\(path) as \(T.self): \(error)") }
    }

    /// The documents `query` matches, in order.
    public func query(_ query: Query) async throws -> [FirestoreDocument] {
        var path = "/documents"
        if let parent = query.parent { path += "/" + URLBuilder.escapePath(try DocumentReference(parent).path) }
        let body = try WireJSON.encode(AnyJSON.object(["structuredQuery": query.structuredQuery]))
        let result = try await send("POST", path + ":runQuery", body: body)
        guard result.isSuccess else { throw HearthClientError.from(result, method: "POST") }
        let items = try WireJSON.decode([RunQueryItem].self, from: result, what: "runQuery response")
        if let failure = items.first(where: { $0.error != nil })?.error {
            throw HearthClientError.api(GoogleAPIError(httpStatus: result.status, code: failure.code, status: failure.status,
                                                       message: failure.message ?? "", rawBody: result.bodyText))
        }
        return items.compactMap(\.document)
    }

    /// The documents `query` matches, decoded as `T`.
    public func query<T: Decodable>(_ type: T.Type, _ query: Query) async throws -> [T] {
        try await self.query(query).map { doc in
            do { return try doc.data(as: type) } catch { throw HearthClientError.decoding("\(doc.path) as \(T.self): \(error)") }
        }
    }

    // MARK: Writes

    /// An empty batch for this database.
    public func batch() -> WriteBatch { WriteBatch(databaseRoot: databaseRoot) }

    /// Commits `batch` atomically.
    /// - Throws: `HearthClientError.api`: `PERMISSION_DENIED` (rules), `NOT_FOUND` (update of a missing
    ///   document), `ALREADY_EXISTS` (create of an existing one), `INVALID_ARGUMENT`, …
    @discardableResult
    public func commit(_ batch: WriteBatch) async throws -> CommitResult {
        let body = try WireJSON.encode(AnyJSON.object(["writes": .array(batch.writes)]))
        let result = try await send("POST", "/documents:commit", body: body)
        guard result.isSuccess else { throw HearthClientError.from(result, method: "POST") }
        let r = try WireJSON.decode(CommitResponse.self, from: result, what: "commit response")
        return CommitResult(commitTime: r.commitTime, writeResults: r.writeResults ?? [])
    }

    /// Writes the document at `path` (replacing it, or merging with `merge`).
    @discardableResult
    public func set<T: Encodable>(_ value: T, at path: String, merge: Bool = false) async throws -> CommitResult {
        var b = batch()
        try b.set(value, at: path, merge: merge)
        return try await commit(b)
    }

    /// Creates the document at `path`; fails with ALREADY_EXISTS when it exists.
    @discardableResult
    public func create<T: Encodable>(_ value: T, at path: String) async throws -> CommitResult {
        var b = batch()
        try b.create(value, at: path)
        return try await commit(b)
    }

    /// Creates a document with an auto-generated id (20 letters and digits, as the SDKs make them) in the collection.
    @discardableResult
    public func add<T: Encodable>(_ value: T, to collectionPath: String) async throws -> DocumentReference {
        let ref = try DocumentReference(collectionPath + "/" + FirestoreClient.autoID())
        try await create(value, at: ref.path)
        return ref
    }

    /// Updates the fields `value` encodes; the document must exist.
    @discardableResult
    public func update<T: Encodable>(_ value: T, at path: String) async throws -> CommitResult {
        var b = batch()
        try b.update(value, at: path)
        return try await commit(b)
    }

    /// Updates fields by (dotted) path: `["status": "ready", "meta.size": 12, "at": FieldValue.serverTimestamp]`.
    @discardableResult
    public func update(at path: String, fields: [String: any Encodable & Sendable]) async throws -> CommitResult {
        var b = batch()
        try b.update(at: path, fields: fields)
        return try await commit(b)
    }

    /// Deletes the document.
    @discardableResult
    public func delete(at path: String, mustExist: Bool = false) async throws -> CommitResult {
        var b = batch()
        try b.delete(at: path, mustExist: mustExist)
        return try await commit(b)
    }

    /// A random document id: 20 characters from `[A-Za-z0-9]`.
    public static func autoID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var g = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &g)] })
    }

    // MARK: Plumbing

    func send(_ method: String, _ suffix: String, body: Data? = nil) async throws(HearthClientError) -> HTTPResult {
        let base: URL
        switch endpoint {
        case .production:
            guard let u = URL(string: "https://firestore.googleapis.com") else { throw .invalidArgument("base URL") }
            base = u
        case .emulator(let u): base = u
        }
        let url = try URLBuilder.url(base, "/v1/" + URLBuilder.escapePath(databaseRoot) + suffix)
        var headers = try await token.headers()
        if body != nil { headers["Content-Type"] = "application/json" }
        return try await transport.send(method, url, headers: headers, body: body)
    }

    struct CommitResponse: Decodable {
        let writeResults: [WriteResult]?
        let commitTime: Timestamp?
    }

    struct RunQueryItem: Decodable {
        let document: FirestoreDocument?
        let error: InlineError?
    }

    struct InlineError: Decodable {
        let code: Int?
        let message: String?
        let status: String?
    }
}
