import HearthCore
import Testing
@testable import SecurityRules

/// What the cheaper decision set-up (rulesfast) must keep: a grant judged without a trace keeps no
/// allow attempt, one judged with a trace keeps every attempt, the granting one included; the
/// parameter stack reserved at the first call still binds every call's parameters and lets.
struct DecisionSetupTests {
    static let source = rules("""
        match /users/{uid} {
          allow update: if request.auth.uid == 'admin';
          allow update: if request.auth.uid == uid;
          allow get;
        }
        match /sums/{n} {
          function outer() { return inner(1, n); }
          function inner(a, b) {
            let total = a + int(b);
            return total == 4 && twice(total) == 8;
          }
          function twice(x) { return x * 2; }
          allow get: if outer();
        }
    """)

    @Test func aTracedGrantListsEveryAttemptTheGrantingOneIncluded() {
        let r = compiled(DecisionSetupTests.source)
        let request = Req.make(.update, "users/abc", uid: "abc", data: [:], existing: [:])
        let traced = r.evaluate(request, lookup: MapLookup(), trace: true)
        #expect(traced.allowed)
        #expect(traced.trace.allows.map(\.outcome) == [.denied, .allowed])
        #expect(traced.trace.allows.map(\.line) == [5, 6])
        // The internal entry point the test runner uses keeps the granting attempt too.
        let (decision, evaluation) = r.evaluate(request, accessor: LookupAccessor(lookup: MapLookup()), coverage: nil, recording: true)
        #expect(decision.allowed)
        #expect(evaluation.attempts.count == 2)
        if case .value(.bool(true))? = evaluation.attempts.last?.result {} else {
            Issue.record("the granting attempt is not the last one kept")
        }
    }

    @Test func anUnconditionalTracedGrantIsListed() {
        let r = compiled(DecisionSetupTests.source)
        let d = r.evaluate(Req.make(.get, "users/abc", uid: "x"), lookup: MapLookup(), trace: true)
        #expect(d.allowed)
        #expect(d.trace.allows.map(\.outcome) == [.allowed])
        #expect(d.trace.allows.first?.line == 7)
    }

    @Test func anUntracedGrantKeepsNoDetailsWithOrWithoutCoverage() {
        let r = compiled(DecisionSetupTests.source)
        let request = Req.make(.update, "users/abc", uid: "abc", data: [:], existing: [:])
        for coverage in [nil, RulesCoverage()] {
            let d = r.evaluate(request, lookup: MapLookup(), coverage: coverage)
            #expect(d.allowed)
            #expect(d.message.isEmpty)
            #expect(d.trace.allows.isEmpty)
            #expect(d.trace.matches.isEmpty)
        }
        // A denial still explains each attempt (judged again with recording).
        let denied = r.evaluate(Req.make(.update, "users/abc", uid: "xyz", data: [:], existing: [:]), lookup: MapLookup(), coverage: RulesCoverage())
        #expect(!denied.allowed)
        #expect(denied.trace.allows.map(\.outcome) == [.denied, .denied])
        #expect(denied.message.hasPrefix("false for 'update' @ L5, false for 'update' @ L6"))
    }

    @Test func coverageCountsTheGrantingAllowWhetherOrNotItIsKept() throws {
        // The coverage report comes from the visits, not the attempts: granted without a trace,
        // the attempt is not kept, and the counts are those of the same requests traced.
        let r = compiled(DecisionSetupTests.source)
        let plain = RulesCoverage(), traced = RulesCoverage()
        for i in 0..<5 {
            let uid = i % 2 == 0 ? "abc" : "other"
            let request = Req.make(.update, "users/abc", uid: uid, data: [:], existing: [:])
            #expect(r.evaluate(request, lookup: MapLookup(), coverage: plain).allowed == (uid == "abc"))
            _ = r.evaluate(request, accessor: LookupAccessor(lookup: MapLookup()), coverage: traced, recording: true)
        }
        #expect(plain.json(for: r).serialized(pretty: true) == traced.json(for: r).serialized(pretty: true))
        #expect(plain.html(for: r) == traced.html(for: r))
    }

    @Test func parametersAndLetsBindWhenTheFirstCallHasNone() {
        let r = compiled(DecisionSetupTests.source)
        #expect(r.evaluate(Req.make(.get, "sums/3"), lookup: MapLookup()).allowed)
        #expect(!r.evaluate(Req.make(.get, "sums/2"), lookup: MapLookup()).allowed)
        let traced = r.evaluate(Req.make(.get, "sums/3"), lookup: MapLookup(), trace: true)
        #expect(traced.trace.visitedExpressions.contains { $0.text == "a + int(b)" && $0.value == .value(.int(4)) })
        #expect(traced.trace.visitedExpressions.contains { $0.text == "x * 2" && $0.value == .value(.int(8)) })
    }
}
