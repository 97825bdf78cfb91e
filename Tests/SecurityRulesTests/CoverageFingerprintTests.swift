import HearthCore
import Testing
@testable import SecurityRules

/// Coverage finds a value's entry by fingerprint, then by comparison: values the comparison finds
/// equal must share one entry whatever their spelling, and distinct values must never merge.
struct CoverageFingerprintTests {
    static let source = rules("""
        match /users/{uid} {
          allow create: if request.resource.data.v != null;
        }
    """)

    /// The outcomes recorded for `request.resource.data.v`, as (rendered value, count).
    private func outcomes(_ values: [RulesValue]) -> [(String, Int)] {
        outcomes(values.map { ["v": $0] }, source: Self.source, of: "request.resource.data.v")
    }

    /// The outcomes recorded for the expression `expression` of `source`, one create per data.
    private func outcomes(_ data: [[String: RulesValue]], source: String, of expression: String) -> [(String, Int)] {
        let r = compiled(source)
        let coverage = RulesCoverage()
        for d in data {
            _ = r.evaluate(Req.make(.create, "users/u1", uid: "u1", data: d), lookup: MapLookup(), coverage: coverage)
        }
        func find(_ reports: [JSON]) -> [JSON]? {
            for rep in reports {
                if let pos = rep["sourcePosition"], let off = pos["currentOffset"]?.intValue, let end = pos["endOffset"]?.intValue,
                   r.program.text.snippet(SourceRange(SourceLocation(line: 0, column: 0, offset: Int(off)),
                                                      SourceLocation(line: 0, column: 0, offset: Int(end)))) == expression {
                    return rep["values"]?.arrayValue ?? []
                }
                if let inner = find(rep["children"]?.arrayValue ?? []) { return inner }
            }
            return nil
        }
        let json = coverage.json(for: r)
        return (find(json["report"]?.arrayValue ?? []) ?? []).map { ($0["value"]?.serialized() ?? "?", Int($0["count"]?.intValue ?? -1)) }
    }

    @Test(arguments: [
        // Equal: one entry.
        ("zero and negative zero", [RulesValue.float(0), .float(-0.0)], 1),
        ("canonically equivalent strings", [.string("caf\u{E9}"), .string("cafe\u{301}")], 1),
        ("equal maps built apart", [.map(["a": .int(1), "b": .list([.string("x")])]), .map(["b": .list([.string("x")]), "a": .int(1)])], 1),
        ("equal long strings", [.string(String(repeating: "s3key/", count: 10)), .string(String(repeating: "s3key/", count: 10))], 1),
        // A container's first print leaves strings out; these must still merge.
        ("maps with canonically equivalent strings", [.map(["k": .string("caf\u{E9}")]), .map(["k": .string("cafe\u{301}")])], 1),
        ("maps with canonically equivalent keys", [.map(["caf\u{E9}": .int(1)]), .map(["cafe\u{301}": .int(1)])], 1),
        ("lists with a singleton decomposition", [.list([.string("\u{212A}")]), .list([.string("K")])], 1),
        ("equal maps, negative zero inside", [.map(["x": .float(0), "t": .timestamp(seconds: 5, nanos: 1)]), .map(["x": .float(-0.0), "t": .timestamp(seconds: 5, nanos: 1)])], 1),
        // Distinct: separate entries.
        ("int and float", [.int(1), .float(1)], 2),
        ("list order", [.list([.int(1), .int(2)]), .list([.int(2), .int(1)])], 2),
        ("nested float sign", [.map(["x": .float(1)]), .map(["x": .float(-1)])], 2),
        ("alternating", [.bool(true), .bool(false), .bool(true), .bool(false), .bool(true)], 2),
        // Same shape, different strings: one print before the full one separates them.
        ("maps differing only in a string", [.map(["a": .string("x"), "n": .int(1)]), .map(["a": .string("y"), "n": .int(1)])], 2),
        ("lists differing only in a string", [.list([.string("x")]), .list([.string("xy")])], 2),
        ("maps differing only in a timestamp", [.map(["t": .timestamp(seconds: 5, nanos: 1)]), .map(["t": .timestamp(seconds: 5, nanos: 2)])], 2),
    ] as [(String, [RulesValue], Int)])
    func entries(label: String, values: [RulesValue], expected: Int) {
        let found = outcomes(values)
        #expect(found.count == expected, "\(label): \(found)")
        #expect(found.map(\.1).reduce(0, +) == values.count, "\(label): \(found)")
    }

    /// Maps of one shape that differ only in a string, past the distinct-values cap, then some
    /// of them again: every repeat finds its entry, the rest count as other values.
    @Test func sameShapePastTheCap() {
        let maps = (0..<40).map { RulesValue.map(["a": .string("v\($0)"), "n": .int(7)]) }
        let found = outcomes(maps + maps.prefix(10))
        #expect(found.count == RulesCoverage.distinctValuesPerExpression + 1, "\(found)")
        #expect(found.map(\.1).reduce(0, +) == 50)
        for i in 0..<RulesCoverage.distinctValuesPerExpression {
            #expect(found.first { $0.0.contains("\"v\(i)\"") }?.1 == (i < 10 ? 2 : 1), "v\(i): \(found)")
        }
        #expect(found.first { $0.0.contains("other values") }?.1 == 8, "\(found)")
    }

    @Test func countsFollowTheValues() {
        let found = outcomes([.bool(true), .bool(false), .bool(true), .string("a"), .bool(true)])
        #expect(found.first { $0.0 == "true" }?.1 == 3)
        #expect(found.first { $0.0 == "false" }?.1 == 1)
        #expect(found.first { $0.0 == "\"a\"" }?.1 == 1)
    }

    static let diffSource = rules("""
        match /users/{uid} {
          allow create: if request.resource.data.v.diff(request.resource.data.w) != null;
        }
    """)

    /// A map diff's first print is its maps' shapes (strings left out): equal diffs built apart
    /// still share an entry, diffs differing only in a string or a number do not.
    @Test(arguments: [
        ("equal diffs built apart", [[1, 0], [1, 0]], 1),
        ("canonically equivalent strings", [[1, 2], [1, 3]], 1),
        ("differing only in a string", [[1, 0], [4, 0]], 2),
        ("differing only in a number", [[5, 0], [6, 0]], 2),
    ] as [(String, [[Int]], Int)])
    func diffEntries(label: String, pairs: [[Int]], expected: Int) {
        let maps: [RulesValue] = [
            .map(["s": .string("x"), "n": .int(1)]), .map(["s": .string("x"), "n": .int(2)]),
            .map(["s": .string("caf\u{E9}")]), .map(["s": .string("cafe\u{301}")]),
            .map(["s": .string("y"), "n": .int(1)]), .map(["n": .int(5)]), .map(["n": .int(6)]),
        ]
        let found = outcomes(pairs.map { ["v": maps[$0[0]], "w": maps[$0[1]]] }, source: Self.diffSource,
                             of: "request.resource.data.v.diff(request.resource.data.w)")
        #expect(found.count == expected, "\(label): \(found)")
        #expect(found.map(\.1).reduce(0, +) == pairs.count, "\(label): \(found)")
    }

    /// Diffs unique to each request (an update's, by a number) past the cap, then some again.
    @Test func uniqueDiffsPastTheCap() {
        let data: [[String: RulesValue]] = (0..<40).map { ["v": .map(["n": .int(Int64($0)), "s": .string("x")]), "w": .map(["n": .int(-1)])] }
        let found = outcomes(data + data.prefix(10), source: Self.diffSource, of: "request.resource.data.v.diff(request.resource.data.w)")
        #expect(found.count == RulesCoverage.distinctValuesPerExpression + 1, "\(found)")
        #expect(found.map(\.1).reduce(0, +) == 50)
        #expect(found.first { $0.0.contains("other values") }?.1 == 8, "\(found)")
    }

    static let emptySource = rules("""
        match /users/{uid} {
          allow create: if (request.resource.data.e == 0 || true) && request.resource.data.v != null;
        }
    """)

    /// Empty lists and maps share one storage; an empty map's print must not depend on whether
    /// an empty list was fingerprinted before it in the same evaluation, or the map found no
    /// entry and took a second one (a slot of the 32, so a later distinct value lost its own).
    @Test func anEmptyMapAfterAnEmptyList() {
        var data: [[String: RulesValue]] = [
            ["e": .list([]), "v": .map([:])], ["e": .int(0), "v": .map(["a": .int(-1)])], ["e": .int(0), "v": .map([:])],
        ]
        for i in 0..<30 { data.append(["e": .int(0), "v": .map(["a": .int(Int64(i))])]) }
        let found = outcomes(data, source: Self.emptySource, of: "request.resource.data.v")
        #expect(found.first { $0.0 == "{}" }?.1 == 2, "\(found)")
        #expect(found.count == RulesCoverage.distinctValuesPerExpression, "\(found)")
        #expect(!found.contains { $0.0.contains("other values") }, "\(found)")
    }
}
