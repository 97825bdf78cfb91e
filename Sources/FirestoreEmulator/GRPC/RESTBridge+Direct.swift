import HearthCore
import HearthGRPC
import HearthProtobuf

/// The hot unary calls answered by the core directly, without the REST round trip.
///
/// A GetDocument through `send` built a REST request (percent-encoding the name), parsed it back,
/// wrote the document as JSON, parsed that JSON and wrote it as protobuf: several times the cost of
/// the read itself. Here the plain forms — the request every client sends — call the same core
/// methods in the same order as the REST handler does (name checks, then the caller, then the
/// operation), so results and errors are those of the REST path; any other form (a mask, a
/// transaction, a name the REST router would refuse) still goes through `send`.
extension RESTBridge {
    /// GetDocument whose request carries only a plain document name; nil: use the general path.
    func directGet(_ bytes: [UInt8], _ ctx: GRPCContext) throws(GRPCStatus) -> [UInt8]? {
        var reader = ProtoReader(bytes)
        var nameRange: Range<Int>?
        do {
            while let (number, wire) = try reader.nextField() {
                switch number {
                case 1 where wire == .lengthDelimited:
                    // An ASCII name is decoded without `readString`'s general UTF-8 check (~1.2k
                    // instructions a get, per scalar); any other is left to the general path, as
                    // `plainName` leaves it (the same answer: the general path is the reference).
                    let range = try reader.readLengthDelimitedRange()
                    guard Self.isASCII(bytes, range) else { return nil }
                    nameRange = range
                case 1, 2, 3, 5: return nil  // mask, transaction, read time (or a wrong wire type): general path
                default: try reader.skip(wire)
                }
            }
        } catch {
            return nil  // the general path reports malformed input with its message
        }
        guard let nameRange else { return nil }
        // A name read before was split then, and its entry keeps the verdict of `validate` (both
        // depend on the name alone). Looked up by the request's bytes: the entry found last is
        // matched without the name made a string (`DocumentCache.entry(utf8:)`).
        let known = bytes.withUnsafeBufferPointer { service.storage.readCache.entry(utf8: UnsafeBufferPointer(rebasing: $0[nameRange])) }
        // The entry's name is these bytes; only a name not kept is made from them.
        let name = known?.name ?? String(decoding: bytes[nameRange], as: UTF8.self)
        guard let (db, path) = known.map({ ($0.database, $0.path) }) ?? Self.plainName(name), path.isDocument else { return nil }
        return try direct { () throws(FirestoreError) in
            if let known { try known.validate() } else { try path.validate(in: db) }
            let caller = try caller(ctx, db)
            return try service.getLatest(db, path: path, name: name, known: known, caller: caller).entry.proto
        }
    }

    /// Whether every byte of `bytes[range]` is ASCII (then it is valid UTF-8, and decoding repairs nothing).
    static func isASCII(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        bytes.withUnsafeBufferPointer { all in
            var any: UInt8 = 0
            for i in range { any |= all[i] }
            return any < 0x80
        }
    }

    /// Commit on a plainly named database, answered through `reply` once its batch has committed
    /// (no thread waits for the writer); false: use the general path. `lead: false` on a loop thread
    /// (the commit is queued, never run there).
    func directCommit(_ bytes: [UInt8], _ ctx: GRPCContext, lead: Bool,
                      _ reply: @escaping @Sendable (Result<[UInt8], GRPCStatus>) -> Void) -> Bool {
        let db: DatabaseID
        let writes: () throws(FirestoreError) -> (writes: [Write], transaction: String?)
        // The plain writes read straight from protobuf (no proto3 JSON in between).
        if let request = WriteProtoDecoder.commitRequest(bytes),
           let (named, path) = Self.plainName(request.database + "/documents"), path.segments.isEmpty,
           let plain = WriteProtoDecoder(database: named).writes(request.writes) {
            db = named
            writes = { (plain, request.transaction) }
        } else {
            guard let request = Self.decoded(bytes, "CommitRequest"),
                  let database = request["database"]?.stringValue, let (named, path) = Self.plainName(database + "/documents"),
                  path.segments.isEmpty else { return false }
            db = named
            // What `FirestoreHTTPService.commit` does with the same message as its JSON body.
            writes = { () throws(FirestoreError) in
                let body = ProtoObject(JSONObject(request.members.filter { $0.0 != "database" }), path: "")
                try body.requireKnown(["writes", "transaction", "requestOptions"])
                let parsed = try WriteJSONDecoder.writes(of: body, database: named, transaction: true)
                return (parsed.writes, try parsed.transaction.map { t throws(FirestoreError) in try RequestContext.transactionID(t) })
            }
        }
        let caller: Caller
        let request: (writes: [Write], transaction: String?)
        do throws(GRPCStatus) {
            (caller, request) = try direct { () throws(FirestoreError) in (try self.caller(ctx, db), try writes()) }
        } catch {
            reply(.failure(error))
            return true
        }
        service.commit(db, writes: request.writes, transaction: request.transaction, caller: caller, lead: lead) { [self] result in
            reply(Result { () throws(GRPCStatus) in
                let (commitTime, results) = try direct { () throws(FirestoreError) in try result.get() }
                return DocumentProto.commitResponse(commitTime: commitTime, results: results)
            })
        }
        return true
    }

    /// The request's proto3 JSON; nil when it is malformed (the general path reports that, with its message).
    static func decoded(_ bytes: [UInt8], _ message: String) -> JSONObject? {
        try? ProtoJSON.decode(bytes, FirestoreSchemas.v1 + message)
    }

    /// The caller as `RequestContext` decides it from the same `authorization` value.
    func caller(_ ctx: GRPCContext, _ db: DatabaseID) throws(FirestoreError) -> Caller {
        try Caller.from(authorization: ctx.authorization, projectID: db.project, verifier: service.tokenVerifier,
                        logger: service.logger, known: service.callers, now: service.clock.now().unixSeconds)
    }

    /// Runs `body`; an internal error is logged as the REST handler logs it, every error becomes its status.
    func direct<T>(_ body: () throws(FirestoreError) -> T) throws(GRPCStatus) -> T {
        do {
            return try body()
        } catch {
            if case .internal = error {
                service.logger.error("firestore: internal error", [("error", .string(error.message))])
            }
            throw error.grpcStatus
        }
    }

    /// `projects/{p}/databases/{d}/documents[/…]` split as the REST router splits its path, when the
    /// name is ASCII and every segment is non-empty (anything else is left to the router and its own
    /// errors). Split on bytes: splitting a String by Characters cost more than the document read, and
    /// for ASCII both agree (only a non-ASCII mark can join a `/` into a larger Character).
    static func plainName(_ name: String) -> (DatabaseID, ResourcePath)? {
        var segments: [String] = []
        var ok = true
        var copy = name
        copy.withUTF8 { utf8 in
            var start = 0
            for i in 0...utf8.count {
                guard i == utf8.count || utf8[i] == 0x2F else {
                    if utf8[i] >= 0x80 { ok = false; return }
                    continue
                }
                guard i > start else { ok = false; return }
                segments.append(String(decoding: UnsafeBufferPointer(rebasing: utf8[start..<i]), as: UTF8.self))
                start = i + 1
            }
        }
        guard ok, segments.count >= 5, segments[0] == "projects", segments[2] == "databases", segments[4] == "documents"
        else { return nil }
        return (DatabaseID(project: segments[1], database: segments[3]), ResourcePath(Array(segments[5...])))
    }
}
