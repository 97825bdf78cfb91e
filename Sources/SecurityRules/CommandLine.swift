// `hearth rules check` and `hearth rules test`: text in, text and an exit status out.
// File reading and printing belong to the caller.

import Foundation
import HearthCore

/// The `hearth rules …` subcommands, as pure functions.
public enum RulesCommandLine {
    /// `hearth rules check FILE`: each issue as `file:line:col: severity: message`, the offending
    /// line and a caret; exit status 1 when any error exists (warnings such as an unused function
    /// do not fail).
    public static func check(source: String, fileName: String) -> (output: String, exitStatus: Int32) {
        let (_, issues) = Ruleset.compile(source, fileName: fileName)
        let errors = issues.filter { $0.severity == .error }.count
        let warnings = issues.count - errors
        var out = render(issues, source: source)
        if issues.isEmpty {
            out += "\(fileName): no issues found.\n"
        } else {
            out += "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s").\n"
        }
        return (out, errors > 0 ? 1 : 0)
    }

    /// Issues rendered as a compiler does: location, message, source line, caret.
    static func render(_ issues: [RulesIssue], source: String) -> String {
        let text = SourceText(source)
        var out = ""
        for issue in issues {
            out += "\(issue.fileName):\(issue.line):\(issue.column): \(issue.severity == .error ? "error" : "warning"): \(issue.description)\n"
            let line = text.line(issue.line)
            guard !line.isEmpty else { continue }
            out += "    " + line + "\n"
            // Keep tabs so the caret lines up under the offending character.
            var caret = "    "
            for (i, ch) in line.enumerated() where i < issue.column - 1 { caret.append(ch == "\t" ? "\t" : " ") }
            out += caret + "^\n"
        }
        return out
    }

    /// `hearth rules test FILE SUITE.json [--json]`: one line per case (PASS/FAIL, method, path,
    /// expectation, position) with the denial trace under each failure; exit status 1 on any failure.
    /// With `json`, prints the `TestRulesetResponse` instead.
    public static func test(source: String, fileName: String, suiteJSON: String, json: Bool) -> (output: String, exitStatus: Int32) {
        let suite: JSON
        do {
            suite = try JSON.parse(suiteJSON)
        } catch {
            return ("error: the test suite is not valid JSON: \(error)\n", 1)
        }
        // Accept a bare TestSuite or a whole TestRulesetRequest body ({"source": …, "testSuite": …}).
        let testSuite = suite["testSuite"] ?? suite
        guard testSuite["testCases"]?.arrayValue != nil else {
            return ("error: the test suite has no \"testCases\" array\n", 1)
        }
        let (response, issues, cases) = RulesTestRunner.run(source: source, fileName: fileName, testSuite: testSuite, now: Date())
        let failures = cases?.filter { !$0.passed }.count ?? 0
        let status: Int32 = (cases == nil || failures > 0) ? 1 : 0
        if json { return (response.serialized(pretty: true) + "\n", status) }
        var out = render(issues, source: source)
        guard let cases else {
            out += "The rules do not compile; no test case was run.\n"
            return (out, 1)
        }
        for c in cases {
            out += (c.passed ? "PASS " : "FAIL ") + c.summary + "\n"
            for d in c.details { out += "     " + d + "\n" }
        }
        out += "\(cases.count - failures) passed, \(failures) failed.\n"
        return (out, status)
    }

    /// `hearth rules bench FILE SUITE.json [--iterations N] [--json]`: how long compiling the file
    /// and judging each test case take in process, on the path Firestore requests take (the
    /// verdict without a trace, a denial judged again with one), with and without the coverage
    /// collection the emulator keeps. Medians of five rounds; exit 1 when the rules do not compile
    /// or the suite is invalid.
    public static func bench(source: String, fileName: String, suiteJSON: String, iterations: Int, json: Bool) -> (output: String, exitStatus: Int32) {
        let suite: JSON
        do {
            suite = try JSON.parse(suiteJSON)
        } catch {
            return ("error: the test suite is not valid JSON: \(error)\n", 1)
        }
        guard let testCases = (suite["testSuite"] ?? suite)["testCases"]?.arrayValue else {
            return ("error: the test suite has no \"testCases\" array\n", 1)
        }
        let rounds = 5
        let clock = ContinuousClock()
        func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
        func nanos(_ d: Duration) -> Double {
            Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9
        }

        var compileTimes: [Double] = []
        var compiled: Ruleset?
        var issues: [RulesIssue] = []
        for _ in 0..<rounds {
            let start = clock.now
            (compiled, issues) = Ruleset.compile(source, fileName: fileName)
            compileTimes.append(nanos(clock.now - start))
        }
        guard let ruleset = compiled else {
            return (render(issues, source: source) + "The rules do not compile; nothing was measured.\n", 1)
        }

        var rows: [JSON] = []
        var lines = [String(format: "compile %@: %.3f ms", fileName, median(compileTimes) / 1e6)]
        let n = max(1, iterations)
        for (i, testCase) in testCases.enumerated() {
            let prepared: RulesTestRunner.PreparedCase
            switch RulesTestRunner.prepare(testCase, now: Date()) {
            case .success(let p): prepared = p
            case .failure(let e): return ("error: test case #\(i + 1): \(e.message)\n", 1)
            }
            func perDecision(_ coverage: RulesCoverage?) -> (Double, Bool) {
                var allowed = false
                var samples: [Double] = []
                for _ in 0..<rounds {
                    let start = clock.now
                    for _ in 0..<n {
                        allowed = ruleset.evaluate(prepared.request, accessor: prepared.mocks, coverage: coverage).decision.allowed
                    }
                    samples.append(nanos(clock.now - start) / Double(n))
                }
                return (median(samples), allowed)
            }
            let (plain, allowed) = perDecision(nil)
            let (covered, _) = perDecision(RulesCoverage())
            let r = prepared.request
            let where_ = "\(r.method.rawValue) /\(r.path.joined(separator: "/"))"
            lines.append(String(format: "#%d %@ → %@ (expected %@): %.0f ns/decision, %.0f ns with coverage",
                                i + 1, where_, allowed ? "ALLOW" : "DENY", prepared.expectation, plain, covered))
            rows.append(.object(JSONObject([
                ("case", .int(Int64(i + 1))), ("method", .string(r.method.rawValue)), ("path", .string("/" + r.path.joined(separator: "/"))),
                ("expectation", .string(prepared.expectation)), ("allowed", .bool(allowed)),
                ("nsPerDecision", .double(plain)), ("nsPerDecisionWithCoverage", .double(covered)),
            ])))
        }
        if json {
            let out = JSON.object(JSONObject([
                ("file", .string(fileName)), ("compileMs", .double(median(compileTimes) / 1e6)),
                ("iterations", .int(Int64(n))), ("cases", .array(rows)),
            ]))
            return (out.serialized(pretty: true) + "\n", 0)
        }
        return (lines.joined(separator: "\n") + "\n", 0)
    }
}
