// What a list request knows of `resource.data` when its query's filters constrain a field without
// fixing its value. Cloud Firestore judges a query against every document it could return, never
// the stored ones ("rules are not filters"), so a rule reading such a field must be proven from the
// filters alone. The rules language calls these values `constraint`s (`x is constraint`).
//
// Related: https://firebase.google.com/docs/firestore/security/rules-query; the official emulator's
// behaviour as recorded by hidane-rules (`src/eval/constraint.rs`, `src/eval/list.rs` on docs.rs).

/// A value every document a list query could return shares, known only through the query's filters.
///
/// Two kinds: a field's filters (`RulesConstraint(filters:)`, `price < 100` and `price != 7`), and a
/// map of which some entries are known (`RulesConstraint(knownFields:)`, what `resource.data` is on
/// a list: the fields the query fixes or constrains, with other keys unknown). The evaluator proves
/// what it can from them and answers everything else with an error, which denies: a proof never
/// rests on a document that happens to be stored, and a wrong answer could only ever be a denial.
public struct RulesConstraint: Sendable, Equatable {
    /// How a query filter compares its field with its value (equalities fix the value instead).
    public enum Comparator: String, Sendable, CaseIterable {
        case notEqual = "!=", less = "<", lessEqual = "<=", greater = ">", greaterEqual = ">="
        /// The field is a list holding the value (`array-contains`, one value of `array-contains-any`).
        case contains = "array-contains"
    }

    /// One filter on the field: `field <comparator> value`.
    public struct Filter: Sendable, Equatable {
        public var comparator: Comparator
        public var value: RulesValue

        public init(_ comparator: Comparator, _ value: RulesValue) {
            self.comparator = comparator
            self.value = value
        }
    }

    enum Kind: Sendable, Equatable {
        /// A field satisfying every filter (there is at least one: any filter makes the field exist).
        case filters([Filter])
        /// A map holding at least these entries (values may be constraints); other keys unknown.
        case fields(RulesMap)
    }

    let kind: Kind

    /// A field of every returned document, satisfying every one of `filters` (a field no filter
    /// names has no value at all: leave it out of the map).
    public init(filters: [Filter]) { kind = .filters(filters) }

    /// A map of every returned document (`resource.data`, or a map field the query filters inside)
    /// holding at least `knownFields`; reading another key is an error, as on a list it must be.
    public init(knownFields: RulesMap) { kind = .fields(knownFields) }

    /// The filters, or the known entries of a map.
    public var filters: [Filter] {
        if case .filters(let fs) = kind { return fs }
        return []
    }

    /// The known entries of a map constraint (empty for a field's filters).
    public var knownFields: RulesMap {
        if case .fields(let m) = kind { return m }
        return RulesMap()
    }
}
