// What a list query's constraints prove. A comparison is true when one filter alone implies it
// (`< 50` implies `< 100`; `< 50` and `> 10` together still do not imply `== 20`), and otherwise
// an error, never false: a negation or an `||` can then never turn an unproven comparison into an
// allow. Membership, `hasAny`/`hasAll` and `is` are proven the same way; everything else about a
// constrained value (its size, its other keys, arithmetic on it) is an error.

extension RulesConstraint {
    /// `self op other`, or `other op self` when `flipped`; op is `==`, `!=`, `<`, `<=`, `>` or `>=`.
    func compare(_ op: BinaryOperator, _ other: RulesValue, flipped: Bool) throws(EvalError) -> RulesValue {
        let op = flipped ? op.mirrored : op
        if case .constraint = other { throw EvalError.unproven }
        switch kind {
        case .fields:
            // A map equals no value of another type; whether it equals a map rests on its unknown keys.
            if case .map = other { throw EvalError.unproven }
            switch op {
            case .equal: return .bool(false)
            case .notEqual: return .bool(true)
            default: throw EvalError.unsupported(.map(RulesMap()), op.rawValue, other)
            }
        case .filters(let filters):
            // Any filter makes the field exist and not be null (`!=` and `not-in` skip null values).
            if op == .notEqual, case .null = other { return .bool(true) }
            for f in filters where RulesConstraint.implies(f, op, other) { return .bool(true) }
            throw EvalError.unproven
        }
    }

    /// Whether every value satisfying `filter` satisfies `value op ruleValue`.
    static func implies(_ filter: Filter, _ op: BinaryOperator, _ ruleValue: RulesValue) -> Bool {
        guard speaks(filter.value, of: ruleValue) else { return false }
        switch filter.comparator {
        case .contains:
            return false
        case .notEqual:
            return op == .notEqual && RulesValue.rulesEqual(filter.value, ruleValue)
        case .less, .lessEqual, .greater, .greaterEqual:
            // Values of another type class are not ordered against the filter's: nothing follows.
            guard let order = try? RulesValue.compare(filter.value, ruleValue, op: op.rawValue, queryOrder: true) else { return false }
            switch (filter.comparator, op) {
            case (.less, .less), (.less, .lessEqual), (.lessEqual, .lessEqual): return order <= 0
            case (.lessEqual, .less): return order < 0
            case (.greater, .greater), (.greater, .greaterEqual), (.greaterEqual, .greaterEqual): return order >= 0
            case (.greaterEqual, .greater): return order > 0
            // `!=` holds of a value outside the filter's range.
            case (.less, .notEqual): return order <= 0
            case (.lessEqual, .notEqual): return order < 0
            case (.greater, .notEqual): return order >= 0
            case (.greaterEqual, .notEqual): return order > 0
            default: return false
            }
        }
    }

    /// A float in a filter proves nothing of an int in a rule (the emulator's recorded behaviour:
    /// `>= 1.5` does not imply `> 1`, though `> 5` implies `> 4.5`). It only ever withholds a proof.
    private static func speaks(_ filterValue: RulesValue, of ruleValue: RulesValue) -> Bool {
        if case .float = filterValue, case .int = ruleValue { return false }
        return true
    }

    /// Whether a filter says the field is a list holding `v`.
    private static func holdsElement(_ filters: [Filter], _ v: RulesValue) -> Bool {
        for f in filters where f.comparator == .contains && speaks(f.value, of: v) && RulesValue.rulesEqual(f.value, v) {
            return true
        }
        return false
    }

    /// `v in self`: a known key of a map, or an element an `array-contains` filter names.
    func holds(_ v: RulesValue) throws(EvalError) -> Bool {
        switch kind {
        case .fields(let known):
            guard case .string(let k) = v else {
                // A map's keys are strings: anything else is certainly not one.
                if v.holdsConstraint { throw EvalError.unproven }
                return false
            }
            if known[k] != nil { return true }
            throw EvalError.unproven
        case .filters(let filters):
            if RulesConstraint.holdsElement(filters, v) { return true }
            throw EvalError.unproven
        }
    }

    /// `self in items`: false when every item is proven unequal to the value, else unproven (no
    /// filter fixes the value, so nothing proves it is one of finitely many).
    func isIn(_ items: [RulesValue]) throws(EvalError) -> Bool {
        for item in items {
            guard case .bool(true) = try compare(.notEqual, item, flipped: false) else { throw EvalError.unproven }
        }
        return false
    }

    /// `self.name` and `self['name']`.
    func member(_ name: String) throws(EvalError) -> RulesValue {
        guard case .fields(let known) = kind else { throw EvalError.unproven }
        guard let v = known[name] else { throw EvalError.missingProperty(name) }
        return v
    }

    /// `self[index]`.
    func index(_ index: RulesValue) throws(EvalError) -> RulesValue {
        if case .string(let k) = index { return try member(k) }
        if case .null = index { throw EvalError.nullValue }
        throw EvalError.unproven
    }

    /// `self.m(args)`.
    func call(_ m: Method, _ args: [RulesValue]) throws(EvalError) -> RulesValue {
        switch (kind, m) {
        case (.fields(let known), .keys):
            // The keys are a list holding at least the known ones: `keys().hasAll([...])` of them holds.
            return .constraint(RulesConstraint(filters: known.keys.map { Filter(.contains, .string($0)) }))
        case (.fields(let known), .get):
            return try RulesConstraint.get(known, args[0], default: args[1])
        case (.filters(let filters), .hasAny):
            for w in try RulesConstraint.elements(args[0], m) where RulesConstraint.holdsElement(filters, w) { return .bool(true) }
            throw EvalError.unproven
        case (.filters(let filters), .hasAll):
            // Only an `array-contains` filter says the field is a list at all.
            guard filters.contains(where: { $0.comparator == .contains }) else { throw EvalError.unproven }
            for w in try RulesConstraint.elements(args[0], m) where !RulesConstraint.holdsElement(filters, w) {
                throw EvalError.unproven
            }
            return .bool(true)
        default:
            // size(), values(), hasOnly(), diff(), string methods, …: they depend on what the query leaves open.
            throw EvalError.unproven
        }
    }

    private static func elements(_ v: RulesValue, _ m: Method) throws(EvalError) -> [RulesValue] {
        switch v {
        case .list(let l), .set(let l): return l
        default: throw EvalError.invalidArgument(m.rawValue, "list or set expected, got \(v.typeName)")
        }
    }

    /// `map.get(key, default)` on a map of which only some keys are known: an unknown key may be
    /// present in the documents, so only a known one answers.
    private static func get(_ known: RulesMap, _ key: RulesValue, default fallback: RulesValue) throws(EvalError) -> RulesValue {
        switch key {
        case .string(let k):
            guard let v = known[k] else { throw EvalError.unproven }
            return v
        case .list(let path):
            var current = RulesValue.constraint(RulesConstraint(knownFields: known))
            for p in path {
                guard case .string(let k) = p else { throw EvalError.invalidArgument("get", "keys must be strings") }
                switch current {
                case .map(let m):
                    guard let next = m[k] else { return fallback }
                    current = next
                case .constraint(let c):
                    guard case .fields(let m) = c.kind, let next = m[k] else { throw EvalError.unproven }
                    current = next
                default:
                    return fallback
                }
            }
            return current
        default:
            throw EvalError.invalidArgument("get", "string or list key expected, got \(key.typeName)")
        }
    }

    /// `self is t`: a map constraint is a map; a field's type is what its ordering filters (or an
    /// `array-contains`) fix, since Firestore compares only values of the filter value's type class.
    func isType(_ t: TypeName) throws(EvalError) -> Bool {
        switch kind {
        case .fields:
            return t == .map
        case .filters(let filters):
            if t == .constraint { return true }
            guard let known = RulesConstraint.typeClass(filters) else { throw EvalError.unproven }
            if known == .number {
                // Firestore orders ints and floats together: the filter does not say which.
                if t == .int || t == .float { throw EvalError.unproven }
            }
            return t == known
        }
    }

    /// The type a field's filters fix, if any.
    static func typeClass(_ filters: [Filter]) -> TypeName? {
        for f in filters {
            switch f.comparator {
            case .contains: return .list
            case .notEqual: continue
            case .less, .lessEqual, .greater, .greaterEqual:
                switch f.value {
                case .int, .float: return .number
                case .string: return .string
                case .bool: return .bool
                case .bytes: return .bytes
                case .timestamp: return .timestamp
                case .path: return .path
                case .latlng: return .latlng
                case .list: return .list
                case .map: return .map
                default: continue
                }
            }
        }
        return nil
    }

    /// The constraint written as rules source would show it: `constraint(< 100, != 7)`, or a
    /// map's known entries followed by `…`.
    func render(_ value: (RulesValue) -> String) -> String {
        switch kind {
        case .filters(let filters):
            return "constraint(" + filters.map { "\($0.comparator.rawValue) \(value($0.value))" }.joined(separator: ", ") + ")"
        case .fields(let known):
            let entries = known.map { RulesValue.quote($0.key) + ": " + value($0.value) }
            return "{" + (entries + ["…"]).joined(separator: ", ") + "}"
        }
    }

    /// The type name messages use: a map constraint is a map.
    var typeName: String {
        if case .fields = kind { return "map" }
        return "constraint"
    }
}

extension BinaryOperator {
    /// The operator with its operands swapped (`a < b` is `b > a`).
    var mirrored: BinaryOperator {
        switch self {
        case .less: .greater
        case .lessEqual: .greaterEqual
        case .greater: .less
        case .greaterEqual: .lessEqual
        default: self
        }
    }
}

extension RulesValue {
    /// Whether this is a constraint (a list request's stand-in for a value the query leaves open).
    var isConstraint: Bool {
        if case .constraint = self { return true }
        return false
    }

    /// Whether a constraint is this value or inside it (in a list, set, map or map diff).
    var holdsConstraint: Bool {
        switch self {
        case .constraint: return true
        case .list(let items), .set(let items): return items.contains { $0.holdsConstraint }
        case .map(let m): return m.contains { $0.value.holdsConstraint }
        case .mapDiff(let l, let r): return l.contains { $0.value.holdsConstraint } || r.contains { $0.value.holdsConstraint }
        default: return false
        }
    }
}
