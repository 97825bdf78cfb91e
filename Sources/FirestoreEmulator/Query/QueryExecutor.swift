import HearthCore
import HearthSQLite

/// Answers a `Query` from the SQLite indexes.
///
/// The filter is put in disjunctive normal form; each conjunction picks the narrowest access
/// path its filters allow — point lookups for `__name__ ==`/`in`, index seeks for `==`, `in`,
/// `array-contains(-any)`, `IS_NULL`/`IS_NAN`, a value range of one field for `<`…`>=`, the whole
/// index of a field for `!=`/`not-in`/`IS_NOT_*` or for the first `orderBy` field, and a scan of the
/// collection only when nothing else constrains it. Candidates are then checked against the
/// complete filter in memory. When the access path already yields Firestore's order (one seek or
/// range whose order equals the query's), documents stream and reading stops at `offset + limit`;
/// otherwise the candidates are sorted. An equality with a limit and an order on another field
/// (`a == x ORDER BY b LIMIT n`, a composite index in Firestore) first walks b's index in order,
/// checking each document on the fields the filter names before decoding it whole, while a budget
/// (`OrderWalkBudget`) weighs the walk against reading and sorting every match.
///
/// At a past `readTime` the same plan runs over the current indexes, skipping documents updated
/// after that time, and the versions those documents had then (from the history rows, usually
/// few) are checked in memory and merged in order. A current-time query never touches history.
struct QueryExecutor {
    let storage: FirestoreStorage
    let database: DatabaseID
    /// Whether `a == x ORDER BY b LIMIT n` may walk b's index (false: always seek and sort; tests
    /// compare the two plans' answers).
    var walksOrderIndex = true
    /// The most rows the query may read (nil: no bound); past it `run` throws `QueryRowCap.Exceeded`.
    var rowCap: QueryRowCap? = nil
    /// When set, a current query whose answer streams (its access path yields its order) reads each
    /// document through this cache (`DocumentCache.version(in:key:…)`): a version kept there is
    /// not decoded again, and `Result.versions` hands the answer's encoder each document named
    /// once. For callers that encode every stored document they get (runQuery).
    var readCache: DocumentCache? = nil
    /// The index pairs the snapshot may use, taken before it was opened (`IndexedFields.view`);
    /// nil: the snapshot's own `fs_index_fields` is asked.
    var indexes: IndexedFields.View? = nil
    /// Where `run` reports the fields whose pairs it found missing (it scanned instead), for the
    /// caller to build before it answers; nil: they are built in the background.
    var missingIndexes: MissingFields? = nil

    /// Fields a run found without index rows.
    final class MissingFields: @unchecked Sendable {
        var fields: [String] = []
        /// A collection-group scan ran without the group scan index (`GroupScanIndex`).
        var groupScans = false

        /// Whether the caller has anything to build.
        var isEmpty: Bool { fields.isEmpty && !groupScans }
    }

    /// Matching documents after cursors, offset and limit, and how many the offset skipped.
    struct Result {
        var documents: [StoredDocument]
        var skipped: Int
        /// Documents read from storage to answer (tests check that indexes narrow this).
        var examined = 0
        /// Each document's version as read through `readCache`, in `documents`' order (nil: not
        /// read that way).
        var versions: [DocumentCache.Version]? = nil
    }

    private enum Access {
        /// Point lookups of these documents.
        case keys([ResourcePath])
        /// Index seeks of exact values (`kind`: value or array element).
        case lookups(field: String, kind: Int, values: [[UInt8]])
        /// A value range of one field's index.
        case range(field: String, lower: Bound, upper: Bound)
        /// Every document of the query's scope.
        case scan
    }

    private struct Bound {
        var bytes: [UInt8]
        var inclusive: Bool
    }

    private var matcher: QueryMatcher { QueryMatcher(database: database) }

    /// Runs `query` against the current data, or as the database was at `readTime`.
    func run(_ query: Query, space: Int64?, _ conn: Connection, at readTime: Instant? = nil) throws -> Result {
        guard let space else { return Result(documents: [], skipped: 0) }
        // Vector search ranks every result of the rest of the query (brute force: no vector index).
        if let nearest = query.findNearest {
            var rest = query
            rest.findNearest = nil
            var result = try run(rest, space: space, conn, at: readTime)
            result.documents = nearest.nearest(result.documents)
            result.versions = nil  // ranked anew: no longer in the documents' order
            return result
        }
        let conjunctions = query.filter?.disjunctiveNormalForm(limit: 64) ?? [[]]
        if query.limit == 0 { return Result(documents: [], skipped: 0) }

        // At a past time: current documents updated after it are skipped, and the versions of
        // changed documents current then are merged in, in the query's order.
        let cutoff = readTime?.unixMicros ?? .max
        var past: [(StoredDocument, [[UInt8]])] = []
        if let readTime {
            for doc in try storage.versions(space: space, changedAfter: readTime, under: historyPrefix(query), conn)
            where accepts(doc, query: query) {
                past.append((doc, sortKeys(doc, query.order)))
            }
            past.sort { compareKeys($0.1, $1.1, query.order) < 0 }
        }

        // A collection-group query reads the group's index rows only once they are complete;
        // until then it scans the group's documents (the same answer), and the rows get built.
        var indexed = true
        if query.allDescendants && !query.collectionID.isEmpty {
            indexed = try storage.groupIndexComplete(space: space, collectionID: query.collectionID, conn)
            if !indexed { storage.scheduleGroupIndex(space: space, collectionID: query.collectionID) }
        }
        // Index rows exist only for registered (collection id, field) pairs, so every access path
        // that reads a field's rows is checked against the pairs the snapshot has; without them the
        // query scans (the same answer) and the pairs get built: by the caller before it answers
        // (`missingIndexes`), or in the background.
        var missing: [String] = []
        func usable(_ field: String) -> Bool {
            if (try? storage.fieldsIndexed(space: space, collectionID: query.collectionID, [field], view: indexes, conn)) == true { return true }
            missing.append(field)
            return false
        }
        defer {
            if !missing.isEmpty {
                // Every field the plan may read, not only those met before it fell back to a scan.
                let fields = indexFields(query)
                if let report = missingIndexes {
                    report.fields += fields
                } else {
                    storage.scheduleFields(database, collectionID: query.collectionID, fields: fields)
                }
            }
        }

        // One conjunction whose access path yields the query's order: stream.
        if conjunctions.count == 1 {
            let access = chooseAccess(conjunctions[0], query: query, indexed: indexed, usable: usable)
            // `a == x ORDER BY b LIMIT n` (a composite index in Firestore): walk b's index in order,
            // answering the equality from a's index entry by entry (no document read for an entry
            // that fails it), until n are found — unless seeking a's matches and sorting them turns
            // out cheaper as the walk goes (`OrderWalkBudget`); then the seeks below answer.
            if walksOrderIndex, query.limit != nil, streamingDirection(access, conjunction: conjunctions[0], query: query) == nil,
               case .lookups(let field, let kind, let values) = access {
                let ordered = chooseAccess(conjunctions[0], query: query, indexed: indexed, usable: usable, preferOrderIndex: true)
                if case .range = ordered, let orderedDirection = streamingDirection(ordered, conjunction: conjunctions[0], query: query) {
                    let budget = OrderWalkBudget(space: space, scope: indexScope(query), field: field, kind: kind, values: values,
                                                 keyRange: keyRange(query), conn)
                    defer { budget.finish() }
                    let walk = Walk(conjunctions[0], query: query, budget: budget)
                    if let result = try stream(ordered, descending: orderedDirection, query: query, space: space,
                                               past: past, cutoff: cutoff, walk: walk, conn) {
                        return result
                    }
                }
            }
            if let descending = streamingDirection(access, conjunction: conjunctions[0], query: query),
               let result = try stream(access, descending: descending, query: query, space: space,
                                       past: past, cutoff: cutoff, walk: nil, conn) {
                return result
            }
        }

        // Otherwise gather candidates from every conjunction, then sort.
        var seenKeys = Set<[UInt8]>()
        var candidates: [(StoredDocument, [[UInt8]])] = []
        var examined = past.count
        for (doc, keys) in past {
            if let start = query.startAt, !passesStart(keys, start, query.order) { continue }
            if let end = query.endAt, !passesEnd(keys, end, query.order) { continue }
            candidates.append((doc, keys))
        }
        for conjunction in conjunctions {
            let access = chooseAccess(conjunction, query: query, indexed: indexed, usable: usable)
            try read(access, query: query, space: space, descending: false, conn) { doc, _ in
                examined += 1
                guard doc.updateTime.unixMicros <= cutoff else { return true }
                let key = doc.path.key
                guard !seenKeys.contains(key) else { return true }
                seenKeys.insert(key)
                guard accepts(doc, query: query) else { return true }
                let keys = sortKeys(doc, query.order)
                if let start = query.startAt, !passesStart(keys, start, query.order) { return true }
                if let end = query.endAt, !passesEnd(keys, end, query.order) { return true }
                candidates.append((doc, keys))
                return true
            }
        }
        candidates.sort { compareKeys($0.1, $1.1, query.order) < 0 }
        let skipped = min(query.offset, candidates.count)
        var slice = candidates.dropFirst(skipped)
        if let limit = query.limit { slice = slice.prefix(limit) }
        return Result(documents: slice.map(\.0), skipped: skipped, examined: examined)
    }

    /// Reads one access path that yields the query's order, stopping at `offset + limit`; nil when
    /// `walk`'s budget ran out first (the caller then answers another way).
    private func stream(_ access: Access, descending: Bool, query: Query, space: Int64,
                        past: [(StoredDocument, [[UInt8]])], cutoff: Int64, walk: Walk?,
                        _ conn: Connection) throws -> Result? {
        let limitEnd = query.limit.map { query.offset + $0 }
        var matched: [StoredDocument] = []
        // Documents read through the cache (a current query: no past versions to merge).
        let named = readCache != nil && past.isEmpty && cutoff == .max
        var versions: [DocumentCache.Version] = []
        var seen = 0
        var skipped = 0
        var examined = past.count
        var nextPast = 0
        // Takes one document in order; false once reading can stop.
        func take(_ doc: StoredDocument, _ keys: [[UInt8]], _ version: DocumentCache.Version? = nil) -> Bool {
            if let start = query.startAt, !passesStart(keys, start, query.order) { return true }
            if let end = query.endAt, !passesEnd(keys, end, query.order) { return false }  // past the end: stop
            seen += 1
            if seen <= query.offset {
                skipped += 1
                return true
            }
            matched.append(doc)
            if let version { versions.append(version) }
            if let limitEnd, seen >= limitEnd { return false }
            return true
        }
        var stopped = false
        // The sort keys serve only the cursors and the merge of past versions: a plain current
        // query (the usual one) skips encoding them for every document it reads.
        let needsKeys = !past.isEmpty || query.startAt != nil || query.endAt != nil
        try read(access, query: query, space: space, descending: descending, walk: walk, named: named, conn) { doc, version in
            examined += 1
            guard doc.updateTime.unixMicros <= cutoff, accepts(doc, query: query) else { return true }
            let keys = needsKeys ? sortKeys(doc, query.order) : []
            while nextPast < past.count, compareKeys(past[nextPast].1, keys, query.order) < 0 {
                nextPast += 1
                if !take(past[nextPast - 1].0, past[nextPast - 1].1) {
                    stopped = true
                    return false
                }
            }
            if !take(doc, keys, version) {
                stopped = true
                return false
            }
            return true
        }
        if walk?.budget.exhausted == true { return nil }
        while !stopped, nextPast < past.count {
            nextPast += 1
            stopped = !take(past[nextPast - 1].0, past[nextPast - 1].1)
        }
        // Every document comes named from the cache, or none: a point lookup (`.keys`) is not.
        return Result(documents: matched, skipped: skipped, examined: examined,
                      versions: named && versions.count == matched.count ? versions : nil)
    }

    /// The key prefix every document the query can return starts with (nil: the whole database).
    private func historyPrefix(_ query: Query) -> [UInt8]? {
        if !query.allDescendants { return query.collectionPath.key }
        return query.parent.segments.isEmpty ? nil : query.parent.key
    }

    // MARK: Acceptance

    /// In scope, matching the whole filter, and holding every ordered field.
    func accepts(_ doc: StoredDocument, query: Query) -> Bool {
        if query.allDescendants {
            guard query.parent.isAncestor(of: doc.path) else { return false }
            if !query.collectionID.isEmpty && !ExactString.equal(doc.path.collectionID, query.collectionID) { return false }
            if query.childrenOnly && doc.path.segments.count != query.parent.segments.count + 2 { return false }
        } else {
            // `doc.path.parent == query.collectionPath`, without building either path (a listener
            // asks this of every change it may see); ids by their bytes, as `ResourcePath` compares.
            let s = doc.path.segments, p = query.parent.segments
            guard s.count == p.count + 2, ExactString.equal(s[p.count], query.collectionID),
                  s[..<p.count].elementsEqual(p, by: ExactString.equal) else { return false }
        }
        if let filter = query.filter, !matcher.matches(filter, doc) { return false }
        for o in query.order where !o.field.isDocumentKey {
            if DocumentFields.value(at: o.field, in: doc.fields) == nil { return false }
        }
        return true
    }

    /// The order-preserving encoding of each ordered field (`__name__`: the document key).
    private func sortKeys(_ doc: StoredDocument, _ order: [Ordering]) -> [[UInt8]] {
        order.map { o in
            if o.field.isDocumentKey { return doc.path.key }
            return DocumentFields.value(at: o.field, in: doc.fields).map(OrderedEncoding.encode) ?? []
        }
    }

    private func cursorKeys(_ cursor: Cursor, _ order: [Ordering]) -> [[UInt8]] {
        cursor.values.enumerated().map { i, v in
            if order[i].field.isDocumentKey, case .reference(let name) = v,
               let (_, path) = try? ResourcePath.parseName(name) {
                return path.key
            }
            return OrderedEncoding.encode(v)
        }
    }

    /// Compares over the first `min(a, b)` fields, each in its direction.
    private func compareKeys(_ a: [[UInt8]], _ b: [[UInt8]], _ order: [Ordering]) -> Int {
        for i in 0..<min(a.count, b.count, order.count) {
            let c = OrderedEncoding.compare(a[i], b[i])
            if c != 0 { return order[i].descending ? -c : c }
        }
        return 0
    }

    private func passesStart(_ keys: [[UInt8]], _ cursor: Cursor, _ order: [Ordering]) -> Bool {
        let c = compareKeys(keys, cursorKeys(cursor, order), order)
        return cursor.before ? c >= 0 : c > 0
    }

    private func passesEnd(_ keys: [[UInt8]], _ cursor: Cursor, _ order: [Ordering]) -> Bool {
        let c = compareKeys(keys, cursorKeys(cursor, order), order)
        return cursor.before ? c < 0 : c <= 0
    }

    // MARK: Planning

    /// The fields whose index rows `run` may read for `query` (each once): every conjunction's
    /// access path, and the order's index a limited equality may walk (`OrderWalkBudget` counts the
    /// equality's rows). A run that finds one missing reports them all, so one build serves the
    /// plan (its checks stop at the first path that falls back to a scan).
    func indexFields(_ query: Query) -> [String] {
        if query.collectionID.isEmpty || query.limit == 0 { return [] }
        let conjunctions = query.filter?.disjunctiveNormalForm(limit: 64) ?? [[]]
        var out: [String] = []
        func add(_ access: Access) {
            switch access {
            case .lookups(let field, _, _), .range(let field, _, _):
                if !out.contains(where: { ExactString.equal($0, field) }) { out.append(field) }
            case .keys, .scan:
                break
            }
        }
        for conjunction in conjunctions {
            add(baseAccess(conjunction, query: query, preferOrderIndex: false))
            if conjunctions.count == 1 && walksOrderIndex && query.limit != nil {
                add(baseAccess(conjunction, query: query, preferOrderIndex: true))
            }
        }
        return out
    }

    /// - Parameters:
    ///   - indexed: whether the query's index rows may be read (false: a collection group whose
    ///     index is not built yet; only point lookups and scans are left).
    ///   - usable: whether a field's rows exist in the snapshot (false: scan instead).
    private func chooseAccess(_ conjunction: [QueryFilter], query: Query, indexed: Bool, usable: (String) -> Bool = { _ in true },
                              preferOrderIndex: Bool = false) -> Access {
        let access = baseAccess(conjunction, query: query, preferOrderIndex: preferOrderIndex)
        if !indexed {
            if case .keys = access { return access }
            return .scan
        }
        switch access {
        case .lookups(let field, _, _), .range(let field, _, _):
            if !usable(field) { return .scan }
        case .keys, .scan:
            break
        }
        // Cursors on the first ordered field narrow a range on that field, so deep pages seek
        // instead of reading every earlier document (the exact cursor check stays in memory).
        guard case .range(let field, var lower, var upper) = access, let first = query.order.first,
              !first.field.isDocumentKey, first.field.canonical == field
        else { return access }
        func tightenLower(_ v: FirestoreValue) {
            let b = OrderedEncoding.encode(v)
            if OrderedEncoding.compare(b, lower.bytes) > 0 { lower = Bound(bytes: b, inclusive: true) }
        }
        func tightenUpper(_ v: FirestoreValue) {
            // Every encoding that starts with `b` sorts before `b + FF`, so this keeps equal values.
            let b = OrderedEncoding.encode(v) + [0xFF]
            if OrderedEncoding.compare(b, upper.bytes) < 0 { upper = Bound(bytes: b, inclusive: true) }
        }
        if let v = query.startAt?.values.first { first.descending ? tightenUpper(v) : tightenLower(v) }
        if let v = query.endAt?.values.first { first.descending ? tightenLower(v) : tightenUpper(v) }
        return .range(field: field, lower: lower, upper: upper)
    }

    private func baseAccess(_ conjunction: [QueryFilter], query: Query, preferOrderIndex: Bool) -> Access {
        // A kind-less descendant query has no per-collection index scope.
        if query.collectionID.isEmpty { return .scan }
        if preferOrderIndex { return orderedAccess(conjunction, query: query) }

        for leaf in conjunction {
            if case .field(let f, let op, let v) = leaf, f.isDocumentKey {
                if op == .equal, case .reference(let name) = v, let (_, p) = try? ResourcePath.parseName(name) {
                    return .keys([p])
                }
                if op == .in, case .array(let refs) = v {
                    let paths = refs.compactMap { r -> ResourcePath? in
                        guard case .reference(let name) = r else { return nil }
                        return try? ResourcePath.parseName(name).1
                    }
                    // A name given twice is one document, as `in` over a field's values is one match.
                    let sorted = paths.sorted { OrderedEncoding.compare($0.key, $1.key) < 0 }
                    var unique: [ResourcePath] = []
                    unique.reserveCapacity(sorted.count)
                    for p in sorted where unique.last.map({ OrderedEncoding.compare($0.key, p.key) != 0 }) ?? true {
                        unique.append(p)
                    }
                    return .keys(unique)
                }
            }
        }
        // Exact seeks, single value first.
        for leaf in conjunction {
            switch leaf {
            case .field(let f, .equal, let v) where !f.isDocumentKey:
                return .lookups(field: f.canonical, kind: IndexEntry.valueKind, values: [OrderedEncoding.encode(v)])
            case .unary(let f, .isNull):
                return .lookups(field: f.canonical, kind: IndexEntry.valueKind, values: [OrderedEncoding.encode(.null)])
            case .unary(let f, .isNaN):
                return .lookups(field: f.canonical, kind: IndexEntry.valueKind, values: [OrderedEncoding.encode(.double(.nan))])
            case .field(let f, .arrayContains, let v):
                return .lookups(field: f.canonical, kind: IndexEntry.elementKind, values: [OrderedEncoding.encode(v)])
            default: continue
            }
        }
        for leaf in conjunction {
            switch leaf {
            case .field(let f, .in, .array(let vs)) where !f.isDocumentKey:
                return .lookups(field: f.canonical, kind: IndexEntry.valueKind, values: uniqueEncodings(vs))
            case .field(let f, .arrayContainsAny, .array(let vs)):
                return .lookups(field: f.canonical, kind: IndexEntry.elementKind, values: uniqueEncodings(vs))
            default: continue
            }
        }
        return orderedAccess(conjunction, query: query)
    }

    /// The access path from ranges, inequalities and the order, ignoring equality seeks.
    private func orderedAccess(_ conjunction: [QueryFilter], query: Query) -> Access {
        // A range on one field: prefer the first ordered field.
        let rangeFields = conjunction.compactMap { leaf -> FieldPath? in
            if case .field(let f, let op, _) = leaf, !f.isDocumentKey,
               [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual].contains(op) { return f }
            return nil
        }
        if let first = query.order.first?.field, rangeFields.contains(first) {
            return range(on: first, conjunction)
        }
        if let f = rangeFields.first { return range(on: f, conjunction) }
        // Field must exist and not be null.
        for leaf in conjunction where leaf.isInequality {
            if let f = leaf.fieldPath, !f.isDocumentKey {
                return .range(field: f.canonical, lower: Bound(bytes: [OrderedEncoding.tagNull + 1], inclusive: true),
                              upper: Bound(bytes: [0xFF], inclusive: true))
            }
        }
        // Ordering by a field only returns documents that have it: read that field's index.
        if let first = query.order.first, !first.field.isDocumentKey {
            return .range(field: first.field.canonical, lower: Bound(bytes: [], inclusive: true), upper: Bound(bytes: [0xFF], inclusive: true))
        }
        return .scan
    }

    private func uniqueEncodings(_ values: [FirestoreValue]) -> [[UInt8]] {
        var seen = Set<[UInt8]>()
        return values.map(OrderedEncoding.encode).filter { seen.insert($0).inserted }
    }

    /// The tightest value range the conjunction's comparisons put on `field`, within the
    /// operands' type class (Firestore comparisons never cross type classes).
    private func range(on field: FieldPath, _ conjunction: [QueryFilter]) -> Access {
        var lower = Bound(bytes: [], inclusive: true)
        var upper = Bound(bytes: [0xFF], inclusive: true)
        func tighten(lowerTo b: Bound) {
            let c = OrderedEncoding.compare(b.bytes, lower.bytes)
            if c > 0 || (c == 0 && !b.inclusive) { lower = b }
        }
        func tighten(upperTo b: Bound) {
            let c = OrderedEncoding.compare(b.bytes, upper.bytes)
            if c < 0 || (c == 0 && !b.inclusive) { upper = b }
        }
        for leaf in conjunction {
            guard case .field(let f, let op, let v) = leaf, f == field else { continue }
            let tag = OrderedEncoding.tag(of: v)
            let classStart = Bound(bytes: [tag], inclusive: true)
            let classEnd = Bound(bytes: [tag + 1], inclusive: false)
            let encoded = OrderedEncoding.encode(v)
            switch op {
            case .greaterThan:
                tighten(lowerTo: Bound(bytes: encoded, inclusive: false)); tighten(upperTo: classEnd)
            case .greaterThanOrEqual:
                tighten(lowerTo: Bound(bytes: encoded, inclusive: true)); tighten(upperTo: classEnd)
            case .lessThan:
                tighten(lowerTo: classStart); tighten(upperTo: Bound(bytes: encoded, inclusive: false))
            case .lessThanOrEqual:
                tighten(lowerTo: classStart); tighten(upperTo: Bound(bytes: encoded, inclusive: true))
            default:
                continue
            }
        }
        return .range(field: field.canonical, lower: lower, upper: upper)
    }

    /// The direction to stream in when `access` yields the query's order, else nil.
    private func streamingDirection(_ access: Access, conjunction: [QueryFilter], query: Query) -> Bool? {
        // Fields pinned to one value by equality do not change the order.
        var pinned = Set<FieldPath>()
        for leaf in conjunction {
            switch leaf {
            case .field(let f, .equal, _), .unary(let f, .isNull), .unary(let f, .isNaN): pinned.insert(f)
            case .field(let f, .in, .array(let vs)) where vs.count == 1: pinned.insert(f)
            default: break
            }
        }
        let remaining = query.order.filter { !pinned.contains($0.field) || $0.field.isDocumentKey }
        guard let last = remaining.last, last.field.isDocumentKey else { return nil }
        switch access {
        case .keys, .scan:
            return remaining.count == 1 ? last.descending : nil
        case .lookups(_, _, let values):
            return remaining.count == 1 && values.count == 1 ? last.descending : nil
        case .range(let field, _, _):
            guard remaining.count == 2, remaining[0].field.canonical == field, remaining[0].descending == last.descending else { return nil }
            return last.descending
        }
    }

    /// Whether a page of `query` after a cursor (a `startAfter` and a limit, as a listener's first
    /// result is paged out) is read from the cursor on rather than from the start: one conjunction
    /// whose access path yields the query's order and seeks to the cursor's first ordered value.
    func pagesBySeeking(_ query: Query) -> Bool {
        let conjunctions = query.filter?.disjunctiveNormalForm(limit: 64) ?? [[]]
        guard conjunctions.count == 1, let first = query.order.first else { return false }
        let access = chooseAccess(conjunctions[0], query: query, indexed: true)
        guard streamingDirection(access, conjunction: conjunctions[0], query: query) != nil else { return false }
        switch access {
        case .keys: return true
        case .scan, .lookups: return first.field.isDocumentKey
        case .range(let field, _, _): return first.field.canonical == field
        }
    }

    /// The document key a cursor on a query ordered first by name starts at (nil: no such cursor).
    private static func nameCursorKey(_ c: Cursor?, _ query: Query) -> [UInt8]? {
        guard let first = query.order.first, first.field.isDocumentKey,
              case .reference(let name)? = c?.values.first, let (_, p) = try? ResourcePath.parseName(name) else { return nil }
        return p.key
    }

    // MARK: Reading

    /// `FirestoreStorage.documentColumns` of the `d` side of an index join (built once, not per read).
    private static let joinedColumns = FirestoreStorage.documentColumns.split(separator: ",")
        .map { "d." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")

    /// The statement of a `.scan`: the documents of the query's scope in name order, from a name cursor.
    /// `groupIndexed`: a collection group's snapshot has the group scan index (`GroupScanIndex`);
    /// without it the space's documents are walked in key order and filtered (the same rows).
    static func scanStatement(_ query: Query, space: Int64, keyRange: ([UInt8], [UInt8])?, descending: Bool,
                              groupIndexed: Bool = true) -> (sql: String, values: [any SQLBindable]) {
        var sql: String
        var values: [any SQLBindable] = [space]
        if query.collectionID.isEmpty {
            sql = "SELECT \(FirestoreStorage.documentColumns) FROM fs_documents WHERE space = ?"
        } else if query.allDescendants {
            // The index is named because without statistics SQLite prefers walking the primary key
            // from the start of the space and filtering, which reads every document of the collections
            // around this one (the whole database for a small collection's last page).
            let source = groupIndexed ? "fs_documents INDEXED BY \(GroupScanIndex.name)" : "fs_documents"
            sql = "SELECT \(FirestoreStorage.documentColumns) FROM \(source) WHERE space = ? AND collection_id = ?"
            values.append(query.collectionID)
        } else {
            // A collection's scan is read by a skip scan (`childScan`); this walk of every row below
            // the collection (`accepts` keeps its own) answers the same, reading the sub-collections too.
            let prefix = query.collectionPath.key
            sql = "SELECT \(FirestoreStorage.documentColumns) FROM fs_documents WHERE space = ? AND key > ? AND key < ?"
            values += [prefix, OrderedEncoding.prefixEnd(prefix)]
        }
        if let (lo, hi) = keyRange {
            sql += " AND key >= ? AND key < ?"
            values.append(lo)
            values.append(hi)
        }
        // Name cursors (the SDKs' `startAfter(snapshot)` on the default order) seek too.
        if let k = nameCursorKey(query.startAt, query) {
            sql += query.order[0].descending ? " AND key <= ?" : " AND key >= ?"
            values.append(k)
        }
        if let k = nameCursorKey(query.endAt, query) {
            sql += query.order[0].descending ? " AND key >= ?" : " AND key <= ?"
            values.append(k)
        }
        sql += " ORDER BY key \(descending ? "DESC" : "ASC")"
        return (sql, values)
    }

    /// The skip scan (`FirestoreStorage.walkSkipping`) that reads a scan of `query`: the documents
    /// `depth` segments below `prefix` — one below a collection's key, or for a kind-less query
    /// without `allDescendants` two below its parent (the documents of the collections directly
    /// under it) — in the key range its name cursors and `keyRange` leave, as `[lower, upper)`.
    /// nil: a collection group's or every descendant's scan (`scanStatement`).
    static func childScan(_ query: Query, keyRange: ([UInt8], [UInt8])?)
        -> (prefix: [UInt8], depth: Int, lower: [UInt8], upper: [UInt8])? {
        let prefix: [UInt8], depth: Int
        if !query.allDescendants {
            (prefix, depth) = (query.collectionPath.key, 1)
        } else if query.childrenOnly && query.collectionID.isEmpty {
            (prefix, depth) = (query.parent.key, 2)
        } else {
            return nil
        }
        var lower = prefix, upper = FirestoreStorage.keysEnd(prefix)
        func raise(_ k: [UInt8]) { if OrderedEncoding.compare(k, lower) > 0 { lower = k } }
        func cut(_ k: [UInt8]) { if OrderedEncoding.compare(k, upper) < 0 { upper = k } }
        if let (lo, hi) = keyRange {
            raise(lo)
            cut(hi)
        }
        // Name cursors (the SDKs' `startAfter(snapshot)` on the default order) seek, as in
        // `scanStatement`: inclusive, the cursor's own side checked in memory (`k + [0]` is the
        // smallest string above `k`).
        if let k = nameCursorKey(query.startAt, query) {
            if query.order[0].descending { cut(k + [0]) } else { raise(k) }
        }
        if let k = nameCursorKey(query.endAt, query) {
            if query.order[0].descending { raise(k) } else { cut(k + [0]) }
        }
        return (prefix, depth, lower, upper)
    }

    /// Whether a collection-group scan of `query` may read the group scan index in `conn`'s
    /// snapshot; when it may not, the index is built: by the caller before it answers
    /// (`missingIndexes`), or in the background.
    private func groupScanIndexed(_ query: Query, _ conn: Connection) throws -> Bool {
        guard query.allDescendants && !query.collectionID.isEmpty else { return true }
        if try storage.groupScans.isVisible(conn) { return true }
        if let report = missingIndexes {
            report.groupScans = true
        } else {
            storage.scheduleGroupScans()
        }
        return false
    }

    /// The key range of the documents a query may return: a collection group under a document
    /// holds only that document's descendants (nil: no limit beyond the index scope).
    private func keyRange(_ query: Query) -> ([UInt8], [UInt8])? {
        guard query.allDescendants && !query.parent.segments.isEmpty else { return nil }
        let prefix = query.parent.key
        return (prefix, OrderedEncoding.prefixEnd(prefix))
    }

    /// The `fs_index` scope a query's index rows live under.
    private func indexScope(_ query: Query) -> [UInt8] {
        query.allDescendants ? IndexEntry.groupScope(query.collectionID) : query.collectionPath.key
    }

    /// The join of index rows under `scope` to their documents, and its values (bound first).
    /// Under a collection scope `doc_key` is the key past the scope (`IndexEntry.docKey`): the
    /// document's key is the two joined (`||` makes TEXT of the bytes; the CAST keeps them a BLOB,
    /// which is what `key` holds, so the primary key is still sought).
    private static func indexJoin(_ scope: [UInt8]) -> (sql: String, values: [any SQLBindable]) {
        if IndexEntry.isGroupScope(scope) {
            return ("FROM fs_index i CROSS JOIN fs_documents d ON d.space = i.space AND d.key = i.doc_key ", [])
        }
        return ("FROM fs_index i CROSS JOIN fs_documents d ON d.space = i.space AND d.key = CAST(? || i.doc_key AS BLOB) ", [scope])
    }

    /// Feeds the documents of `access` to `body` (in access order) until it returns false; a range
    /// with a `walk` reads only the documents whose index entries pass its checks.
    /// `named`: each row's document is read through `readCache` and handed on with its version.
    private func read(_ access: Access, query: Query, space: Int64, descending: Bool, walk: Walk? = nil, named: Bool = false,
                      _ conn: Connection, _ body: (StoredDocument, DocumentCache.Version?) throws -> Bool) throws {
        let cache = named ? readCache : nil
        // One row's document (its columns first), through the cache when naming.
        func document(_ row: Statement) throws -> (StoredDocument, DocumentCache.Version?) {
            guard let cache else { return (try FirestoreStorage.document(from: row), nil) }
            let version = try FirestoreStorage.version(from: row, in: database, cache)
            return (version.document, version)
        }
        let direction = descending ? "DESC" : "ASC"
        let keyRange = keyRange(query)
        let scope = indexScope(query)
        let columns = Self.joinedColumns

        switch access {
        case .keys(let paths):
            let ordered = descending ? paths.reversed() : paths
            for path in ordered {
                try rowCap?.charge(bytes: 0)
                guard let doc = try storage.document(space: space, path: path, conn) else { continue }
                if try !body(doc, nil) { return }
            }

        case .scan:
            if let scan = Self.childScan(query, keyRange: keyRange) {
                // Only the rows exactly `depth` deep are read on; a deeper one's subtree is sought past.
                return try FirestoreStorage.walkSkipping(space: space, under: scan.prefix, depth: scan.depth, from: scan.lower,
                                                         to: scan.upper, descending: descending, conn) { row, end in
                    guard let end, end == row.withBlob(0, { $0.count }) else { return end == nil ? .step : .skip }
                    try charge(row)
                    let (doc, version) = try document(row)
                    return try body(doc, version) ? .step : .stop
                }
            }
            let (sql, values) = Self.scanStatement(query, space: space, keyRange: keyRange, descending: descending,
                                                   groupIndexed: try groupScanIndexed(query, conn))
            try FirestoreStorage.forEachRow(conn, sql, values) { row in
                try charge(row)
                let (doc, version) = try document(row)
                return try body(doc, version)
            }

        case .lookups(let field, let kind, let encodedValues):
            let join = Self.indexJoin(scope)
            var sql = "SELECT \(columns) \(join.sql)"
                + "WHERE i.space = ? AND i.scope = ? AND i.field = ? AND i.kind = ? AND i.value = ?"
            // Only a collection group's rows (whole keys) have a key range.
            if keyRange != nil { sql += " AND i.doc_key >= ? AND i.doc_key < ?" }
            // A name cursor seeks within each value's rows (ordered by name), as in a scan; a cursor
            // outside a collection scope is compared with the whole keys (no seek).
            var seek: [any SQLBindable] = []
            if let k = Self.nameCursorKey(query.startAt, query) {
                let op = query.order[0].descending ? "<=" : ">="
                if let bound = IndexEntry.docKeyBound(k, under: scope) {
                    sql += " AND i.doc_key \(op) ?"
                    seek = [bound]
                } else {
                    sql += " AND CAST(? || i.doc_key AS BLOB) \(op) ?"
                    seek = [scope, k]
                }
            }
            sql += " ORDER BY i.doc_key \(direction)"
            for v in encodedValues {
                var values: [any SQLBindable] = join.values + [space, scope, field, kind, v]
                if let (lo, hi) = keyRange {
                    values.append(lo)
                    values.append(hi)
                }
                values += seek
                var stop = false
                try FirestoreStorage.forEachRow(conn, sql, values) { row in
                    try charge(row)
                    let (doc, version) = try document(row)
                    let go = try body(doc, version)
                    if !go { stop = true }
                    return go
                }
                if stop { return }
            }

        case .range(let field, let lower, let upper):
            let join = Self.indexJoin(scope)
            var sql = "SELECT \(columns) \(join.sql)"
                + "WHERE i.space = ? AND i.scope = ? AND i.field = ? AND i.kind = 0"
                + " AND i.value \(lower.inclusive ? ">=" : ">") ? AND i.value \(upper.inclusive ? "<=" : "<") ?"
            var values: [any SQLBindable] = join.values + [space, scope, field, lower.bytes, upper.bytes]
            if let (lo, hi) = keyRange {
                sql += " AND i.doc_key >= ? AND i.doc_key < ?"
                values.append(lo)
                values.append(hi)
            }
            sql += " ORDER BY i.value \(direction), i.doc_key \(direction)"
            guard let walk else {
                return try FirestoreStorage.forEachRow(conn, sql, values) { row in
                    try charge(row)
                    let (doc, version) = try document(row)
                    return try body(doc, version)
                }
            }
            try FirestoreStorage.forEachRow(conn, sql, values) { row in
                // Every entry walked counts, whether or not its document is read on.
                try charge(row)
                let passes = try row.withBlob(1) { fields in try walk.passes(fields) }
                guard try walk.budget.charge(fetched: passes) else { return false }
                guard passes else { return true }
                let (doc, version) = try document(row)
                return try body(doc, version)
            }
        }
    }

    /// Charges `row` (a document's columns first) to the row cap, when there is one.
    private func charge(_ row: Statement) throws {
        guard let rowCap else { return }
        try rowCap.charge(bytes: row.withBlob(1) { $0.count })
    }

    // MARK: Walking the order's index

    /// A walk of the order field's index for `a == x ORDER BY b LIMIT n`: each entry's document
    /// is checked against the filter on the fields the filter names alone (decoded from the row
    /// without the rest, each judged as it is decoded: no map, no document), and only a document
    /// that passes is decoded whole and read on.
    private struct Walk {
        /// A leaf of the conjunction or an ordered field, on the top-level field `names[index]`
        /// and, below it, the path `rest`.
        struct Check {
            let index: Int
            let rest: ArraySlice<String>
            /// nil: an ordered field, which only has to exist.
            let leaf: QueryFilter?
        }

        /// Top-level names of the fields the check reads, as UTF-8, each once.
        let names: [[UInt8]]
        /// The conjunction's leaves without its `__name__` ones (the check has no document name),
        /// then the ordered fields' existence. Every name is some check's field.
        let checks: [Check]
        let budget: OrderWalkBudget

        init(_ conjunction: [QueryFilter], query: Query, budget: OrderWalkBudget) {
            let leaves = conjunction.filter { !($0.fieldPath?.isDocumentKey ?? true) }
            let ordered = query.order.map(\.field).filter { !$0.isDocumentKey }
            var names: [[UInt8]] = []
            var checks: [Check] = []
            func add(_ f: FieldPath, _ leaf: QueryFilter?) {
                let name = Array(f.segments[0].utf8)
                let index = names.firstIndex(of: name) ?? names.count
                if index == names.count { names.append(name) }
                checks.append(Check(index: index, rest: f.segments.dropFirst(), leaf: leaf))
            }
            for leaf in leaves { if let f = leaf.fieldPath { add(f, leaf) } }
            for f in ordered { add(f, nil) }
            self.names = names
            self.checks = checks
            self.budget = budget
        }

        /// Whether a document with these stored fields may match (`accepts` judges it whole
        /// afterwards, so a check that passes more than it should costs a read, not a result).
        /// Every check fails on a missing field (as `QueryMatcher` judges one), so the document
        /// passes when every named field was found and every check passed on what was found.
        func passes(_ fields: UnsafeRawBufferPointer) throws -> Bool {
            var passed = true
            let found = try StoredValueCodec.visitFields(fields, only: names) { index, value in
                guard passed else { return }
                for c in checks where c.index == index {
                    let v = c.rest.isEmpty ? value : Self.value(at: c.rest, in: value)
                    switch c.leaf {
                    case nil: passed = v != nil
                    case .unary(_, let op)?: passed = QueryMatcher.matches(op, v)
                    case .field(_, let op, let operand)?: passed = QueryMatcher.matches(op, operand, v)
                    case .and?, .or?: passed = false  // not a leaf: never in a conjunction
                    }
                    if !passed { return }
                }
            }
            return found && passed
        }

        /// `DocumentFields.value(at:in:)` below a top-level value.
        private static func value(at rest: ArraySlice<String>, in top: FirestoreValue) -> FirestoreValue? {
            var v = top
            for segment in rest {
                guard case .map(let m) = v, let next = m[ExactString(segment)] else { return nil }
                v = next
            }
            return v
        }
    }
}
