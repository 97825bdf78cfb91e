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
}
