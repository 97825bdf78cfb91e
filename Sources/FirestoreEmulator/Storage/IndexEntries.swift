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

    /// All entries of a document's fields.
    static func entries(of fields: [String: FirestoreValue]) -> Set<IndexEntry> {
        var out = Set<IndexEntry>()
        collect(fields, prefix: [], into: &out)
        return out
    }

    private static func collect(_ fields: [String: FirestoreValue], prefix: [String], into out: inout Set<IndexEntry>) {
        for (key, value) in fields {
            // A top-level field's canonical path is its quoted name (no path arrays to build).
            let name = prefix.isEmpty ? FieldPath.quoteIfNeeded(key) : FieldPath(prefix + [key]).canonical
            out.insert(IndexEntry(field: name, kind: valueKind, value: OrderedEncoding.encode(value)))
            switch value {
            case .array(let elements):
                for e in elements { out.insert(IndexEntry(field: name, kind: elementKind, value: OrderedEncoding.encode(e))) }
            case .map(let m):
                collect(m, prefix: prefix + [key], into: &out)
            default:
                break
            }
        }
    }

    /// The collection-group scope key of `collectionID` (0xFF never starts a collection-scope key:
    /// no UTF-8 byte is 0xFF).
    static func groupScope(_ collectionID: String) -> [UInt8] {
        [0xFF] + Array(collectionID.utf8)
    }
}
