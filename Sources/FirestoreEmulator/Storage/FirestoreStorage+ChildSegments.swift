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

    /// Feeds the child segments of `prefix` that sort after `after` (all when nil) to `body`, in
    /// order, until it returns false. Each is one index probe that skips from one child to the next
    /// rather than reading the documents below it, so reading n children costs n probes whatever
    /// the size of their subtrees.
    func forEachChildSegment(space: Int64, under prefix: [UInt8], after: String?, _ conn: Connection,
                             _ body: (String) throws -> Bool) throws {
        // The first probe skips `prefix` itself (documents directly in it), or everything up to
        // and below `after`.
        var cursor = prefix
        var inclusive = false
        if let after {
            cursor = OrderedEncoding.prefixEnd(prefix + OrderedEncoding.key([after]))
            inclusive = true
        }
        let end: [UInt8]? = prefix.isEmpty ? nil : OrderedEncoding.prefixEnd(prefix)
        while true {
            let op = inclusive ? ">=" : ">"
            let sql = end == nil
                ? "SELECT parent FROM fs_documents WHERE space = ? AND parent \(op) ? ORDER BY parent LIMIT 1"
                : "SELECT parent FROM fs_documents WHERE space = ? AND parent \(op) ? AND parent < ? ORDER BY parent LIMIT 1"
            var values: [any SQLBindable] = [space, cursor]
            if let end { values.append(end) }
            guard let parent = try conn.first(sql, values, { $0.blob(0) }),
                  let segment = OrderedEncoding.segment(after: prefix, in: parent)
            else { return }
            if try !body(segment) { return }
            // Every parent below `prefix/segment` sorts before this bound.
            cursor = OrderedEncoding.prefixEnd(prefix + OrderedEncoding.key([segment]))
            inclusive = true
        }
    }

    /// `forEachChildSegment` as of `time`: the children of current documents and of versions
    /// replaced or deleted since (the history rows after `after`, which the retention window
    /// bounds), each kept when something below it existed at `time`.
    func forEachChildSegment(space: Int64, under prefix: [UInt8], after: String?, at time: Instant, _ conn: Connection,
                             _ body: (String) throws -> Bool) throws {
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
        try forEachChildSegment(space: space, under: prefix, after: after, conn) { segment in
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
