import Testing
@testable import SecurityRules

/// A Firestore vector reaches the rules as a `vector` of its own, as the official emulator's rules
/// see it: `is vector`, equality, nothing else.
struct VectorValueTests {
    static let request = Req.make(.create, "beans/a", data: ["v": .vector([1, 2]), "w": .vector([1, 2]), "x": .vector([3])])

    @Test(arguments: [
        ("request.resource.data.v is vector", true), ("request.resource.data.v is map", false),
        ("request.resource.data.v is list", false), ("request.resource.data.v == request.resource.data.w", true),
        ("request.resource.data.v != request.resource.data.x", true), ("request.resource.data.v == [1.0, 2.0]", false),
        ("request.resource.data.v == {'__type__': '__vector__', 'value': [1.0, 2.0]}", false),
        ("request.resource.data.v in [request.resource.data.w]", true),
        ("[request.resource.data.v].hasAny([request.resource.data.x])", false),
    ])
    func equalityAndTypeTests(_ expression: String, _ expected: Bool) {
        #expect(probe(expression, request: Self.request) == .bool(expected), "\(expression)")
    }

    @Test(arguments: ["request.resource.data.v.value", "request.resource.data.v.size()", "request.resource.data.v[0]",
                      "request.resource.data.v < request.resource.data.x", "string(request.resource.data.v)"])
    func nothingElseApplies(_ expression: String) {
        #expect(probeError(expression, request: Self.request) != nil, "\(expression)")
    }

    @Test func itRendersAndReportsAsAVector() {
        #expect(RulesValue.vector([1, 2.5]).rendered == "vector([1.0, 2.5])")
        #expect(RulesValue.vector([1]).typeName == "vector")
    }
}
