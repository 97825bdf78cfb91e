/// A structured query (`runQuery`), built like the SDKs' queries.
///
/// ```swift
/// let q = Query(collection: "files", parent: "users/\(uid)")
///     .filter(.field("status", .equal, "ready"))
///     .order(by: "createdAt", descending: true)
///     .limit(10)
/// ```
public struct Query: Sendable {
    /// A comparison operator of a field filter.
    public enum Operator: String, Sendable {
        case lessThan = "LESS_THAN"
        case lessThanOrEqual = "LESS_THAN_OR_EQUAL"
        case greaterThan = "GREATER_THAN"
        case greaterThanOrEqual = "GREATER_THAN_OR_EQUAL"
        case equal = "EQUAL"
        case notEqual = "NOT_EQUAL"
        case arrayContains = "ARRAY_CONTAINS"
        case `in` = "IN"
        case notIn = "NOT_IN"
        case arrayContainsAny = "ARRAY_CONTAINS_ANY"
    }

    /// A unary test.
    public enum UnaryOperator: String, Sendable {
        case isNull = "IS_NULL"
        case isNaN = "IS_NAN"
        case isNotNull = "IS_NOT_NULL"
        case isNotNaN = "IS_NOT_NAN"
    }

    /// A filter tree.
    public indirect enum Filter: Sendable {
        case field(FieldPath, Operator, FirestoreValue)
        case unary(FieldPath, UnaryOperator)
        case and([Filter])
        case or([Filter])

        /// A field filter on a dotted path.
        public static func field(_ path: String, _ op: Operator, _ value: FirestoreValue) -> Filter {
            .field(FieldPath(dotted: path), op, value)
        }

        /// A unary filter on a dotted path.
        public static func unary(_ path: String, _ op: UnaryOperator) -> Filter { .unary(FieldPath(dotted: path), op) }

        var json: AnyJSON {
            switch self {
            case .field(let path, let op, let value):
                return .object(["fieldFilter": .object(["field": .object(["fieldPath": .string(path.escaped)]),
                                                        "op": .string(op.rawValue), "value": .value(value)])])
            case .unary(let path, let op):
                return .object(["unaryFilter": .object(["field": .object(["fieldPath": .string(path.escaped)]), "op": .string(op.rawValue)])])
            case .and(let filters):
                return .object(["compositeFilter": .object(["op": .string("AND"), "filters": .array(filters.map(\.json))])])
            case .or(let filters):
                return .object(["compositeFilter": .object(["op": .string("OR"), "filters": .array(filters.map(\.json))])])
            }
        }
    }

    /// The collection id queried.
    public let collection: String
    /// The parent document path (`users/u1`), or nil for top-level collections.
    public let parent: String?
    /// Whether to query every collection with this id under the parent (a collection group query).
    public let allDescendants: Bool
    var filters: [Filter] = []
    var orders: [(FieldPath, Bool)] = []
    var limitValue: Int?
    var offsetValue: Int?
    var startCursor: (values: [FirestoreValue], before: Bool)?
    var endCursor: (values: [FirestoreValue], before: Bool)?
    var selectFields: [FieldPath]?
    var nearest: AnyJSON?

    /// How `findNearest` measures the distance between two vectors.
    public enum DistanceMeasure: String, Sendable {
        case euclidean = "EUCLIDEAN"
        case cosine = "COSINE"
        case dotProduct = "DOT_PRODUCT"
    }

    public init(collection: String, parent: String? = nil, allDescendants: Bool = false) {
        self.collection = collection
        self.parent = parent
        self.allDescendants = allDescendants
    }

    /// Adds a filter (several are ANDed).
    public func filter(_ f: Filter) -> Query { var q = self; q.filters.append(f); return q }
    /// `where field op value`.
    public func whereField(_ path: String, _ op: Operator, _ value: FirestoreValue) -> Query { filter(.field(path, op, value)) }
    /// Adds an ordering.
    public func order(by path: String, descending: Bool = false) -> Query { var q = self; q.orders.append((FieldPath(dotted: path), descending)); return q }
    /// At most `n` results.
    public func limit(_ n: Int) -> Query { var q = self; q.limitValue = n; return q }
    /// Skips `n` results.
    public func offset(_ n: Int) -> Query { var q = self; q.offsetValue = n; return q }
    /// Starts at (inclusive) the position of `values` in the ordering.
    public func start(at values: [FirestoreValue]) -> Query { var q = self; q.startCursor = (values, true); return q }
    /// Starts after the position of `values`.
    public func start(after values: [FirestoreValue]) -> Query { var q = self; q.startCursor = (values, false); return q }
    /// Ends at (inclusive) the position of `values`.
    public func end(at values: [FirestoreValue]) -> Query { var q = self; q.endCursor = (values, false); return q }
    /// Ends before the position of `values`.
    public func end(before values: [FirestoreValue]) -> Query { var q = self; q.endCursor = (values, true); return q }
    /// Returns only these fields.
    public func select(_ paths: [String]) -> Query { var q = self; q.selectFields = paths.map(FieldPath.init(dotted:)); return q }

    /// A vector search (`findNearest`): the `limit` documents whose `vectorField` is nearest
    /// `queryVector`, nearest first; `distanceResultField` names a field to carry each distance,
    /// `distanceThreshold` drops the farther ones.
    public func findNearest(vectorField: String, queryVector: VectorValue, limit: Int, distanceMeasure: DistanceMeasure,
                            distanceResultField: String? = nil, distanceThreshold: Double? = nil) -> Query {
        var n: [String: AnyJSON] = [
            "vectorField": .object(["fieldPath": .string(FieldPath(dotted: vectorField).escaped)]),
            "queryVector": AnyJSON.value(.vector(queryVector)),
            "limit": .int(Int64(limit)),
            "distanceMeasure": .string(distanceMeasure.rawValue),
        ]
        if let distanceResultField { n["distanceResultField"] = .string(FieldPath(dotted: distanceResultField).escaped) }
        if let distanceThreshold { n["distanceThreshold"] = .double(distanceThreshold) }
        var q = self
        q.nearest = .object(n)
        return q
    }

    /// The `structuredQuery` JSON.
    var structuredQuery: AnyJSON {
        var q: [String: AnyJSON] = ["from": .array([.object(["collectionId": .string(collection), "allDescendants": .bool(allDescendants)])])]
        if filters.count == 1 { q["where"] = filters[0].json } else if filters.count > 1 { q["where"] = Filter.and(filters).json }
        if !orders.isEmpty {
            q["orderBy"] = .array(orders.map { .object(["field": .object(["fieldPath": .string($0.0.escaped)]),
                                                         "direction": .string($0.1 ? "DESCENDING" : "ASCENDING")]) })
        }
        if let limitValue { q["limit"] = .int(Int64(limitValue)) }
        if let offsetValue { q["offset"] = .int(Int64(offsetValue)) }
        if let s = startCursor { q["startAt"] = .object(["values": .array(s.values.map(AnyJSON.value)), "before": .bool(s.before)]) }
        if let e = endCursor { q["endAt"] = .object(["values": .array(e.values.map(AnyJSON.value)), "before": .bool(e.before)]) }
        if let nearest { q["findNearest"] = nearest }
        if let selectFields { q["select"] = .object(["fields": .array(selectFields.map { .object(["fieldPath": .string($0.escaped)]) })]) }
        return .object(q)
    }
}
