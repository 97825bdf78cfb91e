// Binary operators on values (the short-circuit `&&` and `||` live in the evaluator).

enum Operators {
    static func apply(_ op: BinaryOperator, _ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue {
        switch op {
        case .equal:
            if RulesValue.rulesEqual(a, b) { return .bool(true) }
            return try unequal(op, a, b)
        case .notEqual:
            if RulesValue.rulesEqual(a, b) { return .bool(false) }
            return try unequal(op, a, b)
        case .less, .lessEqual, .greater, .greaterEqual:
            let order: Int?
            do {
                order = try RulesValue.compare(a, b, op: op.rawValue)
            } catch {
                // Constraints are not ordered values: they answer from the query's filters.
                if case .constraint(let c) = a { return try c.compare(op, b, flipped: false) }
                if case .constraint(let c) = b { return try c.compare(op, a, flipped: true) }
                throw error
            }
            guard let order else { return .bool(false) }   // NaN
            switch op {
            case .less: return .bool(order < 0)
            case .lessEqual: return .bool(order <= 0)
            case .greater: return .bool(order > 0)
            default: return .bool(order >= 0)
            }
        case .in: return try membership(a, b)
        case .add, .subtract, .multiply, .divide, .modulo: return try arithmetic(op, a, b)
        case .and, .or: throw EvalError.unsupported(a, op.rawValue, b)
        }
    }

    /// `==` or `!=` of values `rulesEqual` found unequal: certain, unless a constraint stands for a
    /// value the documents of a list leave open, in which case it proves what it can.
    private static func unequal(_ op: BinaryOperator, _ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue {
        switch (a, b) {
        case (.constraint(let c), _): return try c.compare(op, b, flipped: false)
        case (_, .constraint(let c)): return try c.compare(op, a, flipped: true)
        case (.list, .list), (.set, .set), (.map, .map), (.mapDiff, .mapDiff):
            if a.holdsConstraint || b.holdsConstraint { throw EvalError.unproven }
        default: break
        }
        return .bool(op == .notEqual)
    }

    static func membership(_ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue {
        switch b {
        case .list(let items):
            if case .constraint(let c) = a { return .bool(try c.isIn(items)) }
            return .bool(try CollectionFunctions.contains(items, a, strict: true))
        case .set(let items):
            if case .constraint(let c) = a { return .bool(try c.isIn(items)) }
            return .bool(try CollectionFunctions.contains(items, a))
        case .map(let m):
            guard case .string(let k) = a else {
                // Keys are strings: only a constraint may stand for one. Anything else is the
                // emulator's error (`1 in {'a': 1}`: `Received: map.in(int). Expected: map.in(string).`),
                // not false, so `!(1 in m)` cannot allow.
                if a.isConstraint { throw EvalError.unproven }
                throw EvalError.signature("map.in", [a], expected: ["string"])
            }
            return .bool(m[k] != nil)
        case .constraint(let c): return .bool(try c.holds(a))
        case .null: throw EvalError.nullValue
        // The emulator's words: `in` has no meaning for other right operands (`'b' in 'abc'`).
        default: throw EvalError.noFunction("in")
        }
    }

    static func arithmetic(_ op: BinaryOperator, _ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue {
        switch (a, b) {
        case (.int(let x), .int(let y)):
            let result: (Int64, Bool)
            switch op {
            case .add: result = x.addingReportingOverflow(y)
            case .subtract: result = x.subtractingReportingOverflow(y)
            case .multiply: result = x.multipliedReportingOverflow(by: y)
            // Int64.min / -1 wraps to Int64.min (and % gives 0) on the official emulator, as
            // Java's long division does; only +, - and * are checked there.
            case .divide:
                if y == 0 { throw EvalError.divisionByZero }
                result = (x.dividedReportingOverflow(by: y).partialValue, false)
            default:
                if y == 0 { throw EvalError.divisionByZero }
                result = (x.remainderReportingOverflow(dividingBy: y).partialValue, false)
            }
            if result.1 { throw EvalError.overflow }
            return .int(result.0)
        case (.float, .float), (.int, .float), (.float, .int):
            let x = a.number!, y = b.number!
            switch op {
            case .add: return .float(x + y)
            case .subtract: return .float(x - y)
            case .multiply: return .float(x * y)
            case .divide: return .float(x / y)
            // Java's `%` on doubles: the remainder of truncated division, with the dividend's sign
            // (`-7.5 % 2 == -1.5`, `1.0 % 0` is NaN).
            default: return .float(x.truncatingRemainder(dividingBy: y))
            }
        case (.string(let x), .string(let y)) where op == .add:
            return .string(x + y)
        default:
            if let t = try TimeFunctions.arithmetic(op, a, b) { return t }
            throw EvalError.unsupported(a, op.rawValue, b)
        }
    }
}
