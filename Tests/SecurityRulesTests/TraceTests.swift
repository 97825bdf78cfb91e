import HearthCore
import Testing
@testable import SecurityRules

struct TraceTests {
    static let source = """
    rules_version = '2';
    service cloud.firestore {
      match /databases/{database}/documents {
        match /users/{uid} {
          allow update: if request.auth.uid == uid;
          allow list: if resource.data.owner == request.auth.uid;
          allow update: if isAdmin();
          function isAdmin() { return request.auth.token.admin == true; }
        }
      }
    }
    """

    @Test func falseMessageStartsAsFirestoresAndExplains() {
        let d = compiled(TraceTests.source).evaluate(Req.make(.update, "users/abc", uid: "xyz", data: [:], existing: [:]), lookup: MapLookup())
        #expect(!d.allowed)
        let lines = d.message.split(separator: "\n").map(String.init)
        #expect(lines[0] == "false for 'update' @ L5, Property admin is undefined on object. for 'update' @ L7")
        #expect(d.message.contains("L5:24 `request.auth.uid == uid` was false: \"xyz\" == \"abc\""))
        #expect(d.message.contains("L8:35 `request.auth.token.admin == true` failed: Property admin is undefined on object. (at L8:35 `request.auth.token.admin`)"))
        #expect(d.trace.allows.count == 2)
        #expect(d.trace.allows[0].outcome == .denied)
        #expect(d.trace.matches.first?.bindings.map(\.name) == ["database", "uid"])
        #expect(d.trace.matches.first?.bindings.last?.value == .string("abc"))
    }

    @Test func errorMessagesNameTheError() {
        let d = compiled(TraceTests.source).evaluate(Req.make(.update, "users/abc", data: [:], existing: [:]), lookup: MapLookup())
        let first = d.message.split(separator: "\n").first.map(String.init)
        #expect(first == "Null value error. for 'update' @ L5, Null value error. for 'update' @ L7")
        #expect(d.message.contains("L5:24 `request.auth.uid == uid` failed: Null value error. (at L5:24 `request.auth.uid`); `request.auth` is null"))
        #expect(d.trace.allows[1].outcome == .error("Null value error."))
    }

    @Test func listQueryJudgedOnTheEqualityConstrainedFields() {
        // FirestoreEmulator passes, for a list request, a resource whose data holds only the fields
        // the query fixes by equality.
        let r = compiled(TraceTests.source)
        let constrained = RulesRequest(method: .list, path: Req.path("users/any"), auth: Req.auth("u1"), time: Req.time,
                                       resource: .map(["data": .map(["owner": .string("u1")])]))
        #expect(r.evaluate(constrained, lookup: MapLookup()).allowed)
        let otherOwner = RulesRequest(method: .list, path: Req.path("users/any"), auth: Req.auth("u1"), time: Req.time,
                                      resource: .map(["data": .map(["owner": .string("u2")])]))
        #expect(!r.evaluate(otherOwner, lookup: MapLookup()).allowed)
        let unconstrained = RulesRequest(method: .list, path: Req.path("users/any"), auth: Req.auth("u1"), time: Req.time,
                                         resource: .map(["data": .map([:])]))
        let d = r.evaluate(unconstrained, lookup: MapLookup())
        #expect(!d.allowed)
        #expect(d.message.hasPrefix("Property owner is undefined on object. for 'list' @ L6"))
    }

    @Test func visitedExpressionsCarryPositionsAndValues() {
        let d = compiled(TraceTests.source).evaluate(Req.make(.update, "users/abc", uid: "abc", data: [:], existing: [:]), lookup: MapLookup(), trace: true)
        #expect(d.allowed)
        #expect(d.message.isEmpty)
        let visited = d.trace.visitedExpressions
        let top = visited.last!
        #expect(top.line == 5 && top.column == 24)
        #expect(top.text == "request.auth.uid == uid")
        #expect(top.value == .value(.bool(true)))
        #expect(visited.contains { $0.text == "uid" && $0.value == .value(.string("abc")) })
    }

    @Test func debugIsRecorded() {
        let r = compiled(rules("    match /x/{y} { allow read: if debug(y) == 'a'; }"))
        let d = r.evaluate(Req.make(.get, "x/a"), lookup: MapLookup())
        #expect(d.trace.debugMessages == ["\"a\""])
    }

    @Test func coverageCountsOutcomes() throws {
        let r = compiled(TraceTests.source)
        let coverage = RulesCoverage()
        _ = r.evaluate(Req.make(.update, "users/abc", uid: "abc", data: [:], existing: [:]), lookup: MapLookup(), coverage: coverage)
        _ = r.evaluate(Req.make(.update, "users/abc", uid: "xyz", data: [:], existing: [:]), lookup: MapLookup(), coverage: coverage)
        let json = coverage.json(for: r)
        let report = json["report"]?.arrayValue ?? []
        #expect(json["rules"]?["files"]?[0]?["content"]?.stringValue == r.source)
        let first = try #require(report.first)
        #expect(first["sourcePosition"]?["line"] == .int(5))
        #expect(first["sourcePosition"]?["column"] == .int(24))
        let values = first["values"]?.arrayValue ?? []
        #expect(values.contains { $0["value"] == .bool(true) && $0["count"] == .int(1) })
        #expect(values.contains { $0["value"] == .bool(false) && $0["count"] == .int(1) })
        #expect(first["children"]?.arrayValue?.count == 2)
        // Never-evaluated expressions are reported with no values.
        #expect(report.contains { $0["values"]?.arrayValue?.isEmpty == true })
        let html = coverage.html(for: r)
        #expect(html.contains("<span class=\"both\""))
        #expect(html.contains("<span class=\"unvisited\""))
        coverage.reset()
        #expect(coverage.json(for: r)["report"]?[0]?["values"]?.arrayValue?.isEmpty == true)
    }
}
