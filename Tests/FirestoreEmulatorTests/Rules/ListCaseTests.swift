import Foundation
import HearthCore
import SecurityRules
import Testing
@testable import FirestoreEmulator

/// What a list query's filter becomes for the rules: the ways to judge and each way's `resource.data`.
@Suite struct ListCaseTests {
    static func path(_ s: String) -> FieldPath { FieldPath(s.split(separator: ".").map(String.init)) }
    static func some(_ fields: [String: RulesValue]) -> RulesValue { .constraint(RulesConstraint(knownFields: RulesMap(fields))) }
    static func c(_ filters: RulesConstraint.Filter...) -> RulesValue { .constraint(RulesConstraint(filters: filters)) }

    @Test func equalitiesFixValuesAndOtherFiltersConstrain() {
        let filter: QueryFilter = .and([
            .field(Self.path("owner"), .equal, .string("u1")),
            .field(Self.path("price"), .lessThan, .integer(100)),
            .field(Self.path("price"), .notEqual, .integer(7)),
            .field(Self.path("status"), .notIn, .array([.string("a"), .string("b")])),
            .field(Self.path("tags"), .arrayContains, .string("x")),
            .unary(Self.path("gone"), .isNull),
            .unary(Self.path("here"), .isNotNull),
            .field(Self.path("meta.score"), .greaterThanOrEqual, .double(1.5)),
        ])
        let cases = ListCase.cases(for: filter, budget: 64)
        #expect(cases.count == 1)
        #expect(cases[0].data() == Self.some([
            "owner": .string("u1"),
            "price": Self.c(.init(.less, .int(100)), .init(.notEqual, .int(7))),
            "status": Self.c(.init(.notEqual, .string("a")), .init(.notEqual, .string("b"))),
            "tags": Self.c(.init(.contains, .string("x"))),
            "gone": .null,
            "here": Self.c(.init(.notEqual, .null)),
            "meta": Self.some(["score": Self.c(.init(.greaterEqual, .float(1.5)))]),
        ]))
        #expect(cases[0].pinned == nil)
    }

    @Test func aFixedValueWinsOverOtherFiltersOnItsField() {
        let filter: QueryFilter = .and([.field(Self.path("n"), .greaterThan, .integer(1)), .field(Self.path("n"), .in, .array([.integer(5)]))])
        #expect(ListCase.cases(for: filter, budget: 64).map { $0.data() } == [Self.some(["n": .int(5)])])
    }

    @Test func eachInAndArrayContainsAnyValueIsAWay() {
        let filter: QueryFilter = .and([
            .field(Self.path("s"), .in, .array([.string("a"), .string("b")])),
            .field(Self.path("t"), .arrayContainsAny, .array([.string("x"), .string("y")])),
        ])
        let data = ListCase.cases(for: filter, budget: 64).map { $0.data() }
        #expect(data.count == 4)
        #expect(data.contains(Self.some(["s": .string("b"), "t": Self.c(.init(.contains, .string("y")))])))
        // Over the budget, the multi-value filters are left out: their fields stay unknown.
        #expect(ListCase.cases(for: filter, budget: 3).map { $0.data() } == [Self.some([:])])
    }

    @Test func orBranchesAreWays() {
        let filter: QueryFilter = .or([.field(Self.path("a"), .equal, .integer(1)), .field(Self.path("b"), .greaterThan, .integer(2))])
        let data = ListCase.cases(for: filter, budget: 64).map { $0.data() }
        #expect(data == [Self.some(["a": .int(1)]), Self.some(["b": Self.c(.init(.greater, .int(2)))])])
    }

    @Test func nameEqualityPinsTheDocumentAndOtherNameFiltersConstrainNothing() {
        let name = "projects/p/databases/(default)/documents/c/d1"
        let pinned = ListCase.cases(for: .field(.documentKey, .equal, .reference(name)), budget: 64)
        #expect(pinned.map(\.pinned) == [ResourcePath(["c", "d1"])])
        #expect(pinned[0].data() == Self.some([:]))
        let range = ListCase.cases(for: .field(.documentKey, .greaterThan, .reference(name)), budget: 64)
        #expect(range.map(\.pinned) == [nil])
        #expect(range[0].data() == Self.some([:]))
        let names = ListCase.cases(for: .field(.documentKey, .in, .array([.reference(name), .reference(name + "x")])), budget: 64)
        #expect(names.map(\.pinned) == [ResourcePath(["c", "d1"]), ResourcePath(["c", "d1x"])])
    }

    @Test func aNormalFormOverTheBudgetIsOneWayKnowingNothing() {
        let wide: QueryFilter = .or((0..<5).map { .field(Self.path("f\($0)"), .equal, .integer(Int64($0))) })
        #expect(ListCase.cases(for: wide, budget: 4).map { $0.data() } == [Self.some([:])])
        #expect(ListCase.cases(for: nil, budget: 64).map { $0.data() } == [Self.some([:])])
    }
}
