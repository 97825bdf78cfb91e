import Foundation
import HearthCore
import Testing
@testable import SecurityRules

/// The cheaper paths of a decision (rulesre) against the general ones they stand in for:
/// `keys().hasOnly` without a copy of the names, `+` chains judged without recording, and ASCII
/// slices; and the DFA when its states pass the cap and its table is rebuilt mid-input.
struct DecisionFastPathTests {
    /// Inputs of `a`/`b` (and a few others) from a fixed seed.
    static func words(count: Int, maxLength: Int, alphabet: [Character], seed: UInt64) -> [String] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
        return (0..<count).map { _ in
            String((0..<Int(next() % UInt64(maxLength + 1))).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] })
        }
    }

    /// Patterns whose DFA needs many states (`(a|b)*a(a|b){n}` needs 2^(n+1)): the table grows
    /// state by state, and past 4,096 states it is rebuilt mid-input. Every answer must be ICU's
    /// (the reference `NativeRegexTests` uses).
    @Test(arguments: ["(a|b)*a(a|b){3}", "(a|b)*a(a|b){7}", "(a|b)*a(a|b){12}", "[ab]*b[ab]{5}c?", "(?s).*a.{6}b.*"])
    func growingTableAgreesWithICU(_ pattern: String) throws {
        let native = try #require(NativeRegex.compile(pattern))
        guard case .success(let icuPattern) = RE2Translator.translate(pattern) else {
            Issue.record("translation failed: \(pattern)")
            return
        }
        let reference = CompiledRegex(try NSRegularExpression(pattern: "\\A(?:" + icuPattern + ")\\z"))
        let inputs = Self.words(count: 400, maxLength: 300, alphabet: ["a", "b", "a", "b", "c", "\n", "é"], seed: 7)
        for input in inputs {
            #expect(native.fullMatch(input) == reference.fullMatch(input), "\(pattern) on \(input.debugDescription)")
        }
        // Once more, from the table the first pass left (transitions read, not built).
        for input in inputs.prefix(100) {
            #expect(native.fullMatch(input) == reference.fullMatch(input), "\(pattern) again on \(input.debugDescription)")
        }
    }

    /// `keysHave` (no key list) answers as `keys()` followed by the list method does, for keys and
    /// names spelled differently but canonically equal, and leaves non-string lists to it.
    @Test func keysHaveAgreesWithTheKeyList() throws {
        let maps: [RulesMap] = [
            [:], ["a": .int(1)], ["a": .int(1), "b": .int(2)], ["caf\u{E9}": .int(1), "x": .null],
            ["cafe\u{301}": .int(1)], ["\u{212A}": .bool(true), "k": .bool(false)],
        ]
        let lists: [[RulesValue]] = [
            [], [.string("a")], [.string("a"), .string("b")], [.string("b"), .string("a"), .string("a")],
            [.string("caf\u{E9}")], [.string("cafe\u{301}"), .string("x")], [.string("K")], [.string("\u{212A}"), .string("k")],
            [.string("a"), .int(1)], [.int(1)], [.null, .string("a")],
        ]
        for map in maps {
            for list in lists {
                // hasAll/hasAny look names up in the map, whose lookup compares UTF-8 lengths
                // first, so a key and a name that are canonically equal but spelled with different
                // lengths ("caf\u{E9}"/"cafe\u{301}", U+212A/"K") do not match there, where the key
                // list's `==` matches them. That predates this round and is left alone (changing it
                // would change decisions); only hasOnly's path changed, and it agrees everywhere.
                let twins = map.contains { entry in
                    list.contains { if case .string(let n) = $0 { n == entry.key && n.utf8.count != entry.key.utf8.count } else { false } }
                }
                for m in [Method.hasAll, .hasAny, .hasOnly] where m == .hasOnly || !twins {
                    let general = try Methods.call(m, try Methods.call(.keys, .map(map), []), [.list(list)])
                    if let fast = CollectionFunctions.keysHave(m, map, list) {
                        #expect(.bool(fast) == general, "\(m) \(Array(map.keys.map { Array($0.unicodeScalars) })) \(list)")
                    } else {
                        #expect(list.contains { if case .string = $0 { false } else { true } }, "nil for strings: \(m) \(list)")
                    }
                }
            }
        }
    }

    /// A `+` chain judged without recording gives the value or the error (message included) that
    /// the recorded, node-by-node evaluation gives.
    @Test(arguments: [
        "'a' + 'b' + 'c'", "'a' + 'b'", "1 + 2 + 3", "1 + 2", "'x' + 1 + 'y'", "'x' + 'y' + 1", "1 + 'x' + 'y'",
        "[1] + [2] + [3]", "'caf' + 'e' + '\\u0301' + ''", "'' + '' + ''", "'a' + null + 'b'", "'a' + 'b' + ('c' + 'd')",
        "1.5 + 2 + 0.5", "'a' + 'b' + [1]", "request.auth.uid + '/' + 'x'", "'p' + string(7) + 'q' + 'r'",
        "9223372036854775807 + 1 + 0", "('a' + 'b').size() + 1 + 1",
    ])
    func chainsAgreeRecordedOrNot(_ expression: String) throws {
        let source = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /{document=**} {
              allow read: if (\(expression)) == 0;
            }
          }
        }
        """
        let ruleset = try #require(Ruleset.compile(source).ruleset)
        let condition = try #require(ruleset.program.matches.first?.children.first?.allows.first?.condition)
        // `(e) == 0`: the left operand is e itself.
        guard case .binary(_, _, let chain, _) = condition else {
            Issue.record("unexpected shape of \(expression)")
            return
        }
        try compare(ruleset, chain, expression)
    }

    private func compare(_ ruleset: Ruleset, _ node: Node, _ expression: String) throws {
        let request = RulesRequest(method: .get, path: ["databases", "(default)", "documents", "p", "d"],
                                   auth: .map(["uid": .string("u1")]), time: .timestamp(seconds: 1_700_000_000, nanos: 0))
        func run(_ recording: Bool) -> Result<RulesValue, EvalError> {
            var e = Evaluation(program: ruleset.program, request: request, accessor: LookupAccessor(lookup: EmptyLookup()),
                               recording: recording)
            do throws(EvalError) { return .success(try e.evaluate(node, bindings: [.string("(default)"), .path(["p", "d"])])) } catch { return .failure(error) }
        }
        switch (run(true), run(false)) {
        case (.success(let a), .success(let b)):
            #expect(a == b, "\(expression)")
            if case .string(let x) = a, case .string(let y) = b { #expect(Array(x.utf8) == Array(y.utf8), "\(expression) bytes") }
        case (.failure(let a), .failure(let b)):
            #expect(a.message == b.message && a.fatal == b.fatal, "\(expression): \(a.message) / \(b.message)")
        case (let a, let b):
            Issue.record("\(expression): recorded \(a), fast \(b)")
        }
    }

    /// ASCII slices copy bytes; the results and errors are those of UTF-16 unit slicing.
    @Test func slices() {
        #expect(probe("'users/u1/uploads/x'[6:9]") == .string("u1/"))
        #expect(probe("'abc'[0:3]") == .string("abc"))
        #expect(probe("'abc'[1:1]") == .string(""))
        #expect(probe("'abc'[:2]") == .string("ab"))
        #expect(probe("'abc'[2:]") == .string("c"))
        #expect(probe("'a long ascii string past fifteen bytes'[2:30]") == .string("long ascii string past fifte"))
        #expect(probe("'héllo'[1:3]") == .string("él"))
        #expect(probeError("'abc'[2:4]") == probeError("[1, 2, 3][2:4]"))
        #expect(probeError("'abc'[2:1]") != nil)
    }
}
