// The parse tree. Every node carries its source range; the checker turns it into a `Program`.

/// Unary operators.
enum UnaryOperator: String, Sendable { case not = "!", negate = "-" }

/// Binary operators, including the short-circuit ones.
enum BinaryOperator: String, Sendable {
    case multiply = "*", divide = "/", modulo = "%", add = "+", subtract = "-"
    case less = "<", lessEqual = "<=", greater = ">", greaterEqual = ">="
    case `in` = "in", equal = "==", notEqual = "!=", and = "&&", or = "||"
}

/// One piece of a path-literal segment: text, `$(expr)`, or a whole `{name}` segment (a
/// template's variable, for `bind()`: `(/a/{x}).bind({'x': 'v'})`).
enum PathPart: Sendable {
    case text(String)
    case interpolation(Expr)
    case variable(String)
}

/// A path-literal segment, made of parts that are concatenated.
struct PathSegment: Sendable {
    var parts: [PathPart]
    var range: SourceRange
}

/// An expression.
indirect enum Expr: Sendable {
    case null(SourceRange)
    case bool(Bool, SourceRange)
    case int(Int64, SourceRange)
    case float(Double, SourceRange)
    case string(String, SourceRange)
    case bytes([UInt8], SourceRange)
    case list([Expr], SourceRange)
    case map([(key: Expr, value: Expr)], SourceRange)
    case path([PathSegment], SourceRange)
    case identifier(String, SourceRange)
    case member(Expr, String, SourceRange)
    case index(Expr, Expr, SourceRange)
    case slice(Expr, Expr?, Expr?, SourceRange)
    /// `name(args)`; the second range is the name's.
    case call(String, [Expr], SourceRange, SourceRange)
    /// `receiver.name(args)`; the second range is the name's.
    case method(Expr, String, [Expr], SourceRange, SourceRange)
    case unary(UnaryOperator, Expr, SourceRange)
    case binary(BinaryOperator, Expr, Expr, SourceRange)
    case ternary(Expr, Expr, Expr, SourceRange)
    case isType(Expr, String, SourceRange)
    /// Stands in for an expression that did not parse (an error was already reported).
    case invalid(SourceRange)

    var range: SourceRange {
        switch self {
        case .null(let r), .bool(_, let r), .int(_, let r), .float(_, let r), .string(_, let r), .bytes(_, let r),
             .list(_, let r), .map(_, let r), .path(_, let r), .identifier(_, let r), .member(_, _, let r),
             .index(_, _, let r), .slice(_, _, _, let r), .call(_, _, let r, _), .method(_, _, _, let r, _),
             .unary(_, _, let r), .binary(_, _, _, let r), .ternary(_, _, _, let r), .isType(_, _, let r),
             .invalid(let r):
            return r
        }
    }
}

/// A segment of a `match` path.
enum MatchSegmentKind: Sendable, Equatable {
    case literal(String)
    /// `{name}`: exactly one segment, bound as a string.
    case single(String)
    /// `{name=**}`: a run of segments, bound as a path.
    case recursive(String)
}

struct MatchSegment: Sendable {
    var kind: MatchSegmentKind
    var range: SourceRange
    /// A variable's name inside `{…}` (where the emulator places an issue about it); else `range`.
    var nameRange: SourceRange

    init(kind: MatchSegmentKind, range: SourceRange, nameRange: SourceRange? = nil) {
        self.kind = kind
        self.range = range
        self.nameRange = nameRange ?? range
    }
}

/// A statement inside `service` or `match`.
enum Statement: Sendable {
    case match(MatchDecl)
    case allow(AllowDecl)
    case function(FunctionDecl)
}

struct MatchDecl: Sendable {
    var segments: [MatchSegment]
    var pathRange: SourceRange
    var range: SourceRange
    var body: [Statement]
}

struct AllowDecl: Sendable {
    var methods: [(name: String, range: SourceRange)]
    var condition: Expr?
    var range: SourceRange
}

struct LetDecl: Sendable {
    var name: String
    var range: SourceRange
    var value: Expr
}

struct FunctionDecl: Sendable {
    var name: String
    var nameRange: SourceRange
    var params: [(name: String, range: SourceRange)]
    var lets: [LetDecl]
    var body: Expr
    var range: SourceRange
}

struct ServiceDecl: Sendable {
    var name: String
    var nameRange: SourceRange
    var range: SourceRange
    var body: [Statement]
}

/// A whole rules file.
struct RulesFile: Sendable {
    /// `rules_version`; 1 when absent.
    var version: Int
    var versionRange: SourceRange?
    var services: [ServiceDecl]
}
