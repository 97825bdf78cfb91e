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
        guard let request = Self.decoded(bytes, "BatchGetDocumentsRequest"),
              let database = request["database"]?.stringValue, let (db, path) = Self.plainName(database + "/documents"),
              path.segments.isEmpty else { return false }
        let batches = try direct { () throws(FirestoreError) -> [GRPCMessageBatch] in
            let caller = try caller(ctx, db)
            // What `FirestoreHTTPService.batchGet` does with the same message as its JSON body.
            let body = ProtoObject(JSONObject(request.members.filter { $0.0 != "database" }), path: "")
            try body.requireKnown(["documents", "mask", "transaction", "newTransaction", "readTime", "requestOptions"])
            let (database, paths) = try FirestoreHTTPService.batchGetDocuments(body, database: db)
            let mask = try body.object("mask").map { m throws(FirestoreError) in try WriteParser(database: db).parseMask(m) }
            let consistency = try RequestContext.consistency(body)
            let cache = service.storage.readCache
            let generation = cache.current  // before the read: what `DocumentCache.proto(of:)` keeps
            let (results, transaction, readTime) = try service.batchGet(database, paths: paths, consistency: consistency, caller: caller)
            let current = Self.isCurrent(consistency)
            var out = Batches()
            // A new transaction comes as its own first message, as Firestore sends it.
            if let transaction { out.append { w in DocumentProto.transactionOnly(transaction, field: 3, into: &w) } }
            for (path, doc) in results {
                out.append { w in
                    if let doc, mask == nil {
                        // The document's encoding made once per version (`DocumentCache`), as a get's.
                        w.encodedMessage(1, cache.proto(of: doc, in: database, readAt: generation, keep: current))
                    } else if let doc {
                        w.message(1) { d in DocumentProto.document(doc, in: database, mask: mask, into: &d) }
                    } else {
                        w.string(2, database.name(of: path))
                    }
                    DocumentProto.timestamp(4, readTime, into: &w)
                }
            }
            return out.done
        }
        Self.stream(batches, to: responses)
        return true
    }

    /// RunQuery under a plainly named parent; false: use the general path.
    func directRunQuery(_ bytes: [UInt8], _ ctx: GRPCContext, _ responses: any GRPCResponseStream) throws(GRPCStatus) -> Bool {
        guard let request = Self.decoded(bytes, "RunQueryRequest"),
              let parentName = request["parent"]?.stringValue, let (db, parent) = Self.plainName(parentName) else { return false }
        let batches = try direct { () throws(FirestoreError) -> [GRPCMessageBatch] in
            // The REST router's checks, in its order: the path, the caller, then the method's.
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
            let consistency = try RequestContext.consistency(body)
            let cache = service.storage.readCache
            let generation = cache.current  // before the read: what `DocumentCache.proto(of:)` keeps
            let (result, transaction, readTime) = try service.runQuery(db, query: query, consistency: consistency, caller: caller)
            let current = Self.isCurrent(consistency)
            var out = Batches()
            // A new transaction comes as its own first message and the last carries `done`, as
            // Firestore sends them.
            if let transaction { out.append { w in DocumentProto.transactionOnly(transaction, field: 2, into: &w) } }
            for (i, doc) in result.documents.enumerated() {
                out.append { w in
                    if !query.returnsStoredDocuments {
                        w.message(1) { d in DocumentProto.document(doc, in: db, mask: query.projection, into: &d) }
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
        Self.stream(batches, to: responses)
        return true
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
