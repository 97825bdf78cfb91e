// The lexer: UTF-8 bytes in, tokens out, pulled one at a time by the parser.
//
// The parser drives it because path text is context-sensitive: after `match`, and where an
// expression starts with `/`, the characters form path segments (`(default)`, `{doc=**}`,
// `$(expr)`), not tokens. The parser repositions the lexer (`reset(to:)`) and reads such text
// with the raw helpers below. Lexing never fails hard: bad input becomes an `.invalid` token.

struct Lexer {
    let bytes: [UInt8]
    private(set) var location: SourceLocation

    init(_ source: String) {
        self.bytes = Array(source.utf8)
        self.location = SourceLocation(line: 1, column: 1, offset: 0)
    }

    // MARK: Raw access (also used by the parser for path text)

    var isAtEnd: Bool { location.offset >= bytes.count }

    func peek(_ k: Int = 0) -> UInt8? {
        let i = location.offset + k
        return i < bytes.count ? bytes[i] : nil
    }

    mutating func advance() {
        guard location.offset < bytes.count else { return }
        let b = bytes[location.offset]
        location.offset += 1
        if b == 0x0A {
            location.line += 1
            location.column = 1
        } else if b & 0xC0 != 0x80 {
            // Continuation bytes do not start a new scalar, so they do not move the column.
            location.column += 1
        }
    }

    mutating func reset(to loc: SourceLocation) { location = loc }

    static func isIdentStart(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || b == 0x5F
    }

    static func isIdentPart(_ b: UInt8) -> Bool { isIdentStart(b) || isDigit(b) }
    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    static func isHex(_ b: UInt8) -> Bool { isDigit(b) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46) }

    static func hexValue(_ b: UInt8) -> UInt32 {
        if isDigit(b) { return UInt32(b - 0x30) }
        if b >= 0x61 { return UInt32(b - 0x61 + 10) }
        return UInt32(b - 0x41 + 10)
    }

    /// Skips whitespace and comments; returns an error token for an unterminated block comment.
    mutating func skipTrivia() -> Token? {
        while let b = peek() {
            if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0C {
                advance()
            } else if b == 0x2F, peek(1) == 0x2F {
                while let c = peek(), c != 0x0A { advance() }
            } else if b == 0x2F, peek(1) == 0x2A {
                let start = location
                advance(); advance()
                var closed = false
                while let c = peek() {
                    if c == 0x2A, peek(1) == 0x2F { advance(); advance(); closed = true; break }
                    advance()
                }
                if !closed { return Token(kind: .invalid("unterminated comment"), range: SourceRange(start, location)) }
            } else {
                break
            }
        }
        return nil
    }

    // MARK: Tokens

    mutating func next() -> Token {
        if let bad = skipTrivia() { return bad }
        let start = location
        guard let b = peek() else { return Token(kind: .eof, range: SourceRange(start, start)) }

        if Lexer.isIdentStart(b) {
            // String prefixes: r'…' (raw), b'…' (bytes), and their combinations.
            if let prefix = stringPrefix() { return lexString(start: start, raw: prefix.raw, bytes: prefix.bytes) }
            while let c = peek(), Lexer.isIdentPart(c) { advance() }
            let text = String(decoding: bytes[start.offset..<location.offset], as: UTF8.self)
            let kind: TokenKind = Keyword(rawValue: text).map { .keyword($0) } ?? .identifier(text)
            return Token(kind: kind, range: SourceRange(start, location))
        }
        if Lexer.isDigit(b) || (b == 0x2E && peek(1).map(Lexer.isDigit) == true) { return lexNumber(start: start) }
        if b == 0x27 || b == 0x22 { return lexString(start: start, raw: false, bytes: false) }

        advance()
        let two: (UInt8, Punct)? = {
            switch b {
            case 0x3D: return (0x3D, .eq)       // ==
            case 0x21: return (0x3D, .ne)       // !=
            case 0x3C: return (0x3D, .le)       // <=
            case 0x3E: return (0x3D, .ge)       // >=
            case 0x26: return (0x26, .and)      // &&
            case 0x7C: return (0x7C, .or)       // ||
            default: return nil
            }
        }()
        if let (second, p) = two, peek() == second {
            advance()
            return Token(kind: .punct(p), range: SourceRange(start, location))
        }
        let single: Punct? = switch b {
        case 0x28: .lparen
        case 0x29: .rparen
        case 0x7B: .lbrace
        case 0x7D: .rbrace
        case 0x5B: .lbracket
        case 0x5D: .rbracket
        case 0x2C: .comma
        case 0x3B: .semicolon
        case 0x3A: .colon
        case 0x2E: .dot
        case 0x3F: .question
        case 0x21: .bang
        case 0x3D: .assign
        case 0x3C: .lt
        case 0x3E: .gt
        case 0x2B: .plus
        case 0x2D: .minus
        case 0x2A: .star
        case 0x2F: .slash
        case 0x25: .percent
        case 0x24: .dollar
        default: nil
        }
        if let single { return Token(kind: .punct(single), range: SourceRange(start, location)) }
        if b == 0x26 || b == 0x7C {
            return Token(kind: .invalid("'\(Character(Unicode.Scalar(b)))' (did you mean '\(Character(Unicode.Scalar(b)))\(Character(Unicode.Scalar(b)))'?)"),
                         range: SourceRange(start, location))
        }
        // Skip the rest of a multi-byte character so the error names it whole.
        while let c = peek(), c & 0xC0 == 0x80 { advance() }
        let text = String(decoding: bytes[start.offset..<location.offset], as: UTF8.self)
        return Token(kind: .invalid("unexpected character '\(text)'"), range: SourceRange(start, location))
    }

    /// When an identifier start is really a string prefix (`r`, `b`, `rb`, `br` in any case), consumes it.
    private mutating func stringPrefix() -> (raw: Bool, bytes: Bool)? {
        var raw = false, isBytes = false
        var k = 0
        while k < 2, let c = peek(k) {
            if (c == 0x72 || c == 0x52), !raw { raw = true } else if (c == 0x62 || c == 0x42), !isBytes { isBytes = true } else { break }
            k += 1
        }
        guard k > 0, let q = peek(k), q == 0x27 || q == 0x22 else { return nil }
        for _ in 0..<k { advance() }
        return (raw, isBytes)
    }

    /// Reads a number literal as the official emulator's grammar has them: decimal digits, at most one
    /// `.` with or without digits after it (`1.` and `.5` are floats), and nothing else — no exponent
    /// (`1e3` is `1` then `e3`, `1.e3` is `1.` then `e3`), no hex (`0x10` is `0` then `x10`), no
    /// unsigned suffix (`1u` is `1` then `u`), no `_` (`1_000` is `1` then `_000`), and a leading `0` is
    /// a number of its own (`01` is `0` then `1`); the parser then meets the unexpected token, as the
    /// emulator does (`Unexpected 'x10'.`). A whole number past Int64 is `bigInt`: only
    /// `-9223372036854775808` uses one, any other is `Invalid number literal …` (checked differentially:
    /// Tests/CompatTests/firestore/differential/rulescompilecases.py).
    private mutating func lexNumber(start: SourceLocation) -> Token {
        if peek() == 0x30 {
            advance()
        } else {
            while let c = peek(), Lexer.isDigit(c) { advance() }
        }
        var isFloat = false
        if peek() == 0x2E {
            // After digits the `.` belongs to the number even with no digit after it (`1.size()` is
            // `1.` then `size`; `1..size()` a method called on 1.0); `.5` starts here.
            isFloat = true
            advance()
            while let c = peek(), Lexer.isDigit(c) { advance() }
        }
        let text = String(decoding: bytes[start.offset..<location.offset], as: UTF8.self)
        let range = SourceRange(start, location)
        if isFloat {
            let spelled = (text.hasPrefix(".") ? "0" : "") + text + (text.hasSuffix(".") ? "0" : "")
            guard let d = Double(spelled) else { return Token(kind: .invalid("malformed number"), range: range) }
            return Token(kind: .float(d), range: range)
        }
        if let i = Int64(text) { return Token(kind: .int(i), range: range) }
        return Token(kind: .bigInt(text), range: range)
    }

    /// The source text of `range` (how diagnostics quote a number: as written, `.5` not `0.5`).
    func text(_ range: SourceRange) -> String {
        String(decoding: bytes[range.start.offset..<range.end.offset], as: UTF8.self)
    }

    /// Reads a quoted literal; the cursor is on the opening quote.
    private mutating func lexString(start: SourceLocation, raw: Bool, bytes isBytes: Bool) -> Token {
        let quote = peek()!
        let triple = peek(1) == quote && peek(2) == quote
        for _ in 0..<(triple ? 3 : 1) { advance() }
        var out: [UInt8] = []
        var problem: String?
        while true {
            guard let c = peek() else {
                return Token(kind: .invalid("unterminated string literal"), range: SourceRange(start, location))
            }
            if c == quote {
                if !triple { advance(); break }
                if peek(1) == quote, peek(2) == quote { advance(); advance(); advance(); break }
            }
            if (c == 0x0A || c == 0x0D) && !triple {
                return Token(kind: .invalid("unterminated string literal"), range: SourceRange(start, location))
            }
            if c == 0x5C, !raw {
                let escStart = location
                advance()
                if let why = readEscape(into: &out, isBytes: isBytes), problem == nil {
                    problem = why
                    _ = escStart
                }
                continue
            }
            out.append(c)
            advance()
        }
        if let problem { return Token(kind: .invalid(problem), range: SourceRange(start, location)) }
        if isBytes { return Token(kind: .bytes(out), range: SourceRange(start, location)) }
        guard let s = String(validating: out, as: UTF8.self) else {
            return Token(kind: .invalid("invalid UTF-8 in string literal"), range: SourceRange(start, location))
        }
        return Token(kind: .string(s), range: SourceRange(start, location))
    }

    /// Reads one escape after the backslash (CEL escapes). Returns a problem description, or nil.
    private mutating func readEscape(into out: inout [UInt8], isBytes: Bool) -> String? {
        guard let e = peek() else { return "unterminated string literal" }
        func scalar(_ v: UInt32) -> String? {
            guard let u = Unicode.Scalar(v) else { return "invalid code point in escape" }
            out.append(contentsOf: Array(String(Character(u)).utf8))
            return nil
        }
        switch e {
        case 0x61: advance(); out.append(0x07)           // \a
        case 0x62: advance(); out.append(0x08)           // \b
        case 0x66: advance(); out.append(0x0C)           // \f
        case 0x6E: advance(); out.append(0x0A)           // \n
        case 0x72: advance(); out.append(0x0D)           // \r
        case 0x74: advance(); out.append(0x09)           // \t
        case 0x76: advance(); out.append(0x0B)           // \v
        case 0x5C, 0x27, 0x22, 0x60, 0x3F: advance(); out.append(e)
        case 0x78, 0x58, 0x75, 0x55:                    // \xHH \uHHHH \UHHHHHHHH
            advance()
            let n = (e == 0x78 || e == 0x58) ? 2 : (e == 0x75 ? 4 : 8)
            var v: UInt32 = 0
            for _ in 0..<n {
                guard let h = peek(), Lexer.isHex(h) else { return "malformed escape sequence" }
                v = v << 4 | Lexer.hexValue(h)
                advance()
            }
            if n == 2 {
                if isBytes { out.append(UInt8(v)) } else { return scalar(v) }
            } else {
                if isBytes { return "\\u escapes are not allowed in bytes literals" }
                return scalar(v)
            }
        case 0x30...0x37:                                // \ooo
            var v: UInt32 = 0
            for _ in 0..<3 {
                guard let o = peek(), o >= 0x30, o <= 0x37 else { return "malformed octal escape" }
                v = v << 3 | UInt32(o - 0x30)
                advance()
            }
            if v > 255 { return "octal escape out of range" }
            if isBytes { out.append(UInt8(v)) } else { return scalar(v) }
        default:
            advance()
            return "invalid escape sequence '\\\(Character(Unicode.Scalar(e)))'"
        }
        return nil
    }

    /// All tokens up to and including end of file (for tests and tools).
    static func tokenize(_ source: String) -> [Token] {
        var lexer = Lexer(source)
        var out: [Token] = []
        while true {
            let t = lexer.next()
            out.append(t)
            if t.kind == .eof { return out }
        }
    }
}
