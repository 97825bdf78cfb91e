import HearthCore

/// The single-field index entries of a document: one per field path (nested map fields
/// included) holding the whole value, plus one per distinct array element for `array-contains`.
///
/// Every entry is stored twice in `fs_index`: under the document's collection (collection scope)
/// and under its collection id (collection-group scope), so both kinds of query seek directly.
struct IndexEntry: Hashable, Sendable {
    /// Canonical field path (`a.b`, `` `x y` ``).
    let field: String
    /// `valueKind` or `elementKind`.
    let kind: Int
    /// `OrderedEncoding` of the value or element.
    let value: [UInt8]

    static let valueKind = 0
    static let elementKind = 1

    /// All entries of a document's fields, each once, sorted (see `sorted(_:)`).
    ///
    /// An array, not a `Set`: field paths are unique within a document, so only the elements of
    /// one array can repeat an entry, and sorting both lists lets `put` compare a document's old
    /// and new entries by merging instead of hashing every encoded value.
    static func entries(of fields: [ExactString: FirestoreValue]) -> [IndexEntry] {
        entries(ofSorted: OrderedEncoding.sortedMembers(fields))
    }

    /// `entries(of:)` of fields already in `OrderedEncoding.sortedMembers` order. Walked in that
    /// order, a document whose top-level names need no quoting and whose values are neither arrays
    /// nor maps (most documents) yields its entries in order already, and `sorted` only checks them.
    static func entries(ofSorted members: [(key: ExactString, value: FirestoreValue)]) -> [IndexEntry] {
        var out: [IndexEntry] = []
        out.reserveCapacity(members.count)
        collect(members, prefix: [], into: &out)
        return sorted(out)
    }

    private static func collect<S: Sequence>(_ fields: S, prefix: [String], into out: inout [IndexEntry])
        where S.Element == (key: ExactString, value: FirestoreValue) {
        for (name, value) in fields {
            let key = name.string
            // A top-level field's canonical path is its quoted name (no path arrays to build).
            let path = prefix.isEmpty ? FieldPath.quoteIfNeeded(key) : FieldPath(prefix + [key]).canonical
            out.append(IndexEntry(field: path, kind: valueKind, value: OrderedEncoding.encode(value)))
            switch value {
            case .array(let elements):
                // Repeated elements are dropped by `sorted`.
                for e in elements { out.append(IndexEntry(field: path, kind: elementKind, value: OrderedEncoding.encode(e))) }
            case .map(let m):
                collect(m, prefix: prefix + [key], into: &out)
            default:
                break
            }
        }
    }

    /// `entries` in the order of `precedes`, repeats dropped.
    static func sorted(_ entries: [IndexEntry]) -> [IndexEntry] {
        // Already strictly ascending (no repeats): one comparison per entry instead of a sort.
        if entries.indices.dropFirst().allSatisfy({ compare(entries[$0 - 1], entries[$0]) < 0 }) { return entries }
        var out = entries.sorted(by: precedes)
        var last = 0
        for i in out.indices.dropFirst() where compare(out[i], out[last]) != 0 {
            last += 1
            if last != i { out[last] = out[i] }
        }
        if !out.isEmpty { out.removeSubrange((last + 1)...) }
        return out
    }

    /// The order of `fs_index`'s key within one scope: field (as SQLite compares TEXT, by bytes),
    /// kind, value.
    static func precedes(_ a: IndexEntry, _ b: IndexEntry) -> Bool {
        compare(a, b) < 0
    }

    /// Compares field names by their bytes (`String`'s `==` would equate canonically equivalent
    /// names, which are different fields to Firestore and different TEXT to SQLite).
    static func compare(_ a: IndexEntry, _ b: IndexEntry) -> Int {
        let byField = OrderedEncoding.utf8Compare(a.field, b.field)
        if byField != 0 { return byField }
        if a.kind != b.kind { return a.kind < b.kind ? -1 : 1 }
        return OrderedEncoding.compare(a.value, b.value)
    }

    /// The entries of `a` not in `b` and of `b` not in `a` (both from `entries(of:)`), in one merge.
    static func difference(_ a: [IndexEntry], _ b: [IndexEntry]) -> (onlyA: [IndexEntry], onlyB: [IndexEntry]) {
        var onlyA: [IndexEntry] = [], onlyB: [IndexEntry] = []
        var i = 0, j = 0
        while i < a.count && j < b.count {
            let c = compare(a[i], b[j])
            if c < 0 {
                onlyA.append(a[i]); i += 1
            } else if c > 0 {
                onlyB.append(b[j]); j += 1
            } else {
                i += 1; j += 1
            }
        }
        onlyA.append(contentsOf: a[i...])
        onlyB.append(contentsOf: b[j...])
        return (onlyA, onlyB)
    }

    /// The collection-group scope key of `collectionID` (0xFF never starts a collection-scope key:
    /// no UTF-8 byte is 0xFF).
    static func groupScope(_ collectionID: String) -> [UInt8] {
        [0xFF] + Array(collectionID.utf8)
    }

    static func isGroupScope(_ scope: [UInt8]) -> Bool { scope.first == 0xFF }

    /// The `doc_key` of the document at `key` in its rows under `scope`: under a group scope the
    /// whole key; under its collection's scope (a prefix of `key`) the rest, the id's segment. The
    /// scope holds the rest of the key, so repeating it cost every row its bytes (a longer row, more
    /// splits of the index's leaves, longer compares); within one scope the rows keep the order of
    /// the whole keys, which share the scope as their prefix.
    static func docKey(_ key: [UInt8], under scope: [UInt8]) -> [UInt8] {
        isGroupScope(scope) ? key : Array(key[scope.count...])
    }

    /// `key` (a whole document key, a bound of a range of them) as a bound on the `doc_key`s under
    /// `scope`: under a collection scope, when `key` lies under the scope, its part past it; nil
    /// when it does not (the caller compares whole keys instead).
    static func docKeyBound(_ key: [UInt8], under scope: [UInt8]) -> [UInt8]? {
        if isGroupScope(scope) { return key }
        guard key.count >= scope.count, key[..<scope.count].elementsEqual(scope) else { return nil }
        return Array(key[scope.count...])
    }
}
