/// Decides whether one document satisfies a filter, with Firestore's semantics: comparisons
/// only match values of the operand's type class, `!=` and `not-in` skip missing and null fields,
/// `3 == 3.0`, and `__name__` compares document names.
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
        case .unary(let field, let op):
            guard let v = value(of: field, in: document) else { return false }
            switch op {
            case .isNull: return v == .null
            case .isNaN: return v.isNaN
            case .isNotNull: return v != .null
            case .isNotNaN: return v != .null && !v.isNaN
            }
        case .field(let field, let op, let operand):
            guard let v = value(of: field, in: document) else { return false }
            switch op {
            case .equal, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
                guard v.typeOrder == operand.typeOrder else { return false }
                let c = FirestoreValue.compare(v, operand)
                switch op {
                case .equal: return c == 0
                case .lessThan: return c < 0
                case .lessThanOrEqual: return c <= 0
                case .greaterThan: return c > 0
                default: return c >= 0
                }
            case .notEqual:
                return v != .null && !v.firestoreEquals(operand)
            case .arrayContains:
                guard case .array(let elements) = v else { return false }
                return elements.contains { $0.firestoreEquals(operand) }
            case .arrayContainsAny:
                guard case .array(let elements) = v, case .array(let wanted) = operand else { return false }
                return elements.contains { e in wanted.contains { e.firestoreEquals($0) } }
            case .in:
                guard case .array(let wanted) = operand else { return false }
                return wanted.contains { v.firestoreEquals($0) }
            case .notIn:
                guard case .array(let excluded) = operand, !excluded.contains(.null), v != .null else { return false }
                return !excluded.contains { v.firestoreEquals($0) }
            }
        }
    }
}
