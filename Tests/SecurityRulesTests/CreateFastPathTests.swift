import Foundation
import HearthCore
import Testing
@testable import SecurityRules

/// The create decision's cheaper paths (rules30) against the general ones they stand in for:
/// `s.lower().matches('…')` and `param.field` judged without recording, the same-words pass of a
/// map lookup and of `keys().hasOnly`. Values, errors and the per-request expression count must
/// be those of the node-by-node, recorded evaluation.
struct CreateFastPathTests {
    /// `request.auth.<field>.lower().matches(pattern)`, recorded and not, for receivers of every
    /// kind (strings with upper-case ASCII, non-ASCII capitals lower() leaves alone, bytes that sit
    /// next to the letters, a non-string, null, a missing field) and patterns the native matcher
    /// runs as well as ones it leaves to NSRegularExpression (`(?i)`, `\b`).
    @Test(arguments: ["(?sm).*(^http|x-amz-signature).*", "http.*", "[a-z]+", "[^A-Z]*", "\u{C9}.*", "\u{E9}cole",
                      "az\\[\\\\\\]\\^_`az\\{@", "(?i)HTTP.*", "\\bhttp.*", ""])
    func lowerMatchesAgreesRecordedOrNot(_ pattern: String) throws {
        let receivers: [RulesValue] = [
            .string("HTTP://X"), .string("http"), .string("Hello\nHTTP://a"), .string("X-Amz-Signature=1"),
            .string("\u{C9}COLE"), .string("\u{E9}cole"), .string("AZ[\\]^_`az{@"), .string(""), .string("\u{C0}B"),
            .string("users/U1/uploads/A.JPG\nS3\nIMAGE/JPEG\nPENDING\n"), .int(7), .null, .list([.string("A")]),
        ]
        var auth = RulesMap()
        for (i, v) in receivers.enumerated() { auth["f\(i)"] = v }
        let request = RulesRequest(method: .get, path: ["databases", "(default)", "documents", "p", "d"],
                                   auth: .map(auth), time: .timestamp(seconds: 1_700_000_000, nanos: 0))
        let escaped = pattern.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
        for i in 0...receivers.count {   // the last field is missing
            let expression = "request.auth.f\(i).lower().matches('\(escaped)')"
            let ruleset = compiled(rules("match /{document=**} { allow read: if \(expression) == true; }"))
            let condition = try #require(ruleset.program.matches.first?.children.first?.allows.first?.condition)
            guard case .binary(_, _, let node, _) = condition, case .matchesConstant = node else {
                Issue.record("unexpected shape of \(expression): \(condition)")
                return
            }
            func run(_ recording: Bool) -> Result<RulesValue, EvalError> {
                var e = Evaluation(program: ruleset.program, request: request, accessor: LookupAccessor(lookup: EmptyLookup()),
                                   recording: recording)
                do throws(EvalError) { return .success(try e.evaluate(node, bindings: [])) } catch { return .failure(error) }
            }
            switch (run(true), run(false)) {
            case (.success(let a), .success(let b)):
                #expect(a == b, "\(expression)")
            case (.failure(let a), .failure(let b)):
                #expect(a.message == b.message && a.fatal == b.fatal, "\(expression): \(a.message) / \(b.message)")
            case (let a, let b):
                Issue.record("\(expression): recorded \(a), fast \(b)")
            }
        }
    }

    /// What lower() does to a pattern's verdict is visible: `HTTP://X` lowered matches `http.*`,
    /// `ÉCOLE` lowered does not match `école` (only ASCII letters change), in both modes.
    @Test func lowerIsAppliedAndOnlyToASCII() {
        let request = RulesRequest(method: .get, path: ["databases", "(default)", "documents", "p", "d"],
                                   auth: .map(["a": .string("HTTP://X"), "b": .string("\u{C9}COLE"), "c": .string("\u{C9}cole")]),
                                   time: .timestamp(seconds: 1_700_000_000, nanos: 0))
        for (field, pattern, expected) in [("a", "http.*", true), ("a", "HTTP.*", false), ("b", "\u{E9}cole", false),
                                           ("b", "\u{C9}cole", true), ("c", "\u{C9}cole", true)] {
            let ruleset = compiled(rules("match /{document=**} { allow read: if request.auth.\(field).lower().matches('\(pattern)'); }"))
            for trace in [false, true] {
                let d = ruleset.evaluate(request, lookup: EmptyLookup(), trace: trace)
                #expect(d.allowed == expected, "\(field) \(pattern) trace \(trace)")
            }
        }
    }

    /// The per-request limit of 1,000 expressions is reached at the same list length with and
    /// without recording: the fast paths count the `lower()` node and the parameter they read in
    /// place as `eval` does. Each item is `d.uid.lower().matches('u.*')` (4 expressions) or
    /// `d.uid` (2); the rest of the condition is 5 (the call, `request.auth`, `>`, `size()`, the
    /// list), so the last allowed length is 248 and 497.
    @Test(arguments: [("d.uid.lower().matches('u.*')", 248), ("d.uid", 497)])
    func expressionLimitAtTheSameLength(_ item: String, _ lastAllowed: Int) {
        let request = Req.make(.get, "p/d", uid: "u1")
        for n in (lastAllowed - 3)...(lastAllowed + 3) {
            let items = Array(repeating: item, count: n).joined(separator: ", ")
            let ruleset = compiled(rules("""
                match /{document=**} {
                  function f(d) { return [\(items)].size() > 0; }
                  allow read: if f(request.auth);
                }
                """))
            let plain = ruleset.evaluate(request, lookup: EmptyLookup())
            let traced = ruleset.evaluate(request, lookup: EmptyLookup(), trace: true)
            #expect(plain.allowed == (n <= lastAllowed), "\(item) × \(n), plain")
            #expect(traced.allowed == (n <= lastAllowed), "\(item) × \(n), traced")
        }
    }

    /// `param.field` read in place gives the value, or the error, that copying the parameter out
    /// gives: a present field, a missing one, a null, a string, a list and a map holding a constraint
    /// are all judged alike with and without recording (`!` turns an error into a denial and false
    /// into a grant, so the two are told apart).
    @Test func parameterFieldAgreesRecordedOrNot() {
        let ruleset = compiled(rules("""
            match /{document=**} {
              function isTwo(d) { return d.x == 2; }
              allow read: if !isTwo(request.auth.v);
            }
            """))
        let values: [(RulesValue, Bool)] = [
            (.map(["x": .int(2)]), false), (.map(["x": .int(3)]), true), (.map(["y": .int(2)]), false),
            (.null, false), (.string("x"), false), (.list([.int(2)]), false), (.map(["x": .float(2)]), false),
        ]
        for (v, expected) in values {
            let request = RulesRequest(method: .get, path: Req.path("p/d"), auth: .map(["v": v]), time: Req.time)
            let plain = ruleset.evaluate(request, lookup: EmptyLookup())
            let traced = ruleset.evaluate(request, lookup: EmptyLookup(), trace: true)
            #expect(plain.allowed == expected, "\(v) plain")
            #expect(traced.allowed == expected, "\(v) traced")
        }
    }

    /// A map lookup and `keys().hasOnly` find a key by its bytes whatever words spell it: a
    /// short key stored with spare capacity (not a small string) is found by its literal, and
    /// canonically equal spellings with other bytes are not found.
    @Test func sameWordsPassFallsBackToBytes() throws {
        var large = String()
        large.reserveCapacity(64)
        large += "status"
        #expect(unsafeBitCast(large, to: (UInt, UInt).self) != unsafeBitCast("status", to: (UInt, UInt).self))
        let map = RulesMap(uniqueEntries: [(key: large, value: .int(1)), (key: "caf\u{E9}", value: .int(2))])
        #expect(map["status"] == .int(1))
        #expect(map["caf\u{E9}"] == .int(2))
        #expect(map["cafe\u{301}"] == nil)
        #expect(map["statu"] == nil)
        #expect(CollectionFunctions.keysHave(.hasOnly, map, [.string("status"), .string("caf\u{E9}")]) == true)
        #expect(CollectionFunctions.keysHave(.hasOnly, map, [.string("status"), .string("cafe\u{301}")]) == false)
        #expect(CollectionFunctions.keysHave(.hasAll, map, [.string("status")]) == true)
        var other = String()
        other.reserveCapacity(64)
        other += "caf\u{E9}"
        #expect(CollectionFunctions.keysHave(.hasOnly, map, [.string("status"), .string(other)]) == true)
    }
}
