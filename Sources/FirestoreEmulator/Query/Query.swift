/// A parsed, validated `StructuredQuery` with Firestore's implicit ordering applied.
struct Query: Sendable {
    /// The document the query runs under (root when empty).
    var parent: ResourcePath
    /// The collection id; empty only for a kind-less `allDescendants` query.
    var collectionID: String
    /// A collection-group query (every collection with this id under `parent`).
    var allDescendants: Bool
    var filter: QueryFilter?
    /// The orderings as sent.
    var explicitOrder: [Ordering]
    /// Explicit orderings, then unordered inequality fields, then `__name__`.
    var order: [Ordering]
    var startAt: Cursor?
    var endAt: Cursor?
    var offset: Int
    var limit: Int?
    /// `select` field paths; nil returns every field.
    var projection: [FieldPath]?
    /// A kind-less query without `allDescendants` (no `from`): only documents of the collections
    /// directly under `parent` (run as a descendant query with this depth limit).
    var childrenOnly = false
    /// Vector search: the nearest of the results to a query vector (no limit, offset or cursors beside it).
    var findNearest: FindNearest?

    /// Whether each result is a stored version as it stands, so its encoding may be shared with
    /// other reads of that version (`DocumentCache`): no projection, no distance field added.
    var returnsStoredDocuments: Bool { projection == nil && findNearest?.resultField == nil }

    /// The collection path of a plain collection query.
    var collectionPath: ResourcePath { parent.appending(collectionID) }
}

/// One `orderBy` entry.
struct Ordering: Sendable, Equatable {
    var field: FieldPath
    var descending: Bool
}

/// A `startAt` / `endAt` position.
struct Cursor: Sendable {
    var values: [FirestoreValue]
    /// True: the position is just before the values (startAt / endBefore).
    var before: Bool
}

/// A field filter operator.
enum FieldOperator: String, Sendable, CaseIterable {
    case lessThan = "LESS_THAN"
    case lessThanOrEqual = "LESS_THAN_OR_EQUAL"
    case greaterThan = "GREATER_THAN"
    case greaterThanOrEqual = "GREATER_THAN_OR_EQUAL"
    case equal = "EQUAL"
    case notEqual = "NOT_EQUAL"
    case arrayContains = "ARRAY_CONTAINS"
    case `in` = "IN"
    case arrayContainsAny = "ARRAY_CONTAINS_ANY"
    case notIn = "NOT_IN"

    /// Numbers of the proto enum (for `enum-encoding=int` clients).
    static let numbers: [Int64: String] = [
        1: "LESS_THAN", 2: "LESS_THAN_OR_EQUAL", 3: "GREATER_THAN", 4: "GREATER_THAN_OR_EQUAL", 5: "EQUAL",
        6: "NOT_EQUAL", 7: "ARRAY_CONTAINS", 8: "IN", 9: "ARRAY_CONTAINS_ANY", 10: "NOT_IN",
    ]

    /// Operators that constrain a field to a range (and so imply an ordering on it).
    var isInequality: Bool {
        switch self {
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notEqual, .notIn: true
        default: false
        }
    }

    /// Operators whose value is a list.
    var takesList: Bool { self == .in || self == .notIn || self == .arrayContainsAny }
}

/// A unary filter operator.
enum UnaryOperator: String, Sendable {
    case isNaN = "IS_NAN"
    case isNull = "IS_NULL"
    case isNotNaN = "IS_NOT_NAN"
    case isNotNull = "IS_NOT_NULL"

    static let numbers: [Int64: String] = [2: "IS_NAN", 3: "IS_NULL", 4: "IS_NOT_NAN", 5: "IS_NOT_NULL"]
}
