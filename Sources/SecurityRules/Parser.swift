// The recursive-descent parser.
//
// Grammar (EBNF; `path-text` is read character by character, see Lexer):
//
//   file        = [ "rules_version" "=" STRING [";"] ] { service } EOF
//   service     = "service" IDENT { "." IDENT } "{" body "}"
//   body        = { match | allow | function }
//   match       = "match" matchPath "{" body "}"
//   matchPath   = "/" mseg { "/" mseg }
//   mseg        = "{" IDENT [ "=" "**" ] "}" | path-text
//   allow       = "allow" IDENT { "," IDENT } [ ":" "if" expr ] [";"]
//   function    = "function" IDENT "(" [ IDENT { "," IDENT } ] ")" "{" { let } "return" expr [";"] "}"
//   let         = "let" IDENT "=" expr [";"]
//   expr        = ternary
//   ternary     = or [ "?" ternary ":" ternary ]                    (right-associative, as CEL)
//   or          = and { "||" and }
//   and         = equality { "&&" equality }
//   equality    = isExpr { ( "==" | "!=" ) isExpr }
//   isExpr      = inExpr { "is" IDENT }
//   inExpr      = relation { "in" relation }
//   relation    = additive { ( "<" | "<=" | ">" | ">=" ) additive }
//   additive    = multiplicative { ( "+" | "-" ) multiplicative }
//   multiplicative = unary { ( "*" | "/" | "%" ) unary }
//   unary       = ( "!" | "-" ) unary | postfix
//   postfix     = primary { "." NAME [ "(" args ")" ] | "[" [expr] [ ":" [expr] ] "]" }
//   primary     = literal | IDENT [ "(" args ")" ] | "(" expr ")" | "[" [ args ] "]"
//               | "{" [ expr ":" expr { "," expr ":" expr } [","] ] "}" | pathLiteral
//   pathLiteral = "/" pseg { "/" pseg }        pseg = { path-text | "$(" expr ")" }
//   args        = expr { "," expr } [","]
//
// Precedence follows the rules-language reference (highest first): postfix, unary, * / %, + -,
// relations, in, is, == !=, &&, ||, ?:. Errors are thrown to the statement being parsed, which
// records them and resynchronises at the next statement, so one pass reports every broken statement.

struct ParseFailure: Error, Sendable, Equatable {
    var message: String
    var range: SourceRange
}

struct Parser {
    private var lexer: Lexer
    private var current: Token
    private var previousEnd: SourceLocation
    private var braceDepth = 0
    private var nesting = 0
    private(set) var errors: [ParseFailure] = []

    /// Nesting beyond this is reported instead of recursing further (malformed input must not crash).
    static let maxNesting = 200

    init(_ source: String) {
        lexer = Lexer(source)
        current = lexer.next()
        previousEnd = current.range.start
    }

    /// Parses a whole file; never throws, errors are in the second element.
    static func parse(_ source: String) -> (RulesFile, [ParseFailure]) {
        var p = Parser(source)
        let file = p.parseFile()
        return (file, p.errors)
    }

    /// Parses one expression (tests and tools).
    static func parseExpression(_ source: String) -> (Expr?, [ParseFailure]) {
        var p = Parser(source)
        do throws(ParseFailure) {
            let e = try p.parseExpr()
            guard p.current.kind == .eof else { throw p.unexpected("end of expression") }
            return (e, [])
        } catch {
            return (nil, [error])
        }
    }

    // MARK: Token plumbing

    private mutating func advance() {
        if current.isPunct(.lbrace) { braceDepth += 1 } else if current.isPunct(.rbrace) { braceDepth -= 1 }
        previousEnd = current.range.end
        current = lexer.next()
    }

    private func unexpected(_ expected: String) -> ParseFailure {
        if case .invalid(let why) = current.kind {
            return ParseFailure(message: "Invalid input: \(why).", range: current.range)
        }
        return ParseFailure(message: "Unexpected \(display(current)); expected \(expected).", range: current.range)
    }

    /// How a diagnostic names `token`: a number as written in the source (`.5`, `1.`), as the
    /// emulator quotes it; anything else as `Token.display` does.
    private func display(_ token: Token) -> String {
        switch token.kind {
        case .int, .float, .bigInt: "'\(lexer.text(token.range))'"
        default: token.display
        }
    }

    private mutating func expect(_ p: Punct, _ what: String? = nil) throws(ParseFailure) {
        guard current.isPunct(p) else { throw unexpected(what ?? "'\(p.rawValue)'") }
        advance()
    }

    private mutating func expectIdentifier(_ what: String) throws(ParseFailure) -> (String, SourceRange) {
        guard case .identifier(let name) = current.kind else { throw unexpected(what) }
        let r = current.range
        advance()
        return (name, r)
    }

    private mutating func skipSemicolons() {
        while current.isPunct(.semicolon) { advance() }
    }

    /// Skips to the next statement boundary at the brace depth the failed statement started at.
    private mutating func synchronize(depth: Int) {
        var moved = false
        while current.kind != .eof {
            if braceDepth <= depth {
                if current.isPunct(.rbrace) { return }
                if current.isPunct(.semicolon) { advance(); return }
                if moved, current.isKeyword(.allow) || current.isKeyword(.match) || current.isKeyword(.function)
                    || current.isKeyword(.service) { return }
            }
            advance()
            moved = true
        }
    }

    private mutating func enter() throws(ParseFailure) {
        nesting += 1
        if nesting > Parser.maxNesting {
            throw ParseFailure(message: "Nesting too deep (more than \(Parser.maxNesting) levels).", range: current.range)
        }
    }

    // MARK: Statements

    mutating func parseFile() -> RulesFile {
        var file = RulesFile(version: 1, versionRange: nil, services: [])
        if case .identifier("rules_version") = current.kind {
            let start = current.range
            let depth = braceDepth
            do throws(ParseFailure) {
                advance()
                try expect(.assign, "'='")
                guard case .string(let v) = current.kind else { throw unexpected("a version string such as '2'") }
                let r = start.to(current.range)
                advance()
                switch v {
                case "1": file.version = 1
                case "2": file.version = 2
                default: errors.append(ParseFailure(message: "Unsupported rules_version '\(v)'; expected '1' or '2'.", range: r))
                }
                file.versionRange = r
                skipSemicolons()
            } catch {
                errors.append(error)
                synchronize(depth: depth)
            }
        }
        while current.kind != .eof {
            if current.isKeyword(.service) {
                let depth = braceDepth
                do throws(ParseFailure) {
                    file.services.append(try parseService())
                } catch {
                    errors.append(error)
                    synchronize(depth: depth)
                }
            } else {
                errors.append(unexpected("'service'"))
                let depth = braceDepth
                advance()
                synchronize(depth: depth)
            }
        }
        return file
    }

    private mutating func parseService() throws(ParseFailure) -> ServiceDecl {
        let start = current.range
        advance()
        var (name, nameRange) = try expectIdentifier("a service name such as cloud.firestore")
        while current.isPunct(.dot) {
            advance()
            let (part, r) = try expectIdentifier("a service name part")
            name += "." + part
            nameRange = nameRange.to(r)
        }
        try expect(.lbrace, "'{'")
        let body = parseBody()
        guard current.isPunct(.rbrace) else { throw unexpected("'}'") }
        advance()
        return ServiceDecl(name: name, nameRange: nameRange, range: start.to(SourceRange(previousEnd, previousEnd)), body: body)
    }

    /// Statements up to (not including) the closing brace or end of file.
    private mutating func parseBody() -> [Statement] {
        var out: [Statement] = []
        while !current.isPunct(.rbrace), current.kind != .eof {
            let depth = braceDepth
            do throws(ParseFailure) {
                if current.isKeyword(.match) {
                    out.append(.match(try parseMatch()))
                } else if current.isKeyword(.allow) {
                    out.append(.allow(try parseAllow()))
                } else if current.isKeyword(.function) {
                    out.append(.function(try parseFunction()))
                } else if current.isPunct(.semicolon) {
                    advance()
                } else {
                    throw unexpected("'match', 'allow', 'function' or '}'")
                }
            } catch {
                errors.append(error)
                synchronize(depth: depth)
            }
        }
        return out
    }

    private mutating func parseMatch() throws(ParseFailure) -> MatchDecl {
        let start = current.range
        try enter()
        defer { nesting -= 1 }
        advance()
        guard current.isPunct(.slash) else { throw unexpected("a path starting with '/'") }
        let (segments, pathRange) = try parseMatchPath()
        try expect(.lbrace, "'{' after the match path")
        let body = parseBody()
        guard current.isPunct(.rbrace) else { throw unexpected("'}'") }
        advance()
        return MatchDecl(segments: segments, pathRange: pathRange, range: start.to(SourceRange(previousEnd, previousEnd)), body: body)
    }

    /// Reads `/seg/{var}/{rest=**}` character by character; leaves the next token in `current`.
    private mutating func parseMatchPath() throws(ParseFailure) -> ([MatchSegment], SourceRange) {
        let pathStart = current.range.start
        lexer.reset(to: pathStart)
        var segments: [MatchSegment] = []
        func fail(_ message: String, _ from: SourceLocation, _ lexer: Lexer) -> ParseFailure {
            ParseFailure(message: message, range: SourceRange(from, lexer.location))
        }
        while lexer.peek() == UInt8(ascii: "/") {
            let segStart = lexer.location
            lexer.advance()
            if lexer.peek() == UInt8(ascii: "{") {
                lexer.advance()
                let nameStart = lexer.location.offset
                let nameLocation = lexer.location
                guard let c = lexer.peek(), Lexer.isIdentStart(c) else {
                    throw fail("Expected a variable name after '{' in the match path.", segStart, lexer)
                }
                while let c = lexer.peek(), Lexer.isIdentPart(c) { lexer.advance() }
                let name = String(decoding: lexer.bytes[nameStart..<lexer.location.offset], as: UTF8.self)
                let nameRange = SourceRange(nameLocation, lexer.location)
                var recursive = false
                if lexer.peek() == UInt8(ascii: "=") {
                    lexer.advance()
                    guard lexer.peek() == UInt8(ascii: "*"), lexer.peek(1) == UInt8(ascii: "*") else {
                        throw fail("Expected '**' after '=' in a wildcard.", segStart, lexer)
                    }
                    lexer.advance(); lexer.advance()
                    recursive = true
                }
                guard lexer.peek() == UInt8(ascii: "}") else {
                    throw fail("Expected '}' to close the wildcard {\(name)}.", segStart, lexer)
                }
                lexer.advance()
                segments.append(MatchSegment(kind: recursive ? .recursive(name) : .single(name), range: SourceRange(segStart, lexer.location),
                                              nameRange: nameRange))
            } else {
                let textStart = lexer.location.offset
                while let c = lexer.peek(), Parser.isMatchTextByte(c) { lexer.advance() }
                guard lexer.location.offset > textStart else {
                    throw fail("Empty segment in the match path.", segStart, lexer)
                }
                let text = String(decoding: lexer.bytes[textStart..<lexer.location.offset], as: UTF8.self)
                segments.append(MatchSegment(kind: .literal(text), range: SourceRange(segStart, lexer.location)))
            }
        }
        let range = SourceRange(pathStart, lexer.location)
        previousEnd = lexer.location
        current = lexer.next()
        return (segments, range)
    }

    static func isMatchTextByte(_ c: UInt8) -> Bool {
        !(c <= 0x20 || c == UInt8(ascii: "/") || c == UInt8(ascii: "{") || c == UInt8(ascii: "}")
          || c == UInt8(ascii: ";") || c == 0x7F)
    }

    private mutating func parseAllow() throws(ParseFailure) -> AllowDecl {
        let start = current.range
        advance()
        var methods: [(name: String, range: SourceRange)] = []
        repeat {
            if !methods.isEmpty { advance() }
            let (m, r) = try expectIdentifier("a method: read, write, get, list, create, update or delete")
            methods.append((m, r))
        } while current.isPunct(.comma)
        var condition: Expr?
        if current.isPunct(.colon) {
            advance()
            guard current.isKeyword(.if) else {
                throw ParseFailure(message: "Missing 'if' before conditional expression.", range: current.range)
            }
            advance()
            let first = current
            do throws(ParseFailure) {
                condition = try parseExpr()
            } catch let failure where failure.range == first.range && failure.message.hasPrefix("Unexpected ") {
                // Nothing after `if` can start an expression (`if ;`, `if +1`): the emulator's words.
                throw ParseFailure(message: "Missing conditional expression after 'if'.", range: first.range)
            }
        }
        let end = previousEnd
        if current.isPunct(.semicolon) {
            advance()
        } else if !(current.isPunct(.rbrace) || current.isKeyword(.allow) || current.isKeyword(.match)
                    || current.isKeyword(.function) || current.kind == .eof) {
            throw unexpected(condition == nil ? "':' or ';'" : "';'")
        }
        return AllowDecl(methods: methods, condition: condition, range: SourceRange(start.start, end))
    }

    private mutating func parseFunction() throws(ParseFailure) -> FunctionDecl {
        let start = current.range
        advance()
        let (name, nameRange) = try expectIdentifier("a function name")
        try expect(.lparen, "'('")
        var params: [(name: String, range: SourceRange)] = []
        if !current.isPunct(.rparen) {
            while true {
                let (p, r) = try expectIdentifier("a parameter name")
                params.append((p, r))
                if current.isPunct(.comma) { advance(); continue }
                break
            }
        }
        try expect(.rparen, "',' or ')'")
        try expect(.lbrace, "'{'")
        var lets: [LetDecl] = []
        while current.isKeyword(.let) {
            let letStart = current.range
            advance()
            let (n, _) = try expectIdentifier("a variable name")
            try expect(.assign, "'='")
            let value = try parseExpr()
            lets.append(LetDecl(name: n, range: letStart.to(value.range), value: value))
            guard current.isPunct(.semicolon) else { throw unexpected("';' after the let binding") }
            skipSemicolons()
        }
        guard current.isKeyword(.return) else { throw unexpected(lets.isEmpty ? "'let' or 'return'" : "'let' or 'return'") }
        advance()
        let body = try parseExpr()
        skipSemicolons()
        guard current.isPunct(.rbrace) else { throw unexpected("'}' after the return statement") }
        advance()
        return FunctionDecl(name: name, nameRange: nameRange, params: params, lets: lets, body: body,
                            range: start.to(SourceRange(previousEnd, previousEnd)))
    }

    // MARK: Expressions

    mutating func parseExpr() throws(ParseFailure) -> Expr {
        try parseTernary()
    }

    private mutating func parseTernary() throws(ParseFailure) -> Expr {
        try enter()
        defer { nesting -= 1 }
        let cond = try parseOr()
        guard current.isPunct(.question) else { return cond }
        advance()
        let yes = try parseTernary()
        try expect(.colon, "':' in the conditional expression")
        let no = try parseTernary()
        return .ternary(cond, yes, no, cond.range.to(no.range))
    }

    private mutating func parseOr() throws(ParseFailure) -> Expr {
        var left = try parseAnd()
        while current.isPunct(.or) {
            advance()
            let right = try parseAnd()
            left = .binary(.or, left, right, left.range.to(right.range))
        }
        return left
    }

    private mutating func parseAnd() throws(ParseFailure) -> Expr {
        var left = try parseEquality()
        while current.isPunct(.and) {
            advance()
            let right = try parseEquality()
            left = .binary(.and, left, right, left.range.to(right.range))
        }
        return left
    }

    private mutating func parseEquality() throws(ParseFailure) -> Expr {
        var left = try parseIs()
        while current.isPunct(.eq) || current.isPunct(.ne) {
            let op: BinaryOperator = current.isPunct(.eq) ? .equal : .notEqual
            advance()
            let right = try parseIs()
            left = .binary(op, left, right, left.range.to(right.range))
        }
        return left
    }

    private mutating func parseIs() throws(ParseFailure) -> Expr {
        var left = try parseIn()
        while current.isKeyword(.is) {
            advance()
            let (type, r) = try expectIdentifier("a type name (bool, int, float, number, string, list, map, timestamp, duration, path, latlng, bytes, set, vector)")
            left = .isType(left, type, left.range.to(r))
        }
        return left
    }

    private mutating func parseIn() throws(ParseFailure) -> Expr {
        var left = try parseRelation()
        while current.isKeyword(.in) {
            advance()
            let right = try parseRelation()
            left = .binary(.in, left, right, left.range.to(right.range))
        }
        return left
    }

    private mutating func parseRelation() throws(ParseFailure) -> Expr {
        var left = try parseAdditive()
        while true {
            let op: BinaryOperator
            if current.isPunct(.lt) { op = .less } else if current.isPunct(.le) { op = .lessEqual }
            else if current.isPunct(.gt) { op = .greater } else if current.isPunct(.ge) { op = .greaterEqual }
            else { return left }
            advance()
            let right = try parseAdditive()
            left = .binary(op, left, right, left.range.to(right.range))
        }
    }

    private mutating func parseAdditive() throws(ParseFailure) -> Expr {
        var left = try parseMultiplicative()
        while current.isPunct(.plus) || current.isPunct(.minus) {
            let op: BinaryOperator = current.isPunct(.plus) ? .add : .subtract
            advance()
            let right = try parseMultiplicative()
            left = .binary(op, left, right, left.range.to(right.range))
        }
        return left
    }

    private mutating func parseMultiplicative() throws(ParseFailure) -> Expr {
        var left = try parseUnary()
        while current.isPunct(.star) || current.isPunct(.slash) || current.isPunct(.percent) {
            if current.isPunct(.slash) { try checkDivisionSlash() }
            let op: BinaryOperator = current.isPunct(.star) ? .multiply : current.isPunct(.slash) ? .divide : .modulo
            advance()
            let right = try parseUnary()
            left = .binary(op, left, right, left.range.to(right.range))
        }
        return left
    }

    /// The official emulator's lexer reads a `/` followed at once by a path character as the
    /// start of a path, wherever it stands: `10/2`, `a/(b)`, `x/-1` are compile errors there
    /// (`Missing 'match' keyword before path.`; before `%`, `$` or a non-ASCII letter `Forward
    /// slash '/' found where identifier or binding expected.`), and only `10 / 2` or `10/ 2` divide.
    /// Hearth refuses the same files, at the slash.
    private func checkDivisionSlash() throws(ParseFailure) {
        let after = current.range.end.offset
        guard after < lexer.bytes.count else { return }
        let c = lexer.bytes[after]
        if c == UInt8(ascii: "%") || c == UInt8(ascii: "$") || c >= 0x80 {
            throw ParseFailure(message: "Forward slash '/' found where identifier or binding expected.", range: current.range)
        }
        if Parser.isPathTextByte(c) || c == UInt8(ascii: "{") {
            throw ParseFailure(message: "Missing 'match' keyword before path.", range: current.range)
        }
    }

    private mutating func parseUnary() throws(ParseFailure) -> Expr {
        try enter()
        defer { nesting -= 1 }
        let start = current.range
        if current.isPunct(.bang) {
            advance()
            let operand = try parseUnary()
            return .unary(.not, operand, start.to(operand.range))
        }
        if current.isPunct(.minus) {
            advance()
            // -9223372036854775808 is the one literal that only exists negated.
            if case .bigInt(let digits) = current.kind {
                guard digits == "9223372036854775808" else { throw Self.invalidNumber(current) }
                let r = start.to(current.range)
                advance()
                return try parsePostfix(.int(Int64.min, r))
            }
            let operand = try parseUnary()
            return .unary(.negate, operand, start.to(operand.range))
        }
        return try parsePostfix(try parsePrimary())
    }

    private mutating func parsePostfix(_ base: Expr) throws(ParseFailure) -> Expr {
        var e = base
        while true {
            if current.isPunct(.dot) {
                advance()
                let name: String
                let r = current.range
                switch current.kind {
                case .identifier(let n): name = n
                case .keyword(let k): name = k.rawValue
                default: throw unexpected("a field or method name after '.'")
                }
                advance()
                if current.isPunct(.lparen) {
                    advance()
                    let args = try parseArguments(closing: .rparen)
                    e = .method(e, name, args, e.range.to(SourceRange(previousEnd, previousEnd)), r)
                } else {
                    e = .member(e, name, e.range.to(r))
                }
            } else if current.isPunct(.lbracket) {
                advance()
                var low: Expr?
                if !current.isPunct(.colon) { low = try parseExpr() }
                if current.isPunct(.colon) {
                    advance()
                    var high: Expr?
                    if !current.isPunct(.rbracket) { high = try parseExpr() }
                    try expect(.rbracket, "']'")
                    e = .slice(e, low, high, e.range.to(SourceRange(previousEnd, previousEnd)))
                } else {
                    try expect(.rbracket, "']' or ':'")
                    e = .index(e, low!, e.range.to(SourceRange(previousEnd, previousEnd)))
                }
            } else {
                return e
            }
        }
    }

    private mutating func parseArguments(closing: Punct) throws(ParseFailure) -> [Expr] {
        var args: [Expr] = []
        while !current.isPunct(closing) {
            args.append(try parseExpr())
            if current.isPunct(.comma) { advance(); continue }
            guard current.isPunct(closing) else { throw unexpected("',' or '\(closing.rawValue)'") }
        }
        advance()
        return args
    }

    /// A whole number past Int64 (the emulator's words: `Invalid number literal 99999999999999999999.`).
    private static func invalidNumber(_ t: Token) -> ParseFailure {
        guard case .bigInt(let digits) = t.kind else { return ParseFailure(message: "Invalid number literal.", range: t.range) }
        return ParseFailure(message: "Invalid number literal \(digits).", range: t.range)
    }

    private mutating func parsePrimary() throws(ParseFailure) -> Expr {
        let t = current
        switch t.kind {
        case .keyword(.null): advance(); return .null(t.range)
        case .keyword(.true): advance(); return .bool(true, t.range)
        case .keyword(.false): advance(); return .bool(false, t.range)
        case .int(let i): advance(); return .int(i, t.range)
        case .float(let d): advance(); return .float(d, t.range)
        case .string(let s): advance(); return .string(s, t.range)
        case .bytes(let b): advance(); return .bytes(b, t.range)
        case .bigInt: throw Self.invalidNumber(t)
        case .identifier(let name):
            advance()
            if current.isPunct(.lparen) {
                advance()
                let args = try parseArguments(closing: .rparen)
                return .call(name, args, t.range.to(SourceRange(previousEnd, previousEnd)), t.range)
            }
            return .identifier(name, t.range)
        case .punct(.lparen):
            advance()
            let inner = try parseExpr()
            try expect(.rparen, "')'")
            return inner
        case .punct(.lbracket):
            advance()
            let items = try parseArguments(closing: .rbracket)
            return .list(items, t.range.to(SourceRange(previousEnd, previousEnd)))
        case .punct(.lbrace):
            advance()
            var entries: [(key: Expr, value: Expr)] = []
            while !current.isPunct(.rbrace) {
                let k = try parseExpr()
                try expect(.colon, "':' after the map key")
                let v = try parseExpr()
                entries.append((k, v))
                if current.isPunct(.comma) { advance(); continue }
                guard current.isPunct(.rbrace) else { throw unexpected("',' or '}'") }
            }
            advance()
            return .map(entries, t.range.to(SourceRange(previousEnd, previousEnd)))
        case .punct(.slash):
            return try parsePathLiteral()
        default:
            throw unexpected("an expression")
        }
    }

    /// Reads `/databases/$(database)/documents/x` character by character.
    private mutating func parsePathLiteral() throws(ParseFailure) -> Expr {
        let pathStart = current.range.start
        var segments: [PathSegment] = []
        var slashAt = pathStart
        while true {
            lexer.reset(to: slashAt)
            lexer.advance() // '/'
            let segStart = lexer.location
            var parts: [PathPart] = []
            // A `{name}` is a segment of its own.
            let isVariable = lexer.peek() == UInt8(ascii: "{")
            if isVariable { parts.append(.variable(try readPathVariable())) }
            while !isVariable {
                if lexer.peek() == UInt8(ascii: "$"), lexer.peek(1) == UInt8(ascii: "(") {
                    lexer.advance(); lexer.advance()
                    current = lexer.next()
                    let e = try parseExpr()
                    guard current.isPunct(.rparen) else { throw unexpected("')' to close '$('") }
                    lexer.reset(to: current.range.end)
                    parts.append(.interpolation(e))
                } else if let c = lexer.peek(), Parser.isPathTextByte(c) {
                    let textStart = lexer.location.offset
                    readPathText()
                    // A '(' that does not open a name like (default) ends the path (it may be a call's).
                    guard lexer.location.offset > textStart else { break }
                    parts.append(.text(String(decoding: lexer.bytes[textStart..<lexer.location.offset], as: UTF8.self)))
                } else {
                    break
                }
            }
            guard !parts.isEmpty else {
                throw ParseFailure(message: "Empty path segment; expected a name or $(expression) after '/'.",
                                   range: SourceRange(segStart, segStart))
            }
            segments.append(PathSegment(parts: parts, range: SourceRange(segStart, lexer.location)))
            if lexer.peek() == UInt8(ascii: "/"), let c = lexer.peek(1),
               Parser.isPathTextByte(c) || (c == UInt8(ascii: "$") && lexer.peek(2) == UInt8(ascii: "("))
                || c == UInt8(ascii: "{") {
                slashAt = lexer.location
                continue
            }
            if lexer.peek() == UInt8(ascii: "/") {
                // `/a/b/)`: a trailing slash inside a call or at the end is an empty segment, not a division.
                let next = lexer.peek(1)
                if next == nil || [UInt8(ascii: ")"), UInt8(ascii: ";"), UInt8(ascii: ","), UInt8(ascii: "]")].contains(next!) {
                    var l = lexer
                    l.advance()
                    throw ParseFailure(message: "Empty path segment; expected a name or $(expression) after '/'.",
                                       range: SourceRange(l.location, l.location))
                }
            }
            break
        }
        previousEnd = lexer.location
        current = lexer.next()
        return .path(segments, SourceRange(pathStart, previousEnd))
    }

    /// A `{name}` segment of a path literal (blanks allowed inside the braces, as the emulator's
    /// grammar allows them), which must end its segment: `{x}b` and `{x}$(id)` are syntax errors
    /// there too. `{name=**}` is a variable that binds a path (returned as `name=**`) and
    /// `{name=*}` one that binds a segment, as `{name}` does: the emulator loads both (a match
    /// path's wildcard syntax), and binds a path and a string to them.
    private mutating func readPathVariable() throws(ParseFailure) -> String {
        lexer.advance() // '{'
        func skipBlanks() { while lexer.peek() == UInt8(ascii: " ") || lexer.peek() == UInt8(ascii: "\t") { lexer.advance() } }
        skipBlanks()
        let nameStart = lexer.location
        guard let first = lexer.peek(), Lexer.isIdentStart(first) || first == UInt8(ascii: "$") else {
            throw ParseFailure(message: "Expected a variable name after '{'.", range: SourceRange(nameStart, nameStart))
        }
        while let c = lexer.peek(), Lexer.isIdentPart(c) || c == UInt8(ascii: "$") { lexer.advance() }
        var name = String(decoding: lexer.bytes[nameStart.offset..<lexer.location.offset], as: UTF8.self)
        skipBlanks()
        if lexer.peek() == UInt8(ascii: "=") {
            lexer.advance()
            skipBlanks()
            guard lexer.peek() == UInt8(ascii: "*") else {
                throw ParseFailure(message: "Expected '*' or '**' after '=' in the path variable '\(name)'.",
                                   range: SourceRange(lexer.location, lexer.location))
            }
            lexer.advance()
            if lexer.peek() == UInt8(ascii: "*") { lexer.advance(); name += "=**" }
            skipBlanks()
        }
        guard lexer.peek() == UInt8(ascii: "}") else {
            throw ParseFailure(message: "Expected '}' to close the path variable '\(name)'.", range: SourceRange(lexer.location, lexer.location))
        }
        lexer.advance()
        if let c = lexer.peek(), Parser.isPathTextByte(c) || c == UInt8(ascii: "$") || c == UInt8(ascii: "{") {
            throw ParseFailure(message: "A path variable '{\(name)}' must be a whole segment.", range: SourceRange(lexer.location, lexer.location))
        }
        return name
    }

    /// Path text: name characters, plus balanced parentheses as in `(default)`.
    private mutating func readPathText() {
        while let c = lexer.peek() {
            if c == UInt8(ascii: "(") {
                // Only a parenthesised name such as (default) belongs to the segment.
                var k = 1
                while let d = lexer.peek(k), Parser.isPlainPathByte(d) { k += 1 }
                guard k > 1, lexer.peek(k) == UInt8(ascii: ")") else { return }
                for _ in 0...k { lexer.advance() }
            } else if Parser.isPlainPathByte(c) {
                lexer.advance()
            } else {
                return
            }
        }
    }

    static func isPlainPathByte(_ c: UInt8) -> Bool {
        Lexer.isIdentPart(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "~")
            || c == UInt8(ascii: "%") || c == UInt8(ascii: "@") || c >= 0x80
    }

    static func isPathTextByte(_ c: UInt8) -> Bool { isPlainPathByte(c) || c == UInt8(ascii: "(") }
}
