import HearthCore
import HearthSQLite

/// The children of a path that have stored documents below them: collection ids under a document
/// (`listCollectionIds`) and document ids under a collection (`showMissing`), walked in order.
extension FirestoreStorage {
    /// Distinct path segments that follow `prefix` among the parents of stored documents
    /// (collection ids under a document, or document ids under a collection), in order.
    func childSegments(space: Int64, under prefix: [UInt8], _ conn: Connection) throws -> [String] {
        var result: [String] = []
        try forEachChildSegment(space: space, under: prefix, after: nil, conn) { result.append($0); return true }
        return result
    }

    /// `childSegments` as of `time`.
    func childSegments(space: Int64, under prefix: [UInt8], at time: Instant, _ conn: Connection) throws -> [String] {
        var result: [String] = []
        try forEachChildSegment(space: space, under: prefix, after: nil, at: time, conn) { result.append($0); return true }
        return result
    }

    /// Feeds the child segments of `prefix` that sort after `after` (all when nil) and not after
    /// `through` (a key: its segment and those before it; nil: no bound) to `body`, in order, until
    /// it returns false. A walk of the primary key (`walkSkipping`) that seeks past a child's whole
    /// subtree once it has seen a row below it, so reading n children costs n seeks whatever the
    /// size of their subtrees. Under a collection its documents themselves are stepped over (one row
    /// each): a document id is its child here only when something is stored below it.
    func forEachChildSegment(space: Int64, under prefix: [UInt8], after: String?, through: [UInt8]? = nil, _ conn: Connection,
                             _ body: (String) throws -> Bool) throws {
        // The walk starts past `prefix` itself (a document, when `prefix` is one), or past
        // everything up to and below `after`.
        var lower = prefix + [0]
        if let after { lower = OrderedEncoding.prefixEnd(prefix + OrderedEncoding.key([after])) }
        var upper = Self.keysEnd(prefix)
        if let through {
            let past = OrderedEncoding.prefixEnd(through)
            if OrderedEncoding.compare(past, upper) < 0 { upper = past }
        }
        try Self.walkSkipping(space: space, under: prefix, depth: 1, from: lower, to: upper, descending: false, conn) { row, end in
            // A document directly under `prefix` (`end` its whole key), or (nil) `prefix` itself.
            guard let end, end < row.withBlob(0, { $0.count }) else { return .step }
            let segment = row.withBlob(0) { key in
                OrderedEncoding.segment(after: prefix, in: Array(key[..<end]))
            }
            guard let segment else { return .skip }
            return try body(segment) ? .skip : .stop
        }
    }

    /// What `walkSkipping` does after a row.
    enum SkipWalkStep {
        /// The next row in key order.
        case step
        /// The first row past the subtree of the row's ancestor at the walk's depth.
        case skip
        case stop
    }

    /// The smallest byte string above every key that starts with `prefix` (a key, or the empty
    /// prefix of the whole space: no key starts with `FF`, a byte UTF-8 never holds and an escape
    /// never starts).
    static func keysEnd(_ prefix: [UInt8]) -> [UInt8] {
        prefix.isEmpty ? [0xFF] : OrderedEncoding.prefixEnd(prefix)
    }

    /// A skip scan of the primary key: the documents of `space` with keys in `[lower, upper)`, in
    /// key order (descending when asked), each handed to `body` as a row of `documentColumns` with
    /// the length of its ancestor `depth` segments below `prefix` (the key's own length when it is
    /// exactly that deep; nil when it is less deep). `body` says how to go on: `.skip` passes over
    /// that ancestor's whole subtree (ascending: on to the first key after it; descending: on to the
    /// ancestor itself, which sorts before its descendants), so a walk of the documents directly in
    /// a collection reads a few rows of each sub-collection tree below them, not the trees. The
    /// subtree's next rows are stepped over (no row of it reaches `body`) up to `skipSteps`; then
    /// the walk seeks past it. A step costs less than a seek (a reset, three bindings, a descent), so
    /// small subtrees — a user with a file or two — are stepped, large ones sought past.
    ///
    /// It replaced the index `(space, parent, key)` (`firestore.9`): one b-tree fewer per create.
    static func walkSkipping(space: Int64, under prefix: [UInt8], depth: Int, from lower: [UInt8], to upper: [UInt8],
                             descending: Bool, _ conn: Connection,
                             _ body: (Statement, Int?) throws -> SkipWalkStep) throws {
        let statement = try conn.prepare(descending ? Self.walkDescending : Self.walkAscending)
        var lower = lower, upper = upper
        defer { statement.reset() }  // holds no read snapshot afterwards
        // The ancestor whose descendants are being stepped over, and the steps left before a seek.
        var skipping: [UInt8]?
        var steps = 0
        seek: while OrderedEncoding.compare(lower, upper) < 0 {
            statement.reset()
            try statement.bind(space, at: 1)
            try statement.bind(lower, at: 2)
            try statement.bind(upper, at: 3)
            while try statement.step() {
                if let ancestor = skipping {
                    // A descendant of it: a key that starts with it and is longer.
                    let inside = statement.withBlob(0) { $0.count > ancestor.count && $0.starts(with: ancestor) }
                    if inside {
                        steps -= 1
                        if steps > 0 { continue }
                        skipping = nil
                        if descending {
                            // The smallest string above `ancestor`: rows up to and including it.
                            upper = ancestor + [0]
                        } else {
                            lower = OrderedEncoding.prefixEnd(ancestor)
                        }
                        continue seek
                    }
                    skipping = nil
                }
                let end = statement.withBlob(0) { key -> Int? in
                    guard key.starts(with: prefix) else { return nil }
                    return OrderedEncoding.end(ofSegments: depth, in: key, from: prefix.count)
                }
                switch try body(statement, end) {
                case .step:
                    continue
                case .stop:
                    return
                case .skip:
                    guard let end else { continue }
                    skipping = statement.withBlob(0) { Array($0[..<end]) }
                    steps = skipSteps
                }
            }
            return
        }
    }

    /// Rows of a subtree `walkSkipping` reads before it seeks past the rest (the one that asked to
    /// skip, and one more): a subtree of one or two rows is stepped over, a larger one costs a row more
    /// than seeking at once (parent_scan.py, docs/benchmarks.md parentidx33: 8 cost more on large ones).
    static let skipSteps = 2

    private static let walkAscending = PreparedSQL("""
        SELECT \(documentColumns) FROM fs_documents WHERE space = ? AND key >= ? AND key < ? ORDER BY key
        """)
    private static let walkDescending = PreparedSQL("""
        SELECT \(documentColumns) FROM fs_documents WHERE space = ? AND key >= ? AND key < ? ORDER BY key DESC
        """)

    /// `forEachChildSegment` as of `time`: the children of current documents and of versions
    /// replaced or deleted since (the history rows after `after`, which the retention window
    /// bounds), each kept when something below it existed at `time`.
    func forEachChildSegment(space: Int64, under prefix: [UInt8], after: String?, through: [UInt8]? = nil, at time: Instant,
                             _ conn: Connection, _ body: (String) throws -> Bool) throws {
        var sql = "SELECT DISTINCT key FROM fs_history WHERE space = ? AND ended > ?"
        var values: [any SQLBindable] = [space, time.unixMicros]
        if let after {
            sql += " AND key >= ?"
            values.append(OrderedEncoding.prefixEnd(prefix + OrderedEncoding.key([after])))
        } else if !prefix.isEmpty {
            sql += " AND key > ?"
            values.append(prefix)
        }
        if !prefix.isEmpty {
            sql += " AND key < ?"
            values.append(OrderedEncoding.prefixEnd(prefix))
        }
        var changed = Set<ExactString>()  // by bytes: ids differing only in normalisation are two
        try Self.forEachRow(conn, sql, values) { row in
            let key = row.blob(0)
            // The key's own last segment is a document id, never a child of `prefix` by itself.
            if let segment = OrderedEncoding.segment(after: prefix, in: key),
               prefix.count + OrderedEncoding.key([segment]).count < key.count {
                changed.insert(ExactString(segment))
            }
            return true
        }
        let pending = changed.map { (key: prefix + OrderedEncoding.key([$0.string]), segment: $0.string) }
            .sorted { OrderedEncoding.compare($0.key, $1.key) < 0 }
        var next = 0
        var stopped = false
        // Offers one candidate in order; false once `body` stops.
        func offer(_ segment: String, _ key: [UInt8]) throws -> Bool {
            guard try anyDocument(space: space, under: key, at: time, conn) else { return true }
            if try !body(segment) {
                stopped = true
                return false
            }
            return true
        }
        try forEachChildSegment(space: space, under: prefix, after: after, through: through, conn) { segment in
            let key = prefix + OrderedEncoding.key([segment])
            while next < pending.count {
                let c = OrderedEncoding.compare(pending[next].key, key)
                if c > 0 { break }
                next += 1
                if c < 0, try !offer(pending[next - 1].segment, pending[next - 1].key) { return false }
            }
            return try offer(segment, key)
        }
        while !stopped, next < pending.count {
            next += 1
            _ = try offer(pending[next - 1].segment, pending[next - 1].key)
        }
    }
}
