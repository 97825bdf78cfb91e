import Foundation
import HearthCore
import HearthHTTP
import HearthSQLite
@testable import StorageEmulator

/// Test tokens: the token text is the uid ("alice"), any other shape is refused.
struct FakeVerifier: IDTokenVerifier {
    func verify(idToken token: String, projectID: String, checkRevoked: Bool) throws(IDTokenError) -> VerifiedIDToken {
        guard token.allSatisfy(\.isLetter) else { throw .malformed("not a test token") }
        return VerifiedIDToken(uid: token, claims: ["sub": .string(token)], isSigned: false)
    }
}

/// A fresh in-memory Storage emulator per test, driven through `dispose` as the server does.
struct StorageHarness {
    static let rules = """
    rules_version = '2';
    service firebase.storage {
      match /b/{bucket}/o {
        match /users/{uid}/{file} {
          allow read: if request.auth != null && request.auth.uid == uid;
          allow write: if request.auth != null && request.auth.uid == uid
            && request.resource.size < 1000 && request.resource.contentType.matches('image/.*');
        }
      }
    }
    """

    let service: StorageService
    let database: Database
    static let bucket = "demo.appspot.com"

    init(rules: String = StorageHarness.rules, logger: Logger = Logger(quiet: true)) throws {
        database = try Database(path: nil)
        try database.migrate(StorageService.migrations)
        service = try StorageService(database: database, clock: Clock(frozenAt: Instant(unixSeconds: 1_767_225_600)), ids: IDGenerator(seed: 1),
                                     logger: logger, configuration: StorageConfiguration(projectID: "demo", defaultBuckets: [Self.bucket], rulesSource: rules),
                                     tokenVerifier: FakeVerifier(), firestore: nil)
    }

    /// Sends a request; the body streams in `chunkSize` pieces, and `abandonAfter` cuts it off.
    func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
              chunkSize: Int = 65_536, abandonAfter: Int? = nil) -> TestResponse {
        var h = HTTPHeaders()
        h.set("Host", "127.0.0.1:9199")
        for (k, v) in headers { h.set(k, v) }
        let request = Request(method: method, target: target, headers: h, body: body)
        switch service.dispose(request) {
        case .respond(let r): return TestResponse(r)
        case .collect(let limit, let tooLarge, let handler): return TestResponse(body.count > limit ? tooLarge : handler(request))
        case .collectDeferred(let limit, let tooLarge, let handler):
            return TestResponse(body.count > limit ? tooLarge : DeferredAnswer.wait { handler(request, $0) })
        case .stream(let consumer):
            var offset = 0
            while offset < body.count {
                if let abandonAfter, offset >= abandonAfter {
                    consumer.abandon()
                    return TestResponse(Response(status: 0))
                }
                let end = min(offset + chunkSize, body.count)
                body[offset..<end].withUnsafeBytes { consumer.consume($0) }
                offset = end
            }
            return TestResponse(consumer.finish())
        }
    }

    static func bytes(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) } }

    func count(_ table: String) throws -> Int64 {
        try database.read { c in try c.scalarInt("SELECT count(*) FROM \(table)") } ?? -1
    }
}

struct TestResponse {
    let status: Int
    let headers: HTTPHeaders
    let body: [UInt8]

    init(_ r: Response) {
        status = r.status
        headers = r.headers
        switch r.body {
        case .empty: body = []
        case .bytes(let b): body = b
        case .stream(_, let source):
            var out = [UInt8](), buffer = [UInt8](repeating: 0, count: 40_000)
            while let n = try? buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), n > 0 { out += buffer[0..<n] }
            source.close()
            body = out
        case .push(let source):  // the hub's server-sent events only
            source.close()
            body = []
        }
    }

    var json: JSON { (try? JSON.parse(body)) ?? .null }
}
