// Tokens of the rules language and the positions they carry.

/// A position in a rules source: 1-based line and column (in Unicode scalars) and a 0-based UTF-8 offset.
public struct SourceLocation: Sendable, Equatable, Hashable, Comparable, CustomStringConvertible {
    /// 1-based line.
    public var line: Int
    /// 1-based column, counted in Unicode scalars.
    public var column: Int
    /// 0-based UTF-8 byte offset.
    public var offset: Int

    /// A location from its parts.
    public init(line: Int, column: Int, offset: Int) {
        self.line = line
        self.column = column
        self.offset = offset
    }

    public static func < (a: SourceLocation, b: SourceLocation) -> Bool { a.offset < b.offset }
    public var description: String { "\(line):\(column)" }
}

/// A half-open source range `[start, end)`.
public struct SourceRange: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// First character.
    public var start: SourceLocation
    /// Just past the last character.
    public var end: SourceLocation

    /// A range from its bounds.
    public init(_ start: SourceLocation, _ end: SourceLocation) {
        self.start = start
        self.end = end
    }

    /// The smallest range covering both.
    func to(_ other: SourceRange) -> SourceRange { SourceRange(start, other.end) }
    public var description: String { "\(start)-\(end)" }
}

/// Punctuation and operators.
enum Punct: String, Sendable, CaseIterable {
    case lparen = "(", rparen = ")", lbrace = "{", rbrace = "}", lbracket = "[", rbracket = "]"
    case comma = ",", semicolon = ";", colon = ":", dot = ".", question = "?"
    case bang = "!", assign = "=", eq = "==", ne = "!=", lt = "<", le = "<=", gt = ">", ge = ">="
    case and = "&&", or = "||", plus = "+", minus = "-", star = "*", slash = "/", percent = "%"
    case dollar = "$"
}

/// Reserved words. `in` and `is` are operators; the rest start statements or are literals.
enum Keyword: String, Sendable, CaseIterable {
    case service, match, allow, function, `return`, `let`, `if`, `true`, `false`, null, `in`, `is`
}

/// What a token is.
enum TokenKind: Sendable, Equatable {
    case identifier(String)
    case keyword(Keyword)
    case int(Int64)
    /// An integer literal too large for Int64; only `-9223372036854775808` can use it (after unary minus).
    case bigInt(String)
    case float(Double)
    case string(String)
    case bytes([UInt8])
    case punct(Punct)
    /// Text the lexer could not read; the string says why.
    case invalid(String)
    case eof
}

/// One token with its source range.
struct Token: Sendable, Equatable {
    var kind: TokenKind
    var range: SourceRange

    /// How a diagnostic names this token.
    var display: String {
        switch kind {
        case .identifier(let s): return "'\(s)'"
        case .keyword(let k): return "'\(k.rawValue)'"
        case .int(let i): return "'\(i)'"
        case .bigInt(let s): return "'\(s)'"
        case .float(let d): return "'\(d)'"
        case .string: return "string literal"
        case .bytes: return "bytes literal"
        case .punct(let p): return "'\(p.rawValue)'"
        case .invalid(let why): return why
        case .eof: return "end of file"
        }
    }

    func isPunct(_ p: Punct) -> Bool { if case .punct(let q) = kind { return p == q }; return false }
    func isKeyword(_ k: Keyword) -> Bool { if case .keyword(let q) = kind { return k == q }; return false }
}
