import Foundation
import HearthCore
import HearthGRPC
import HearthProtobuf

/// Listen and Write: the realtime engine's streams with their protobuf codec.
extension FirestoreGRPCService {
    /// The caller of a stream, from its `authorization` metadata exactly as REST decides it.
    private func caller(_ ctx: GRPCContext) throws(FirestoreError) -> Caller {
        // The project of token checks: the resource prefix the SDKs send, else the default project.
        var project = service.configuration.projectID
        if let prefix = ctx["google-cloud-resource-prefix"], prefix.hasPrefix("projects/") {
            project = String(prefix.dropFirst(9).prefix(while: { $0 != "/" }))
        }
        return try Caller.from(authorization: ctx.authorization, projectID: project, verifier: service.tokenVerifier,
                               logger: service.logger, known: service.callers, now: service.clock.now().unixSeconds)
    }

    /// A stream that ends at once with `error`.
    private final class Refused: GRPCRequestStream, @unchecked Sendable {
        func received(_ message: [UInt8]) {}
        func halfClosed() {}
        func cancelled() {}
    }

    func listen(_ ctx: GRPCContext, _ responses: any GRPCResponseStream) -> any GRPCRequestStream {
        let caller: Caller
        do { caller = try self.caller(ctx) } catch {
            responses.finish(error.grpcStatus)
            return Refused()
        }
        return listenCall(caller: caller, responses: responses)
    }

    /// A Listen call answering through `responses` (gRPC's stream, or a WebChannel session).
    func listenCall(caller: Caller, responses: any GRPCResponseStream) -> ListenCall {
        ListenCall(engine: service.listeners, caller: caller, responses: responses,
                   decode: Self.decodeListen, encode: { [encoder = service.listenResponses] event, db, batch in
                       encoder.encode(event, db, into: &batch)
                   }, encodeShared: { [encoder = service.listenResponses] snapshot, ids, db, batch in
                       encoder.encode(snapshot, targetIDs: ids, db, into: &batch)
                   })
    }

    func write(_ ctx: GRPCContext, _ responses: any GRPCResponseStream) -> any GRPCRequestStream {
        let caller: Caller
        do { caller = try self.caller(ctx) } catch {
            responses.finish(error.grpcStatus)
            return Refused()
        }
        return writeCall(caller: caller, responses: responses)
    }

    /// A Write call answering through `responses` (gRPC's stream, or a WebChannel session).
    func writeCall(caller: Caller, responses: any GRPCResponseStream) -> WriteCall {
        let session = WriteStreamSession(service: service, caller: caller, streamID: service.ids.alphanumeric(12))
        return WriteCall(session: session, responses: responses, decode: Self.decodeWrite, encode: Self.encodeWrite)
    }

    // MARK: Listen codec

    @Sendable static func decodeListen(_ message: [UInt8]) throws(FirestoreError) -> (database: String, action: ListenCall.Action?) {
        let o = try ProtoJSON.decode(message, FirestoreSchemas.v1 + "ListenRequest")
        let name = o["database"]?.stringValue ?? ""
        if let remove = o["removeTarget"] {
            return (name, .remove(Int32(truncatingIfNeeded: ProtoObject.int64(remove) ?? 0)))
        }
        guard case .object(let t)? = o["addTarget"] else { return (name, nil) }
        let db = try WriteStreamSession.database(named: name)
        let target = ProtoObject(t, path: "add_target")
        let id = try target.int32("targetId") ?? 0
        do throws(FirestoreError) {
            // "Must be a positive number and non-zero" (0 asks the server for one). The official
            // emulator ends the stream with an empty UNKNOWN; refused as other bad targets are.
            if id < 0 { throw .invalidArgument("Target ID \(id) is invalid: a target ID must be positive, or 0 for the server to assign one.") }
            return (name, .add(try listenTarget(target, id: id, db)))
        } catch {
            return (name, .reject(targetID: id, error))
        }
    }

    /// The target an `add_target` names (its id read already).
    private static func listenTarget(_ target: ProtoObject, id: Int32, _ db: DatabaseID) throws(FirestoreError) -> ListenTarget {
        let kind: ListenTarget.Kind
        if let query = try target.object("query") {
            let parent = try parentPath(try query.string("parent") ?? "", db)
            guard let sq = try query.object("structuredQuery") else {
                throw .invalidArgument("A query target must have a structured_query.")
            }
            let parsed = try QueryParser(database: db, parent: parent).parse(sq)
            // "Vector search doesn't support real-time snapshot listeners" (vector search limitations);
            // the emulator fails such a target with UNKNOWN and no message.
            if parsed.findNearest != nil {
                throw .invalidArgument("FindNearest cannot be used in a Listen target: vector search has no real-time snapshot listeners.")
            }
            // Firestore refuses a projection in a listener with these words (nodejs-firestore
            // issue 1090, quoting production's cause); the official emulator applies it.
            if parsed.projection != nil {
                throw .invalidArgument("'select' clauses are not supported for real-time queries.")
            }
            kind = .query(parsed)
        } else if let docs = try target.object("documents") {
            var paths: [ResourcePath] = []
            var seen = Set<ResourcePath>()
            for d in try docs.array("documents") ?? [] {
                let path = try ResourcePath.parseDocumentName(d.stringValue ?? "", in: db)
                // A name given twice is one document of the target (as the official emulator
                // answers): one DocumentChange for it, not two.
                if seen.insert(path).inserted { paths.append(path) }
            }
            kind = .documents(paths)
        } else {
            throw .invalidArgument("A target must have a query or documents.")
        }
        let token = try target.string("resumeToken").flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) }
        let readTime = try target.string("readTime").flatMap { ValueJSON.parseTimestamp($0) }
        let expected = try target.int32("expectedCount").map { Int($0) }
        return ListenTarget(database: db, id: id, kind: kind, resumeToken: token?.isEmpty == true ? nil : token,
                            readTime: readTime, expectedCount: expected)
    }

    /// `projects/p/databases/d/documents[/…]` as the path under the documents root.
    static func parentPath(_ name: String, _ db: DatabaseID) throws(FirestoreError) -> ResourcePath {
        let root = "projects/\(db.project)/databases/\(db.database)/documents"
        guard name == root || name.hasPrefix(root + "/") else {
            throw .invalidArgument("Invalid parent \"\(name)\": it must be under \(root).")
        }
        let rest = name.dropFirst(root.count).split(separator: "/").map(String.init)
        let path = ResourcePath(rest)
        if !rest.isEmpty { try path.validate(in: db) }
        return path
    }

    /// One event as a `ListenResponse` (streams use their service's shared encoder instead).
    static func encodeListen(_ event: ListenEvent, _ db: DatabaseID) -> [UInt8] {
        ListenResponseEncoder().encode(event, db)
    }

    static func document(_ doc: StoredDocument, _ db: DatabaseID) -> JSON {
        var m: [(String, JSON)] = [("name", .string(db.name(of: doc.path)))]
        if case .object(let f) = ValueJSON.encodeFields(doc.fields), !f.isEmpty { m.append(("fields", .object(f))) }
        m.append(("createTime", .string(ValueJSON.formatTimestamp(doc.createTime))))
        m.append(("updateTime", .string(ValueJSON.formatTimestamp(doc.updateTime))))
        return .object(JSONObject(m))
    }

    // MARK: Write codec

    @Sendable static func decodeWrite(_ message: [UInt8], _ database: DatabaseID?) throws(FirestoreError) -> WriteStreamSession.Request {
        if let request = directWrite(message, database) { return request }
        let o = try ProtoJSON.decode(message, FirestoreSchemas.v1 + "WriteRequest")
        var request = WriteStreamSession.Request(database: o["database"]?.stringValue ?? "")
        request.streamID = o["streamId"]?.stringValue ?? ""
        request.streamToken = o["streamToken"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? []
        let writes = o["writes"]?.arrayValue ?? []
        if !writes.isEmpty {
            let db: DatabaseID
            if let database { db = database } else { db = try WriteStreamSession.database(named: request.database) }
            let parser = WriteParser(database: db)
            for (i, w) in writes.enumerated() {
                request.writes.append(try parser.parseWrite(try ProtoObject(json: w, path: "writes[\(i)]")))
            }
        }
        return request
    }

    /// The plain form of a `WriteRequest` read straight from protobuf; nil: the general path decides.
    static func directWrite(_ message: [UInt8], _ database: DatabaseID?) -> WriteStreamSession.Request? {
        guard let plain = WriteProtoDecoder.writeRequest(message) else { return nil }
        var request = WriteStreamSession.Request(database: plain.database)
        request.streamID = plain.streamID
        request.streamToken = plain.streamToken
        if !plain.writes.isEmpty {
            guard let db = database ?? (try? WriteStreamSession.database(named: plain.database)),
                  let writes = WriteProtoDecoder(database: db).writes(plain.writes) else { return nil }
            request.writes = writes
        }
        return request
    }

    /// A `WriteResponse` written straight as protobuf: the bytes `encodeWriteThroughJSON` makes
    /// (`DocumentProtoTests`), without building its JSON and reading that back through the schema
    /// tables — ~25k instructions of every Write-stream commit (docs/benchmarks.md, grpccpu).
    @Sendable static func encodeWrite(_ response: WriteStreamSession.Response) -> [UInt8] {
        var w = ProtoWriter(capacity: 48 + 40 * response.results.count)
        // Written even when empty, as the general path writes every member its JSON has.
        w.string(1, response.streamID)
        w.bytes(2, response.streamToken)
        for r in response.results {
            w.message(3) { e in
                DocumentProto.timestamp(1, r.updateTime, into: &e)
                for v in r.transformResults { e.message(2) { inner in DocumentProto.value(v, into: &inner) } }
            }
        }
        if let t = response.commitTime { DocumentProto.timestamp(4, t, into: &w) }
        return w.bytes
    }

    /// A `WriteResponse` by the general path: its proto3 JSON encoded through the schema tables.
    static func encodeWriteThroughJSON(_ response: WriteStreamSession.Response) -> [UInt8] {
        var m: [(String, JSON)] = [("streamId", .string(response.streamID)),
                                   ("streamToken", .string(Data(response.streamToken).base64EncodedString()))]
        if !response.results.isEmpty {
            m.append(("writeResults", .array(response.results.map { r in
                .object(JSONObject([("updateTime", .string(ValueJSON.formatTimestamp(r.updateTime))),
                                    ("transformResults", .array(r.transformResults.map(ValueJSON.encode)))]))
            })))
        }
        if let t = response.commitTime { m.append(("commitTime", .string(ValueJSON.formatTimestamp(t)))) }
        return ProtoJSON.encode(JSONObject(m), FirestoreSchemas.v1 + "WriteResponse")
    }
}
