import Foundation
import HearthCore
import HearthGRPC
import HearthProtobuf

/// BatchGetDocuments and RunQuery answered by the core directly, as GetDocument and Commit are
/// (`RESTBridge+Direct.swift`): the request's proto3 JSON goes to the same parsers and core methods
/// the REST handlers call, in the same order (name checks, the caller, the method's checks), and the
/// answers are written as protobuf straight from the documents — the bytes the general path makes
/// from the REST JSON (`DirectReadsTests` compares the two), without rendering and re-reading it.
extension RESTBridge {
    /// A server-streaming call answered without the REST round trip; false when the request needs
    /// the general path (nothing has been sent then).
    typealias DirectStream = @Sendable (_ request: [UInt8], _ context: GRPCContext, _ responses: any GRPCResponseStream) throws(GRPCStatus) -> Bool

    /// BatchGetDocuments on a plainly named database; false: use the general path.
    func directBatchGet(_ bytes: [UInt8], _ ctx: GRPCContext, _ responses: any GRPCResponseStream) throws(GRPCStatus) -> Bool {
        guard let request = Self.decoded(bytes, "BatchGetDocumentsRequest"),
              let database = request["database"]?.stringValue, let (db, path) = Self.plainName(database + "/documents"),
              path.segments.isEmpty else { return false }
        let messages = try direct { () throws(FirestoreError) -> [[UInt8]] in
            let caller = try caller(ctx, db)
            // What `FirestoreHTTPService.batchGet` does with the same message as its JSON body.
            let body = ProtoObject(JSONObject(request.members.filter { $0.0 != "database" }), path: "")
            try body.requireKnown(["documents", "mask", "transaction", "newTransaction", "readTime", "requestOptions"])
            let (database, paths) = try FirestoreHTTPService.batchGetDocuments(body, database: db)
            let mask = try body.object("mask").map { m throws(FirestoreError) in try WriteParser(database: db).parseMask(m) }
            let consistency = try RequestContext.consistency(body)
            let (results, transaction, readTime) = try service.batchGet(database, paths: paths, consistency: consistency, caller: caller)
            var out: [[UInt8]] = []
            out.reserveCapacity(results.count + 1)
            // A new transaction comes as its own first message, as Firestore sends it.
            if let transaction { out.append(DocumentProto.transactionOnly(transaction, field: 3)) }
            for (path, doc) in results {
                var w = ProtoWriter(capacity: 256)
                if let doc {
                    w.message(1) { d in DocumentProto.document(doc, in: database, mask: mask, into: &d) }
                } else {
                    w.string(2, database.name(of: path))
                }
                DocumentProto.timestamp(4, readTime, into: &w)
                out.append(w.bytes)
            }
            return out
        }
        Self.stream(messages, to: responses)
        return true
    }

    /// RunQuery under a plainly named parent; false: use the general path.
    func directRunQuery(_ bytes: [UInt8], _ ctx: GRPCContext, _ responses: any GRPCResponseStream) throws(GRPCStatus) -> Bool {
        guard let request = Self.decoded(bytes, "RunQueryRequest"),
              let parentName = request["parent"]?.stringValue, let (db, parent) = Self.plainName(parentName) else { return false }
        let messages = try direct { () throws(FirestoreError) -> [[UInt8]] in
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
            let (result, transaction, readTime) = try service.runQuery(db, query: query, consistency: consistency, caller: caller)
            var out: [[UInt8]] = []
            out.reserveCapacity(result.documents.count + 1)
            // A new transaction comes as its own first message and the last carries `done`, as
            // Firestore sends them.
            if let transaction { out.append(DocumentProto.transactionOnly(transaction, field: 2)) }
            for (i, doc) in result.documents.enumerated() {
                var w = ProtoWriter(capacity: 256)
                w.message(1) { d in DocumentProto.document(doc, in: db, mask: query.projection, into: &d) }
                DocumentProto.timestamp(3, readTime, into: &w)
                if i == 0 && result.skipped > 0 { w.int64(4, Int64(Int32(truncatingIfNeeded: result.skipped))) }
                if i == result.documents.count - 1 { w.bool(6, true) }
                out.append(w.bytes)
            }
            if result.documents.isEmpty {
                var w = ProtoWriter(capacity: 32)
                DocumentProto.timestamp(3, readTime, into: &w)
                if result.skipped > 0 { w.int64(4, Int64(Int32(truncatingIfNeeded: result.skipped))) }
                w.bool(6, true)
                out.append(w.bytes)
            }
            return out
        }
        Self.stream(messages, to: responses)
        return true
    }

    /// Sends `messages` as the client reads them (a slow reader holds this worker, never the loop).
    private static func stream(_ messages: [[UInt8]], to responses: any GRPCResponseStream) {
        for m in messages {
            guard responses.waitUntilWritable() else { return }
            responses.send(m)
        }
    }
}
