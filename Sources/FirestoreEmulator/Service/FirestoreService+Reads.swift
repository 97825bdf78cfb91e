import HearthCore
import HearthSQLite
import SecurityRules

/// How a read chooses its snapshot.
enum ReadConsistency {
    case strong
    /// Inside an open transaction (its reads are recorded).
    case transaction(String)
    /// Begin a transaction and read inside it.
    case newTransaction(readOnly: Bool, readTime: Instant?)
    /// At a past time: every read sees the database as it was then.
    case readTime(Instant)
}

extension FirestoreService {
    /// Resolves the consistency selector: the transaction reads run in (if any) and the past
    /// time they see (a `readTime`, or a read-only transaction's snapshot; nil: current data).
    func transactionForRead(_ consistency: ReadConsistency, _ db: DatabaseID) throws(FirestoreError)
        -> (id: String?, isNew: Bool, readTime: Instant?) {
        switch consistency {
        case .strong: return (nil, false, nil)
        case .readTime(let t):
            try checkReadTime(t)
            return (nil, false, t)
        case .transaction(let id):
            let state = try transactions.use(id, database: db)
            if state.readOnly { return (id, false, transactions.snapshot(id, now: latestTime())) }
            return (id, false, nil)
        case .newTransaction(let readOnly, let readTime):
            if let readTime { try checkReadTime(readTime) }
            // A read-only transaction reads one snapshot: the given time, or now.
            let snapshot = readOnly ? (readTime ?? latestTime()) : nil
            return (transactions.begin(db, readOnly: readOnly, readTime: snapshot), true, snapshot)
        }
    }

    /// "Now" for reads: the clock, or the last commit when commits ran ahead of a frozen clock
    /// (each commit is at least 1 µs after the previous one), so a read time is never before the
    /// update time of a document it returns.
    func latestTime() -> Instant {
        Instant(unixMicros: max(clock.now().unixMicros, storage.latestCommitMicros))
    }

    /// The document at `path`, now or as it was at `readTime`.
    func load(_ space: Int64?, _ path: ResourcePath, at readTime: Instant?, _ conn: Connection) throws -> StoredDocument? {
        guard let space else { return nil }
        if let readTime { return try storage.document(space: space, path: path, at: readTime, conn) }
        return try storage.document(space: space, path: path, conn)
    }

    /// Firestore's rules for `readTime` without point-in-time recovery: any microsecond within the
    /// version retention period (the past hour), nothing in the future. Beyond the hour only
    /// whole-minute times are valid requests at all (they name point-in-time-recovery snapshots,
    /// which this database does not keep, so they are too old); other times are malformed, and so
    /// is the epoch or anything before it.
    func checkReadTime(_ t: Instant) throws(FirestoreError) {
        let now = latestTime()
        if t > now {
            throw .invalidArgument("The requested 'read_time' cannot be in the future.")
        }
        if t.unixMicros < now.unixMicros - FirestoreStorage.historyMicros {
            // The epoch and before: the official emulator's words for every read that takes a time.
            if t.unixMicros <= 0 { throw .invalidArgument("Only timestamps past epoch are supported.") }
            if t.unixMicros % 60_000_000 != 0 {
                throw .invalidArgument("read_time must be within the past hour, or a whole minute for point-in-time recovery reads: \(ValueJSON.formatTimestamp(t))")
            }
            throw .failedPrecondition("The requested 'read_time' is too old.")
        }
    }

    // MARK: get

    /// `documents.get`.
    func getDocument(_ db: DatabaseID, path: ResourcePath, consistency: ReadConsistency, caller: Caller) throws(FirestoreError) -> StoredDocument {
        let (txn, _, readTime) = try transactionForRead(consistency, db)
        let doc: StoredDocument? = try read { conn in
            let space = try storage.space(of: db, conn)
            let doc = try load(space, path, at: readTime, conn)
            if case .client(let auth) = caller {
                try authorizeGet(db, path: path, document: doc, auth: auth, lookup: readLookup(db, space: space, conn))
            }
            return doc
        }
        if let txn { transactions.recordRead(txn, path: path, updateTime: doc?.updateTime) }
        guard let doc else {
            throw .notFound("Document (\(db.name(of: path))) not found.")
        }
        return doc
    }

    /// `documents.get` of the latest committed state (no transaction, no read time), through the
    /// storage's `DocumentCache`: a document read before and unchanged since is not read again,
    /// and comes with its `resource` and encodings. The rules judge every request all the same,
    /// with the same request (`authorizeGet`); when they can read other documents (get(),
    /// exists()) the request takes the store's path, so those reads see the same snapshot.
    /// - Parameters:
    ///   - name: `db.name(of: path)`, when the caller has it already.
    ///   - known: the cache's entry for that name, when the caller looked it up while handling this
    ///     request (it is then as current as a lookup here: both follow the request's arrival).
    func getLatest(_ db: DatabaseID, path: ResourcePath, name: String? = nil, known: DocumentCache.Entry? = nil,
                   caller: Caller) throws(FirestoreError) -> (entry: DocumentCache.Entry, document: StoredDocument) {
        let cache = storage.readCache
        let key = name ?? db.name(of: path)
        // A kept entry's database was accepted when it was kept (`accepts` scans both ids, ~700
        // instructions a get).
        let cacheable = known != nil || DocumentCache.accepts(db)
        if cacheable, let entry = known ?? cache.entry(key), try authorizeCached(entry, caller: caller) {
            return try present(entry)
        }
        let generation = cache.current
        let entry: DocumentCache.Entry = try read { conn in
            let space = try storage.space(of: db, conn)
            let entry = DocumentCache.Entry(database: db, path: path, name: key, document: try load(space, path, at: nil, conn))
            if case .client(let auth) = caller {
                try authorizeGet(db, path: path, resource: entry.resource, auth: auth, lookup: readLookup(db, space: space, conn))
            }
            return entry
        }
        if cacheable { cache.insert(entry, readAt: generation) }
        return try present(entry)
    }

    /// Judges a cached entry's get for `caller`; false when the rules need the store (then
    /// nothing was decided, and the caller reads through it).
    private func authorizeCached(_ entry: DocumentCache.Entry, caller: Caller) throws(FirestoreError) -> Bool {
        guard case .client(let auth) = caller else { return true }
        // Looked up once for both the question and the decision (the lookup takes a lock and hashes
        // the project).
        let force = rules.inForce(for: entry.database.project, database: entry.database.database)
        if force.ruleset?.readsDocuments == true { return false }
        // These rules read no documents; should one be asked for anyway, the lookup fails and the
        // request is denied (fail closed).
        try authorizeGet(entry.database, rulesPath: entry.rulesPath, resource: entry.resource, auth: auth,
                         lookup: NoStoreLookup(), in: force)
        return true
    }

    /// The entry with its document when it exists, else get's NOT_FOUND.
    private func present(_ entry: DocumentCache.Entry) throws(FirestoreError) -> (entry: DocumentCache.Entry, document: StoredDocument) {
        guard let document = entry.document else { throw .notFound("Document (\(entry.name)) not found.") }
        return (entry, document)
    }

    // MARK: batchGet

    /// `documents.batchGet`: each document found or missing, in request order (duplicates elided),
    /// and the time they were read at. A current read (`strong`) goes through the storage's
    /// `DocumentCache` as `getLatest` does: answered from it when it holds every document, else
    /// read through the store and kept for the next.
    func batchGet(_ db: DatabaseID, paths: [ResourcePath], consistency: ReadConsistency, caller: Caller) throws(FirestoreError)
        -> (results: [(ResourcePath, StoredDocument?)], transaction: String?, readTime: Instant) {
        let (txn, isNew, readTime) = try transactionForRead(consistency, db)
        var unique: [ResourcePath] = []
        if paths.count < 2 {
            unique = paths  // nothing to elide (and no set to build: the usual read of one document)
        } else {
            var seen = Set<ResourcePath>()
            for p in paths where seen.insert(p).inserted { unique.append(p) }
        }
        var current = false
        if case .strong = consistency { current = DocumentCache.accepts(db) }
        if current, let kept = try cachedBatchGet(db, paths: unique, caller: caller) {
            return (kept, nil, latestTime())
        }
        if let txn, readTime == nil, let written = try writtenBatchGet(db, paths: unique, caller: caller) {
            for (p, d) in written { transactions.recordRead(txn, path: p, updateTime: d?.updateTime) }
            return (written, isNew ? txn : nil, latestTime())
        }
        let cache = storage.readCache
        let generation = cache.current  // before the read: what `insert` may keep
        let results: [(ResourcePath, StoredDocument?)] = try read { conn in
            let space = try storage.space(of: db, conn)
            let lookup = readLookup(db, space: space, conn)
            var out: [(ResourcePath, StoredDocument?)] = []
            for p in unique {
                let doc = try load(space, p, at: readTime, conn)
                // A current read's document is kept (with its `resource`, made once) for the next.
                let entry = current ? DocumentCache.Entry(database: db, path: p, name: db.name(of: p), document: doc) : nil
                if case .client(let auth) = caller {
                    // A multi-document read shares the access budget of 20.
                    let limit = unique.count > 1 ? max(0, min(10, 20 - lookup.accessCount)) : 10
                    if let entry {
                        try authorizeGet(db, path: p, resource: entry.resource, auth: auth, lookup: lookup, accessLimit: limit)
                    } else {
                        try authorizeGet(db, path: p, document: doc, auth: auth, lookup: lookup, accessLimit: limit)
                    }
                }
                if let entry { cache.insert(entry, readAt: generation) }
                out.append((p, doc))
            }
            return out
        }
        if let txn {
            for (p, d) in results { transactions.recordRead(txn, path: p, updateTime: d?.updateTime) }
        }
        return (results, isNew ? txn : nil, readTime ?? latestTime())
    }

    /// A current batchGet of `paths` (unique) answered from the read cache: nil unless it holds every
    /// one of them at one generation — then they are one state of the database, as one read
    /// transaction's would be — and the rules judge them without the store (as a cached get's:
    /// `authorizeCached`, in request order, so the first denied document fails the call as on the
    /// store's path; the access budget is untouched, as no rule reads a document).
    private func cachedBatchGet(_ db: DatabaseID, paths: [ResourcePath], caller: Caller) throws(FirestoreError)
        -> [(ResourcePath, StoredDocument?)]? {
        let cache = storage.readCache
        let generation = cache.current
        var entries: [DocumentCache.Entry] = []
        entries.reserveCapacity(paths.count)
        for p in paths {
            guard let entry = cache.entry(db.name(of: p)) else { return nil }
            entries.append(entry)
        }
        // Each lookup saw the generation current at the time; unchanged since the first, they all saw it.
        guard cache.current == generation else { return nil }
        for entry in entries {
            guard try authorizeCached(entry, caller: caller) else { return nil }
        }
        return entries.map { ($0.path, $0.document) }
    }

    /// A read-write transaction's batchGet of `paths` (unique) answered with the versions transactions
    /// last committed (`TransactionWrites`): nil unless it holds every one of them — then each is its
    /// document's latest committed version, all of one state, as a snapshot read now would return —
    /// and the rules judge them without the store (as `cachedBatchGet` does; rules that read documents
    /// take the store's path, so their reads and the documents share a snapshot).
    private func writtenBatchGet(_ db: DatabaseID, paths: [ResourcePath], caller: Caller) throws(FirestoreError)
        -> [(ResourcePath, StoredDocument?)]? {
        guard let space = storage.cachedSpace(of: db),
              let held = storage.transactionWrites.held(space: space, paths: paths) else { return nil }
        if case .client(let auth) = caller {
            let force = rules.inForce(for: db.project, database: db.database)
            if force.ruleset?.readsDocuments == true { return nil }
            for h in held {
                // The `resource` the commit that wrote this version made for its rules, when it did.
                let d = h.document
                try authorizeGet(db, rulesPath: RulesConversion.path(db, d.path),
                                 resource: h.resource ?? RulesConversion.resource(db, path: d.path, fields: d.fields), auth: auth,
                                 lookup: NoStoreLookup(), in: force)
            }
        }
        return held.map { ($0.document.path, $0.document) }
    }

    // MARK: runQuery

    /// `runQuery`: matching documents, the count the offset skipped, a new transaction's id, and
    /// the time the query read at. `authorized`: the rules already allowed this very query for this
    /// caller (`runCurrentQuery` that stopped at its cap), so they are not asked again.
    func runQuery(_ db: DatabaseID, query: Query, consistency: ReadConsistency, caller: Caller,
                  authorized: Bool = false) throws(FirestoreError)
        -> (result: QueryExecutor.Result, transaction: String?, readTime: Instant) {
        let (txn, isNew, readTime) = try transactionForRead(consistency, db)
        let executor = queryExecutor(db, query)
        let result: QueryExecutor.Result = try read { conn in
            let space = try storage.space(of: db, conn)
            if !authorized, case .client(let auth) = caller {
                try authorizeList(db, query: query, auth: auth, lookup: readLookup(db, space: space, conn))
            }
            return try executor.run(query, space: space, conn, at: readTime)
        }
        buildMissingIndexes(executor, db, query)
        if let txn, readTime == nil {
            recordQuery(txn, query, documents: result.documents, depth: nil)
        }
        return (result, isNew ? txn : nil, readTime ?? latestTime())
    }

    /// `runQuery` of the current data (no transaction, no read time) that reads at most `rows` rows and `bytes` stored bytes
    /// (`QueryRowCap`): nil when it would read more, or when its plan found index fields missing —
    /// the rules have allowed it by then (a denial is thrown as by `runQuery`), and
    /// `runQuery(authorized: true)` answers it.
    ///
    /// Why a missing field sends the query on: building it writes a row for every document of the
    /// collection id in the database (under every parent), however few this query scanned, and the
    /// caller is the HTTP/2 loop thread, whose every other stream would wait for the build (faith25
    /// measured gRPC gets stalled 0.5–0.9 s behind a first query over 50,000 documents). The worker's
    /// `runQuery` scans again (within this cap, so cheaply) and builds there.
    func runCurrentQuery(_ db: DatabaseID, query: Query, caller: Caller, rows: Int, bytes: Int) throws(FirestoreError)
        -> (result: QueryExecutor.Result, readTime: Instant)? {
        var executor = queryExecutor(db, query)
        let result: QueryExecutor.Result? = try read { conn in
            let space = try storage.space(of: db, conn)
            if case .client(let auth) = caller {
                try authorizeList(db, query: query, auth: auth, lookup: readLookup(db, space: space, conn))
            }
            // A collection group without its scan index would walk every document of the space
            // here (SQLite filters them, so the cap does not see them); the worker builds it.
            if query.allDescendants && !query.collectionID.isEmpty && !storage.groupScans.isBuilt { return nil }
            executor.rowCap = QueryRowCap(rows: rows, bytes: bytes)
            do {
                return try executor.run(query, space: space, conn)
            } catch is QueryRowCap.Exceeded {
                return nil
            }
        }
        if executor.missingIndexes?.isEmpty == false { return nil }
        return result.map { ($0, latestTime()) }
    }

    /// A current query's answer kept by the read cache (`DocumentCache.answer(_:)`, under `key`, which
    /// names exactly this database and query), judged for `caller` as `runCurrentQuery` judges it:
    /// the same `list` decision (a denial is thrown), made without the store — nil when nothing is
    /// kept, or when the rules read documents (then nothing was decided, and the caller reads through
    /// the store, whose snapshot those reads must share). No write has ended since the kept answer's
    /// read began, so its documents are what that read would return now (as `cachedBatchGet`'s are).
    func keptQueryAnswer(_ db: DatabaseID, query: Query, key: RequestBytesKey, caller: Caller) throws(FirestoreError)
        -> DocumentCache.Answer? {
        guard let answer = storage.readCache.answer(key) else { return nil }
        if case .client(let auth) = caller {
            let force = rules.inForce(for: db.project, database: db.database)
            if force.ruleset?.readsDocuments == true { return nil }
            // These rules read no documents; should one be asked for anyway, the lookup fails and the
            // request is denied (fail closed).
            try authorizeList(db, query: query, auth: auth, lookup: NoStoreLookup(), in: force)
        }
        return answer
    }

    /// runQuery's executor: a query answered with stored documents as they are reads them through
    /// the read cache (`QueryExecutor.readCache`), whose encodings the answer then uses.
    /// Call before opening its snapshot (`indexedExecutor`).
    private func queryExecutor(_ db: DatabaseID, _ query: Query) -> QueryExecutor {
        var executor = indexedExecutor(db)
        if query.returnsStoredDocuments { executor.readCache = storage.readCache }
        return executor
    }

    /// An executor that may read the index pairs registered now (call before opening the snapshot it
    /// runs in) and reports those its plan found missing, for `buildMissingIndexes`.
    func indexedExecutor(_ db: DatabaseID) -> QueryExecutor {
        var executor = QueryExecutor(storage: storage, database: db)
        executor.indexes = storage.indexedFields.view()
        executor.missingIndexes = QueryExecutor.MissingFields()
        return executor
    }

    /// Builds the index rows of the fields `executor`'s run found missing (it answered by scanning),
    /// before the answer goes out, so the next query on them seeks. A failure only costs the next
    /// query a scan (and another try): the answer stands.
    func buildMissingIndexes(_ executor: QueryExecutor, _ db: DatabaseID, _ query: Query) {
        guard let missing = executor.missingIndexes, !missing.isEmpty else { return }
        do {
            if missing.groupScans { try storage.groupScans.build(storage.database) }
            if !missing.fields.isEmpty { try storage.buildFields(db, collectionID: query.collectionID, fields: missing.fields) }
        } catch {
            logger.error("firestore: building index entries failed", [("error", .string("\(error)"))])
        }
    }

    /// Remembers what a query in read-write transaction `txn` returned, so the commit can tell
    /// whether it would still return the same.
    private func recordQuery(_ txn: String, _ query: Query, documents: [StoredDocument], depth: Int?) {
        guard transactions.isReadWrite(txn) else { return }
        for d in documents { transactions.recordRead(txn, path: d.path, updateTime: d.updateTime) }
        transactions.recordQuery(txn, TransactionRegistry.RecordedQuery(
            query: query, depth: depth, results: TransactionRegistry.RecordedQuery.versions(documents, depth: depth)))
    }

    // MARK: runAggregationQuery

    /// One requested aggregation.
    struct Aggregation {
        enum Kind {
            case count(upTo: Int64?)
            case sum(FieldPath)
            case avg(FieldPath)
        }
        var alias: String
        var kind: Kind
    }

    /// `runAggregationQuery`: each alias with its value, a new transaction's id, and the read time.
    func aggregate(_ db: DatabaseID, query: Query, aggregations: [Aggregation], consistency: ReadConsistency,
                   caller: Caller) throws(FirestoreError) -> (fields: [ExactString: FirestoreValue], transaction: String?, readTime: Instant) {
        // Aggregations over fields see only documents that have every such field, so a count beside
        // a sum or average counts those documents (Firestore's aggregation docs; the emulator agrees).
        let fields: [FieldPath] = aggregations.compactMap {
            switch $0.kind {
            case .count: nil
            case .sum(let f), .avg(let f): f
            }
        }
        try Self.checkAggregatedFieldsIndexable(query, fields)
        let (result, txn, readTime) = try runQuery(db, query: Self.orderedByAggregatedFields(query, fields),
                                                   consistency: consistency, caller: caller)
        let documents = fields.isEmpty ? result.documents : result.documents.filter { d in
            fields.allSatisfy { DocumentFields.value(at: $0, in: d.fields) != nil }
        }
        var out: [ExactString: FirestoreValue] = [:]
        for a in aggregations {
            switch a.kind {
            case .count(let upTo):
                var n = Int64(documents.count)
                if let upTo { n = min(n, upTo) }
                out[ExactString(a.alias)] = .integer(n)
            case .sum(let field), .avg(let field):
                var sum = NumericSum()
                for d in documents {
                    switch DocumentFields.value(at: field, in: d.fields) {
                    case .integer(let i)?: sum.add(i)
                    case .double(let x)?: sum.add(x)
                    default: break
                    }
                }
                if case .sum = a.kind { out[ExactString(a.alias)] = sum.value } else { out[ExactString(a.alias)] = sum.average }
            }
        }
        return (out, txn, readTime)
    }

    /// A sum or average reads its field from an index (Firestore computes them "directly through
    /// index scans", so "a field must be indexed": the SUM/AVG launch notes), and an index has no
    /// fields after `__name__`. A query constrained by key — a `__name__` filter of any operator,
    /// an explicit `__name__` ordering, a cursor, or a descendant query under a document (a key
    /// range) — scans in key order unless its ordering names the field first, so each aggregated
    /// field must be one of the query's orderings (explicit or an inequality's); else the
    /// official emulator's index planning refuses it, naming the fields in sorted order. Kind-less
    /// queries, collection groups and plain collections alike (faith38's probes); a query
    /// without a key constraint is answered.
    static func checkAggregatedFieldsIndexable(_ query: Query, _ fields: [FieldPath]) throws(FirestoreError) {
        guard !fields.isEmpty else { return }
        let keyConstrained = query.filter?.leaves.contains { $0.fieldPath?.isDocumentKey == true } == true
            || query.explicitOrder.contains { $0.field.isDocumentKey }
            || query.startAt != nil || query.endAt != nil
            || (query.allDescendants && !query.childrenOnly && !query.parent.segments.isEmpty)
        guard keyConstrained else { return }
        let unordered = Set(fields.filter { f in !query.order.contains { $0.field == f } }.map { $0.segments.joined(separator: ".") })
        guard !unordered.isEmpty else { return }
        throw .invalidArgument("This query requires an index that has fields [\(unordered.sorted().joined(separator: ", "))] after "
            + "__name__ and Firestore does not currently support such an index. Please try the query again with additional ordering on those fields.")
    }

    /// The query a sum or average with a limit or offset runs as. The aggregated fields act as an
    /// existence filter and, like an inequality's field, join the implicit order (after the explicit
    /// orderings, before `__name__`), so `limit(12).sum("n")` adds the 12 smallest `n` — what
    /// python-firestore's system tests expect of Cloud Firestore and what its emulator answers.
    /// Without a limit or offset the order cannot change the result; with a cursor the cursor's
    /// positions belong to the order as sent, so the query is left as it is.
    static func orderedByAggregatedFields(_ query: Query, _ fields: [FieldPath]) -> Query {
        guard !fields.isEmpty, query.limit != nil || query.offset > 0, query.startAt == nil, query.endAt == nil else { return query }
        var q = query
        let missing = Set(fields.filter { f in !q.order.contains { $0.field == f } }).sorted { $0.segments.lexicographicallyPrecedes($1.segments) }
        let at = q.order.last?.field.isDocumentKey == true ? q.order.count - 1 : q.order.count
        let descending = q.order.last?.descending ?? false
        q.order.insert(contentsOf: missing.map { Ordering(field: $0, descending: descending) }, at: at)
        return q
    }

    // MARK: list

    /// One page of `documents.list`.
    struct ListPage {
        /// Each entry in order: a document, or (`showMissing`) the path of one that exists only as
        /// the parent of sub-collections.
        var entries: [(ResourcePath, StoredDocument?)]
        /// The token of the next page; nil on the last.
        var nextPageToken: String?
        /// Documents and child probes read from storage to answer (tests check a page reads about a page).
        var examined = 0
    }

    /// `documents.list`: one page of a collection in `order`, starting after `pageToken`'s position.
    ///
    /// A page is one query with a `startAfter` cursor at the token's position and a limit of
    /// `pageSize + 1` (the extra entry bounds a `showMissing` page's missing documents), so it reads
    /// about a page of index rows wherever it starts; without a page size everything is one page.
    func listDocuments(_ db: DatabaseID, collection: ResourcePath, order: [Ordering], pageSize: Int?, pageToken: ListPageToken?,
                       showMissing: Bool, recursive: Bool = false, consistency: ReadConsistency, caller: Caller) throws(FirestoreError)
        -> ListPage {
        var fullOrder = order
        if !fullOrder.contains(where: { $0.field.isDocumentKey }) {
            fullOrder.append(Ordering(field: .documentKey, descending: fullOrder.last?.descending ?? false))
        }
        // `recursive`: every document below the collection, at any depth (a kind-less descendant
        // scan). Without a collection id (`collection` is the root or a document): the documents
        // of every collection directly under it, or with `recursive` every descendant.
        let withoutCollection = !collection.isCollection
        var query = recursive || withoutCollection
            ? Query(parent: collection, collectionID: "", allDescendants: true, filter: nil, explicitOrder: order, order: fullOrder,
                    startAt: nil, endAt: nil, offset: 0, limit: nil, projection: nil)
            : Query(parent: collection.parent, collectionID: collection.lastSegment, allDescendants: false, filter: nil,
                    explicitOrder: order, order: fullOrder, startAt: nil, endAt: nil, offset: 0, limit: nil, projection: nil)
        query.childrenOnly = withoutCollection && !recursive
        // Rules judge the listing as asked (no cursor), whichever page this is, with the page
        // size as `request.query.limit`, as the official emulator does (`?pageSize=5` meets
        // `request.query.limit <= 10`).
        var asked = query
        if let pageSize, pageSize > 0 { asked.limit = pageSize }
        var after: ResourcePath?
        if let pageToken {
            try pageToken.check(order: fullOrder, database: db, collection: collection, anyDepth: recursive || withoutCollection)
            query.startAt = Cursor(values: pageToken.values, before: false)
            after = pageToken.path
        }
        // (Capped so the look-ahead cannot overflow; no collection holds 2^40 documents.)
        let pageLimit = pageSize.flatMap { $0 > 0 ? min($0, 1 << 40) + 1 : nil }
        query.limit = pageLimit
        let (txn, _, readTime) = try transactionForRead(consistency, db)
        var docs: [StoredDocument] = []
        var examined = 0
        let executor = indexedExecutor(db)
        defer { buildMissingIndexes(executor, db, query) }
        var entries: [(ResourcePath, StoredDocument?)] = try read { conn in
            let space = try storage.space(of: db, conn)
            if case .client(let auth) = caller {
                try authorizeList(db, query: asked, auth: auth, lookup: readLookup(db, space: space, conn))
            }
            let result = try executor.run(query, space: space, conn, at: readTime)
            docs = result.documents
            examined = result.examined
            var entries: [(ResourcePath, StoredDocument?)] = docs.map { ($0.path, $0) }
            if showMissing, collection.isCollection, let space {
                // Documents that do not exist but have sub-collections, in name order with the rest:
                // the children after the position up to the last document read (all of those are
                // in `docs`, so a child not among them is missing), at most a page of them.
                let existing = Set(docs.map(\.path))
                let bound = pageLimit.flatMap { docs.count == $0 ? docs.last?.path.key : nil }
                var missing = 0
                func visit(_ id: String) -> Bool {
                    examined += 1
                    let p = collection.appending(id)
                    if let bound, OrderedEncoding.compare(p.key, bound) > 0 { return false }
                    if !existing.contains(p) {
                        entries.append((p, nil))
                        missing += 1
                        if let pageLimit, missing >= pageLimit { return false }
                    }
                    return true
                }
                let afterID = after.map(\.lastSegment)
                // The walk steps over the collection's own documents: bounded by the page, as `visit` is.
                if let readTime {
                    try storage.forEachChildSegment(space: space, under: collection.key, after: afterID, through: bound,
                                                    at: readTime, conn, visit)
                } else {
                    try storage.forEachChildSegment(space: space, under: collection.key, after: afterID, through: bound, conn, visit)
                }
                if missing > 0 { entries.sort { OrderedEncoding.compare($0.0.key, $1.0.key) < 0 } }
            }
            return entries
        }
        if let txn, readTime == nil {
            recordQuery(txn, query, documents: docs, depth: nil)
        }
        // A full page has a next page token even when nothing follows it (the next page is then
        // empty), as the official emulator answers; the API promises only that a page without
        // one is the last.
        guard let pageSize, pageSize > 0, entries.count >= pageSize else {
            return ListPage(entries: entries, nextPageToken: nil, examined: examined)
        }
        entries.removeLast(entries.count - pageSize)
        let (lastPath, lastDoc) = entries[entries.count - 1]
        let values = fullOrder.map { o -> FirestoreValue in
            if o.field.isDocumentKey { return .reference(db.name(of: lastPath)) }
            return lastDoc.flatMap { DocumentFields.value(at: o.field, in: $0.fields) } ?? .null
        }
        return ListPage(entries: entries, nextPageToken: ListPageToken.encode(values: values, order: fullOrder), examined: examined)
    }

    // MARK: partitionQuery

    /// `partitionQuery`: up to `count` documents splitting the query's results into parts of
    /// nearly equal size, in name order; each starts a partition (`startAt` it, `endBefore` the
    /// next). Firestore takes only collection-group queries ordered by name, without filters,
    /// limits or offsets.
    func partitionPoints(_ db: DatabaseID, query: Query, count: Int, consistency: ReadConsistency,
                         caller: Caller) throws(FirestoreError) -> [ResourcePath] {
        let byNameOnly = query.explicitOrder.isEmpty
            || (query.explicitOrder.count == 1 && query.explicitOrder[0].field.isDocumentKey && !query.explicitOrder[0].descending)
        guard query.allDescendants, byNameOnly, query.filter == nil, query.limit == nil, query.offset == 0 else {
            throw .invalidArgument("Query must specify collection with all descendants and be ordered by name ascending. Other filters, order bys, limits and offsets are not supported.")
        }
        let documents = try runQuery(db, query: query, consistency: consistency, caller: caller).result.documents
        // Every partition holds at least one document.
        let points = min(count, max(0, documents.count - 1))
        guard points > 0 else { return [] }
        return (1...points).map { i in documents[i * documents.count / (points + 1)].path }
    }

    // MARK: listCollectionIds

    /// `listCollectionIds` under a document (or the root): sorted ids. Rules have no method for
    /// it, so as in production client credentials may not list collections — unless no rules are
    /// configured at all (everything is open then).
    func listCollectionIDs(_ db: DatabaseID, parent: ResourcePath, readTime: Instant? = nil, caller: Caller) throws(FirestoreError) -> [String] {
        if !caller.isAdmin {
            if case .open = rules.active(for: db.project, database: db.database) {} else {
                throw .permissionDenied("Metadata operations require admin authentication.")
            }
        }
        if let readTime { try checkReadTime(readTime) }
        return try read { conn in
            guard let space = try storage.space(of: db, conn) else { return [] }
            if let readTime { return try storage.childSegments(space: space, under: parent.key, at: readTime, conn) }
            return try storage.childSegments(space: space, under: parent.key, conn)
        }
    }

    // MARK: transactions

    /// `beginTransaction`.
    func beginTransaction(_ db: DatabaseID, readOnly: Bool, readTime: Instant?, retrying: String?) throws(FirestoreError) -> String {
        if let readTime { try checkReadTime(readTime) }
        if let retrying {
            guard transactions.isKnown(retrying) else { throw .invalidArgument(TransactionRegistry.unknownMessage) }
            _ = transactions.finish(retrying)
        }
        return transactions.begin(db, readOnly: readOnly, readTime: readTime)
    }

    /// `rollback`.
    func rollback(_ db: DatabaseID, transaction: String) throws(FirestoreError) {
        // Rolling back a finished transaction is a no-op, as on Firestore.
        if transactions.isClosed(transaction) { return }
        _ = try transactions.use(transaction, database: db)
        transactions.finish(transaction)
    }
}
