import Foundation
import HearthCore
import HearthGRPC
import HearthHTTP

/// `google.firestore.v1.Firestore` over gRPC: a thin adapter over the same core the REST API uses.
///
/// Unary and server-streaming calls are decoded into the proto3 JSON of their REST method and
/// answered by the REST adapter's own handler (`FirestoreHTTPService.handle`), so both transports
/// share every check, rules decision and error message; the JSON answer is written back as
/// protobuf. Listen and Write are the realtime engine's streams.
struct FirestoreGRPCService: GRPCService {
    let service: FirestoreService

    var name: String { "google.firestore.v1.Firestore" }

    private typealias Unary = @Sendable (_ request: [UInt8], _ context: GRPCContext) throws(GRPCStatus) -> [UInt8]

    func handler(for method: String) -> GRPCHandler? {
        let rest = RESTBridge(service: service)
        switch method {
        case "GetDocument":
            return rest.unary("GetDocumentRequest", response: "Document", direct: rest.directGet, directIsQuick: true) { o throws(FirestoreError) in
                var q = RESTBridge.maskQuery(o, "mask")
                RESTBridge.consistencyQuery(o, &q)
                let name = o["name"]?.stringValue ?? ""
                // A collection's name is refused (its REST twin, GET on a collection, would list it).
                if (try? ResourcePath.parseName(name))?.1.isDocument == false { _ = try ResourcePath.parseAnyDocumentName(name) }
                return RESTCall(method: "GET", name: name, query: q)
            }
        case "ListDocuments":
            return rest.unary("ListDocumentsRequest", response: "ListDocumentsResponse") { o throws(FirestoreError) in
                var q = RESTBridge.maskQuery(o, "mask")
                RESTBridge.consistencyQuery(o, &q)
                if let n = o["pageSize"], n != .int(0) { q.append(("pageSize", "\(ProtoObject.int64(n) ?? 0)")) }
                for key in ["pageToken", "orderBy"] { if let s = o[key]?.stringValue, !s.isEmpty { q.append((key, s)) } }
                if o["showMissing"]?.boolValue == true { q.append(("showMissing", "true")) }
                try RESTBridge.checkResourceName(o["parent"]?.stringValue ?? "", field: "parent")
                let name = (o["parent"]?.stringValue ?? "") + "/" + (o["collectionId"]?.stringValue ?? "")
                return RESTCall(method: "GET", name: name, query: q)
            }
        case "CreateDocument":
            return rest.unary("CreateDocumentRequest", response: "Document") { o in
                var q = RESTBridge.maskQuery(o, "mask")
                if let id = o["documentId"]?.stringValue, !id.isEmpty { q.append(("documentId", id)) }
                let name = (o["parent"]?.stringValue ?? "") + "/" + (o["collectionId"]?.stringValue ?? "")
                return RESTCall(method: "POST", name: name, query: q, body: o["document"] ?? .object(JSONObject()))
            }
        case "UpdateDocument":
            return rest.unary("UpdateDocumentRequest", response: "Document") { o in
                var q = RESTBridge.maskQuery(o, "mask")
                q += RESTBridge.maskQuery(o, "updateMask")
                RESTBridge.preconditionQuery(o, &q)
                let document = o["document"]?.objectValue ?? JSONObject()
                return RESTCall(method: "PATCH", name: document["name"]?.stringValue ?? "", query: q, body: .object(document))
            }
        case "DeleteDocument":
            return rest.unary("DeleteDocumentRequest", response: nil) { o in
                var q: [(String, String)] = []
                RESTBridge.preconditionQuery(o, &q)
                return RESTCall(method: "DELETE", name: o["name"]?.stringValue ?? "", query: q)
            }
        case "BeginTransaction":
            return rest.verb("BeginTransactionRequest", field: "database", verb: "beginTransaction", response: "BeginTransactionResponse")
        case "Commit":
            return rest.asyncVerb("CommitRequest", field: "database", verb: "commit", response: "CommitResponse", direct: rest.directCommit)
        case "Rollback":
            return rest.verb("RollbackRequest", field: "database", verb: "rollback", response: nil)
        case "BatchWrite":
            return rest.verb("BatchWriteRequest", field: "database", verb: "batchWrite", response: "BatchWriteResponse")
        case "PartitionQuery":
            return rest.verb("PartitionQueryRequest", field: "parent", verb: "partitionQuery", response: "PartitionQueryResponse")
        case "ListCollectionIds":
            return rest.verb("ListCollectionIdsRequest", field: "parent", verb: "listCollectionIds", response: "ListCollectionIdsResponse")
        case "BatchGetDocuments":
            return rest.streamingVerb("BatchGetDocumentsRequest", field: "database", verb: "batchGet",
                                      response: "BatchGetDocumentsResponse", markDone: false, direct: rest.directBatchGet,
                                      quick: rest.quickBatchGet)
        case "RunQuery":
            return rest.streamingVerb("RunQueryRequest", field: "parent", verb: "runQuery", response: "RunQueryResponse", markDone: true,
                                      direct: rest.directRunQuery, quick: rest.quickRunQuery)
        case "RunAggregationQuery":
            return rest.streamingVerb("RunAggregationQueryRequest", field: "parent", verb: "runAggregationQuery",
                                      response: "RunAggregationQueryResponse", markDone: false)
        case "Listen":
            return .bidirectional { ctx, responses in listen(ctx, responses) }
        case "Write":
            return .bidirectional { ctx, responses in write(ctx, responses) }
        case "ExecutePipeline":
            return .unary { _, _ throws(GRPCStatus) in
                throw GRPCStatus(.unimplemented, "Pipeline queries (ExecutePipeline) are not supported by this emulator.")
            }
        default:
            return nil
        }
    }
}

/// The REST request a gRPC call stands for.
struct RESTCall: Sendable {
    var method: String
    /// The resource name (`projects/p/databases/d/documents/…`); percent-encoded into the path.
    var name: String
    /// A custom method (`commit` → `…/documents:commit`).
    var verb: String? = nil
    var query: [(String, String)] = []
    var body: JSON? = nil
}

/// Sends gRPC calls through the REST adapter's handler.
struct RESTBridge: Sendable {
    let service: FirestoreService

    /// A call answered without the REST round trip; nil when the request needs the general path.
    typealias Direct = @Sendable (_ request: [UInt8], _ context: GRPCContext) throws(GRPCStatus) -> [UInt8]?

    /// Runs `body`, turning Firestore errors into their gRPC status.
    func call<T>(_ body: () throws(FirestoreError) -> T) throws(GRPCStatus) -> T {
        do {
            return try body()
        } catch {
            throw error.grpcStatus
        }
    }

    /// Answers one REST request; a non-2xx answer becomes its FirestoreError.
    func send(_ ctx: GRPCContext, _ rest: RESTCall) throws(FirestoreError) -> JSON {
        let (method, query, body) = (rest.method, rest.query, rest.body)
        let path = Self.path(rest.name) + (rest.verb.map { ":" + $0 } ?? "")
        var headers = HTTPHeaders()
        if let auth = ctx["authorization"] { headers.set("Authorization", auth) }
        var bytes: [UInt8] = []
        if let body {
            headers.set("Content-Type", "application/json")
            bytes = body.utf8Bytes
        }
        let rawQuery = query.map { "\(Self.escape($0.0))=\(Self.escape($0.1))" }.joined(separator: "&")
        let request = Request(method: method, rawPath: path, rawQuery: rawQuery, hasQuery: !rawQuery.isEmpty, headers: headers,
                              body: bytes)
        let response = FirestoreHTTPService(service: service).handle(request)
        var out: [UInt8] = []
        if case .bytes(let b) = response.body { out = b }
        let json = out.isEmpty ? JSON.object(JSONObject()) : ((try? JSON.parse(out)) ?? .object(JSONObject()))
        guard (200..<300).contains(response.status) else {
            let error = json["error"]
            let message = error?["message"]?.stringValue ?? "HTTP \(response.status)"
            throw FirestoreError.fromStatus(error?["status"]?.stringValue ?? "", message: message, httpStatus: response.status)
        }
        return json
    }

    /// A unary method: the request decoded, turned into its REST call by `build`, answered by the
    /// REST handler, and the answer encoded as `response` (nil: `Empty`). `direct` answers the forms
    /// it knows straight from the core (see `directGet`) and returns nil for the rest.
    ///
    /// `directIsQuick`: `direct` only reads (a bounded amount, never waiting for the writer), so it may
    /// answer on the connection's loop thread (`GRPCHandler.unaryQuick`) — unless reads share the
    /// writer's connection (an in-memory database), where a read waits for any commit in progress.
    func unary(_ request: String, response: String?, direct: Direct? = nil, directIsQuick: Bool = false,
               _ build: @escaping @Sendable (JSONObject) throws(FirestoreError) -> RESTCall) -> GRPCHandler {
        let general = throughREST(request, response: response, build)
        guard let direct else { return .unary(general) }
        if directIsQuick && service.storage.database.path != nil { return .unaryQuick(quick: direct, run: general) }
        return .unary { bytes, ctx throws(GRPCStatus) in
            if let answer = try direct(bytes, ctx) { return answer }
            return try general(bytes, ctx)
        }
    }

    /// A unary call answered by the REST handler (see `unary`).
    private func throughREST(_ request: String, response: String?, _ build: @escaping @Sendable (JSONObject) throws(FirestoreError) -> RESTCall)
        -> @Sendable ([UInt8], GRPCContext) throws(GRPCStatus) -> [UInt8] {
        { bytes, ctx throws(GRPCStatus) in
            try call { () throws(FirestoreError) in
                let json = try send(ctx, try build(try ProtoJSON.decode(bytes, FirestoreSchemas.v1 + request)))
                guard let response else { return [] }
                return ProtoJSON.encode(json.objectValue ?? JSONObject(), FirestoreSchemas.v1 + response)
            }
        }
    }

    /// A call answered later without the REST round trip (`GRPCHandler.unaryAsyncQuick`); false when
    /// the request needs the general path (then it has not called `reply`). `lead`: whether this
    /// thread may run the write batch itself (false on a connection's loop thread).
    typealias DirectAsync = @Sendable (_ request: [UInt8], _ context: GRPCContext, _ lead: Bool,
                                       _ reply: @escaping @Sendable (Result<[UInt8], GRPCStatus>) -> Void) -> Bool

    /// `verb` whose `direct` answers without holding a thread while it waits for the writer (Commit):
    /// started on the connection's loop thread, which queues the commit and goes on reading (no
    /// worker is woken per call); the general path, and requests `direct` leaves, on a worker.
    func asyncVerb(_ request: String, field: String, verb: String, response: String?, direct: @escaping DirectAsync) -> GRPCHandler {
        let general = throughREST(request, response: response) { o throws(FirestoreError) in
            try Self.customMethod(o, request: request, field: field, verb: verb)
        }
        return .unaryAsyncQuick(start: { bytes, ctx, reply in direct(bytes, ctx, false, reply) }, run: { bytes, ctx, reply in
            if direct(bytes, ctx, true, reply) { return }
            do throws(GRPCStatus) { reply(.success(try general(bytes, ctx))) } catch { reply(.failure(error)) }
        })
    }

    /// A unary custom method: `POST /v1/{field}/documents:verb` (or `/v1/{parent}:verb`).
    func verb(_ request: String, field: String, verb: String, response: String?, direct: Direct? = nil) -> GRPCHandler {
        unary(request, response: response, direct: direct) { o throws(FirestoreError) in try Self.customMethod(o, request: request, field: field, verb: verb) }
    }

    /// A server-streaming custom method whose REST answer is an array: one message per element
    /// (`done` set on the last for RunQuery, as Firestore does). `quick` answers the small, common
    /// requests on the connection's loop thread (`GRPCHandler.serverStreamingQuick`; as `unary`'s
    /// `directIsQuick`, not when reads share the writer's connection, an in-memory database).
    func streamingVerb(_ request: String, field: String, verb: String, response: String, markDone: Bool,
                       direct: DirectStream? = nil, quick: QuickStream? = nil) -> GRPCHandler {
        let run = streaming(request, field: field, verb: verb, response: response, markDone: markDone, direct: direct)
        if let quick, service.storage.database.path != nil { return .serverStreamingQuick(quick: quick, run: run) }
        return .serverStreaming(run)
    }

    /// A server-streaming call started on the loop thread (see `GRPCHandler.serverStreamingQuick`).
    typealias QuickStream = @Sendable (_ request: [UInt8], _ context: GRPCContext) throws(GRPCStatus) -> GRPCQuickStream?

    private func streaming(_ request: String, field: String, verb: String, response: String, markDone: Bool,
                           direct: DirectStream?) -> @Sendable ([UInt8], GRPCContext, any GRPCResponseStream) throws(GRPCStatus) -> Void {
        { bytes, ctx, responses throws(GRPCStatus) in
            if let direct, try direct(bytes, ctx, responses) { return }
            let json = try call { () throws(FirestoreError) in
                let o = try ProtoJSON.decode(bytes, FirestoreSchemas.v1 + request)
                return try send(ctx, try Self.customMethod(o, request: request, field: field, verb: verb))
            }
            var items = json.arrayValue ?? []
            if markDone, !items.isEmpty, case .object(let last) = items[items.count - 1], last["done"] == nil {
                items[items.count - 1] = .object(JSONObject(last.members + [("done", .bool(true))]))
            }
            for item in items {
                guard responses.waitUntilWritable() else { return }
                responses.send(ProtoJSON.encode(item.objectValue ?? JSONObject(), FirestoreSchemas.v1 + response))
            }
        }
    }

    /// The REST call of a custom method: the resource named by `field`, the rest of the request as the body.
    private static func customMethod(_ o: JSONObject, request: String, field: String, verb: String) throws(FirestoreError) -> RESTCall {
        let target = o[field]?.stringValue ?? ""
        try checkResourceName(target, field: field)
        let body = JSONObject(o.members.filter { $0.0 != field })
        return RESTCall(method: "POST", name: field == "database" ? target + "/documents" : target, verb: verb, body: .object(body))
    }

    /// A request's `database` (`projects/{p}/databases/{d}`) or `parent` (the database's
    /// `documents` or a document under it) checked as the official emulator checks it, in its
    /// words ("Database name \"projects/x\" lacks \"/\" at index 10.", "Document parent name …"),
    /// before it becomes a REST path that no route would take.
    static func checkResourceName(_ name: String, field: String) throws(FirestoreError) {
        if field == "database" {
            try ResourcePath.checkPattern(name, ResourcePath.splitSlashes(name), pieces: 4, kind: "Database name")
            return
        }
        let (_, path) = try ResourcePath.parseNameInPieces(name, kind: "Document parent name")
        if !path.segments.isEmpty, !path.isDocument {
            throw .invalidArgument("Document parent name \"\(name)\" lacks \"/\" at index \(name.utf8.count).")
        }
    }

    /// `/v1/` and the resource name, each segment percent-encoded.
    static func path(_ name: String) -> String {
        "/v1/" + name.split(separator: "/", omittingEmptySubsequences: false).map { escape(String($0)) }.joined(separator: "/")
    }

    private static let unreserved: CharacterSet = {
        var s = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        s.insert(charactersIn: "-._~()")
        return s
    }()

    static func escape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? s
    }

    /// `mask.fieldPaths=…` parameters of the message's `DocumentMask` field `field`.
    static func maskQuery(_ o: JSONObject, _ field: String) -> [(String, String)] {
        guard case .object(let mask)? = o[field] else { return [] }
        let paths = mask["fieldPaths"]?.arrayValue ?? []
        // An empty mask still selects (no fields), so it is sent as one empty path list.
        return paths.compactMap { $0.stringValue }.map { ("\(field).fieldPaths", $0) }
    }

    static func consistencyQuery(_ o: JSONObject, _ q: inout [(String, String)]) {
        if let t = o["transaction"]?.stringValue { q.append(("transaction", t)) }
        if let t = o["readTime"]?.stringValue { q.append(("readTime", t)) }
    }

    static func preconditionQuery(_ o: JSONObject, _ q: inout [(String, String)]) {
        guard case .object(let p)? = o["currentDocument"] else { return }
        if let e = p["exists"]?.boolValue { q.append(("currentDocument.exists", e ? "true" : "false")) }
        if let t = p["updateTime"]?.stringValue { q.append(("currentDocument.updateTime", t)) }
    }
}
