import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// `:ruleCoverage` counts every decision Firestore makes with rules, through the service's own
/// paths (granted creates, granted and denied gets, errors), and reports exactly what was judged
/// before it was asked for, however the collector folds its records.
@Suite struct RuleCoverageEndpointTests {
    static let source = RulesEnforcementTests.rules("""
        match /cov/{id} {
          allow create: if request.auth != null && request.resource.data.owner == request.auth.uid
            && request.resource.data.name + '/' + id != '';
          allow get: if resource.data.owner == request.auth.uid;
        }
    """)

    /// The values of the report entries whose source text is `text`, in source order.
    static func values(_ report: JSON, _ text: String) -> [[JSON]] {
        var found: [[JSON]] = []
        func walk(_ entries: [JSON]) {
            for e in entries {
                if let pos = e["sourcePosition"], let start = pos["currentOffset"]?.intValue, let end = pos["endOffset"]?.intValue,
                   String(decoding: Array(source.utf8)[Int(start)..<Int(end)], as: UTF8.self) == text {
                    found.append(e["values"]?.arrayValue ?? [])
                }
                walk(e["children"]?.arrayValue ?? [])
            }
        }
        walk(report["report"]?.arrayValue ?? [])
        return found
    }

    static func counts(_ values: [[JSON]], _ occurrence: Int = 0) -> [String: Int64] {
        var out: [String: Int64] = [:]
        for v in occurrence < values.count ? values[occurrence] : [] {
            let key = v["error"].map { "error: " + ($0.stringValue ?? "") } ?? v["value"]?.serialized() ?? "?"
            out[key] = v["count"]?.intValue
        }
        return out
    }

    @Test func countsEveryDecisionAndNothingMore() throws {
        let h = try TestHarness(rules: Self.source)
        for id in ["a", "b", "c"] {
            let r = h.call("PATCH", h.api("/cov/\(id)"), .object(["fields": .object(["owner": str("u1"), "name": str("n-\(id)")])]), as: .user("u1"))
            #expect(r.status == 200)
        }
        func report() -> JSON { h.call("GET", "/emulator/v1/projects/\(h.project):ruleCoverage", as: .anonymous).json }
        let first = report()
        #expect(Self.counts(Self.values(first, "request.resource.data.owner == request.auth.uid")) == ["true": 3])
        #expect(Self.counts(Self.values(first, "request.resource.data.name + '/' + id")) == ["\"n-a/a\"": 1, "\"n-b/b\"": 1, "\"n-c/c\"": 1])
        #expect(Self.counts(Self.values(first, "request.resource.data.name + '/'")) == ["\"n-a/\"": 1, "\"n-b/\"": 1, "\"n-c/\"": 1])
        #expect(Self.counts(Self.values(first, "resource.data.owner == request.auth.uid")) == [:])

        #expect(h.call("GET", h.api("/cov/a"), as: .user("u1")).status == 200)
        #expect(h.call("GET", h.api("/cov/b"), as: .user("u1")).status == 200)
        #expect(h.call("GET", h.api("/cov/a"), as: .user("u2")).status == 403)
        #expect(h.call("GET", h.api("/cov/a"), as: .anonymous).status == 403)
        let second = report()
        #expect(Self.counts(Self.values(second, "resource.data.owner == request.auth.uid")) == ["true": 2, "false": 1, "error: Null value error.": 1])
        // The create's `request.auth.uid`, then the get's.
        #expect(Self.counts(Self.values(second, "request.auth.uid"), 0) == ["\"u1\"": 3])
        #expect(Self.counts(Self.values(second, "request.auth.uid"), 1) == ["\"u1\"": 2, "\"u2\"": 1, "error: Null value error.": 1])
        #expect(Self.counts(Self.values(second, "request.resource.data.owner == request.auth.uid")) == ["true": 3])

        let html = h.call("GET", "/emulator/v1/projects/\(h.project):ruleCoverage.html", as: .anonymous)
        #expect(html.status == 200)
        let page = String(decoding: html.response.bodyBytes ?? [], as: UTF8.self)
        #expect(page.contains("<span class=\"error\" title=\"error: Null value error. × 1\nfalse × 1\ntrue × 2\">"))
    }
}
