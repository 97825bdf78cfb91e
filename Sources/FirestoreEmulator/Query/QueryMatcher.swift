/// Decides whether one document satisfies a filter, with Firestore's semantics: comparisons
/// only match values of the operand's type class, `!=` and `not-in` skip missing and null fields,
/// `3 == 3.0`, and `__name__` compares document names. NaN and null are found only by `IS_NAN`
/// and `IS_NULL`: as an operand of a comparison, `in`, `array-contains(-any)` they match nothing,
/// and a stored NaN satisfies no range, as Firestore's indexes answer.
struct QueryMatcher {
    let database: DatabaseID

    /// The value of `field` in `document` (`__name__` is the document's reference).
    func value(of field: FieldPath, in document: StoredDocument) -> FirestoreValue? {
        if field.isDocumentKey { return .reference(database.name(of: document.path)) }
        return DocumentFields.value(at: field, in: document.fields)
    }

    func matches(_ filter: QueryFilter, _ document: StoredDocument) -> Bool {
        switch filter {
        case .and(let fs): return fs.allSatisfy { matches($0, document) }
        case .or(let fs): return fs.contains { matches($0, document) }
        case .unary(let field, let op): return Self.matches(op, value(of: field, in: document))
        case .field(let field, let op, let operand): return Self.matches(op, operand, value(of: field, in: document))
        }
    }

    /// Whether a field holding `v` (nil: missing) satisfies the unary filter `op`.
    static func matches(_ op: UnaryOperator, _ v: FirestoreValue?) -> Bool {
        guard let v else { return false }
        switch op {
        case .isNull: return v == .null
        case .isNaN: return v.isNaN
        case .isNotNull: return v != .null
        case .isNotNaN: return v != .null && !v.isNaN
        }
    }

    /// Whether a field holding `v` (nil: missing) satisfies `op operand`. Static and per leaf, so a
    /// query's walk of an index can judge the values it decoded without building a document.
    static func matches(_ op: FieldOperator, _ operand: FirestoreValue, _ v: FirestoreValue?) -> Bool {
        guard let v else { return false }
        switch op {
        case .equal, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard v.typeOrder == operand.typeOrder, Self.isMatchable(operand), !v.isNaN else { return false }
            let c = FirestoreValue.compare(v, operand)
            switch op {
            case .equal: return c == 0
            case .lessThan: return c < 0
            case .lessThanOrEqual: return c <= 0
            case .greaterThan: return c > 0
            default: return c >= 0
            }
        case .notEqual:
            // `!= NaN` excludes nothing (NaN equals nothing), so a stored NaN matches.
            // `!= null` matches nothing (IS_NOT_NULL is the existence filter).
            return v != .null && operand != .null && (operand.isNaN || !v.firestoreEquals(operand))
        case .arrayContains:
            guard case .array(let elements) = v, Self.isMatchable(operand) else { return false }
            return elements.contains { $0.firestoreEquals(operand) }
        case .arrayContainsAny:
            guard case .array(let elements) = v, case .array(let wanted) = operand else { return false }
            let matchable = wanted.filter(Self.isMatchable)
            return elements.contains { e in matchable.contains { e.firestoreEquals($0) } }
        case .in:
            guard case .array(let wanted) = operand, !v.isNaN else { return false }
            return wanted.contains { Self.isMatchable($0) && v.firestoreEquals($0) }
        case .notIn:
            guard case .array(let excluded) = operand, !excluded.contains(.null), v != .null else { return false }
            return !excluded.contains { !$0.isNaN && v.firestoreEquals($0) }
        }
    }

    /// Whether an operand can equal or bound a stored value: NaN and null never do.
    static func isMatchable(_ operand: FirestoreValue) -> Bool {
        operand != .null && !operand.isNaN
    }
}
