import HearthCore

/// Reads a `StructuredQuery` JSON into a `Query`, rejecting what Firestore rejects.
struct QueryParser {
    let database: DatabaseID
    /// The document the query runs under (root when empty).
    let parent: ResourcePath

    /// Largest number of values in an `in` / `not-in` / `array-contains-any` filter,
    /// and of disjunctions after expansion to normal form.
    static let maxListValues = 30
    /// `not-in` takes at most 10 values.
    static let maxNotInValues = 10
    /// Largest storage size of an operand a filter may compare (an index entry's value limit).
    static let maxOperandBytes = 1500
    static let maxDisjunctions = 30
    /// Filters, explicit orderings and the ancestor (a parent document) together: the official
    /// emulator's (Datastore's) bound on a query, counted by `filterCount`.
    static let maxQueryTerms = 100
    /// Distinct fields under inequality filters ("Firestore limits the number of range or
    /// inequality fields to 10": Query with range and inequality filters on multiple fields).
    static let maxInequalityFields = 10

    static let queryFields: Set<String> = ["select", "from", "where", "orderBy", "startAt", "endAt", "offset", "limit", "findNearest"]

    func parse(_ o: ProtoObject) throws(FirestoreError) -> Query {
        try o.requireKnown(Self.queryFields)
        // The vector search clause is checked first, as the emulator does.
        let findNearest = try o.object("findNearest").map { n throws(FirestoreError) in try FindNearest.parse(n, parser: self) }

        // from
        let from = try o.array("from") ?? []
        guard from.count <= 1 else {
            throw .invalidArgument("StructuredQuery.from cannot have more than one collection selector.")
        }
        // No selector (or one without an id) queries every collection under the parent, as
        // Firestore answers a kind-less query.
        var collectionID = ""
        var allDescendants = false
        if let first = from.first {
            let selector = try ProtoObject(json: first, path: o.childPath("from") + "[0]")
            try selector.requireKnown(["collectionId", "allDescendants"])
            collectionID = try selector.string("collectionId") ?? ""
            allDescendants = try selector.bool("allDescendants") ?? false
        }
        let childrenOnly = collectionID.isEmpty && !allDescendants
        if collectionID.isEmpty { allDescendants = true }
        if !collectionID.isEmpty {
            try ResourcePath.validateSegment(collectionID, fullName: database.name(of: parent.appending(collectionID)), isCollection: true)
        }

        // where
        let filter = try o.object("where").map { w throws(FirestoreError) in try parseFilter(w) }
        if let filter { try validate(filter) }
        // A query over every collection (no collection id) has only the document-name index.
        if collectionID.isEmpty, let filter {
            for leaf in filter.leaves {
                if let f = leaf.fieldPath, !f.isDocumentKey {
                    throw .invalidArgument("kind is required for filter: \(f.canonical)")
                }
            }
        }

        // orderBy
        var explicit: [Ordering] = []
        for (i, item) in (try o.array("orderBy") ?? []).enumerated() {
            let ob = try ProtoObject(json: item, path: o.childPath("orderBy") + "[\(i)]")
            try ob.requireKnown(["field", "direction"])
            guard let fieldRef = try ob.object("field") else {
                throw .invalidArgument("Invalid empty property path string.")  // the emulator's words, as for `""`
            }
            let field = try parseFieldReference(fieldRef)
            let direction = try ob.enumeration("direction", [0: "DIRECTION_UNSPECIFIED", 1: "ASCENDING", 2: "DESCENDING"])
            if explicit.contains(where: { $0.field == field }) {
                throw .invalidArgument("order by clause cannot contain duplicate fields \(field.canonical)")
            }
            if explicit.last?.field.isDocumentKey == true {
                throw .invalidArgument("order by clause cannot contain more fields after the key")
            }
            if collectionID.isEmpty && (!field.isDocumentKey || direction == "DESCENDING") {
                throw .invalidArgument("kind is required for all orders except __key__ ascending")
            }
            explicit.append(Ordering(field: field, descending: direction == "DESCENDING"))
        }

        // The size bounds need the orderings; the disjunctions are counted after them (the
        // emulator reports 101 equalities in an OR as too many filters, not disjunctions).
        if let filter {
            try checkSize(filter, orderings: explicit.count)
            let count = disjunctions(filter)
            if count > Self.maxDisjunctions {
                throw .invalidArgument("Too many disjunctions after normalization. Result had \(count) disjunctions which is more than the maximum of \(Self.maxDisjunctions)")
            }
        } else if explicit.count + (parent.segments.isEmpty ? 0 : 1) > Self.maxQueryTerms {
            throw Self.tooManyTerms(filters: 0, orderings: explicit.count, ancestor: !parent.segments.isEmpty)
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
            // The inequality fields' implicit order would follow an explicit `__name__`, and nothing
            // orders after the key (Firestore refuses `where(a > 1).orderBy(__name__)` so).
            if !inequalityFields.isEmpty, explicit.last?.field.isDocumentKey == true {
                throw .invalidArgument("order by clause cannot contain more fields after the key")
            }
            order.append(contentsOf: inequalityFields.map { Ordering(field: $0, descending: lastDescending) })
        }
        if !order.contains(where: { $0.field.isDocumentKey }) {
            order.append(Ordering(field: .documentKey, descending: lastDescending))
        }

        // cursors
        // Cursor values pair with the explicit orderBy only (clients send the implicit orders).
        let startAt = try o.object("startAt").map { c throws(FirestoreError) in try parseCursor(c, order: explicit) }
        let endAt = try o.object("endAt").map { c throws(FirestoreError) in try parseCursor(c, order: explicit) }

        // offset, limit
        let offset = Int(try o.int32("offset") ?? 0)
        if offset < 0 { throw .invalidArgument("offset is negative") }
        var limit: Int?
        // `limit` is an Int32Value, whose JSON form is the bare number.
        if case .object? = o.raw("limit") {
            throw .invalidArgument("Invalid value at '\(o.childPath("limit"))' (type.googleapis.com/google.protobuf.Int32Value), a number is required.")
        }
        if let l = try o.int32("limit") {
            if l < 0 { throw .invalidArgument("limit is negative") }
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
                    paths.append(try parseFieldReference(ref, use: .projection))
                }
                projection = paths.filter { !$0.isDocumentKey }
            }
        }

        // The nearest neighbours are the query's limit; the emulator's words.
        if findNearest != nil {
            if limit != nil { throw .invalidArgument("A query limit cannot be used with FindNearest") }
            if offset != 0 { throw .invalidArgument("A query offset cannot be used with FindNearest") }
            if startAt != nil || endAt != nil { throw .invalidArgument("A cursor cannot be used with FindNearest") }
        }

        return Query(parent: parent, collectionID: collectionID, allDescendants: allDescendants, filter: filter,
                     explicitOrder: explicit, order: order, startAt: startAt, endAt: endAt, offset: offset,
                     limit: limit, projection: projection, childrenOnly: childrenOnly, findNearest: findNearest)
    }

    /// A field the query names; a reserved name is refused as `use` demands (a projection's by
    /// the mask rule, the others by the query rule).
    func parseFieldReference(_ o: ProtoObject, use: FieldPath.Use = .query) throws(FirestoreError) -> FieldPath {
        try o.requireKnown(["fieldPath"])
        guard let text = try o.string("fieldPath") else {
            throw .invalidArgument("Invalid empty property path string.")
        }
        let path = try QueryParser.fieldPath(text)
        try path.rejectReservedNames(as: use)
        return path
    }

    /// Parses a field path, with Firestore's wording for bad ones.
    static func fieldPath(_ text: String) throws(FirestoreError) -> FieldPath {
        do {
            return try FieldPath.parse(text)
        } catch {
            switch error {
            case .tooLong: throw .invalidArgument("Field path \"\(text.prefix(64))…\" is too long: the maximum is \(FieldPath.maxBytes) bytes.")
            default:
                if text.isEmpty { throw .invalidArgument("Invalid empty property path string.") }
                throw .invalidArgument("Invalid property path \"\(text)\". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)")
            }
        }
    }

    func parseFilter(_ o: ProtoObject) throws(FirestoreError) -> QueryFilter {
        try o.requireKnown(["compositeFilter", "fieldFilter", "unaryFilter"])
        let setCount = ["compositeFilter", "fieldFilter", "unaryFilter"].filter { o.raw($0) != nil }.count
        guard setCount == 1 else {
            throw .invalidArgument(setCount == 0 ? "Unknown Filter type."
                                                 : "Invalid JSON payload received. Oneof field 'filter_type' is already set at '\(o.path)'.")
        }
        if let c = try o.object("compositeFilter") {
            try c.requireKnown(["op", "filters"])
            let op = try c.enumeration("op", [0: "OPERATOR_UNSPECIFIED", 1: "AND", 2: "OR"])
            guard op == "AND" || op == "OR" else {
                throw .invalidArgument("Unsupported CompositeFilter operator.")
            }
            var children: [QueryFilter] = []
            for (i, item) in (try c.array("filters") ?? []).enumerated() {
                children.append(try parseFilter(try ProtoObject(json: item, path: c.childPath("filters") + "[\(i)]")))
            }
            // An empty AND filters nothing out; an empty OR has nothing to match.
            guard !children.isEmpty || op == "AND" else {
                throw .invalidArgument("Composite filter must have at least one sub-filter.")
            }
            return op == "AND" ? .and(children) : .or(children)
        }
        if let f = try o.object("fieldFilter") {
            try f.requireKnown(["field", "op", "value"])
            guard let ref = try f.object("field") else { throw .invalidArgument("Field filter must set 'field' at '\(f.path)'.") }
            let field = try parseFieldReference(ref)
            guard let opName = try f.enumeration("op", FieldOperator.numbers.merging([0: "OPERATOR_UNSPECIFIED"]) { a, _ in a }),
                  let op = FieldOperator(rawValue: opName)
            else { throw .invalidArgument("Unknown FieldFilter operator.") }
            guard let rawValue = f.raw("value") else {
                throw .invalidArgument("Cannot convert firestore.v1.Value with type unset.")
            }
            let value = try ValueJSON.decode(rawValue, path: f.childPath("value"), arraysInArrays: op.takesList)
            // An operand is one index entry's value: its storage size (a string's bytes + 1, a map's
            // keys and values, an array's elements, …) must fit, as the official emulator measures it
            // (a 1,499-byte string, a 1,500-byte bytes value, `{"k": 1,497 bytes}`, 187 integers).
            // A document name's own limits bound `__name__` operands.
            if !field.isDocumentKey {
                for operand in op.takesList ? (value.arrayValue ?? []) : [value]
                where DocumentFields.size(of: operand) > Self.maxOperandBytes {
                    let name = op == .arrayContains || op == .arrayContainsAny ? field.canonical + "[*]" : field.canonical
                    throw .invalidArgument("value for \(name) is too large to be used in a query")
                }
            }
            return Self.fineTimestampFilter(field, op, value, raw: rawValue)
        }
        if let u = try o.object("unaryFilter") {
            try u.requireKnown(["op", "field"])
            guard let ref = try u.object("field") else { throw .invalidArgument("Unary filter must set 'field' at '\(u.path)'.") }
            let field = try parseFieldReference(ref)
            guard let opName = try u.enumeration("op", UnaryOperator.numbers.merging([0: "OPERATOR_UNSPECIFIED"]) { a, _ in a }),
                  let op = UnaryOperator(rawValue: opName)
            else { throw .invalidArgument("Unknown UnaryFilter operator.") }
            if field.isDocumentKey {
                throw .invalidArgument("__key__ filter value must be a Key")
            }
            return .unary(field, op)
        }
        throw .invalidArgument("Filter at '\(o.path)' is empty.")
    }

    /// Checks the rules Firestore applies to filter combinations and values.
    func validate(_ filter: QueryFilter) throws(FirestoreError) {
        var negations = 0
        for leaf in filter.leaves {
            if case .unary(_, let op) = leaf, op == .isNotNull || op == .isNotNaN { negations += 1 }
            guard case .field(let field, let op, let value) = leaf else { continue }
            if op.takesList {
                guard case .array(let values) = value else {
                    throw .invalidArgument("'\(op.rawValue)' requires an ArrayValue.")
                }
                guard !values.isEmpty else {
                    throw .invalidArgument("'\(op.rawValue)' requires an non-empty ArrayValue.")
                }
                let limit = op == .notIn ? Self.maxNotInValues : Self.maxListValues
                if values.count > limit {
                    throw .invalidArgument("'\(op.rawValue)' supports up to \(limit) comparison values.")
                }
            }
            if op == .notIn || op == .notEqual { negations += 1 }
            if field.isDocumentKey {
                if op == .arrayContains || op == .arrayContainsAny {
                    throw .invalidArgument("the name __key__ is reserved")
                }
                let values: [FirestoreValue] = op.takesList ? (value.arrayValue ?? []) : [value]
                for v in values {
                    guard case .reference(let name) = v else { throw .invalidArgument("__key__ filter value must be a Key") }
                    try checkKeyReference(name)
                }
            }
        }
        if negations > 1 {
            throw .invalidArgument("Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.")
        }
        // "You can't combine not-in with in, array-contains-any, or or in the same query" (query limitations).
        if filter.leaves.contains(where: { if case .field(_, .notIn, _) = $0 { true } else { false } }), Self.hasDisjunction(filter) {
            throw .invalidArgument("'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.")
        }
        if Self.arrayContainsPerDisjunction(filter) > 1 {
            throw .invalidArgument("A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction.")
        }
    }

    /// The bounds on a query's size, in the official emulator's words: at most 100 filters
    /// (`filterCount`), explicit orderings and ancestor together, and at most 10 distinct fields
    /// under inequalities (`__name__` among them).
    func checkSize(_ filter: QueryFilter, orderings: Int) throws(FirestoreError) {
        let ancestor = !parent.segments.isEmpty
        // Most queries are far below the bound even counting every value of every list: the
        // repeats `filterCount` leaves out are only looked for past it. One walk of the tree, no
        // array of its leaves (this runs for every query).
        var upperBound = orderings + (ancestor ? 1 : 0)
        var fields: [FieldPath] = []
        Self.measure(filter, &upperBound, &fields)
        if upperBound > Self.maxQueryTerms {
            let filters = Self.filterCount(filter)
            if filters + orderings + (ancestor ? 1 : 0) > Self.maxQueryTerms {
                throw Self.tooManyTerms(filters: filters, orderings: orderings, ancestor: ancestor)
            }
        }
        if fields.count > Self.maxInequalityFields {
            // The emulator lists them in its hash set's order; here, in the order the query names them.
            let names = fields.map { $0.isDocumentKey ? "__key__" : $0.segments.joined(separator: ".") }
            throw .invalidArgument("The query contains \(fields.count) distinct inequality fields: [\(names.joined(separator: ", "))]. "
                                   + "A query may not have more than \(Self.maxInequalityFields) distinct inequality fields.")
        }
    }

    /// Adds to `terms` each leaf's filters counting every value of a list operator, and to `fields`
    /// each field under an inequality not there yet.
    private static func measure(_ filter: QueryFilter, _ terms: inout Int, _ fields: inout [FieldPath]) {
        switch filter {
        case .and(let fs), .or(let fs):
            for f in fs { measure(f, &terms, &fields) }
        case .field(let f, let op, let v):
            terms += op.takesList ? (v.arrayValue?.count ?? 1) : 1
            if op.isInequality, !fields.contains(f) { fields.append(f) }
        case .unary(let f, let op):
            terms += 1
            if op == .isNotNull || op == .isNotNaN, !fields.contains(f) { fields.append(f) }
        }
    }

    static func tooManyTerms(filters: Int, orderings: Int, ancestor: Bool) -> FirestoreError {
        .invalidArgument("The query may not have more than \(maxQueryTerms) filters + sort orders + ancestor total. Currently there are "
                         + "\(filters) filters, \(orderings) sort orders, and \(ancestor ? "one ancestor filter" : "no ancestor filter").")
    }

    /// The filters the 100-term bound counts, as the official emulator counts them: each leaf once,
    /// an `in`, `not-in` or `array-contains-any` once per distinct value, and a filter repeated
    /// within one composite once (`a == 1 AND a == 1` is one filter, `a == 1 AND a == 1.0` two);
    /// the branches of an OR add up, whatever they share.
    static func filterCount(_ filter: QueryFilter) -> Int {
        switch filter {
        case .field(_, let op, let v) where op.takesList:
            guard case .array(let values) = v else { return 1 }
            return Set(values.map { ValueJSON.encode($0).serialized() }).count
        case .field, .unary:
            return 1
        case .and(let fs), .or(let fs):
            var seen = Set<String>()
            var n = 0
            for f in fs where seen.insert(exactKey(f)).inserted { n += filterCount(f) }
            return n
        }
    }

    /// A filter's text telling apart what the emulator's filter equality does (1 from 1.0).
    private static func exactKey(_ filter: QueryFilter) -> String {
        switch filter {
        case .field(let f, let op, let v): "F\(f.canonical)\u{0}\(op.rawValue)\u{0}\(ValueJSON.encode(v).serialized())"
        case .unary(let f, let op): "U\(f.canonical)\u{0}\(op.rawValue)"
        case .and(let fs): "A(" + fs.map(exactKey).joined(separator: ",") + ")"
        case .or(let fs): "O(" + fs.map(exactKey).joined(separator: ",") + ")"
        }
    }

    /// Whether the filter holds an `in`, an `array-contains-any` or an `OR` (of more than one filter).
    static func hasDisjunction(_ filter: QueryFilter) -> Bool {
        switch filter {
        case .field(_, let op, _): op == .in || op == .arrayContainsAny
        case .unary: false
        case .and(let fs): fs.contains(where: hasDisjunction)
        case .or(let fs): fs.count > 1 || fs.contains(where: hasDisjunction)
        }
    }

    /// The most `array-contains` filters any one conjunction of the filter holds; an
    /// `array-contains-any` is one in each of its disjunctions ("You can't combine array-contains
    /// with array-contains-any in the same disjunction", query limitations).
    static func arrayContainsPerDisjunction(_ filter: QueryFilter) -> Int {
        switch filter {
        case .field(_, .arrayContains, _), .field(_, .arrayContainsAny, _): 1
        case .field, .unary: 0
        case .and(let fs): fs.reduce(0) { $0 + arrayContainsPerDisjunction($1) }
        case .or(let fs): fs.map(arrayContainsPerDisjunction).max() ?? 0
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
        // The official emulator's words for a document of another project or database.
        guard db == database else {
            throw .invalidArgument("The request was for database '\(database.name)' but was attempting to access database '\(db.name)'")
        }
        guard path.isDocument else {
            throw .invalidArgument("__key__ filter value must be a Key")
        }
    }

    func parseCursor(_ o: ProtoObject, order: [Ordering]) throws(FirestoreError) -> Cursor {
        try o.requireKnown(["values", "before"])
        var values: [FirestoreValue] = []
        let items = try o.array("values") ?? []
        for (i, item) in items.enumerated() {
            values.append(try ValueJSON.decode(item, path: o.childPath("values") + "[\(i)]"))
        }
        if values.count > order.count {
            throw .invalidArgument("Cursor has too many values.")
        }
        for (i, v) in values.enumerated() where order[i].field.isDocumentKey {
            guard case .reference(let name) = v else {
                throw .invalidArgument("Cursor __key__ value is not a document reference.")
            }
            let (cursorDB, cursorPath) = try ResourcePath.parseName(name)
            // The official emulator's words for a key in another project or database.
            guard cursorDB == database else { throw .invalidArgument("The cursor key is in a different database than the query") }
            guard cursorPath.isDocument else {
                throw .invalidArgument("Cursor value for __name__ must be a document in database \(database.name): \(name)")
            }
        }
        return Self.fineTimestampCursor(values, rawItems: items, order: order, before: try o.bool("before") ?? false)
    }
}
