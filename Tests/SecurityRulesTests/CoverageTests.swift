import HearthCore
import Testing
@testable import SecurityRules

/// Coverage keeps values and renders them only for reports: equal values from different requests
/// share one count, and the distinct-values cap still holds.
struct CoverageTests {
    static let source = rules("""
        match /users/{uid} {
          allow create: if request.resource.data.keys().hasOnly(['a', 'b']) && request.resource.data.a == uid;
        }
    """)

    private func values(_ json: JSON, text: String, in r: Ruleset) -> [JSON] {
        func find(_ reports: [JSON]) -> [JSON]? {
            for rep in reports {
                if let pos = rep["sourcePosition"], let off = pos["currentOffset"]?.intValue, let end = pos["endOffset"]?.intValue,
                   r.program.text.snippet(SourceRange(SourceLocation(line: 0, column: 0, offset: Int(off)),
                                                      SourceLocation(line: 0, column: 0, offset: Int(end)))) == text {
                    return rep["values"]?.arrayValue ?? []
                }
                if let inner = find(rep["children"]?.arrayValue ?? []) { return inner }
            }
            return nil
        }
        return find(json["report"]?.arrayValue ?? []) ?? []
    }

    @Test func equalValuesFromSeparateRequestsShareOneCount() {
        let r = compiled(Self.source)
        let coverage = RulesCoverage()
        for _ in 0..<3 {
            _ = r.evaluate(Req.make(.create, "users/u1", uid: "u1", data: ["a": .string("u1"), "b": .int(1)]), lookup: MapLookup(), coverage: coverage)
        }
        _ = r.evaluate(Req.make(.create, "users/u1", uid: "u1", data: ["a": .string("u2")]), lookup: MapLookup(), coverage: coverage)
        let json = coverage.json(for: r)
        let data = values(json, text: "request.resource.data", in: r)
        #expect(data.count == 2)
        #expect(data.contains { $0["count"] == .int(3) && $0["value"]?["b"] == .int(1) })
        #expect(data.contains { $0["count"] == .int(1) && $0["value"]?["a"] == .string("u2") })
        let eq = values(json, text: "request.resource.data.a == uid", in: r)
        #expect(eq.contains { $0["value"] == .bool(true) && $0["count"] == .int(3) })
        #expect(eq.contains { $0["value"] == .bool(false) && $0["count"] == .int(1) })
    }

    @Test func distinctValuesAreCapped() {
        let r = compiled(Self.source)
        let coverage = RulesCoverage()
        for i in 0..<40 {
            _ = r.evaluate(Req.make(.create, "users/u\(i)", uid: "u\(i)", data: ["a": .string("u\(i)")]), lookup: MapLookup(), coverage: coverage)
        }
        let uid = values(coverage.json(for: r), text: "uid", in: r)
        #expect(uid.count == RulesCoverage.distinctValuesPerExpression + 1)
        #expect(uid.contains { $0["value"] == .string("(other values)") && $0["count"] == .int(8) })
    }
}
