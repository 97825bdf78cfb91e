import HearthCore

/// Reads a `StructuredQuery` JSON into a `Query`, rejecting what Firestore rejects.
struct QueryParser {
    let database: DatabaseID
    /// The document the query runs under (root when empty).
    let parent: ResourcePath

    /// Largest number of values in an `in` / `not-in` / `array-contains-any` filter,
    /// and of disjunctions after expansion to normal form.
    static let maxListValues = 30
    static let maxDisjunctions = 30

    static let queryFields: Set<String> = ["select", "from", "where", "orderBy", "startAt", "endAt", "offset", "limit", "findNearest"]

    func parse(_ o: ProtoObject) throws(FirestoreError) -> Query {
        try o.requireKnown(Self.queryFields)
        if o.raw("findNearest") != nil {
            throw .unimplemented("Vector search (findNearest) is not supported by this emulator.")
        }

        // from
        let from = try o.array("from") ?? []
        guard from.count == 1 else {
            throw .invalidArgument(from.isEmpty ? "A query must specify a collection in 'from'." : "A query must have exactly one collection selector in 'from'.")
        }
        let selector = try ProtoObject(json: from[0], path: o.childPath("from") + "[0]")
        try selector.requireKnown(["collectionId", "allDescendants"])
        let collectionID = try selector.string("collectionId") ?? ""
        let allDescendants = try selector.bool("allDescendants") ?? false
        if collectionID.isEmpty && !allDescendants {
            throw .invalidArgument("Collection id must be set in 'from' unless allDescendants is true.")
        }
        if !collectionID.isEmpty {
            if collectionID.contains("/") {
                throw .invalidArgument("Collection id \"\(collectionID)\" is invalid: it must not contain '/'.")
            }
            try ResourcePath.validateSegment(collectionID, fullName: database.name(of: parent.appending(collectionID)))
        }

        // where
        let filter = try o.object("where").map { w throws(FirestoreError) in try parseFilter(w) }
        if let filter { try validate(filter) }

        // orderBy
        var explicit: [Ordering] = []
        for (i, item) in (try o.array("orderBy") ?? []).enumerated() {
            let ob = try ProtoObject(json: item, path: o.childPath("orderBy") + "[\(i)]")
            try ob.requireKnown(["field", "direction"])
            guard let fieldRef = try ob.object("field") else {
                throw .invalidArgument("Order by field must be set at '\(ob.path)'.")
            }
            let field = try parseFieldReference(fieldRef)
            let direction = try ob.enumeration("direction", [0: "DIRECTION_UNSPECIFIED", 1: "ASCENDING", 2: "DESCENDING"])
            if explicit.contains(where: { $0.field == field }) {
                throw .invalidArgument("Order by clause cannot contain duplicate fields: \(field.canonical)")
            }
            if explicit.last?.field.isDocumentKey == true {
                throw .invalidArgument("Order by clause cannot contain more fields after the key \(field.canonical)")
            }
            explicit.append(Ordering(field: field, descending: direction == "DESCENDING"))
        }

        // Implicit ordering: unordered inequality fields (in field-path order), then __name__,
        // all in the direction of the last explicit ordering.
        var order = explicit
        let lastDescending = explicit.last?.descending ?? false
        if let filter {
            var inequalityFields: [FieldPath] = []
            for leaf in filter.leaves where leaf.isInequality {
                if let f = leaf.fieldPath, !f.isDocumentKey, !inequalityFields.contains(f), !order.contains(where: { $0.field == f }) {
                    inequalityFields.append(f)
                }
            }
            inequalityFields.sort { OrderedEncoding.utf8Less($0.canonical, $1.canonical) }
            order.append(contentsOf: inequalityFields.map { Ordering(field: $0, descending: lastDescending) })
        }
        if !order.contains(where: { $0.field.isDocumentKey }) {
            order.append(Ordering(field: .documentKey, descending: lastDescending))
        }

        // cursors
        let startAt = try o.object("startAt").map { c throws(FirestoreError) in try parseCursor(c, order: order) }
        let endAt = try o.object("endAt").map { c throws(FirestoreError) in try parseCursor(c, order: order) }

        // offset, limit
        let offset = Int(try o.int32("offset") ?? 0)
        if offset < 0 { throw .invalidArgument("offset must be non-negative, got \(offset).") }
        var limit: Int?
        if let l = try o.int32("limit") {
            if l < 0 { throw .invalidArgument("limit must be non-negative, got \(l).") }
            limit = Int(l)
        }

        // select
        var projection: [FieldPath]?
        if let select = try o.object("select") {
            try select.requireKnown(["fields"])
            let fields = try select.array("fields") ?? []
            if !fields.isEmpty {
                var paths: [FieldPath] = []
                for (i, f) in fields.enumerated() {
                    let ref = try ProtoObject(json: f, path: select.childPath("fields") + "[\(i)]")
                    paths.append(try parseFieldReference(ref))
                }
                projection = paths.filter { !$0.isDocumentKey }
            }
        }

        return Query(parent: parent, collectionID: collectionID, allDescendants: allDescendants, filter: filter,
                     explicitOrder: explicit, order: order, startAt: startAt, endAt: endAt, offset: offset,
                     limit: limit, projection: projection)
    }

    func parseFieldReference(_ o: ProtoObject) throws(FirestoreError) -> FieldPath {
        try o.requireKnown(["fieldPath"])
        guard let text = try o.string("fieldPath") else {
            throw .invalidArgument("Field path must be set at '\(o.path)'.")
        }
        return try QueryParser.fieldPath(text)
    }

    /// Parses a field path, with Firestore's wording for bad ones.
    static func fieldPath(_ text: String) throws(FirestoreError) -> FieldPath {
        do {
            return try FieldPath.parse(text)
        } catch {
            switch error {
            case .tooLong: throw .invalidArgument("Field path \"\(text.prefix(64))…\" is too long: the maximum is \(FieldPath.maxBytes) bytes.")
            default: throw .invalidArgument("Invalid field path: \(text)")
            }
        }
    }

    func parseFilter(_ o: ProtoObject) throws(FirestoreError) -> QueryFilter {
        try o.requireKnown(["compositeFilter", "fieldFilter", "unaryFilter"])
        let setCount = ["compositeFilter", "fieldFilter", "unaryFilter"].filter { o.raw($0) != nil }.count
        guard setCount == 1 else {
            throw .invalidArgument(setCount == 0 ? "Filter at '\(o.path)' must set one of compositeFilter, fieldFilter or unaryFilter."
                                                 : "Invalid JSON payload received. Oneof field 'filter_type' is already set at '\(o.path)'.")
        }
        if let c = try o.object("compositeFilter") {
            try c.requireKnown(["op", "filters"])
            let op = try c.enumeration("op", [0: "OPERATOR_UNSPECIFIED", 1: "AND", 2: "OR"])
            guard op == "AND" || op == "OR" else {
                throw .invalidArgument("A composite filter must have operator AND or OR at '\(c.path)'.")
            }
            var children: [QueryFilter] = []
            for (i, item) in (try c.array("filters") ?? []).enumerated() {
                children.append(try parseFilter(try ProtoObject(json: item, path: c.childPath("filters") + "[\(i)]")))
            }
            guard !children.isEmpty else {
                throw .invalidArgument("A composite filter must contain at least one filter at '\(c.path)'.")
            }
            return op == "AND" ? .and(children) : .or(children)
        }
        if let f = try o.object("fieldFilter") {
            try f.requireKnown(["field", "op", "value"])
            guard let ref = try f.object("field") else { throw .invalidArgument("Field filter must set 'field' at '\(f.path)'.") }
            let field = try parseFieldReference(ref)
            guard let opName = try f.enumeration("op", FieldOperator.numbers.merging([0: "OPERATOR_UNSPECIFIED"]) { a, _ in a }),
                  let op = FieldOperator(rawValue: opName)
            else { throw .invalidArgument("Field filter must set a valid 'op' at '\(f.path)'.") }
            guard let rawValue = f.raw("value") else {
                throw .invalidArgument("Field filter must set 'value' at '\(f.path)'.")
            }
            let value = try ValueJSON.decode(rawValue, path: f.childPath("value"))
            return .field(field, op, value)
        }
        if let u = try o.object("unaryFilter") {
            try u.requireKnown(["op", "field"])
            guard let ref = try u.object("field") else { throw .invalidArgument("Unary filter must set 'field' at '\(u.path)'.") }
            let field = try parseFieldReference(ref)
            guard let opName = try u.enumeration("op", UnaryOperator.numbers.merging([0: "OPERATOR_UNSPECIFIED"]) { a, _ in a }),
                  let op = UnaryOperator(rawValue: opName)
            else { throw .invalidArgument("Unary filter must set a valid 'op' at '\(u.path)'.") }
            if field.isDocumentKey {
                throw .invalidArgument("Unary filters are not supported on __name__.")
            }
            return .unary(field, op)
        }
        throw .invalidArgument("Filter at '\(o.path)' is empty.")
    }

    /// Checks the rules Firestore applies to filter combinations and values.
    func validate(_ filter: QueryFilter) throws(FirestoreError) {
        var notInCount = 0
        var hasNotEqual = false
        for leaf in filter.leaves {
            guard case .field(let field, let op, let value) = leaf else { continue }
            if op.takesList {
                guard case .array(let values) = value, !values.isEmpty else {
                    throw .invalidArgument("A non-empty array is required for '\(op.rawValue)' filters.")
                }
                if values.count > Self.maxListValues {
                    throw .invalidArgument("'\(op.rawValue)' filters support a maximum of \(Self.maxListValues) elements in the value array.")
                }
            }
            if op == .notIn { notInCount += 1 }
            if op == .notEqual { hasNotEqual = true }
            if field.isDocumentKey {
                if op == .arrayContains || op == .arrayContainsAny {
                    throw .invalidArgument("'\(op.rawValue)' filters are not supported on __name__.")
                }
                let values: [FirestoreValue] = op.takesList ? (value.arrayValue ?? []) : [value]
                for v in values {
                    guard case .reference(let name) = v else { throw .invalidArgument("__key__ filter value must be a Key") }
                    try checkKeyReference(name)
                }
            }
        }
        if notInCount > 1 {
            throw .invalidArgument("A query can have at most one 'NOT_IN' filter.")
        }
        if notInCount > 0 && hasNotEqual {
            throw .invalidArgument("A query cannot combine 'NOT_IN' with 'NOT_EQUAL' filters.")
        }
        if disjunctions(filter) > Self.maxDisjunctions {
            throw .invalidArgument("Query has too many disjunctions: the maximum is \(Self.maxDisjunctions) in disjunctive normal form.")
        }
    }

    /// How many disjunctions the filter has in normal form, each `in`/`array-contains-any` value counting as one.
    func disjunctions(_ filter: QueryFilter) -> Int {
        switch filter {
        case .field(_, let op, let v):
            if op == .in || op == .arrayContainsAny { return max(1, v.arrayValue?.count ?? 1) }
            return 1
        case .unary: return 1
        case .or(let fs): return fs.reduce(0) { min($0 + disjunctions($1), 1_000_000) }
        case .and(let fs): return fs.reduce(1) { min($0 * disjunctions($1), 1_000_000) }
        }
    }

    /// A `__name__` filter or cursor value must name a document of this database.
    func checkKeyReference(_ name: String) throws(FirestoreError) {
        let (db, path) = try ResourcePath.parseName(name)
        guard db == database, path.isDocument else {
            throw .invalidArgument("__key__ filter value must be a Key")
        }
    }

    func parseCursor(_ o: ProtoObject, order: [Ordering]) throws(FirestoreError) -> Cursor {
        try o.requireKnown(["values", "before"])
        var values: [FirestoreValue] = []
        for (i, item) in (try o.array("values") ?? []).enumerated() {
            values.append(try ValueJSON.decode(item, path: o.childPath("values") + "[\(i)]"))
        }
        if values.count > order.count {
            throw .invalidArgument("Too many cursor values specified. The specified order by clause has \(order.count) fields.")
        }
        for (i, v) in values.enumerated() where order[i].field.isDocumentKey {
            guard case .reference(let name) = v else {
                throw .invalidArgument("Cursor value for __name__ must be a reference value.")
            }
            let (cursorDB, cursorPath) = try ResourcePath.parseName(name)
            guard cursorDB == database, cursorPath.isDocument else {
                throw .invalidArgument("Cursor value for __name__ must be a document in database \(database.name): \(name)")
            }
        }
        return Cursor(values: values, before: try o.bool("before") ?? false)
    }
}
