import Testing
@testable import SecurityRules

/// A compact S-expression form of a parse tree, to compare whole trees.
extension Expr {
    var tree: String {
        switch self {
        case .null: "null"
        case .bool(let b, _): "\(b)"
        case .int(let i, _): "\(i)"
        case .float(let d, _): "\(d)"
        case .string(let s, _): "'\(s)'"
        case .bytes(let b, _): "b\(b)"
        case .list(let items, _): "[" + items.map(\.tree).joined(separator: " ") + "]"
        case .map(let e, _): "{" + e.map { "\($0.key.tree):\($0.value.tree)" }.joined(separator: " ") + "}"
        case .path(let segs, _):
            "path(" + segs.map { $0.parts.map { p in
                switch p {
                case .text(let t): t
                case .interpolation(let x): "$(\(x.tree))"
                case .variable(let name): "{\(name)}"
                }
            }.joined() }.joined(separator: "/") + ")"
        case .identifier(let n, _): n
        case .member(let b, let n, _): "(. \(b.tree) \(n))"
        case .index(let b, let i, _): "([] \(b.tree) \(i.tree))"
        case .slice(let b, let l, let h, _): "([:] \(b.tree) \(l?.tree ?? "_") \(h?.tree ?? "_"))"
        case .call(let n, let a, _, _): "(\(n)" + a.map { " " + $0.tree }.joined() + ")"
        case .method(let b, let n, let a, _, _): "(.\(n) \(b.tree)" + a.map { " " + $0.tree }.joined() + ")"
        case .unary(let op, let x, _): "(\(op.rawValue) \(x.tree))"
        case .binary(let op, let l, let r, _): "(\(op.rawValue) \(l.tree) \(r.tree))"
        case .ternary(let c, let y, let n, _): "(? \(c.tree) \(y.tree) \(n.tree))"
        case .isType(let x, let t, _): "(is \(x.tree) \(t))"
        case .invalid: "<invalid>"
        }
    }
}

struct ParserTests {
    static let precedence: [(String, String)] = [
        ("a || b && c", "(|| a (&& b c))"),
        ("a && b || c", "(|| (&& a b) c)"),
        ("a == b && c != d", "(&& (== a b) (!= c d))"),
        ("a + b * c", "(+ a (* b c))"),
        ("a * b + c", "(+ (* a b) c)"),
        ("a - b - c", "(- (- a b) c)"),
        ("a / b % c", "(% (/ a b) c)"),
        ("a < b == c > d", "(== (< a b) (> c d))"),
        ("x in l == true", "(== (in x l) true)"),
        ("a < b in c", "(in (< a b) c)"),
        ("x is string == true", "(== (is x string) true)"),
        ("a in b is bool", "(is (in a b) bool)"),
        ("!a && b", "(&& (! a) b)"),
        ("!a.b", "(! (. a b))"),
        ("-a.b * 2", "(* (- (. a b)) 2)"),
        ("--1", "(- (- 1))"),
        ("!!x", "(! (! x))"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("a ? b : c", "(? a b c)"),
        ("p ? true : q ? true : false", "(? p true (? q true false))"),
        ("true && a ? f(x) : g(x) && valid()", "(? (&& true a) (f x) (&& (g x) (valid)))"),
        ("a ? b ? c : d : e", "(? a (? b c d) e)"),
        ("a || b ? c : d", "(? (|| a b) c d)"),
        ("(a + b) * c", "(* (+ a b) c)"),
        ("a.b.c(d)[e].f", "(. ([] (.c (. a b) d) e) f)"),
        ("l[1:2]", "([:] l 1 2)"),
        ("l[:2]", "([:] l _ 2)"),
        ("l[1:]", "([:] l 1 _)"),
        ("m['k'].x", "(. ([] m 'k') x)"),
        ("[1, 2, 3,]", "[1 2 3]"),
        ("{'a': 1, 'b': [2]}", "{'a':1 'b':[2]}"),
        ("{}", "{}"),
        ("math.abs(-1)", "(.abs math (- 1))"),
        ("data.in", "(. data in)"),
        ("/databases/$(database)/documents/users/$(request.auth.uid)", "path(databases/$(database)/documents/users/$((. (. request auth) uid)))"),
        ("get(/databases/(default)/documents/a/b).data", "(. (get path(databases/(default)/documents/a/b)) data)"),
        ("exists(/a/$(x)) && y", "(&& (exists path(a/$(x))) y)"),
        ("(/a/b).bind({'x': 'v'})", "(.bind path(a/b) {'x':'v'})"),
        ("/a/pre$(x)post", "path(a/pre$(x)post)"),
        ("(/a/{x}/$(y)).bind({'x': 'v'})", "(.bind path(a/{x}/$(y)) {'x':'v'})"),
        ("/a/{ $x }/{y}", "path(a/{$x}/{y})"),
        ("a / b", "(/ a b)"),
    ]

    @Test(arguments: precedence)
    func parsesExpression(_ source: String, _ expected: String) {
        let (e, errors) = Parser.parseExpression(source)
        #expect(errors.isEmpty, "\(errors)")
        #expect(e?.tree == expected)
    }

    static let expressionErrors: [(String, Int, String)] = [
        ("a +", 4, "Unexpected end of file; expected an expression."),
        ("a ? b", 6, "Unexpected end of file; expected ':' in the conditional expression."),
        ("f(a b)", 5, "Unexpected 'b'; expected ',' or ')'."),
        ("[1, 2", 6, "Unexpected end of file; expected ',' or ']'."),
        ("x is 3", 6, "Unexpected '3'; expected a type name (bool, int, float, number, string, list, map, timestamp, duration, path, latlng, bytes, set, vector)."),
        ("9223372036854775808", 1, "Invalid number literal 9223372036854775808."),
        ("-9223372036854775809", 2, "Invalid number literal 9223372036854775809."),
        ("-(9223372036854775808)", 3, "Invalid number literal 9223372036854775808."),
        ("99999999999999999999 > 0", 1, "Invalid number literal 99999999999999999999."),
        ("1.0.5", 4, "Unexpected '.5'; expected end of expression."),
        ("0x10", 2, "Unexpected 'x10'; expected end of expression."),
        ("a.", 3, "Unexpected end of file; expected a field or method name after '.'."),
        ("/a/", 4, "Empty path segment; expected a name or $(expression) after '/'."),
        ("get(/a/b/)", 10, "Empty path segment; expected a name or $(expression) after '/'."),
        // A `{name}` is a whole segment, as the official emulator's grammar has it.
        ("/a/{x}b", 7, "A path variable '{x}' must be a whole segment."),
        ("/a/{x}$(y)", 7, "A path variable '{x}' must be a whole segment."),
        ("/a/{x-y}", 6, "Expected '}' to close the path variable 'x'."),
        ("/a/$(x", 7, "Unexpected end of file; expected ')' to close '$('."),
        ("{'a' 1}", 6, "Unexpected '1'; expected ':' after the map key."),
    ]

    @Test(arguments: expressionErrors)
    func reportsExpressionErrors(_ source: String, _ column: Int, _ message: String) {
        let (_, errors) = Parser.parseExpression(source)
        #expect(errors.first?.message == message)
        #expect(errors.first?.range.start.column == column)
    }

    @Test func parsesStatementsAndMatchPaths() {
        let (file, errors) = Parser.parse("""
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /a/{b}/c/{rest=**} {
              allow read, write: if true
              allow get
              function f(x, y) { let z = x; return z + y }
            }
          }
        }
        """)
        #expect(errors.isEmpty)
        #expect(file.version == 2)
        guard case .match(let outer) = file.services[0].body[0], case .match(let inner) = outer.body[0] else {
            Issue.record("structure")
            return
        }
        #expect(outer.segments.map(\.kind) == [.literal("databases"), .single("database"), .literal("documents")])
        #expect(inner.segments.map(\.kind) == [.literal("a"), .single("b"), .literal("c"), .recursive("rest")])
        guard case .allow(let a1) = inner.body[0], case .allow(let a2) = inner.body[1], case .function(let f) = inner.body[2] else {
            Issue.record("statements")
            return
        }
        #expect(a1.methods.map(\.name) == ["read", "write"])
        #expect(a1.condition?.tree == "true")
        #expect(a2.condition == nil)
        #expect(f.params.map(\.name) == ["x", "y"])
        #expect(f.lets.map(\.name) == ["z"])
        #expect(f.body.tree == "(+ z y)")
        #expect(inner.segments[1].range.start.column == 13)
    }

    @Test func reportsEveryBrokenStatementInOnePass() {
        let source = """
        service cloud.firestore {
          match /databases/{database}/documents {
            match /a/{b} {
              allow read: if a +;
              allow write: if (b;
              allow get: if ok;
              function f( { return 1; }
              allow list: if true;
              match /c/{ {
              }
            }
          }
        }
        """
        let (_, errors) = Parser.parse(source)
        #expect(errors.map(\.range.start.line) == [4, 5, 7, 9])
        #expect(errors[0].message == "Unexpected ';'; expected an expression.")
        #expect(errors[0].range.start.column == 25)
        #expect(errors[1].message == "Unexpected ';'; expected ')'.")
        #expect(errors[3].message == "Expected a variable name after '{' in the match path.")
    }

    @Test func missingSemicolonsAreAccepted() {
        let (_, errors) = Parser.parse("""
        service cloud.firestore { match /databases/{d}/documents { match /x/{y} {
          allow read: if true
          allow write: if false
          function g() { return true }
        } } }
        """)
        #expect(errors.isEmpty)
    }

    @Test func versionErrors() {
        let (_, errors) = Parser.parse("rules_version = '3';\nservice cloud.firestore {}")
        #expect(errors.first?.message == "Unsupported rules_version '3'; expected '1' or '2'.")
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "(", count: 5000) + "1" + String(repeating: ")", count: 5000)
        let (_, errors) = Parser.parseExpression(deep)
        #expect(errors.first?.message.hasPrefix("Nesting too deep") == true)
        let bangs = String(repeating: "!", count: 5000) + "true"
        #expect(Parser.parseExpression(bangs).1.first?.message.hasPrefix("Nesting too deep") == true)
    }
}
