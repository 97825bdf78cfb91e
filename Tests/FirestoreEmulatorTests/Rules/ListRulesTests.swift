import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// List decisions through runQuery: each rule is proven from the query's constraints (ranges,
/// exclusions, `array-contains`, `in`), never from the documents stored.
@Suite struct ListRulesTests {
    static let source = RulesEnforcementTests.rules("""
        match /groups/{id} { allow list: if request.auth.uid in resource.data.members; }
        match /tagged/{id} { allow list: if resource.data.tags.hasAny(['a', 'b']); }
        match /recent/{id} { allow list: if resource.data.createdAt > request.time - duration.value(1, 'd'); }
        match /cheap/{id} { allow list: if resource.data.price < 100; }
        match /live/{id} { allow list: if resource.data.status != 'deleted'; }
        match /status/{id} { allow list: if resource.data.status in ['a', 'b']; }
        match /typed/{id} { allow list: if resource.data.name is string; }
        match /nested/{id} { allow list: if resource.data.meta.score >= 10; }
        match /secret/{id} { allow list: if !('secret' in resource.data); }
        match /ids/{id} { allow list: if id != 'secret'; }
    """)

    struct Case: CustomTestStringConvertible, Sendable {
        let label: String
        let query: JSON
        let status: Int
        var testDescription: String { label }
    }

    /// The harness clock: 2026-01-02T03:04:05.123456Z.
    static let hourAgo = ts("2026-01-02T02:04:05Z")
    static let twoDaysAgo = ts("2025-12-31T03:04:05Z")
    static let dayAgo = ts("2026-01-01T03:04:05.123456Z")

    static let cases: [Case] = [
        Case(label: "members array-contains my uid", query: sq("groups", where: ff("members", "ARRAY_CONTAINS", str("u1"))), status: 200),
        Case(label: "members array-contains another uid", query: sq("groups", where: ff("members", "ARRAY_CONTAINS", str("u2"))), status: 403),
        Case(label: "groups unfiltered", query: sq("groups"), status: 403),
        Case(label: "members array-contains-any [my uid]", query: sq("groups", where: ff("members", "ARRAY_CONTAINS_ANY", arr([str("u1")]))), status: 200),
        Case(label: "members array-contains-any [mine, another]",
             query: sq("groups", where: ff("members", "ARRAY_CONTAINS_ANY", arr([str("u1"), str("u2")]))), status: 403),
        Case(label: "members == [my uid]", query: sq("groups", where: ff("members", "EQUAL", arr([str("u1")]))), status: 200),
        Case(label: "OR: array-contains mine, or another field",
             query: sq("groups", where: composite("OR", [ff("members", "ARRAY_CONTAINS", str("u1")), ff("owner", "EQUAL", str("u1"))])), status: 403),
        Case(label: "AND: array-contains mine and a range elsewhere",
             query: sq("groups", where: composite("AND", [ff("members", "ARRAY_CONTAINS", str("u1")), ff("size", "GREATER_THAN", int(1))])), status: 200),

        Case(label: "tags array-contains-any [a]", query: sq("tagged", where: ff("tags", "ARRAY_CONTAINS_ANY", arr([str("a")]))), status: 200),
        Case(label: "tags array-contains-any [a, b]", query: sq("tagged", where: ff("tags", "ARRAY_CONTAINS_ANY", arr([str("a"), str("b")]))), status: 200),
        Case(label: "tags array-contains-any [a, c]", query: sq("tagged", where: ff("tags", "ARRAY_CONTAINS_ANY", arr([str("a"), str("c")]))), status: 403),
        Case(label: "tags array-contains b", query: sq("tagged", where: ff("tags", "ARRAY_CONTAINS", str("b"))), status: 200),

        Case(label: "createdAt > an hour ago", query: sq("recent", where: ff("createdAt", "GREATER_THAN", hourAgo), orderBy: [order("createdAt", "DESCENDING")], limit: 20), status: 200),
        Case(label: "createdAt > two days ago", query: sq("recent", where: ff("createdAt", "GREATER_THAN", twoDaysAgo)), status: 403),
        Case(label: "createdAt >= exactly a day ago", query: sq("recent", where: ff("createdAt", "GREATER_THAN_OR_EQUAL", dayAgo)), status: 403),
        Case(label: "createdAt > exactly a day ago", query: sq("recent", where: ff("createdAt", "GREATER_THAN", dayAgo)), status: 200),

        Case(label: "price < 50", query: sq("cheap", where: ff("price", "LESS_THAN", int(50))), status: 200),
        Case(label: "price <= 99", query: sq("cheap", where: ff("price", "LESS_THAN_OR_EQUAL", int(99))), status: 200),
        Case(label: "price <= 100", query: sq("cheap", where: ff("price", "LESS_THAN_OR_EQUAL", int(100))), status: 403),
        Case(label: "price < 49.5 (a double)", query: sq("cheap", where: ff("price", "LESS_THAN", dbl(49.5))), status: 403),
        Case(label: "price > 5", query: sq("cheap", where: ff("price", "GREATER_THAN", int(5))), status: 403),
        Case(label: "price == 20", query: sq("cheap", where: ff("price", "EQUAL", int(20))), status: 200),

        Case(label: "status != deleted", query: sq("live", where: ff("status", "NOT_EQUAL", str("deleted"))), status: 200),
        Case(label: "status not-in [deleted, x]", query: sq("live", where: ff("status", "NOT_IN", arr([str("deleted"), str("x")]))), status: 200),
        Case(label: "status != x", query: sq("live", where: ff("status", "NOT_EQUAL", str("x"))), status: 403),
        Case(label: "status is not null", query: sq("live", where: uf("status", "IS_NOT_NULL")), status: 403),

        Case(label: "status in [a]", query: sq("status", where: ff("status", "IN", arr([str("a")]))), status: 200),
        Case(label: "status in [a, b]", query: sq("status", where: ff("status", "IN", arr([str("a"), str("b")]))), status: 200),
        Case(label: "status in [a, c]", query: sq("status", where: ff("status", "IN", arr([str("a"), str("c")]))), status: 403),
        Case(label: "status != c", query: sq("status", where: ff("status", "NOT_EQUAL", str("c"))), status: 403),

        Case(label: "name == x", query: sq("typed", where: ff("name", "EQUAL", str("x"))), status: 200),
        Case(label: "name >= ''", query: sq("typed", where: ff("name", "GREATER_THAN_OR_EQUAL", str(""))), status: 200),
        Case(label: "name > 5", query: sq("typed", where: ff("name", "GREATER_THAN", int(5))), status: 403),
        Case(label: "name == 5", query: sq("typed", where: ff("name", "EQUAL", int(5))), status: 403),

        Case(label: "meta.score >= 10", query: sq("nested", where: ff("meta.score", "GREATER_THAN_OR_EQUAL", int(10))), status: 200),
        Case(label: "meta.score > 10", query: sq("nested", where: ff("meta.score", "GREATER_THAN", int(10))), status: 200),
        Case(label: "meta.score >= 5", query: sq("nested", where: ff("meta.score", "GREATER_THAN_OR_EQUAL", int(5))), status: 403),

        Case(label: "absence of a key is never proven", query: sq("secret", where: ff("x", "EQUAL", int(1))), status: 403),
    ]

    @Test(arguments: cases) func decision(_ c: Case) throws {
        let h = try TestHarness(rules: Self.source)
        let r = h.query(c.query, as: .user("u1"))
        #expect(r.status == c.status, "\(c.label): \(r.json)")
    }

    @Test func allowedQueriesReturnTheirDocumentsAndDeniedOnesNone() throws {
        let h = try TestHarness(rules: Self.source)
        h.put("groups/g1", ["members": arr([str("u1"), str("u2")])])
        h.put("groups/g2", ["members": arr([str("u2")])])
        h.put("cheap/a", ["price": int(10)])
        h.put("cheap/b", ["price": int(150)])
        let mine = h.query(sq("groups", where: ff("members", "ARRAY_CONTAINS", str("u1"))), as: .user("u1"))
        #expect(mine.status == 200)
        #expect(mine.ids == ["g1"])
        // Every stored group u2 belongs to, but the query does not say so: denied all the same.
        let theirs = h.query(sq("groups", where: ff("members", "ARRAY_CONTAINS", str("u2"))), as: .user("u1"))
        #expect(theirs.status == 403)
        let cheap = h.query(sq("cheap", where: ff("price", "LESS_THAN", int(50))), as: .user("u1"))
        #expect(cheap.ids == ["a"])
        // Stored prices are all below 200, yet `price < 200` does not prove `price < 100`.
        #expect(h.query(sq("cheap", where: ff("price", "LESS_THAN", int(200))), as: .user("u1")).status == 403)
    }

    @Test func aDenialSaysWhichConditionTheQueryDidNotProve() throws {
        let h = try TestHarness(rules: Self.source)
        let r = h.query(sq("cheap", where: ff("price", "GREATER_THAN", int(5))), as: .user("u1"))
        #expect(r.status == 403)
        let message = r.json["error"]?["message"]?.stringValue ?? ""
        // Firestore's wording first, the rules' account on the next line.
        #expect(message.hasPrefix("Missing or insufficient permissions.\nevaluation error at L7:"), "\(message)")
        #expect(message.contains("constraint(> 5)"), "\(message)")
    }

    @Test func theDocumentWildcardIsUnknownUnlessTheNameIsPinned() throws {
        let h = try TestHarness(rules: Self.source)
        #expect(h.query(sq("ids"), as: .user("u1")).status == 403)
        let named = sq("ids", where: ff("__name__", "EQUAL", .object(["referenceValue": .string(h.root + "/ids/a")])))
        #expect(h.query(named, as: .user("u1")).status == 200)
        let secret = sq("ids", where: ff("__name__", "EQUAL", .object(["referenceValue": .string(h.root + "/ids/secret")])))
        #expect(h.query(secret, as: .user("u1")).status == 403)
    }

    @Test func aggregationsAreJudgedLikeTheirQuery() throws {
        let h = try TestHarness(rules: Self.source)
        h.put("cheap/a", ["price": int(10)])
        func count(_ filter: JSON) -> Int {
            let body: JSON = .object(["structuredAggregationQuery": .object([
                "structuredQuery": sq("cheap", where: filter),
                "aggregations": .array([.object(["alias": .string("n"), "count": .object([:])])]),
            ])])
            return h.call("POST", h.api(":runAggregationQuery"), body, as: .user("u1")).status
        }
        #expect(count(ff("price", "LESS_THAN", int(50))) == 200)
        #expect(count(ff("price", "GREATER_THAN", int(50))) == 403)
    }
}
