// Binary operators on values (the short-circuit `&&` and `||` live in the evaluator).

enum Operators {
    static func apply(_ op: BinaryOperator, _ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue {
        switch op {
        case .equal: return .bool(RulesValue.rulesEqual(a, b))
        case .notEqual: return .bool(!RulesValue.rulesEqual(a, b))
        case .less: return .bool(try RulesValue.compare(a, b, op: "<").map { $0 < 0 } ?? false)
        case .lessEqual: return .bool(try RulesValue.compare(a, b, op: "<=").map { $0 <= 0 } ?? false)
        case .greater: return .bool(try RulesValue.compare(a, b, op: ">").map { $0 > 0 } ?? false)
        case .greaterEqual: return .bool(try RulesValue.compare(a, b, op: ">=").map { $0 >= 0 } ?? false)
        case .in: return try membership(a, b)
        case .add, .subtract, .multiply, .divide, .modulo: return try arithmetic(op, a, b)
        case .and, .or: throw EvalError.unsupported(a, op.rawValue, b)
        }
    }

    static func membership(_ a: RulesValue, _ b: RulesValue) throws(EvalError) -> RulesValue {
        switch b {
        case .list(let items), .set(let items): return .bool(CollectionFunctions.contains(items, a))
        case .map(let m):
            guard case .string(let k) = a else { return .bool(false) }
            return .bool(m[k] != nil)
        case .null: throw EvalError.nullValue
        default: throw EvalError.unsupported(a, "in", b)
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
            case .divide:
                if y == 0 { throw EvalError.divisionByZero }
                result = x.dividedReportingOverflow(by: y)
            default:
                if y == 0 { throw EvalError.divisionByZero }
                result = x.remainderReportingOverflow(dividingBy: y)
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
            default: throw EvalError.unsupported(a, op.rawValue, b)
            }
        case (.string(let x), .string(let y)) where op == .add:
            return .string(x + y)
        case (.bytes(let x), .bytes(let y)) where op == .add:
            return .bytes(x + y)
        default:
            if let t = try TimeFunctions.arithmetic(op, a, b) { return t }
            throw EvalError.unsupported(a, op.rawValue, b)
        }
    }
}
