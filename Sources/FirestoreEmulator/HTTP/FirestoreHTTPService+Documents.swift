import Foundation
import HearthCore
import HearthHTTP

/// Handlers of the `projects.databases.documents` methods.
extension FirestoreHTTPService {
    /// The query parameters and body members of the methods called most, made once: a set
    /// literal is built and hashed anew on every call (~2k instructions for six names).
    private enum Known {
        static let getParameters: Set<String> = ["mask.fieldPaths", "transaction", "readTime"]
        static let batchGet: Set<String> = ["documents", "mask", "transaction", "newTransaction", "readTime", "requestOptions"]
        static let beginTransaction: Set<String> = ["options", "requestOptions"]
        static let rollback: Set<String> = ["transaction", "requestOptions"]
        static let commit: Set<String> = ["writes", "transaction", "requestOptions"]
        static let batchWrite: Set<String> = ["writes", "labels", "requestOptions"]
        static let runQuery: Set<String> = ["structuredQuery", "transaction", "newTransaction", "readTime", "explainOptions", "requestOptions"]
    }

    // MARK: get / list

    /// - Parameters: name, known: `c.database.name(of: path)` and its cache entry, when the caller
    ///   has them (`FirestoreService.getLatest`).
    func getDocument(_ c: RequestContext, path: ResourcePath, name: String? = nil, known: DocumentCache.Entry? = nil)
        throws(FirestoreError) -> Response {
        try c.allowParameters(Known.getParameters)
        let mask = try c.maskParameter("mask.fieldPaths")
        let consistency = try parameterConsistency(c)
        guard case .strong = consistency else {
            return c.respond(document: try service.getDocument(c.database, path: path, consistency: consistency, caller: c.caller), mask: mask)
        }
        let (entry, document) = try service.getLatest(c.database, path: path, name: name, known: known, caller: c.caller)
        // The entry's JSON is what `respond(document:mask:)` writes without a mask, made once per version.
        guard mask == nil, !c.pretty else { return c.respond(document: document, mask: mask) }
        return RequestContext.jsonResponse(entry.json)
    }

    private func parameterConsistency(_ c: RequestContext) throws(FirestoreError) -> ReadConsistency {
        let transaction = c.request.query("transaction")
        let readTime = try c.timestampParameter("readTime")
        if transaction != nil && readTime != nil {
            throw .invalidArgument("Only one of transaction and readTime may be set.")
        }
        if let transaction { return .transaction(try RequestContext.transactionID(transaction)) }
        if let readTime { return .readTime(readTime) }
        return .strong
    }

    func listDocuments(_ c: RequestContext, collection: ResourcePath) throws(FirestoreError) -> Response {
        try c.allowParameters(["pageSize", "pageToken", "orderBy", "mask.fieldPaths", "showMissing", "transaction", "readTime",
                               "collectionId", "recursive"])
        let mask = try c.maskParameter("mask.fieldPaths")
        let pageSize = try c.intParameter("pageSize")
        if let pageSize, pageSize < 0 { throw .invalidArgument("Page size must be nonnegative.") }
        var pageToken: ListPageToken?
        if let text = c.request.query("pageToken"), !text.isEmpty { pageToken = try ListPageToken.parse(text) }
        let order = try Self.parseOrderBy(c.request.query("orderBy") ?? "")
        let showMissing = try c.boolParameter("showMissing") ?? false
        let recursive = try c.boolParameter("recursive") ?? false
        // "Requests with show_missing may not specify where or order_by" (ListDocumentsRequest).
        if showMissing && !order.isEmpty {
            throw .invalidArgument("cannot specify an order when show_missing is true")
        }
        if recursive && showMissing {
            throw .invalidArgument("Requests with recursive may not specify show_missing.")
        }
        let consistency = try parameterConsistency(c)

        var collectionPath = collection
        if collection.segments.isEmpty || collection.isDocument, let id = c.request.query("collectionId"), !id.isEmpty {
            // The collection id may also come as a parameter (`…/documents?collectionId=x`).
            collectionPath = collection.appending(id)
        }
        let cache = service.storage.readCache
        let generation = cache.current  // before the read: what `DocumentCache.json(of:)` keeps
        let page = try service.listDocuments(c.database, collection: collectionPath, order: order, pageSize: pageSize,
                                             pageToken: pageToken, showMissing: showMissing, recursive: recursive,
                                             consistency: consistency, caller: c.caller)
        let entries = page.entries
        var w = JSONWriter(capacity: 256 * max(1, entries.count))
        w.byte(0x7B)
        if !entries.isEmpty {
            w.key("documents")
            w.byte(0x5B)
            for (i, (path, doc)) in entries.enumerated() {
                if i > 0 { w.byte(0x2C) }
                if let doc, mask == nil, case .strong = consistency {
                    w.encoded(cache.json(of: doc, in: c.database, readAt: generation, keep: true))
                } else if let doc {
                    w.document(doc, in: c.database, mask: mask)
                } else {
                    w.raw(#"{"name":"#)
                    w.string(c.database.name(of: path))
                    w.byte(0x7D)
                }
            }
            w.byte(0x5D)
        }
        if let next = page.nextPageToken {
            if !entries.isEmpty { w.byte(0x2C) }
            w.key("nextPageToken")
            w.string(next)
        }
        w.byte(0x7D)
        return c.respond(w)
    }

    /// `orderBy` of `documents.list`: `field [asc|desc], …` (`__name__` included).
    static func parseOrderBy(_ text: String) throws(FirestoreError) -> [Ordering] {
        var out: [Ordering] = []
        for part in text.split(separator: ",") {
            let words = part.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let first = words.first, words.count <= 2 else {
                if part.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                throw .invalidArgument("Invalid order by clause \"\(text)\".")
            }
            var descending = false
            if words.count == 2 {
                switch words[1].lowercased() {
                case "desc": descending = true
                case "asc": descending = false
                default: throw .invalidArgument("Invalid order by clause \"\(text)\".")
                }
            }
            out.append(Ordering(field: try QueryParser.fieldPath(first), descending: descending))
        }
        return out
    }

    // MARK: create / patch / delete

    func createDocument(_ c: RequestContext, collection: ResourcePath) throws(FirestoreError) -> Response {
        try c.allowParameters(["documentId", "mask.fieldPaths"])
        let mask = try c.maskParameter("mask.fieldPaths")
        let body = try c.body()
        if let name = try body.string("name"), !name.isEmpty { throw .invalidArgument("document.name must not be set") }
        let (_, fields) = try WriteParser(database: c.database).parseDocument(body, requireName: false)
        var id = c.request.query("documentId") ?? ""
        if id.isEmpty { id = service.ids.alphanumeric(20) }
        if id.contains("/") { throw .invalidArgument("Resource id \"\(id)\" is invalid because it contains \"/\".") }
        // A bare id is judged as an id ("… is reserved"), not where it would stand in a name.
        if id == "." || id == ".." { throw .invalidArgument("Resource id \"\(id)\" is invalid because it is reserved.") }
        let path = collection.appending(id)
        try path.validate(in: c.database)
        let w = Write(path: path, operation: .update(fields: fields, mask: nil), transforms: [],
                      precondition: Precondition(exists: false, updateTime: nil))
        let (_, results) = try service.commit(c.database, writes: [w], transaction: nil, caller: c.caller)
        guard let doc = results.first?.document else { throw .internal("The write left no document.") }
        return c.respond(document: doc, mask: mask)
    }

    func patchDocument(_ c: RequestContext, path: ResourcePath) throws(FirestoreError) -> Response {
        try c.allowParameters(["updateMask.fieldPaths", "mask.fieldPaths", "currentDocument.exists", "currentDocument.updateTime"])
        let mask = try c.maskParameter("mask.fieldPaths")
        let updateMask = try c.maskParameter("updateMask.fieldPaths")
        let precondition = try parameterPrecondition(c)
        let body = try c.body()
        let (_, fields) = try WriteParser(database: c.database).parseDocument(body, requireName: false)
        let w = Write(path: path, operation: .update(fields: fields, mask: updateMask), transforms: [], precondition: precondition)
        let (_, results) = try service.commit(c.database, writes: [w], transaction: nil, caller: c.caller)
        guard let doc = results.first?.document else { throw .internal("The write left no document.") }
        return c.respond(document: doc, mask: mask)
    }

    func deleteDocument(_ c: RequestContext, path: ResourcePath) throws(FirestoreError) -> Response {
        try c.allowParameters(["currentDocument.exists", "currentDocument.updateTime"])
        let precondition = try parameterPrecondition(c)
        let w = Write(path: path, operation: .delete, transforms: [], precondition: precondition)
        _ = try service.commit(c.database, writes: [w], transaction: nil, caller: c.caller)
        return c.respond(.object([:]))
    }

    private func parameterPrecondition(_ c: RequestContext) throws(FirestoreError) -> Precondition? {
        let exists = try c.boolParameter("currentDocument.exists")
        let updateTime = try c.timestampParameter("currentDocument.updateTime")
        if exists != nil && updateTime != nil {
            throw .invalidArgument("Only one of currentDocument.exists and currentDocument.updateTime may be set.")
        }
        if exists == nil && updateTime == nil { return nil }
        return Precondition(exists: exists, updateTime: updateTime)
    }

    // MARK: batchGet

    /// A batchGet body's `documents`: their database (the one they name, whatever the URL says;
    /// `database` when there are none) and paths.
    static func batchGetDocuments(_ body: ProtoObject, database: DatabaseID) throws(FirestoreError) -> (DatabaseID, [ResourcePath]) {
        var paths: [ResourcePath] = []
        var database = database
        for (i, item) in (try body.array("documents") ?? []).enumerated() {
            // Google's JSON parser reads a number or boolean given for a string as its text.
            let name: String
            switch item {
            case .string(let s): name = s
            case .int, .double, .bool: name = item.serialized()
            default: throw .invalidArgument("Invalid value at 'documents[\(i)]' (TYPE_STRING), \(item.serialized())")
            }
            try appendDocument(name, to: &paths, database: &database)
        }
        return (database, paths)
    }

    /// The same from the names of a plain body (`BatchGetJSONDecoder`), checked in the same order.
    static func batchGetDocuments(names: [String], database: DatabaseID) throws(FirestoreError) -> (DatabaseID, [ResourcePath]) {
        var paths: [ResourcePath] = []
        paths.reserveCapacity(names.count)
        var database = database
        for name in names { try appendDocument(name, to: &paths, database: &database) }
        return (database, paths)
    }

    /// One document name of a batchGet: parsed, and its database the first one's.
    private static func appendDocument(_ name: String, to paths: inout [ResourcePath], database: inout DatabaseID) throws(FirestoreError) {
        let (named, path) = try ResourcePath.parseAnyDocumentName(name)
        if paths.isEmpty { database = named } else if named != database {
            throw .invalidArgument("The documents of one request must all be in one database.")
        }
        paths.append(path)
    }

    func batchGet(_ c: RequestContext) throws(FirestoreError) -> Response {
        try c.allowParameters([])
        let database: DatabaseID, paths: [ResourcePath], mask: [FieldPath]?, consistency: ReadConsistency
        if let plain = BatchGetJSONDecoder.body(c.request.body) {
            // The plain form (a transaction's read): what the general path below reads from it, without the tree.
            let named = try Self.batchGetDocuments(names: plain.names, database: c.database)
            database = named.0
            paths = named.1
            mask = nil
            if let t = plain.transaction {
                consistency = .transaction(try RequestContext.transactionID(t))
            } else {
                consistency = .strong
            }
        } else {
            let body = try c.body()
            try body.requireKnown(Known.batchGet)
            let named = try Self.batchGetDocuments(body, database: c.database)
            database = named.0
            paths = named.1
            mask = try body.object("mask").map { m throws(FirestoreError) in try WriteParser(database: c.database).parseMask(m) }
            consistency = try c.consistency(body)
        }
        let (results, transaction, readTime) = try service.batchGet(database, paths: paths, consistency: consistency, caller: c.caller)
        // A new transaction comes as its own first element, as Firestore sends it.
        // Room for one small document's answer besides 256 bytes a result (a transaction's read:
        // ~600 bytes, its name and fields' texts): from 256 the array was regrown and copied once
        // or twice an answer.
        var w = JSONWriter(capacity: 768 + 256 * max(1, results.count))
        w.byte(0x5B)
        if let transaction {
            w.raw(#"{"transaction":"#)
            w.string(transaction)
            w.byte(0x7D)
            if !results.isEmpty { w.byte(0x2C) }
        }
        for (i, (path, doc)) in results.enumerated() {
            if i > 0 { w.byte(0x2C) }
            w.byte(0x7B)
            if let doc {
                w.key("found")
                w.document(doc, in: database, mask: mask)
            } else {
                w.key("missing")
                w.string(database.name(of: path))
            }
            w.raw(#","readTime":"#)
            w.timestamp(readTime)
            w.byte(0x7D)
        }
        w.byte(0x5D)
        return c.respond(w)
    }

    // MARK: transactions

    func beginTransaction(_ c: RequestContext) throws(FirestoreError) -> Response {
        try c.allowParameters([])
        let body = try c.body()
        try body.requireKnown(Known.beginTransaction)
        var readOnly = false
        var readTime: Instant?
        var retrying: String?
        if let options = try body.object("options") {
            (readOnly, readTime, retrying) = try RequestContext.transactionOptions(options)
        }
        let id = try service.beginTransaction(c.database, readOnly: readOnly, readTime: readTime, retrying: retrying)
        // Written straight out: `c.respond(.object(["transaction": .string(id)]))`'s bytes without
        // the tree (its members' array and dictionary).
        var w = JSONWriter(capacity: 64)
        w.byte(0x7B)
        w.key("transaction")
        w.string(id)
        w.byte(0x7D)
        return c.respond(w)
    }

    func rollback(_ c: RequestContext) throws(FirestoreError) -> Response {
        try c.allowParameters([])
        let body = try c.body()
        try body.requireKnown(Known.rollback)
        guard let t = try body.string("transaction") else { throw .invalidArgument(TransactionRegistry.unknownMessage) }
        try service.rollback(c.database, transaction: try RequestContext.transactionID(t))
        return c.respond(.object([:]))
    }

    // MARK: commit / batchWrite

    /// The writes (and a commit's `transaction`, as sent) of a commit or batchWrite body: the plain
    /// forms straight from the text, anything else through the JSON tree and the general parser,
    /// which words every error (members outside `known` first, then the writes in order).
    private func parseWrites(_ c: RequestContext, known: Set<String>, transaction: Bool) throws(FirestoreError) -> WriteJSONDecoder.Body {
        if let plain = WriteJSONDecoder(database: c.database).body(c.request.body, transaction: transaction) { return plain }
        let body = try c.body()
        try body.requireKnown(known)
        return try WriteJSONDecoder.writes(of: body, database: c.database, transaction: transaction)
    }

    static func writeResultJSON(_ r: FirestoreService.WriteOutcome) -> JSON {
        var o: [(String, JSON)] = []
        if let t = r.updateTime { o.append(("updateTime", .string(ValueJSON.formatTimestamp(t)))) }
        if !r.transformResults.isEmpty { o.append(("transformResults", .array(r.transformResults.map(ValueJSON.encode)))) }
        return .object(JSONObject(o))
    }

    func commit(_ c: RequestContext) throws(FirestoreError) -> Response {
        try c.allowParameters([])
        let body = try parseWrites(c, known: Known.commit, transaction: true)
        let transaction = try body.transaction.map { t throws(FirestoreError) in try RequestContext.transactionID(t) }
        if let later {
            // Queued with the group commit and answered from its batch's completion, after the COMMIT.
            service.commit(c.database, writes: body.writes, transaction: transaction, caller: c.caller) { [self] result in
                switch result {
                case .success(let (commitTime, results)):
                    Self.sendLater(later, c.respond(Self.commitResponse(commitTime: commitTime, results: results)), c.request)
                case .failure(let error): Self.sendLater(later, errorResponse(error), c.request)
                }
            }
            return Self.answeredLater
        }
        let (commitTime, results) = try service.commit(c.database, writes: body.writes, transaction: transaction, caller: c.caller)
        return c.respond(Self.commitResponse(commitTime: commitTime, results: results))
    }

    /// The `CommitResponse` JSON, written straight out: the bytes the tree of `writeResultJSON`s
    /// and the commit time serializes to, without building the tree of objects and strings first.
    /// A commit of no writes answers `{}`, no `commitTime`, as Firestore does (nodejs-firestore #293:
    /// "The backend doesn't return a commitTime … if a CommitRequest doesn't contain any
    /// [writes]") and the official emulator does (faith34).
    static func commitResponse(commitTime: Instant, results: [FirestoreService.WriteOutcome]) -> JSONWriter {
        var w = JSONWriter()
        w.byte(0x7B)
        guard !results.isEmpty else {
            w.byte(0x7D)
            return w
        }
        w.key("writeResults")
        w.byte(0x5B)
        for (i, r) in results.enumerated() {
            if i > 0 { w.byte(0x2C) }
            w.byte(0x7B)
            if let t = r.updateTime {
                w.key("updateTime")
                w.timestamp(t)
            }
            if !r.transformResults.isEmpty {
                if r.updateTime != nil { w.byte(0x2C) }
                w.key("transformResults")
                w.byte(0x5B)
                for (k, v) in r.transformResults.enumerated() {
                    if k > 0 { w.byte(0x2C) }
                    // A server timestamp (the usual transform) written as it is encoded, with no
                    // tree in between: `{"timestampValue":"…"}` either way.
                    if case .timestamp = v { w.value(v) } else { w.json(ValueJSON.encode(v)) }
                }
                w.byte(0x5D)
            }
            w.byte(0x7D)
        }
        w.byte(0x5D)
        w.byte(0x2C)
        w.key("commitTime")
        w.timestamp(commitTime)
        w.byte(0x7D)
        return w
    }

    func batchWrite(_ c: RequestContext) throws(FirestoreError) -> Response {
        try c.allowParameters([])
        let writes = try parseWrites(c, known: Known.batchWrite, transaction: false).writes
        var seen = Set<ResourcePath>()
        for w in writes where !seen.insert(w.path).inserted {
            throw .invalidArgument("the same document cannot be written more than once in a single request")
        }
        let results = try service.batchWrite(c.database, writes: writes, caller: c.caller)
        var writeResults: [JSON] = []
        var statuses: [JSON] = []
        for r in results {
            switch r {
            case .success(let outcome):
                writeResults.append(Self.writeResultJSON(outcome))
                statuses.append(.object([:]))
            case .failure(let error):
                writeResults.append(.object([:]))
                statuses.append(error.statusJSON)
            }
        }
        var o: [(String, JSON)] = []
        if !writeResults.isEmpty {
            o.append(("writeResults", .array(writeResults)))
            o.append(("status", .array(statuses)))
        }
        return c.respond(.object(JSONObject(o)))
    }

    // MARK: queries

    func runQuery(_ c: RequestContext, parent: ResourcePath) throws(FirestoreError) -> Response {
        try c.allowParameters([])
        let body = try c.body()
        try body.requireKnown(Known.runQuery)
        guard let sq = try body.object("structuredQuery") else {
            throw .invalidArgument("only structured queries are supported")
        }
        let query = try QueryParser(database: c.database, parent: parent).parse(sq)
        let consistency = try c.consistency(body)
        let cache = service.storage.readCache
        let generation = cache.current  // before the read: what `DocumentCache.json(of:)` keeps
        let (result, transaction, readTime) = try service.runQuery(c.database, query: query, consistency: consistency, caller: c.caller)
        var current = false
        if case .strong = consistency { current = true }
        // A new transaction comes as its own first element and the last element carries
        // `done: true` (the stream's end), as Firestore sends them.
        var w = JSONWriter(capacity: 256 * max(1, result.documents.count))
        w.byte(0x5B)
        if let transaction {
            w.raw(#"{"transaction":"#)
            w.string(transaction)
            w.raw("},")
        }
        for (i, doc) in result.documents.enumerated() {
            if i > 0 { w.byte(0x2C) }
            w.byte(0x7B)
            w.key("document")
            if let version = result.versions?[i] {
                w.encoded(cache.json(of: version, readAt: generation, keep: current))
            } else if query.returnsStoredDocuments {
                w.encoded(cache.json(of: doc, in: c.database, readAt: generation, keep: current))
            } else {
                w.document(doc, in: c.database, mask: query.projection)
            }
            w.raw(#","readTime":"#)
            w.timestamp(readTime)
            if i == 0 && result.skipped > 0 {
                w.raw(#","skippedResults":"#)
                w.int(Int64(result.skipped))
            }
            if i == result.documents.count - 1 { w.raw(#","done":true"#) }
            w.byte(0x7D)
        }
        if result.documents.isEmpty {
            w.raw(#"{"readTime":"#)
            w.timestamp(readTime)
            if result.skipped > 0 {
                w.raw(#","skippedResults":"#)
                w.int(Int64(result.skipped))
            }
            w.raw(#","done":true}"#)
        }
        w.byte(0x5D)
        return c.respond(w)
    }

    func runAggregationQuery(_ c: RequestContext, parent: ResourcePath) throws(FirestoreError) -> Response {
        try c.allowParameters([])
        let body = try c.body()
        try body.requireKnown(["structuredAggregationQuery", "transaction", "newTransaction", "readTime", "explainOptions", "requestOptions"])
        guard let saq = try body.object("structuredAggregationQuery") else {
            throw .invalidArgument("Only structured aggregation queries are supported.")
        }
        try saq.requireKnown(["structuredQuery", "aggregations"])
        // No query aggregates the empty query: every document under the parent.
        let sq = try saq.object("structuredQuery") ?? ProtoObject(JSONObject(), path: saq.childPath("structuredQuery"))
        let query = try QueryParser(database: c.database, parent: parent).parse(sq)
        var aggregations: [FirestoreService.Aggregation] = []
        let items = try saq.array("aggregations") ?? []
        if items.isEmpty { throw .invalidArgument("Aggregations can not be empty.") }
        if items.count > 5 { throw .invalidArgument("Aggregation query has more than the maximum of 5 aggregations.") }
        var aliases = Set<String>()
        // An aggregation without an alias is named `field_<n>`, n counting the unnamed ones only
        // ("COUNT_UP_TO(1) AS count_up_to_1, COUNT_UP_TO(2), …, COUNT(*)" names the second field_1
        // and the fourth field_2: the API reference of `Aggregation.alias`; the emulator agrees).
        var unnamed = 0
        for (i, item) in items.enumerated() {
            let a = try ProtoObject(json: item, path: saq.childPath("aggregations") + "[\(i)]")
            try a.requireKnown(["alias", "count", "sum", "avg"])
            let alias: String
            if let given = try a.string("alias"), !given.isEmpty {
                alias = given
            } else {
                unnamed += 1
                alias = "field_\(unnamed)"
            }
            try DocumentFields.checkResultName(alias)
            if !aliases.insert(alias).inserted { throw .invalidArgument("Aggregation aliases contain duplicate alias: \(alias).") }
            let kinds = ["count", "sum", "avg"].filter { a.raw($0) != nil }
            guard !kinds.isEmpty else { throw .invalidArgument("Operator field in Aggregation is not set.") }
            guard kinds.count == 1 else {
                throw .invalidArgument("Invalid JSON payload received. Oneof field 'operator' is already set. Cannot set '\(kinds[1])'.")
            }
            func field(_ name: String) throws(FirestoreError) -> FieldPath {
                guard let o = try a.object(name) else { throw .invalidArgument("Invalid empty property path string.") }
                try o.requireKnown(["field"])
                guard let ref = try o.object("field") else { throw .invalidArgument("Invalid empty property path string.") }
                let path = try QueryParser(database: c.database, parent: parent).parseFieldReference(ref)
                if path.isDocumentKey { throw .invalidArgument("Aggregations are not supported for the property: __key__") }
                return path
            }
            switch kinds[0] {
            case "count":
                // Force-unwrap safe: `count` was found above.
                let o = try a.object("count") ?? ProtoObject(JSONObject(), path: a.childPath("count"))
                try o.requireKnown(["upTo"])
                let upTo = try o.int64("upTo")
                // "Must be greater than zero when present" (the documented contract).
                if let upTo, upTo < 0 { throw .invalidArgument("The `up_to` value in a COUNT aggregation must be greater than or equal to zero.") }
                if upTo == 0 { throw .invalidArgument("The `up_to` value in a COUNT aggregation must be greater than zero.") }
                aggregations.append(.init(alias: alias, kind: .count(upTo: upTo)))
            case "sum": aggregations.append(.init(alias: alias, kind: .sum(try field("sum"))))
            default: aggregations.append(.init(alias: alias, kind: .avg(try field("avg"))))
            }
        }
        let consistency = try c.consistency(body)
        let (fields, transaction, readTime) = try service.aggregate(c.database, query: query, aggregations: aggregations,
                                                                    consistency: consistency, caller: c.caller)
        var elements: [JSON] = []
        if let transaction { elements.append(.object(["transaction": .string(transaction)])) }
        let result: JSON = .object(["aggregateFields": ValueJSON.encodeFields(fields)])
        elements.append(.object(["result": result, "readTime": .string(ValueJSON.formatTimestamp(readTime)), "done": .bool(true)]))
        return c.respond(.array(elements))
    }

    /// `partitionQuery`: split points of a collection-group query ordered by name, as cursors.
    func partitionQuery(_ c: RequestContext, parent: ResourcePath) throws(FirestoreError) -> Response {
        try c.allowParameters([])
        let body = try c.body()
        try body.requireKnown(["structuredQuery", "partitionCount", "pageToken", "pageSize", "readTime", "requestOptions"])
        guard let sq = try body.object("structuredQuery") else {
            throw .invalidArgument("structured_query is required.")
        }
        let query = try QueryParser(database: c.database, parent: parent).parse(sq)
        guard let count = try body.int64("partitionCount"), count > 0 else {
            throw .invalidArgument("partition_count must be positive.")
        }
        let pageSize = try body.int32("pageSize").map(Int.init)
        if let pageSize, pageSize < 0 { throw .invalidArgument("page_size must be non-negative, got \(pageSize).") }
        var offset = 0
        if let token = try body.string("pageToken"), !token.isEmpty {
            guard let bytes = ValueJSON.decodeBase64(token), let text = String(bytes: bytes, encoding: .utf8),
                  text.hasPrefix("o:"), let o = Int(text.dropFirst(2)), o >= 0
            else { throw .invalidArgument("Invalid page token: \(token)") }
            offset = o
        }
        let consistency = try c.consistency(body)
        var points = Array(try service.partitionPoints(c.database, query: query, count: Int(min(count, Int64(Int32.max))),
                                                       consistency: consistency, caller: c.caller).dropFirst(offset))
        var next: Int?
        if let pageSize, pageSize > 0, points.count > pageSize {
            points = Array(points.prefix(pageSize))
            next = offset + pageSize
        }
        var o: [(String, JSON)] = []
        if !points.isEmpty {
            o.append(("partitions", .array(points.map { p in
                .object(["values": .array([.object(["referenceValue": .string(c.database.name(of: p))])])])
            })))
        }
        if let next { o.append(("nextPageToken", .string(Data("o:\(next)".utf8).base64EncodedString()))) }
        return c.respond(.object(JSONObject(o)))
    }

    func listCollectionIds(_ c: RequestContext, parent: ResourcePath) throws(FirestoreError) -> Response {
        try c.allowParameters([])
        let body = try c.body()
        try body.requireKnown(["pageSize", "pageToken", "readTime", "requestOptions"])
        let pageSize = try body.int32("pageSize").map(Int.init)
        // The official emulator's words (a negative size was taken as no limit).
        if let pageSize, pageSize < 0 { throw .invalidArgument("page_size must be greater than or equal to zero.") }
        var offset = 0
        if let token = try body.string("pageToken"), !token.isEmpty {
            guard let bytes = ValueJSON.decodeBase64(token), let text = String(bytes: bytes, encoding: .utf8),
                  text.hasPrefix("o:"), let o = Int(text.dropFirst(2)), o >= 0
            else { throw .invalidArgument("invalid page token") }  // the emulator's words
            offset = o
        }
        var readTime: Instant?
        if let r = try body.string("readTime") {
            guard let t = ValueJSON.parseTimestamp(r) else {
                throw .invalidArgument("Invalid value at 'read_time' (type.googleapis.com/google.protobuf.Timestamp), Field 'readTime', Invalid time format: \(r)")
            }
            readTime = t
        }
        var ids = Array(try service.listCollectionIDs(c.database, parent: parent, readTime: readTime, caller: c.caller).dropFirst(offset))
        var next: Int?
        // A full page has a token even when nothing follows it, as the emulator answers (and as
        // `documents.list` pages do).
        if let pageSize, pageSize > 0, ids.count >= pageSize {
            ids = Array(ids.prefix(pageSize))
            next = offset + pageSize
        }
        var o: [(String, JSON)] = []
        if !ids.isEmpty { o.append(("collectionIds", .array(ids.map { .string($0) }))) }
        if let next { o.append(("nextPageToken", .string(Data("o:\(next)".utf8).base64EncodedString()))) }
        return c.respond(.object(JSONObject(o)))
    }
}
