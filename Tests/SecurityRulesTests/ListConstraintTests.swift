import HearthCore
import Testing
@testable import SecurityRules

/// List decisions proven from a query's constraints (`RulesConstraint`): what the filters imply is
/// true, everything else an error that denies, whatever a stored document might hold.
struct ListConstraintTests {
    /// A field constrained by `filters`.
    static func c(_ filters: (RulesConstraint.Comparator, RulesValue)...) -> RulesValue {
        .constraint(RulesConstraint(filters: filters.map { RulesConstraint.Filter($0.0, $0.1) }))
    }

    /// A map holding at least `fields`.
    static func some(_ fields: [String: RulesValue]) -> RulesValue {
        .constraint(RulesConstraint(knownFields: RulesMap(fields)))
    }

    static let day: Int64 = 86_400
    static func at(_ seconds: Int64) -> RulesValue { .timestamp(seconds: seconds, nanos: 0) }
    /// `Req.time` (2026-01-01T00:00:00Z) in seconds.
    static let now: Int64 = 1_767_225_600

    /// A list of `items` as user u1, `resource.data` holding at least `data`.
    static func list(_ data: [String: RulesValue]) -> RulesRequest {
        RulesRequest(method: .list, path: Req.path("items/__list__"), auth: Req.auth("u1"), time: Req.time,
                     resource: .map(["data": some(data)]), query: .map(["orderBy": .map([:])]), listPlaceholder: "__list__")
    }

    static func decide(_ condition: String, _ data: [String: RulesValue]) -> RulesDecision {
        compiled(rules("    match /items/{id} { allow list: if \(condition); }")).evaluate(list(data), lookup: MapLookup())
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let label: String
        let condition: String
        let data: [String: RulesValue]
        let allowed: Bool
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        // The shared-document pattern: `where members array-contains uid`.
        Case(label: "uid in members, array-contains uid", condition: "request.auth.uid in resource.data.members",
             data: ["members": c((.contains, .string("u1")))], allowed: true),
        Case(label: "uid in members, array-contains another uid", condition: "request.auth.uid in resource.data.members",
             data: ["members": c((.contains, .string("u2")))], allowed: false),
        Case(label: "uid in members, no filter on members", condition: "request.auth.uid in resource.data.members",
             data: [:], allowed: false),
        Case(label: "uid in members, members == [uid]", condition: "request.auth.uid in resource.data.members",
             data: ["members": .list([.string("u1")])], allowed: true),
        Case(label: "hasAny([uid]), array-contains uid", condition: "resource.data.members.hasAny([request.auth.uid])",
             data: ["members": c((.contains, .string("u1")))], allowed: true),
        Case(label: "hasAny([uid]), array-contains another", condition: "resource.data.members.hasAny([request.auth.uid])",
             data: ["members": c((.contains, .string("u2")))], allowed: false),
        Case(label: "hasAny(list), one array-contains-any value in it", condition: "resource.data.tags.hasAny(['a', 'b'])",
             data: ["tags": c((.contains, .string("b")))], allowed: true),
        Case(label: "hasAny(list), value outside it", condition: "resource.data.tags.hasAny(['a', 'b'])",
             data: ["tags": c((.contains, .string("c")))], allowed: false),
        Case(label: "hasAll one, contained", condition: "resource.data.tags.hasAll(['a'])",
             data: ["tags": c((.contains, .string("a")))], allowed: true),
        Case(label: "hasAll two, one contained", condition: "resource.data.tags.hasAll(['a', 'b'])",
             data: ["tags": c((.contains, .string("a")))], allowed: false),
        Case(label: "hasAll two, both contained", condition: "resource.data.tags.hasAll(['a', 'b'])",
             data: ["tags": c((.contains, .string("a")), (.contains, .string("b")))], allowed: true),
        Case(label: "size of a contained list", condition: "resource.data.members.size() > 0",
             data: ["members": c((.contains, .string("u1")))], allowed: false),
        Case(label: "!hasAny is not proven by another value", condition: "!resource.data.blocked.hasAny([request.auth.uid])",
             data: ["blocked": c((.contains, .string("u2")))], allowed: false),

        // Ranges.
        Case(label: "recent: createdAt > now - 1d, filter > now - 1d",
             condition: "resource.data.createdAt > request.time - duration.value(1, 'd')",
             data: ["createdAt": c((.greater, at(now - day)))], allowed: true),
        Case(label: "recent: filter > now - 1h (later bound)",
             condition: "resource.data.createdAt > request.time - duration.value(1, 'd')",
             data: ["createdAt": c((.greater, at(now - 3600)))], allowed: true),
        Case(label: "recent: filter > now - 2d (earlier bound)",
             condition: "resource.data.createdAt > request.time - duration.value(1, 'd')",
             data: ["createdAt": c((.greater, at(now - 2 * day)))], allowed: false),
        Case(label: "recent: filter >= the bound itself",
             condition: "resource.data.createdAt > request.time - duration.value(1, 'd')",
             data: ["createdAt": c((.greaterEqual, at(now - day)))], allowed: false),
        Case(label: "price < 100, filter < 50", condition: "resource.data.price < 100",
             data: ["price": c((.less, .int(50)))], allowed: true),
        Case(label: "price < 100, filter <= 99", condition: "resource.data.price < 100",
             data: ["price": c((.lessEqual, .int(99)))], allowed: true),
        Case(label: "price < 100, filter < 100", condition: "resource.data.price < 100",
             data: ["price": c((.less, .int(100)))], allowed: true),
        Case(label: "price < 100, filter <= 100", condition: "resource.data.price < 100",
             data: ["price": c((.lessEqual, .int(100)))], allowed: false),
        Case(label: "price < 100, filter > 5", condition: "resource.data.price < 100",
             data: ["price": c((.greater, .int(5)))], allowed: false),
        Case(label: "price < 100, filter < 'a'", condition: "resource.data.price < 100",
             data: ["price": c((.less, .string("a")))], allowed: false),
        Case(label: "price < 100, filter < 50.5 (a float filter proves nothing of an int)", condition: "resource.data.price < 100",
             data: ["price": c((.less, .float(50.5)))], allowed: false),
        Case(label: "price < 100.5, filter < 100 (an int filter does of a float)", condition: "resource.data.price < 100.5",
             data: ["price": c((.less, .int(100)))], allowed: true),
        Case(label: "mirrored: 100 > price, filter < 50", condition: "100 > resource.data.price",
             data: ["price": c((.less, .int(50)))], allowed: true),
        Case(label: "between, one filter proves each side", condition: "resource.data.n > 0 && resource.data.n < 10",
             data: ["n": c((.greater, .int(1)), (.less, .int(5)))], allowed: true),
        Case(label: ">= 1 and <= 1 do not prove == 1", condition: "resource.data.n == 1",
             data: ["n": c((.greaterEqual, .int(1)), (.lessEqual, .int(1)))], allowed: false),
        Case(label: "two constraints compared", condition: "resource.data.a < resource.data.b",
             data: ["a": c((.less, .int(1))), "b": c((.greater, .int(5)))], allowed: false),

        // Exclusions.
        Case(label: "status != 'deleted', filter != 'deleted'", condition: "resource.data.status != 'deleted'",
             data: ["status": c((.notEqual, .string("deleted")))], allowed: true),
        Case(label: "status != 'deleted', filter != 'x'", condition: "resource.data.status != 'deleted'",
             data: ["status": c((.notEqual, .string("x")))], allowed: false),
        Case(label: "status != 'deleted', filter > 'e'", condition: "resource.data.status != 'deleted'",
             data: ["status": c((.greater, .string("e")))], allowed: true),
        Case(label: "status != 'deleted', filter <= 'deleted'", condition: "resource.data.status != 'deleted'",
             data: ["status": c((.lessEqual, .string("deleted")))], allowed: false),
        Case(label: "not in, not-in both", condition: "!(resource.data.status in ['deleted', 'banned'])",
             data: ["status": c((.notEqual, .string("deleted")), (.notEqual, .string("banned")))], allowed: true),
        Case(label: "not in, not-in one of them", condition: "!(resource.data.status in ['deleted', 'banned'])",
             data: ["status": c((.notEqual, .string("deleted")))], allowed: false),
        Case(label: "!(x == 5) is not proven by x != 5", condition: "!(resource.data.x == 5)",
             data: ["x": c((.notEqual, .int(5)))], allowed: false),
        Case(label: "!= null holds of any filtered field", condition: "resource.data.x != null",
             data: ["x": c((.greater, .int(5)))], allowed: true),
        Case(label: "== null is not proven", condition: "resource.data.x == null",
             data: ["x": c((.notEqual, .int(5)))], allowed: false),

        // Membership in a rule's list (equality and `in` fix the value).
        Case(label: "status in ['a','b'], status == 'a'", condition: "resource.data.status in ['a', 'b']",
             data: ["status": .string("a")], allowed: true),
        Case(label: "status in ['a','b'], status == 'c'", condition: "resource.data.status in ['a', 'b']",
             data: ["status": .string("c")], allowed: false),
        Case(label: "status in ['a','b'], status != 'c'", condition: "resource.data.status in ['a', 'b']",
             data: ["status": c((.notEqual, .string("c")))], allowed: false),

        // Types.
        Case(label: "is string, fixed string", condition: "resource.data.x is string", data: ["x": .string("a")], allowed: true),
        Case(label: "is string, string range", condition: "resource.data.x is string",
             data: ["x": c((.greater, .string("a")))], allowed: true),
        Case(label: "is string, number range", condition: "resource.data.x is string",
             data: ["x": c((.greater, .int(5)))], allowed: false),
        Case(label: "!(is string), number range", condition: "!(resource.data.x is string)",
             data: ["x": c((.greater, .int(5)))], allowed: true),
        Case(label: "is string, exclusion only", condition: "resource.data.x is string",
             data: ["x": c((.notEqual, .string("a")))], allowed: false),
        Case(label: "!(is string), exclusion only", condition: "!(resource.data.x is string)",
             data: ["x": c((.notEqual, .string("a")))], allowed: false),
        Case(label: "is number, int range", condition: "resource.data.n is number",
             data: ["n": c((.greater, .int(5)))], allowed: true),
        Case(label: "is int, int range (could be a float)", condition: "resource.data.n is int",
             data: ["n": c((.greater, .int(5)))], allowed: false),
        Case(label: "is list, array-contains", condition: "resource.data.tags is list",
             data: ["tags": c((.contains, .string("a")))], allowed: true),
        Case(label: "is constraint, range", condition: "resource.data.x is constraint",
             data: ["x": c((.greater, .int(5)))], allowed: true),
        Case(label: "is constraint, fixed value", condition: "resource.data.x is constraint", data: ["x": .int(5)], allowed: false),
        Case(label: "data is map", condition: "resource.data is map", data: [:], allowed: true),

        // resource.data is a map of which only the filtered fields are known.
        Case(label: "keys().hasAll(fixed)", condition: "resource.data.keys().hasAll(['owner'])",
             data: ["owner": .string("u1")], allowed: true),
        Case(label: "keys().hasAll(unknown)", condition: "resource.data.keys().hasAll(['owner', 'x'])",
             data: ["owner": .string("u1")], allowed: false),
        Case(label: "keys().hasOnly", condition: "resource.data.keys().hasOnly(['owner'])",
             data: ["owner": .string("u1")], allowed: false),
        Case(label: "size()", condition: "resource.data.size() == 1", data: ["owner": .string("u1")], allowed: false),
        Case(label: "known key in data", condition: "'owner' in resource.data", data: ["owner": .string("u1")], allowed: true),
        Case(label: "unknown key not in data", condition: "!('banned' in resource.data)", data: ["owner": .string("u1")], allowed: false),
        Case(label: "get of an unknown key", condition: "resource.data.get('visibility', 'public') == 'public'",
             data: [:], allowed: false),
        Case(label: "get of a known key", condition: "resource.data.get('visibility', 'private') == 'public'",
             data: ["visibility": .string("public")], allowed: true),
        Case(label: "get of a nested known key", condition: "resource.data.get(['a', 'b'], 0) > 5",
             data: ["a": some(["b": c((.greater, .int(6)))])], allowed: true),
        Case(label: "nested range", condition: "resource.data.a.b > 1",
             data: ["a": some(["b": c((.greater, .int(5)))])], allowed: true),
        Case(label: "nested unknown field", condition: "resource.data.a.c == 1",
             data: ["a": some(["b": c((.greater, .int(5)))])], allowed: false),
        Case(label: "nested size", condition: "resource.data.a.size() == 1",
             data: ["a": some(["b": .int(1)])], allowed: false),
        Case(label: "data is no string", condition: "resource.data != 'x'", data: [:], allowed: true),
        Case(label: "data equals no map literal", condition: "resource.data != {}", data: [:], allowed: false),

        // No proof leaks through values built around a constraint.
        Case(label: "list of a constraint", condition: "[resource.data.x] != [5]",
             data: ["x": c((.greater, .int(10)))], allowed: false),
        Case(label: "map literal diff", condition: "{'a': resource.data.x}.diff({'a': 5}).changedKeys().size() == 1",
             data: ["x": c((.greater, .int(10)))], allowed: false),
        Case(label: "constraint as a map key", condition: "!(resource.data.x in {'a': 1})",
             data: ["x": c((.greater, .string("b")))], allowed: false),
        Case(label: "constraint in a rule's list", condition: "!('a' in [resource.data.x])",
             data: ["x": c((.greater, .string("b")))], allowed: false),
        Case(label: "toSet of constraints", condition: "[resource.data.x, resource.data.y].toSet().size() == 2",
             data: ["x": c((.greater, .int(1))), "y": c((.greater, .int(2)))], allowed: false),
        Case(label: "arithmetic", condition: "resource.data.price + 1 < 100", data: ["price": c((.less, .int(50)))], allowed: false),
        Case(label: "string()", condition: "string(resource.data.role) != 'admin'",
             data: ["role": c((.greater, .string("b")))], allowed: false),
        Case(label: "negated proof", condition: "!(resource.data.price < 100)", data: ["price": c((.less, .int(50)))], allowed: false),
        Case(label: "negated non-proof", condition: "!(resource.data.price < 100)", data: ["price": c((.greater, .int(200)))], allowed: false),
        Case(label: "unproven || true", condition: "resource.data.price > 100 || request.auth.uid == 'u1'",
             data: ["price": c((.less, .int(50)))], allowed: true),
        Case(label: "unproven && false", condition: "!(resource.data.price > 100 && request.auth.uid == 'u2')",
             data: ["price": c((.less, .int(50)))], allowed: true),
    ]

    @Test(arguments: cases) func decision(_ c: Case) {
        let d = Self.decide(c.condition, c.data)
        #expect(d.allowed == c.allowed, "\(c.label): \(d.message)")
    }

    @Test func anUnprovenConditionIsAnEvaluationErrorAtItsPosition() {
        let d = Self.decide("resource.data.price < 100", ["price": Self.c((.greater, .int(5)))])
        #expect(!d.allowed)
        let first = d.message.split(separator: "\n").first.map(String.init)
        #expect(first == "evaluation error at L4:40 for 'list' @ L4")
        #expect(d.message.contains("L4:40 `resource.data.price < 100` failed: evaluation error at L4:40"))
        #expect(d.message.contains("constraint(> 5)"))
    }

    @Test func aFieldNoFilterNamesIsUndefinedAsBefore() {
        let d = Self.decide("resource.data.owner == request.auth.uid", [:])
        #expect(d.message.hasPrefix("Property owner is undefined on object. for 'list' @ L4"))
    }

    @Test func theDocumentWildcardOfAListIsAnUnknownString() {
        let r = compiled(rules("""
            match /items/{id} {
              allow list: if id != 'secret' || request.auth.uid == 'admin';
              allow list: if id is string && request.auth.uid == 'u1';
            }
        """))
        let d = r.evaluate(Self.list([:]), lookup: MapLookup())
        #expect(d.allowed)
        var notU1 = Self.list([:])
        notU1.auth = Req.auth("u2")
        let denied = r.evaluate(notU1, lookup: MapLookup())
        #expect(!denied.allowed)
        #expect(denied.message.hasPrefix("evaluation error at L5:22 for 'list' @ L5, false for 'list' @ L6"), "\(denied.message)")
        // Without a placeholder (a caller that names a real document), the segment is the id.
        notU1.listPlaceholder = nil
        #expect(r.evaluate(notU1, lookup: MapLookup()).allowed)
    }

    @Test func constraintsRender() {
        #expect(Self.c((.less, .int(100)), (.notEqual, .int(7))).rendered == "constraint(< 100, != 7)")
        #expect(Self.c((.contains, .string("u1"))).rendered == "constraint(array-contains \"u1\")")
        #expect(Self.some(["a": .int(1)]).rendered == "{\"a\": 1, …}")
        #expect(Self.c((.greater, .int(1))).typeName == "constraint")
        #expect(Self.some([:]).typeName == "map")
    }

    @Test func probesAgreeInBothEvaluationModes() {
        // Ruleset.probe runs the recorded and the fast evaluation and fails when they disagree.
        let request = Self.list(["members": Self.c((.contains, .string("u1"))), "n": Self.c((.greater, .int(3)))])
        #expect(probe("request.auth.uid in resource.data.members", request: request) == .bool(true))
        #expect(probe("resource.data.keys().hasAll(['members', 'n'])", request: request) == .bool(true))
        #expect(probe("resource.data.n + '!' + 'x'", request: request) == nil)
        #expect(probeError("resource.data.n < 3", request: request) != nil)
    }

    @Test func ordinaryValuesAreUnchanged() {
        // The checks that keep constraints from leaking cost nothing in meaning elsewhere.
        #expect(probe("[1, 2] != [1, 3]") == .bool(true))
        #expect(probe("'a' in ['b']") == .bool(false))
        #expect(probe("[1, 2].toSet().size()") == .int(2))
        #expect(probe("{'a': 1}.diff({'a': 2}).changedKeys() == ['a'].toSet()") == .bool(true))
        #expect(probe("{'a': 1, 'c': 3}.diff({'a': 2, 'b': 1}).affectedKeys() == ['a', 'b', 'c'].toSet()") == .bool(true))
        #expect(probe("{'a': 1, 'c': 3}.diff({'a': 1, 'c': 4}).unchangedKeys() == ['a'].toSet()") == .bool(true))
        #expect(probe("[1, 2, 3].removeAll([2])") == .list([.int(1), .int(3)]))
        #expect(probe("[1, 2].toSet().intersection([2, 3].toSet()) == [2].toSet()") == .bool(true))
        #expect(probe("1 is constraint") == .bool(false))
    }
}
