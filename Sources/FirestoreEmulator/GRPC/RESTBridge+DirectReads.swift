import Foundation
import HearthCore
import HearthGRPC
import HearthProtobuf

/// BatchGetDocuments and RunQuery answered by the core directly, as GetDocument and Commit are
/// (`RESTBridge+Direct.swift`): the request's proto3 JSON goes to the same parsers and core methods
/// the REST handlers call, in the same order (name checks, the caller, the method's checks), and the
/// answers are written as protobuf straight from the documents — the bytes the general path makes
/// from the REST JSON (`DirectReadsTests` compares the two), without rendering and re-reading it.
/// A document without a mask or projection is answered with its encoding kept per version by the
/// read cache (`DocumentCache.proto(of:)`, the bytes a gRPC get answers with), made once for
/// repeated reads of an unchanged document as the REST pages' JSON is.
extension RESTBridge {
    /// A server-streaming call answered without the REST round trip; false when the request needs
    /// the general path (nothing has been sent then).
    typealias DirectStream = @Sendable (_ request: [UInt8], _ context: GRPCContext, _ responses: any GRPCResponseStream) throws(GRPCStatus) -> Bool

    /// BatchGetDocuments on a plainly named database; false: use the general path.
    func directBatchGet(_ bytes: [UInt8], _ ctx: GRPCContext, _ responses: any GRPCResponseStream) throws(GRPCStatus) -> Bool {
        guard let request = Self.decoded(bytes, "BatchGetDocumentsRequest") else { return false }
        guard let get = try prepareBatchGet(request, ctx) else { return false }
        Self.stream(try direct { () throws(FirestoreError) in try answer(get) }, to: responses)
        return true
    }

    /// RunQuery under a plainly named parent; false: use the general path.
    func directRunQuery(_ bytes: [UInt8], _ ctx: GRPCContext, _ responses: any GRPCResponseStream) throws(GRPCStatus) -> Bool {
        guard let run = try prepareRunQuery(bytes, ctx) else { return false }
        Self.stream(try direct { () throws(FirestoreError) in try answer(run, authorized: false) }, to: responses)
        return true
    }

    // MARK: On the loop thread

    /// The most rows and stored bytes a RunQuery answered on the loop may read (`QueryRowCap`); a
    /// query that reads more goes on on a worker. 200 rows of the bench's query (an index entry
    /// walked with its document's row, ~13k instructions with SQLite's step) is under about a
    /// millisecond; the bench's query reads 20.
    static let quickQueryRows = 200
    static let quickQueryBytes = 256 << 10
    /// The most documents a BatchGetDocuments answered on the loop may name (each read as a get
    /// on the loop is: a bounded read of one row, or the read cache).
    static let quickBatchGetDocuments = 16

    /// BatchGetDocuments on the loop thread (`GRPCHandler.serverStreamingQuick`): a current read of
    /// at most `quickBatchGetDocuments` documents is answered there; the rest of a larger one (after
    /// the same checks) on a worker; nil: the general path's request, on a worker from the start.
    func quickBatchGet(_ bytes: [UInt8], _ ctx: GRPCContext) throws(GRPCStatus) -> GRPCQuickStream? {
        guard let request = Self.decoded(bytes, "BatchGetDocumentsRequest") else { return nil }
        guard let get = try prepareBatchGet(request, ctx) else { return nil }
        guard get.paths.count <= Self.quickBatchGetDocuments else { return rest { () throws(FirestoreError) in try answer(get) } }
        return Self.answered(try direct { () throws(FirestoreError) in try answer(get) })
    }

    /// RunQuery on the loop thread (`GRPCHandler.serverStreamingQuick`): a current query that reads
    /// at most `quickQueryRows` rows and `quickQueryBytes` bytes is answered there; any other (a
    /// transaction's, one at a read time, or one that passed the cap — its rules decision already
    /// made, not asked again) goes on on a worker; nil: the general path's request, on a worker
    /// from the start.
    func quickRunQuery(_ bytes: [UInt8], _ ctx: GRPCContext) throws(GRPCStatus) -> GRPCQuickStream? {
        guard let run = try prepareRunQuery(bytes, ctx) else { return nil }
        guard case .strong = run.consistency else {
            return rest { () throws(FirestoreError) in try answer(run, authorized: false) }
        }
        let cache = service.storage.readCache
        let generation = cache.current  // before the read: what `DocumentCache.proto(of:)` and `keep` keep
        // The same query answered since the last write: its kept answer, judged for this caller.
        let key = RequestBytesKey(bytes: bytes)
        if let kept = try direct({ () throws(FirestoreError) in
            try service.keptQueryAnswer(run.db, query: run.query, key: key, caller: run.caller)
        }) {
            let result = QueryExecutor.Result(documents: kept.entries.map { $0.document! }, skipped: kept.skipped,
                                              versions: kept.entries.map { DocumentCache.Version(entry: $0, wasKept: true) })
            return Self.answered(encode(run, result: result, transaction: nil, readTime: service.latestTime(), generation: generation))
        }
        let done = try direct { () throws(FirestoreError) in
            try service.runCurrentQuery(run.db, query: run.query, caller: run.caller, rows: Self.quickQueryRows, bytes: Self.quickQueryBytes)
        }
        guard let (result, readTime) = done else { return rest { () throws(FirestoreError) in try answer(run, authorized: true) } }
        // Kept for the next call of the same request when every document came named from the read
        // cache (a current query whose answer streamed, within the loop's cap, no index to build).
        if let versions = result.versions, versions.count == result.documents.count, DocumentCache.accepts(run.db) {
            cache.keep(DocumentCache.Answer(entries: versions.map(\.entry), skipped: result.skipped), for: key, readAt: generation)
        }
        return Self.answered(encode(run, result: result, transaction: nil, readTime: readTime, generation: generation))
    }

    /// Every message at once when they fit one batch; a larger answer is sent from a worker as the
    /// client reads it (`stream`), never held on the loop.
    private static func answered(_ batches: [GRPCMessageBatch]) -> GRPCQuickStream {
        if batches.count <= 1 { return .answered(batches.first ?? GRPCMessageBatch()) }
        return .rest { responses in stream(batches, to: responses) }
    }

    /// The call's messages made by `body` on a worker thread and sent as the client reads them.
    private func rest(_ body: @escaping @Sendable () throws(FirestoreError) -> [GRPCMessageBatch]) -> GRPCQuickStream {
        .rest { [self] responses throws(GRPCStatus) in Self.stream(try direct(body), to: responses) }
    }

    // MARK: BatchGetDocuments

    /// A BatchGetDocuments request after the REST handler's checks, with its caller.
    struct BatchGet: Sendable {
        let db: DatabaseID
        let paths: [ResourcePath]
        let mask: [FieldPath]?
        let consistency: ReadConsistency
        let caller: Caller
    }

    /// The request checked as the REST handler checks the same message as its JSON body, in its
    /// order (the caller, then the method's checks); nil: not a plainly named database (the general path).
    private func prepareBatchGet(_ request: JSONObject, _ ctx: GRPCContext) throws(GRPCStatus) -> BatchGet? {
        guard let database = request["database"]?.stringValue, let (db, path) = Self.plainName(database + "/documents"),
              path.segments.isEmpty else { return nil }
        return try direct { () throws(FirestoreError) in
            let caller = try caller(ctx, db)
            // What `FirestoreHTTPService.batchGet` does with the same message as its JSON body.
            let body = ProtoObject(JSONObject(request.members.filter { $0.0 != "database" }), path: "")
            try body.requireKnown(["documents", "mask", "transaction", "newTransaction", "readTime", "requestOptions"])
            let (database, paths) = try FirestoreHTTPService.batchGetDocuments(body, database: db)
            let mask = try body.object("mask").map { m throws(FirestoreError) in try WriteParser(database: db).parseMask(m) }
            return BatchGet(db: database, paths: paths, mask: mask, consistency: try RequestContext.consistency(body), caller: caller)
        }
    }

    /// The documents read and framed as BatchGetDocumentsResponses.
    private func answer(_ get: BatchGet) throws(FirestoreError) -> [GRPCMessageBatch] {
        let database = get.db
        let cache = service.storage.readCache
        let generation = cache.current  // before the read: what `DocumentCache.proto(of:)` keeps
        let (results, transaction, readTime) = try service.batchGet(database, paths: get.paths, consistency: get.consistency,
                                                                    caller: get.caller)
        let current = Self.isCurrent(get.consistency)
        var out = Batches()
        // A new transaction comes as its own first message, as Firestore sends it.
        if let transaction { out.append { w in DocumentProto.transactionOnly(transaction, field: 3, into: &w) } }
        for (path, doc) in results {
            out.append { w in
                if let doc, get.mask == nil {
                    // The document's encoding made once per version (`DocumentCache`), as a get's.
                    w.encodedMessage(1, cache.proto(of: doc, in: database, readAt: generation, keep: current))
                } else if let doc {
                    w.message(1) { d in DocumentProto.document(doc, in: database, mask: get.mask, into: &d) }
                } else {
                    w.string(2, database.name(of: path))
                }
                DocumentProto.timestamp(4, readTime, into: &w)
            }
        }
        return out.done
    }

    // MARK: RunQuery

    /// A RunQuery request after the REST handler's checks, with its caller.
    struct RunQuery: Sendable {
        let db: DatabaseID
        let query: Query
        let consistency: ReadConsistency
        let caller: Caller
    }

    /// The request checked as the REST router and handler check the same message as its JSON body,
    /// in their order (the path, the caller, then the method's); nil: malformed, or not a plainly
    /// named parent (the general path). A request read before (`ParsedQueryCache`) passed every check
    /// but the caller's, which runs again.
    private func prepareRunQuery(_ bytes: [UInt8], _ ctx: GRPCContext) throws(GRPCStatus) -> RunQuery? {
        let cache = service.parsedQueries
        if let known = cache.parsed(bytes) {
            return try direct { () throws(FirestoreError) in
                RunQuery(db: known.db, query: known.query, consistency: .strong, caller: try caller(ctx, known.db))
            }
        }
        guard let request = Self.decoded(bytes, "RunQueryRequest"),
              let parentName = request["parent"]?.stringValue, let (db, parent) = Self.plainName(parentName) else { return nil }
        let run = try direct { () throws(FirestoreError) in
            if !parent.segments.isEmpty { try parent.validate(in: db) }
            let caller = try caller(ctx, db)
            guard parent.segments.isEmpty || parent.isDocument else {
                let name = db.name(of: parent)
                throw .invalidArgument("Document parent name \"\(name)\" lacks \"/\" at index \(name.utf8.count).")
            }
            // What `FirestoreHTTPService.runQuery` does with the same message as its JSON body.
            let body = ProtoObject(JSONObject(request.members.filter { $0.0 != "parent" }), path: "")
            try body.requireKnown(["structuredQuery", "transaction", "newTransaction", "readTime", "explainOptions", "requestOptions"])
            guard let sq = try body.object("structuredQuery") else {
                throw .invalidArgument("only structured queries are supported")
            }
            let query = try QueryParser(database: db, parent: parent).parse(sq)
            return RunQuery(db: db, query: query, consistency: try RequestContext.consistency(body), caller: caller)
        }
        if case .strong = run.consistency { cache.keep(bytes, ParsedQueryCache.Parsed(db: run.db, query: run.query)) }
        return run
    }

    /// The query run (`authorized`: its rules decision already made) and framed as RunQueryResponses.
    private func answer(_ run: RunQuery, authorized: Bool) throws(FirestoreError) -> [GRPCMessageBatch] {
        let generation = service.storage.readCache.current  // before the read: what `DocumentCache.proto(of:)` keeps
        let (result, transaction, readTime) = try service.runQuery(run.db, query: run.query, consistency: run.consistency,
                                                                   caller: run.caller, authorized: authorized)
        return encode(run, result: result, transaction: transaction, readTime: readTime, generation: generation)
    }

    /// A query's result as RunQueryResponses: a new transaction as its own first message, and `done`
    /// on the last, as Firestore sends them.
    private func encode(_ run: RunQuery, result: QueryExecutor.Result, transaction: String?, readTime: Instant,
                        generation: UInt64) -> [GRPCMessageBatch] {
        let (db, query) = (run.db, run.query)
        let cache = service.storage.readCache
        let current = Self.isCurrent(run.consistency)
        var out = Batches()
        if let transaction { out.append { w in DocumentProto.transactionOnly(transaction, field: 2, into: &w) } }
        for (i, doc) in result.documents.enumerated() {
            out.append { w in
                if !query.returnsStoredDocuments {
                    w.message(1) { d in DocumentProto.document(doc, in: db, mask: query.projection, into: &d) }
                } else if let version = result.versions?[i] {
                    // Read through the cache, named once: its kept encoding, or its own kept now.
                    w.encodedMessage(1, cache.proto(of: version, readAt: generation, keep: current))
                } else {
                    // The document's encoding made once per version (`DocumentCache`), as a get's.
                    w.encodedMessage(1, cache.proto(of: doc, in: db, readAt: generation, keep: current))
                }
                DocumentProto.timestamp(3, readTime, into: &w)
                if i == 0 && result.skipped > 0 { w.int64(4, Int64(Int32(truncatingIfNeeded: result.skipped))) }
                if i == result.documents.count - 1 { w.bool(6, true) }
            }
        }
        if result.documents.isEmpty {
            out.append { w in
                DocumentProto.timestamp(3, readTime, into: &w)
                if result.skipped > 0 { w.int64(4, Int64(Int32(truncatingIfNeeded: result.skipped))) }
                w.bool(6, true)
            }
        }
        return out.done
    }

    /// Whether a read sees the latest state (whose documents' encodings may be kept for later reads).
    private static func isCurrent(_ consistency: ReadConsistency) -> Bool {
        if case .strong = consistency { return true }
        return false
    }

    /// Sends `batches` as the client reads them (a slow reader holds this worker, never the loop).
    private static func stream(_ batches: [GRPCMessageBatch], to responses: any GRPCResponseStream) {
        for b in batches {
            guard responses.waitUntilWritable() else { return }
            responses.send(b)
        }
    }

    /// A call's response messages framed straight into batches of about `bytes` each: each batch
    /// leaves in one write, where a write per message scheduled a flush of the stream per message
    /// (a loop wake-up and a socket write each, when the loop was quick), and a large result still
    /// goes out as the client reads it.
    struct Batches {
        static let bytes = 64 << 10
        private var full: [GRPCMessageBatch] = []
        private var current = GRPCMessageBatch(capacity: 4096)

        /// Appends one message that `body` writes.
        mutating func append(_ body: (inout ProtoWriter) -> Void) {
            if current.framed.count >= Self.bytes {
                full.append(current)
                current = GRPCMessageBatch(capacity: 4096)
            }
            current.append { buffer in
                // The writer works on the batch's own buffer (no array per message).
                var w = ProtoWriter(capacity: 0)
                swap(&w.bytes, &buffer)
                body(&w)
                swap(&w.bytes, &buffer)
            }
        }

        /// The batches, in order.
        var done: [GRPCMessageBatch] { current.count == 0 ? full : full + [current] }
    }
}
