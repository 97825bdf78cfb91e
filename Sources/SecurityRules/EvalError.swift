// Runtime errors. In the rules language an error is a value that flows through an expression
// (absorbed by `false && e` and `true || e`) and makes an `allow` false when it reaches the top.

struct EvalError: Error, Sendable, Equatable {
    /// The message, worded as Firestore words it where Firestore has a wording.
    var message: String
    /// The node that raised it (-1 until the evaluator attributes it).
    var nodeID: Int32 = -1
    /// Fatal errors (access or expression limits) deny the whole request, not one statement.
    var fatal = false
    /// Raised where a list query's constraints prove nothing; worded with the node's position
    /// (`evaluation error at L5:22`) once the evaluator knows it.
    var unproven = false

    init(_ message: String, fatal: Bool = false) {
        self.message = message
        self.fatal = fatal
    }

    static let nullValue = EvalError("Null value error.")

    /// A list query's constraints do not prove the operation's outcome for every document.
    static let unproven: EvalError = {
        var e = EvalError("evaluation error")
        e.unproven = true
        return e
    }()

    static func missingProperty(_ name: String) -> EvalError {
        EvalError("Property \(name) is undefined on object.")
    }

    static func unsupported(_ a: RulesValue, _ op: String, _ b: RulesValue) -> EvalError {
        EvalError("Unsupported operation error. Received: \(a.typeName) \(op) \(b.typeName).")
    }

    static func unsupported(_ op: String, _ a: RulesValue) -> EvalError {
        EvalError("Unsupported operation error. Received: \(op)\(a.typeName).")
    }

    /// A method or function that does not exist for the receiver's type.
    static func noFunction(_ name: String, on receiver: RulesValue? = nil) -> EvalError {
        if let receiver, case .null = receiver { return .nullValue }
        return EvalError("Function not found error: Name: [\(name)].")
    }

    static func invalidArgument(_ function: String, _ why: String) -> EvalError {
        EvalError("Invalid argument provided to call. Function: [\(function)], Argument: [\(why)].")
    }

    static let overflow = EvalError("Integer overflow error.")
    static let divisionByZero = EvalError("Division by zero error.")

    static func indexOutOfRange(_ i: Int64, _ count: Int) -> EvalError {
        EvalError("Index out of range error: index \(i), size \(count).")
    }
}
