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
        let received = "Unsupported operation error. Received: \(a.typeName) \(op) \(b.typeName)."
        guard let expected = expectedOperands(op) else { return EvalError(received) }
        return EvalError(received + " Expected: " + expected.map { "\($0.0) \(op) \($0.1)" }.joined(separator: ", ") + ".")
    }

    /// The operand types the official emulator lists after `Expected:` when an operator is given
    /// others (nil: it lists none, or Hearth has not recorded them).
    static func expectedOperands(_ op: String) -> [(String, String)]? {
        switch op {
        case "+": [("int", "int"), ("float", "float"), ("string", "string"), ("duration", "duration"), ("duration", "timestamp"), ("timestamp", "duration")]
        case "-": [("int", "int"), ("float", "float"), ("duration", "duration"), ("timestamp", "duration"), ("timestamp", "timestamp")]
        case "*", "/", "%": [("int", "int"), ("float", "float")]
        case "<", "<=", ">", ">=":
            [("string", "string"), ("bytes", "bytes"), ("int", "int"), ("float", "float"), ("duration", "duration"),
             ("timestamp", "timestamp"), ("constraint", "any"), ("any", "constraint")]
        default: nil
        }
    }

    static func unsupported(_ op: String, _ a: RulesValue) -> EvalError {
        let expected = switch op {
        case "!": " Expected: !bool."
        case "-": " Expected: -int, -float, -duration."
        default: ""
        }
        return EvalError("Unsupported operation error. Received: \(op)\(a.typeName).\(expected)")
    }

    /// A function or method given arguments of types it does not take, in the emulator's words:
    /// `Unsupported operation error. Received: math.abs(string). Expected: math.abs(int), math.abs(float).`
    static func signature(_ name: String, _ args: [RulesValue], expected: [String]) -> EvalError {
        let received = "\(name)(\(args.map(\.typeName).joined(separator: ", ")))"
        return EvalError("Unsupported operation error. Received: \(received). Expected: "
                         + expected.map { "\(name)(\($0))" }.joined(separator: ", ") + ".")
    }

    /// An index of the wrong type: `Received: list[float]. Expected: list[int].`
    static func badIndex(_ b: RulesValue, _ i: RulesValue) -> EvalError {
        let expected = switch b {
        case .list, .string, .path: "int"
        case .map: "string"
        default: ""
        }
        let tail = expected.isEmpty ? "" : " Expected: \(b.typeName)[\(expected)]."
        return EvalError("Unsupported operation error. Received: \(b.typeName)[\(i.typeName)].\(tail)")
    }

    /// A method or function that does not exist for the receiver's type.
    static func noFunction(_ name: String, on receiver: RulesValue? = nil) -> EvalError {
        if let receiver, case .null = receiver { return .nullValue }
        return EvalError("Function not found error: Name: [\(name)].")
    }

    static func invalidArgument(_ function: String, _ why: String) -> EvalError {
        EvalError("Invalid argument provided to call. Function: [\(function)], Argument: [\(why)].")
    }

    /// Integer arithmetic past Int64, in the official emulator's words.
    static let overflow = EvalError("Integer value is out of the [-9223372036854775808, 9223372036854775807] range.")
    static let divisionByZero = EvalError("Divide by zero error.")

    static func indexOutOfRange(_ i: Int64, _ count: Int) -> EvalError {
        EvalError("Index out of bound error. Index: [\(i)] , size: [\(count)].")
    }

    /// A condition (or an operand of `&&`/`||`) that is not a bool.
    static func notBool(_ v: RulesValue) -> EvalError { typeError(received: v, expected: "bool") }

    /// A value of the wrong type where one type only will do, in the emulator's words.
    static func typeError(received v: RulesValue, expected: String) -> EvalError {
        EvalError("Type error. Received: [\(v.typeName)] Expected: [\(expected)].")
    }
}
