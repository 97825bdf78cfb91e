import HearthCore
import SecurityRules

/// One way a document can satisfy a list query's filter, and the `resource.data` the rules judge
/// for it. Rules are not filters: a query is allowed only when every document it could return
/// passes, so the rules see the query's constraints, never the stored documents.
///
/// The filter's disjunctive normal form gives the ways; each value of an `in` (and of an
/// `array-contains-any`) splits a way in as many, so every way is a conjunction. In a way, a
/// field compared by equality (`==`, `IS_NULL`, `IS_NAN`, one `in` value) holds that value; a field
/// with other filters (`<`, `<=`, `>`, `>=`, `!=`, `not-in`, `IS_NOT_NULL`, `IS_NOT_NAN`,
/// `array-contains`, one `array-contains-any` value) holds a `RulesConstraint` of them; a field
/// no filter names is absent; and `resource.data` itself is a map of which only those fields are
/// known (its size and other keys prove nothing). `__name__ ==` (or one name of `__name__ in`)
/// pins the document; other comparisons of `__name__` constrain nothing.
/// Related: https://firebase.google.com/docs/firestore/security/rules-query
struct ListCase {
    /// Fields fixed by equality.
    var fixed: [(FieldPath, FirestoreValue)] = []
    /// Fields constrained by other filters.
    var filters: [(FieldPath, RulesConstraint.Filter)] = []
    /// The document `__name__` equality names.
    var pinned: ResourcePath?

    /// The ways to judge, about `budget` of them: when the `in` and `array-contains-any` values of
    /// a conjunction would make more, that conjunction's multi-value filters are left out (the
    /// fields they name stay unknown, which proves less, never more).
    static func cases(for filter: QueryFilter?, budget: Int) -> [ListCase] {
        let conjunctions = filter?.disjunctiveNormalForm(limit: budget) ?? [[]]
        // A normal form cut short would leave ways unjudged: judge one way knowing nothing instead
        // (the parser caps queries at 30 disjunctions, so this never happens to a valid one).
        guard conjunctions.count <= budget else { return [ListCase()] }
        let perConjunction = max(1, budget / max(1, conjunctions.count))
        var out: [ListCase] = []
        for conjunction in conjunctions {
            var base = ListCase()
            var choices: [[ListCase.Choice]] = []
            for leaf in conjunction {
                switch leaf {
                case .field(let f, .in, .array(let vs)) where vs.count > 1:
                    choices.append(vs.map { .fixed(f, $0) })
                case .field(let f, .arrayContainsAny, .array(let vs)) where vs.count > 1:
                    choices.append(vs.map { .contains(f, $0) })
                default:
                    base.add(leaf)
                }
            }
            var combinations = [base]
            // Saturating: the parser already caps the normal form at 30 disjunctions.
            if choices.reduce(1, { min($0 * max($1.count, 1), perConjunction + 1) }) <= perConjunction {
                for options in choices {
                    combinations = combinations.flatMap { c in options.map { c.adding($0) } }
                }
            }
            out.append(contentsOf: combinations)
        }
        return out
    }

    /// One value of a multi-value filter.
    enum Choice {
        case fixed(FieldPath, FirestoreValue)
        case contains(FieldPath, FirestoreValue)
    }

    func adding(_ choice: Choice) -> ListCase {
        var c = self
        switch choice {
        case .fixed(let f, let v): c.fix(f, v)
        case .contains(let f, let v): c.constrain(f, .contains, v)
        }
        return c
    }

    /// Adds what one conjunct says of its field.
    mutating func add(_ leaf: QueryFilter) {
        switch leaf {
        case .field(let f, let op, let v):
            switch op {
            case .equal: fix(f, v)
            case .in:
                if case .array(let vs) = v, vs.count == 1 { fix(f, vs[0]) }
            case .arrayContainsAny:
                if case .array(let vs) = v, vs.count == 1 { constrain(f, .contains, vs[0]) }
            case .arrayContains: constrain(f, .contains, v)
            case .lessThan: constrain(f, .less, v)
            case .lessThanOrEqual: constrain(f, .lessEqual, v)
            case .greaterThan: constrain(f, .greater, v)
            case .greaterThanOrEqual: constrain(f, .greaterEqual, v)
            case .notEqual: constrain(f, .notEqual, v)
            case .notIn:
                if case .array(let vs) = v { for x in vs { constrain(f, .notEqual, x) } }
            }
        case .unary(let f, let op):
            switch op {
            case .isNull: fix(f, .null)
            case .isNaN: fix(f, .double(.nan))
            case .isNotNull: constrain(f, .notEqual, .null)
            case .isNotNaN: constrain(f, .notEqual, .double(.nan))
            }
        case .and, .or:
            break   // a conjunction of the normal form holds leaves only
        }
    }

    private mutating func fix(_ f: FieldPath, _ v: FirestoreValue) {
        if f.isDocumentKey {
            if case .reference(let name) = v, let (_, p) = try? ResourcePath.parseName(name) { pinned = p }
            return
        }
        fixed.append((f, v))
    }

    private mutating func constrain(_ f: FieldPath, _ comparator: RulesConstraint.Comparator, _ v: FirestoreValue) {
        // Ranges and exclusions of `__name__` constrain nothing the rules read.
        if f.isDocumentKey { return }
        filters.append((f, RulesConstraint.Filter(comparator, RulesConversion.value(v))))
    }

    /// `resource.data` for this way.
    func data() -> RulesValue {
        var root = Node()
        for (f, v) in fixed { root.insert(f.segments[...]) { if $0.value == nil { $0.value = RulesConversion.value(v) } } }
        for (f, filter) in filters { root.insert(f.segments[...]) { $0.filters.append(filter) } }
        return .constraint(RulesConstraint(knownFields: root.fields()))
    }

    /// What the filters say of one field path: a fixed value, filters, or fields inside it.
    private struct Node {
        var value: RulesValue?
        var filters: [RulesConstraint.Filter] = []
        var children: [ExactString: Node] = [:]  // by bytes, as field names are

        mutating func insert(_ path: ArraySlice<String>, _ update: (inout Node) -> Void) {
            guard let first = path.first else { return update(&self) }
            var child = children.removeValue(forKey: ExactString(first)) ?? Node()
            child.insert(path.dropFirst(), update)
            children[ExactString(first)] = child
        }

        func fields() -> RulesMap {
            RulesMap(uniqueKeysWithValues: children.map { ($0.key.string, $0.value.resolved()) })
        }

        /// A fixed value wins (it is exact); then what is known of the fields inside (a filtered
        /// subfield makes the field a map); then the field's own filters.
        func resolved() -> RulesValue {
            if let value { return value }
            if !children.isEmpty { return .constraint(RulesConstraint(knownFields: fields())) }
            return .constraint(RulesConstraint(filters: filters))
        }
    }
}
