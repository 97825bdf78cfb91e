import Foundation
import HearthCore
import HearthHTTP
import HearthSQLite
@testable import FirestoreEmulator

/// Decodes unsigned JWTs made by `TestHarness.token`, as a stand-in for the auth emulator's verifier.
struct TestVerifier: IDTokenVerifier {
    func verify(idToken token: String, projectID: String, checkRevoked: Bool) throws(IDTokenError) -> VerifiedIDToken {
        guard let claims = Caller.decodeUnverified(token), let uid = claims["sub"]?.stringValue else {
            throw .malformed("not a test token")
        }
        return VerifiedIDToken(uid: uid, claims: claims, isSigned: false)
    }
}

/// A fresh in-memory Firestore per test, called through its HTTP service without a socket.
final class TestHarness: @unchecked Sendable {
    let service: FirestoreService
    let clock: Clock
    let database: Database
    let project: String
    var logLines: [String] { logBox.lines }
    private let logBox = LogBox()

    final class LogBox: @unchecked Sendable {
        private let lock = NSLock()
        private var _lines: [String] = []
        var lines: [String] { lock.lock(); defer { lock.unlock() }; return _lines }
        func append(_ s: String) { lock.lock(); _lines.append(s); lock.unlock() }
    }

    init(rules: String? = nil, rulesPath: String? = nil, project: String = "demo-test", watch: Bool = false,
         databasePath: String? = nil, database opened: Database? = nil) throws {
        if let opened {
            database = opened  // already migrated
        } else {
            database = try Database(path: databasePath, layout: FirestoreService.databaseLayout)
            try database.migrate(FirestoreService.migrations)
        }
        clock = Clock(frozenAt: Instant(rfc3339: "2026-01-02T03:04:05.123456Z")!)
        self.project = project
        let box = logBox
        let logger = Logger(format: .text, quiet: false, clock: clock, sink: { box.append($0) })
        service = FirestoreService(database: database, clock: clock, ids: IDGenerator(seed: 7), logger: logger,
                                   configuration: FirestoreConfiguration(projectID: project, rulesPath: rulesPath,
                                                                         rulesSource: rules, watchRules: watch),
                                   tokenVerifier: TestVerifier())
    }

    /// `projects/{p}/databases/(default)/documents`.
    var root: String { "projects/\(project)/databases/(default)/documents" }

    /// Registers `fields` of `collectionID` for indexing and builds their rows, as a query needing
    /// them does first (`FirestoreStorage.buildFields`; nothing happens before the database's first write).
    func indexFields(_ collectionID: String, _ fields: [String]) throws {
        try service.storage.buildFields(DatabaseID(project: project, database: "(default)"), collectionID: collectionID, fields: fields)
    }

    /// Registers every (collection id, field) pair `other` has registered (`fs_index_fields`).
    func indexFields(like other: Database) throws {
        let pairs = try other.read { try $0.rows("SELECT collection_id, field FROM fs_index_fields") { ($0.text(0), $0.text(1)) } }
        for (c, f) in pairs { try indexFields(c, [f]) }
    }

    /// The fields of `collectionID` registered for indexing in this harness's database.
    func indexedFields(_ collectionID: String) throws -> Set<ExactString> {
        try database.read { conn in
            Set(try conn.rows("SELECT field FROM fs_index_fields WHERE collection_id = ?", [collectionID]) { ExactString($0.text(0)) })
        }
    }

    /// An unsigned JWT for `uid`, shaped like the rules-unit-testing mock tokens.
    static func token(_ uid: String, extra: [(String, JSON)] = []) -> String {
        let header = Data(#"{"alg":"none","type":"JWT"}"#.utf8)
        var claims: [(String, JSON)] = [("sub", .string(uid)), ("user_id", .string(uid)), ("iat", .int(0)), ("exp", .int(3600)),
                                        ("firebase", .object(["sign_in_provider": .string("custom"), "identities": .object([:])]))]
        claims.append(contentsOf: extra)
        let payload = Data(JSON.object(JSONObject(claims)).serialized().utf8)
        return base64url(header) + "." + base64url(payload) + "."
    }

    static func base64url(_ d: Data) -> String {
        d.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Who calls: the admin (`Bearer owner`), a user, nobody, or a raw header.
    enum As {
        case owner, user(String), anonymous, header(String)
    }

    /// Sends a request to the service; `path` is relative to the server root. `text` is a body as
    /// written, for what a `JSON` cannot hold (`1e400` serializes as `null`).
    @discardableResult
    func call(_ method: String, _ target: String, _ body: JSON? = nil, as who: As = .owner, headers extra: [(String, String)] = [],
              text: String? = nil) -> (status: Int, json: JSON, response: Response) {
        var headers = HTTPHeaders()
        switch who {
        case .owner: headers.add("Authorization", "Bearer owner")
        case .user(let uid): headers.add("Authorization", "Bearer " + TestHarness.token(uid))
        case .anonymous: break
        case .header(let h): headers.add("Authorization", h)
        }
        for (k, v) in extra { headers.add(k, v) }
        let bytes = text.map { Array($0.utf8) } ?? body.map { Array($0.serialized().utf8) } ?? []
        let request = Request(method: method, target: target, headers: headers, body: bytes)
        let response: Response
        switch service.http.dispose(request) {
        case .respond(let r): response = r
        case .collect(let limit, let tooLarge, let handler): response = bytes.count > limit ? tooLarge : handler(request)
        case .collectDeferred(let limit, let tooLarge, let handler):
            response = bytes.count > limit ? tooLarge : DeferredAnswer.wait { handler(request, $0) }
        case .stream: fatalError("Firestore never streams request bodies")
        }
        let data = response.bodyBytes ?? []
        let json = (try? JSON.parse(data)) ?? .string(String(decoding: data, as: UTF8.self))
        return (response.status, json, response)
    }

    /// `/v1/projects/{p}/databases/(default)/documents` + `suffix`.
    func api(_ suffix: String) -> String { "/v1/" + root + suffix }

    /// Writes a document through commit as the owner; fields as Swift literals.
    @discardableResult
    func put(_ path: String, _ fields: [String: JSON]) -> JSON {
        let r = call("PATCH", api("/" + path), .object(["fields": .object(JSONObject(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))]))
        precondition(r.status == 200, "put \(path) failed: \(r.json)")
        return r.json
    }

    /// Runs a structured query as `who`; returns status, names of returned documents, and the JSON.
    func query(_ structured: JSON, parent: String = "", as who: As = .owner) -> (status: Int, ids: [String], json: JSON) {
        let r = call("POST", api(parent + ":runQuery"), .object(["structuredQuery": structured]), as: who)
        let ids = (r.json.arrayValue ?? []).compactMap { $0["document"]?["name"]?.stringValue }.map { String($0.split(separator: "/").last ?? "") }
        return (r.status, ids, r.json)
    }
}

// MARK: Value literals

func str(_ s: String) -> JSON { .object(["stringValue": .string(s)]) }
func int(_ i: Int64) -> JSON { .object(["integerValue": .string(String(i))]) }
func dbl(_ d: Double) -> JSON { .object(["doubleValue": .double(d)]) }
func bool(_ b: Bool) -> JSON { .object(["booleanValue": .bool(b)]) }
let nullV: JSON = .object(["nullValue": .null])
func ts(_ s: String) -> JSON { .object(["timestampValue": .string(s)]) }
func arr(_ vs: [JSON]) -> JSON { .object(["arrayValue": .object(["values": .array(vs)])]) }
func map(_ m: [(String, JSON)]) -> JSON { .object(["mapValue": .object(["fields": .object(JSONObject(m))])]) }

/// A field filter.
func ff(_ field: String, _ op: String, _ value: JSON) -> JSON {
    .object(["fieldFilter": .object(["field": .object(["fieldPath": .string(field)]), "op": .string(op), "value": value])])
}

func uf(_ field: String, _ op: String) -> JSON {
    .object(["unaryFilter": .object(["field": .object(["fieldPath": .string(field)]), "op": .string(op)])])
}

func composite(_ op: String, _ filters: [JSON]) -> JSON {
    .object(["compositeFilter": .object(["op": .string(op), "filters": .array(filters)])])
}

func order(_ field: String, _ dir: String = "ASCENDING") -> JSON {
    .object(["field": .object(["fieldPath": .string(field)]), "direction": .string(dir)])
}

/// A structured query on `collection`.
func sq(_ collection: String, allDescendants: Bool = false, where w: JSON? = nil, orderBy: [JSON] = [], limit: Int? = nil, offset: Int? = nil,
        startAt: JSON? = nil, endAt: JSON? = nil, select: [String]? = nil) -> JSON {
    var o: [(String, JSON)] = [("from", .array([.object(["collectionId": .string(collection), "allDescendants": .bool(allDescendants)])]))]
    if let w { o.append(("where", w)) }
    if !orderBy.isEmpty { o.append(("orderBy", .array(orderBy))) }
    if let limit { o.append(("limit", .int(Int64(limit)))) }
    if let offset { o.append(("offset", .int(Int64(offset)))) }
    if let startAt { o.append(("startAt", startAt)) }
    if let endAt { o.append(("endAt", endAt)) }
    if let select { o.append(("select", .object(["fields": .array(select.map { .object(["fieldPath": .string($0)]) })]))) }
    return .object(JSONObject(o))
}
