import Foundation
import HearthCore
import HearthHTTP

/// What every API handler needs: the database, the caller, the query parameters and the body.
struct RequestContext {
    let request: Request
    let database: DatabaseID
    let caller: Caller
    let service: FirestoreService

    /// Query parameters every Google API accepts besides a method's own.
    static let systemParameters: Set<String> = [
        "alt", "$alt", "key", "prettyPrint", "$prettyPrint", "fields", "$fields", "quotaUser", "access_token",
        "callback", "upload_protocol", "uploadType", "$.xgafv", "oauth_token", "$callback", "pp", "trace",
        "$unique", "userIp", "requestOptions.requestTags",
    ]

    init(request: Request, database: DatabaseID, service: FirestoreService) throws(FirestoreError) {
        self.request = request
        self.database = database
        self.service = service
        var authorization = request.headers[known: .authorization]
        if authorization == nil, let token = request.query("access_token") ?? request.query("oauth_token") {
            authorization = "Bearer " + token
        }
        caller = try Caller.from(authorization: authorization, projectID: database.project,
                                 verifier: service.tokenVerifier, logger: service.logger, known: service.callers,
                                 now: service.clock.now().unixSeconds)
    }

    /// Rejects query parameters the method does not define, as Google's frontends do.
    func allowParameters(_ allowed: Set<String>) throws(FirestoreError) {
        for item in request.queryItems where !allowed.contains(item.name) && !Self.systemParameters.contains(item.name) {
            throw .invalidArgument("Invalid JSON payload received. Unknown name \"\(item.name)\": Cannot bind query parameter. Field '\(item.name)' could not be found in request message.")
        }
    }

    /// Every value of a repeated query parameter.
    func values(_ name: String) -> [String] {
        request.queryItems.filter { $0.name == name }.map { $0.value ?? "" }
    }

    func boolParameter(_ name: String) throws(FirestoreError) -> Bool? {
        guard let v = request.query(name) else { return nil }
        switch v.lowercased() {
        case "true", "1": return true
        case "false", "0", "": return false
        default: throw .invalidArgument("Invalid value at '\(name)' (TYPE_BOOL), \"\(v)\"")
        }
    }

    func intParameter(_ name: String) throws(FirestoreError) -> Int? {
        guard let v = request.query(name) else { return nil }
        guard let i = Int32(v) else { throw .invalidArgument("Invalid value at '\(name)' (TYPE_INT32), \"\(v)\"") }
        return Int(i)
    }

    func timestampParameter(_ name: String) throws(FirestoreError) -> Instant? {
        guard let v = request.query(name) else { return nil }
        guard let t = ValueJSON.parseTimestamp(v) else {
            throw .invalidArgument("Invalid value at '\(name)' (type.googleapis.com/google.protobuf.Timestamp), Field '\(name)', Invalid time format: \(v)")
        }
        return t
    }

    /// `mask.fieldPaths` (or another repeated field path parameter); nil when absent.
    func maskParameter(_ name: String) throws(FirestoreError) -> [FieldPath]? {
        let raw = values(name)
        guard !raw.isEmpty else { return nil }
        var out: [FieldPath] = []
        for r in raw { out.append(try QueryParser.fieldPath(r)) }
        return try WriteParser.validateMask(out)
    }

    /// The JSON body as a message (an empty body is an empty message).
    func body() throws(FirestoreError) -> ProtoObject {
        if request.body.isEmpty || request.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return ProtoObject(JSONObject(), path: "")
        }
        let json: JSON
        do {
            json = try JSON.parse(request.body)
        } catch {
            throw .badJSON(error)
        }
        guard case .object(let o) = json else {
            throw .invalidArgument("Invalid JSON payload received. Expected an object, got \(json.typeName).")
        }
        return ProtoObject(o, path: "")
    }

    /// A transaction id (base64 bytes) from the body or a parameter.
    static func transactionID(_ raw: String) throws(FirestoreError) -> String {
        // The ids Hearth hands out come back as sent: canonical base64 is its own canonical form
        // (the general path costs ~three Foundation string replacements and two conversions).
        if Base64.isCanonical(raw) { return raw }
        guard let bytes = ValueJSON.decodeBase64(raw), !bytes.isEmpty else {
            throw .invalidArgument("Invalid value at 'transaction' (TYPE_BYTES), \"\(raw)\"")
        }
        return Data(bytes).base64EncodedString()
    }

    /// The read consistency of a request body (`transaction`, `newTransaction`, `readTime`).
    func consistency(_ o: ProtoObject) throws(FirestoreError) -> ReadConsistency {
        try Self.consistency(o)
    }

    /// The same, for the gRPC adapter's direct path (it depends on the body alone).
    static func consistency(_ o: ProtoObject) throws(FirestoreError) -> ReadConsistency {
        let set = ["transaction", "newTransaction", "readTime"].filter { o.raw($0) != nil }
        if set.count > 1 {
            throw .invalidArgument("Invalid JSON payload received. Oneof field 'consistency_selector' is already set. Cannot set '\(set[1])'.")
        }
        if let t = try o.string("transaction") { return .transaction(try Self.transactionID(t)) }
        if let n = try o.object("newTransaction") {
            let (readOnly, readTime, _) = try Self.transactionOptions(n)
            // A read's `new_transaction` "defaults to a read-only transaction" (RunQueryRequest,
            // BatchGetDocumentsRequest), where beginTransaction's options default to read-write.
            let mode = n.raw("readOnly") != nil || n.raw("readWrite") != nil
            return .newTransaction(readOnly: readOnly || !mode, readTime: readTime)
        }
        if let r = try o.string("readTime") {
            guard let t = ValueJSON.parseTimestamp(r) else {
                throw .invalidArgument("Invalid value at 'read_time' (type.googleapis.com/google.protobuf.Timestamp), Field 'readTime', Invalid time format: \(r)")
            }
            return .readTime(t)
        }
        return .strong
    }

    /// `TransactionOptions`: read-only (with an optional read time) or read-write (with an optional retried id).
    static func transactionOptions(_ o: ProtoObject) throws(FirestoreError) -> (readOnly: Bool, readTime: Instant?, retrying: String?) {
        try o.requireKnown(["readOnly", "readWrite"])
        if o.raw("readOnly") != nil && o.raw("readWrite") != nil {
            throw .invalidArgument("Invalid JSON payload received. Oneof field 'mode' is already set. Cannot set 'readWrite'.")
        }
        if let ro = try o.object("readOnly") {
            try ro.requireKnown(["readTime"])
            var readTime: Instant?
            if let r = try ro.string("readTime") {
                guard let t = ValueJSON.parseTimestamp(r) else {
                    throw .invalidArgument("Invalid value at '\(ro.childPath("readTime"))' (type.googleapis.com/google.protobuf.Timestamp), Field 'readTime', Invalid time format: \(r)")
                }
                readTime = t
            }
            return (true, readTime, nil)
        }
        if let rw = try o.object("readWrite") {
            try rw.requireKnown(["retryTransaction", "concurrencyMode"])
            return (false, nil, try rw.string("retryTransaction").map { t throws(FirestoreError) in try transactionID(t) })
        }
        return (false, nil, nil)
    }

    /// Whether `prettyPrint=true` asks for indented JSON.
    var pretty: Bool {
        (request.query("prettyPrint") ?? request.query("$prettyPrint")).map { $0 == "true" || $0 == "1" } ?? false
    }

    /// A JSON response.
    func respond(_ json: JSON) -> Response {
        if pretty { return Self.jsonResponse(Array(json.serialized(pretty: true).utf8)) }
        var w = JSONWriter()
        w.json(json)
        return respondPlain(w.bytes)
    }

    /// A response of JSON written by a `JSONWriter` (re-indented when `prettyPrint=true`).
    func respond(_ writer: JSONWriter) -> Response {
        if pretty, let parsed = try? JSON.parse(writer.bytes) {
            return Self.jsonResponse(Array(parsed.serialized(pretty: true).utf8))
        }
        return respondPlain(writer.bytes)
    }

    /// `jsonResponse(bytes)`; for a request without `Origin` with the header fields CORS would
    /// leave it — the same fields in the same order — in one array shared by every such answer
    /// (`FirestoreHTTPService.jsonAnyOrigin`; `withCORS` sees it and keeps it): an answer's own
    /// array and the CORS field's lookup and append were an allocation and ~0.3k instructions a
    /// request.
    private func respondPlain(_ bytes: [UInt8]) -> Response {
        guard request.headers[known: .origin] == nil else { return Self.jsonResponse(bytes) }
        return Response(status: 200, headers: FirestoreHTTPService.jsonAnyOrigin, body: .bytes(bytes))
    }

    /// A document response.
    func respond(document: StoredDocument, mask: [FieldPath]?) -> Response {
        var w = JSONWriter()
        w.document(document, in: database, mask: mask)
        return respond(w)
    }

    static func jsonResponse(_ bytes: [UInt8]) -> Response {
        Response(status: 200, contentType: "application/json; charset=UTF-8", body: bytes)
    }

}
