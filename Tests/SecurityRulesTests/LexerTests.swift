import Testing
@testable import SecurityRules

struct LexerTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let source: String
        let kinds: [TokenKind]
        var testDescription: String { source }
    }

    static let cases: [Case] = [
        Case(source: "allow read: if true;", kinds: [.keyword(.allow), .identifier("read"), .punct(.colon), .keyword(.if), .keyword(.true), .punct(.semicolon)]),
        Case(source: "a.b(c)[0]", kinds: [.identifier("a"), .punct(.dot), .identifier("b"), .punct(.lparen), .identifier("c"), .punct(.rparen), .punct(.lbracket), .int(0), .punct(.rbracket)]),
        Case(source: "== != <= >= < > && || ! = ? : % * / + -", kinds: [.punct(.eq), .punct(.ne), .punct(.le), .punct(.ge), .punct(.lt), .punct(.gt), .punct(.and), .punct(.or), .punct(.bang), .punct(.assign), .punct(.question), .punct(.colon), .punct(.percent), .punct(.star), .punct(.slash), .punct(.plus), .punct(.minus)]),
        Case(source: "42 0 1.5 .5 1. 0.25", kinds: [.int(42), .int(0), .float(1.5), .float(0.5), .float(1), .float(0.25)]),
        // As the official emulator's grammar (checked against it: rulescompilecases.py): no hex, no
        // unsigned suffix, no `_`, a leading 0 is a number of its own, and after digits a `.` is the
        // number's even with no digit after it.
        Case(source: "0x10 1u 1_000 01 1.e3 1.size 1..size 1.0.5", kinds: [
            .int(0), .identifier("x10"), .int(1), .identifier("u"), .int(1), .identifier("_000"), .int(0), .int(1),
            .float(1), .identifier("e3"), .float(1), .identifier("size"), .float(1), .punct(.dot), .identifier("size"),
            .float(1), .float(0.5)]),
        // No exponents, as the emulator's grammar: the number ends before the `e`.
        Case(source: "2e3 1.5e-2 1E+3", kinds: [.int(2), .identifier("e3"), .float(1.5), .identifier("e"), .punct(.minus), .int(2),
                                              .int(1), .identifier("E"), .punct(.plus), .int(3)]),
        Case(source: "9223372036854775807 9223372036854775808 99999999999999999999",
             kinds: [.int(Int64.max), .bigInt("9223372036854775808"), .bigInt("99999999999999999999")]),
        Case(source: #"'a\'b' "c\"d" 'tab\t' '\x41\u00e9\101'"#, kinds: [.string("a'b"), .string("c\"d"), .string("tab\t"), .string("AéA")]),
        Case(source: #"r'a\nb' R"\d+""#, kinds: [.string(#"a\nb"#), .string(#"\d+"#)]),
        Case(source: "'''multi\nline'''", kinds: [.string("multi\nline")]),
        Case(source: #"b'\xFB\xEF\xBE' b'abc' B"\052""#, kinds: [.bytes([0xFB, 0xEF, 0xBE]), .bytes([97, 98, 99]), .bytes([0x2A])]),
        Case(source: "x // comment\n/* block\n comment */ y", kinds: [.identifier("x"), .identifier("y")]),
        Case(source: "in is null true false let return function match service", kinds: [.keyword(.in), .keyword(.is), .keyword(.null), .keyword(.true), .keyword(.false), .keyword(.let), .keyword(.return), .keyword(.function), .keyword(.match), .keyword(.service)]),
        Case(source: "rules_version _x9 $", kinds: [.identifier("rules_version"), .identifier("_x9"), .punct(.dollar)]),
    ]

    @Test(arguments: cases)
    func tokens(_ c: Case) {
        let kinds = Lexer.tokenize(c.source).map(\.kind)
        #expect(kinds == c.kinds + [.eof])
    }

    static let invalid: [(String, String)] = [
        ("'unterminated", "unterminated string literal"),
        ("'a\nb'", "unterminated string literal"),
        ("/* open", "unterminated comment"),
        ("'\\q'", "invalid escape sequence '\\q'"),
        ("b'\\u0041'", "\\u escapes are not allowed in bytes literals"),
        ("a & b", "'&' (did you mean '&&'?)"),
        ("#", "unexpected character '#'"),
        ("é", "unexpected character 'é'"),
    ]

    @Test(arguments: invalid)
    func invalidInput(_ source: String, _ why: String) {
        let bad = Lexer.tokenize(source).first { if case .invalid = $0.kind { true } else { false } }
        #expect(bad?.kind == .invalid(why))
    }

    @Test func positionsAreOneBasedLinesAndScalarColumns() {
        let tokens = Lexer.tokenize("a\n  'é' b")
        #expect(tokens[0].range.start == SourceLocation(line: 1, column: 1, offset: 0))
        #expect(tokens[1].range.start == SourceLocation(line: 2, column: 3, offset: 4))
        // 'é' is 4 bytes but 3 columns, so b sits at column 7.
        #expect(tokens[2].range.start.line == 2 && tokens[2].range.start.column == 7)
    }
}
