import Foundation
import HearthCore
import HearthHTTP
@testable import UploadsAPI

/// Token → verification outcome, and a record of how it was asked.
final class FakeTokenVerifier: IDTokenVerifier, @unchecked Sendable {
    // Guarded by `lock`: tests read the calls while handlers record them.
    private let lock = NSLock()
    private var outcomes: [String: Result<VerifiedIDToken, IDTokenError>] = [:]
    private var _calls: [(token: String, projectID: String, checkRevoked: Bool)] = []

    func allow(_ token: String, uid: String) {
        lock.withLock { outcomes[token] = .success(VerifiedIDToken(uid: uid, claims: ["sub": .string(uid)], isSigned: false)) }
    }

    func refuse(_ token: String, _ error: IDTokenError) {
        lock.withLock { outcomes[token] = .failure(error) }
    }

    var calls: [(token: String, projectID: String, checkRevoked: Bool)] { lock.withLock { _calls } }

    func verify(idToken token: String, projectID: String, checkRevoked: Bool) throws(IDTokenError) -> VerifiedIDToken {
        let outcome: Result<VerifiedIDToken, IDTokenError>? = lock.withLock {
            _calls.append((token, projectID, checkRevoked))
            return outcomes[token]
        }
        switch outcome {
        case .success(let v): return v
        case .failure(let e): throw e
        case nil: throw .malformed("unknown test token")
        }
    }
}

/// Objects by bucket and key, and every URL presigned.
final class FakeObjectStore: ObjectStore, @unchecked Sendable {
    struct Presign: Equatable {
        let method: String, bucket: String, key: String, expiresSeconds: Int, signedHeaders: [String: String]
    }
    struct Failure: Error {}

    // Guarded by `lock`.
    private let lock = NSLock()
    private var objects: [String: StoredObjectInfo] = [:]
    private var _buckets: Set<String> = []
    private var _presigns: [Presign] = []
    private var _ensureCount = 0
    var failPresign = false
    var failEnsure = false

    func put(bucket: String = "uploads", key: String, size: Int64, contentType: String, archivedStorageClass: String? = nil) {
        lock.withLock {
            objects[bucket + "\n" + key] = StoredObjectInfo(size: size, contentType: contentType, etag: "\"etag\"",
                                                           lastModified: Instant(unixSeconds: 1_700_000_000),
                                                           archivedStorageClass: archivedStorageClass)
        }
    }

    func deleteBucket(_ bucket: String) { _ = lock.withLock { _buckets.remove(bucket) } }
    var buckets: Set<String> { lock.withLock { _buckets } }
    var presigns: [Presign] { lock.withLock { _presigns } }
    var ensureCount: Int { lock.withLock { _ensureCount } }

    func headObject(bucket: String, key: String) -> StoredObjectInfo? {
        lock.withLock { objects[bucket + "\n" + key] }
    }

    func ensureBucket(_ bucket: String) throws {
        if lock.withLock({ failEnsure }) { throw Failure() }
        lock.withLock {
            _ensureCount += 1
            _buckets.insert(bucket)
        }
    }

    func presignedURL(method: String, bucket: String, key: String, expiresSeconds: Int, signedHeaders: [String: String]) throws -> String {
        try lock.withLock {
            if failPresign { throw Failure() }
            _presigns.append(Presign(method: method, bucket: bucket, key: key, expiresSeconds: expiresSeconds, signedHeaders: signedHeaders))
            let signed = (["host"] + signedHeaders.keys.sorted()).joined(separator: "%3B")
            return "http://127.0.0.1:9000/\(bucket)/\(key)?X-Amz-Expires=\(expiresSeconds)&X-Amz-SignedHeaders=\(signed)&X-Amz-Signature=\(method.lowercased())"
        }
    }
}

/// Documents written, answered in REST form with the clock's time for server timestamps.
final class FakeDocumentStore: DocumentStore, @unchecked Sendable {
    struct Write {
        let projectID: String, path: String, fields: JSONObject, serverTimestampFields: [String]
    }
    struct Failure: Error {}

    // Guarded by `lock`.
    private let lock = NSLock()
    private var _writes: [Write] = []
    let clock: Clock
    var fail = false

    init(clock: Clock) { self.clock = clock }

    var writes: [Write] { lock.withLock { _writes } }

    func setDocument(projectID: String, path: String, fields: JSONObject, serverTimestampFields: [String]) throws -> JSON {
        try lock.withLock {
            if fail { throw Failure() }
            _writes.append(Write(projectID: projectID, path: path, fields: fields, serverTimestampFields: serverTimestampFields))
        }
        let now = clock.now().rfc3339()
        var all = fields
        for f in serverTimestampFields { all[f] = .object(["timestampValue": .string(now)]) }
        return .object([
            "name": .string("projects/\(projectID)/databases/(default)/documents/\(path)"),
            "fields": .object(all),
            "createTime": .string(now),
            "updateTime": .string(now),
        ])
    }
}

/// A service over fresh fakes, with helpers to send requests.
struct Fixture {
    let clock = Clock(frozenAt: Instant(rfc3339: "2025-01-02T03:04:05Z"))
    let ids = IDGenerator(seed: 42)
    let verifier = FakeTokenVerifier()
    let objects = FakeObjectStore()
    let documents: FakeDocumentStore
    let service: UploadsService
    let appCheckTokens: Set<String>

    init(configuration: UploadsConfiguration = UploadsConfiguration(), appCheckTokens: Set<String>? = nil) throws {
        documents = FakeDocumentStore(clock: clock)
        self.appCheckTokens = appCheckTokens ?? []
        var appCheck: (@Sendable (String) -> Bool)? = nil
        if let tokens = appCheckTokens {
            appCheck = { token in tokens.contains(token) }
        }
        service = try UploadsService(clock: clock, ids: ids, logger: Logger(quiet: true, sink: { _ in }), configuration: configuration,
                                     tokenVerifier: verifier, objectStore: objects, documentStore: documents,
                                     appCheckVerifier: appCheck)
        verifier.allow("alice-token", uid: "alice")
        verifier.allow("bob-token", uid: "bob")
    }

    /// Sends a request through the service as the server would (collecting the body).
    func send(_ method: String, _ target: String, token: String? = "alice-token", json: String? = nil,
              headers extra: [(String, String)] = []) -> Response {
        var headers = HTTPHeaders()
        if let token { headers.add("Authorization", "Bearer \(token)") }
        if json != nil { headers.add("Content-Type", "application/json") }
        for (k, v) in extra { headers.add(k, v) }
        return service.http.answer(Request(method: method, target: target, headers: headers, body: Array((json ?? "").utf8)))
    }
}

extension Response {
    /// The body parsed as JSON (`.null` when it is not).
    var json: JSON { (try? JSON.parse(bodyBytes ?? [])) ?? .null }
    /// `error.reason` of an error body.
    var reason: String? { json["error"]?["reason"]?.stringValue }
    /// `error.field` of an error body.
    var field: String? { json["error"]?["field"]?.stringValue }
}
