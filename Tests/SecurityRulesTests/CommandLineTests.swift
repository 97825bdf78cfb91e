import HearthCore
import Testing
@testable import SecurityRules

struct CommandLineTests {
    @Test func checkReportsPositionsLinesAndCarets() {
        let source = "service cloud.firestore {\n  match /databases/{db}/documents {\n    allow read: if x +;\n    allow write: if x is text;\n  }\n}\n"
        let (out, status) = RulesCommandLine.check(source: source, fileName: "bad.rules")
        #expect(status == 1)
        #expect(out == """
        bad.rules:3:23: error: Unexpected ';'; expected an expression.
                allow read: if x +;
                                  ^
        bad.rules:4:21: error: An unsupported type identifier was used with the 'is' operator. Received text. Expected one of bool,bytes,constraint,duration,float,int,latlng,list,vector,set,number,map,string,timestamp,path,map_diff
                allow write: if x is text;
                                ^
        2 errors, 0 warnings.

        """)
    }

    @Test func warningsDoNotFailCheck() {
        let (out, status) = RulesCommandLine.check(source: rules("    function u() { return 1; }\n    match /a/{b} { allow read; }"), fileName: "w.rules")
        #expect(status == 0)
        #expect(out.contains("w.rules:4:14: warning: Unused function: u."))
        #expect(RulesCommandLine.check(source: rules("    match /a/{b} { allow read; }"), fileName: "ok.rules").output == "ok.rules: no issues found.\n")
    }

    static let suite = """
    {"testCases": [
      {"expectation": "ALLOW", "request": {"auth": {"uid": "u1"}, "path": "/databases/(default)/documents/rooms/r1", "method": "get"},
       "functionMocks": [{"function": "get", "args": [{"exactValue": "/databases/(default)/documents/members/u1"}], "result": {"value": {"data": {"role": "admin"}}}}]},
      {"expectation": "ALLOW", "request": {"auth": {"uid": "u2"}, "path": "/databases/(default)/documents/rooms/r1", "method": "get"},
       "functionMocks": [{"function": "get", "args": [{"anyValue": {}}], "result": {"value": {"data": {"role": "member"}}}}],
       "expressionReportLevel": "VISITED"},
      {"expectation": "DENY", "request": {"auth": null, "path": "/databases/(default)/documents/rooms/r1", "method": "get"}},
      {"expectation": "DENY", "request": {"auth": {"uid": "u3"}, "path": "/databases/(default)/documents/rooms/r1", "method": "get"},
       "functionMocks": [{"function": "get", "args": [{"anyValue": {}}], "result": {"undefined": {}}}]}
    ]}
    """

    static let roomRules = rules("""
        match /rooms/{room} {
          allow get: if get(/databases/$(database)/documents/members/$(request.auth.uid)).data.role == 'admin';
        }
    """)

    @Test func testPrintsOneLinePerCaseAndFailsOnFailure() {
        let (out, status) = RulesCommandLine.test(source: CommandLineTests.roomRules, fileName: "room.rules", suiteJSON: CommandLineTests.suite, json: false)
        #expect(status == 1)
        let lines = out.split(separator: "\n").map(String.init)
        #expect(lines[0] == "PASS #1 get /databases/(default)/documents/rooms/r1: expected ALLOW, got ALLOW")
        #expect(lines[1] == "FAIL #2 get /databases/(default)/documents/rooms/r1: expected ALLOW, got DENY @ room.rules:5:7")
        #expect(lines[2] == "     false for 'get' @ L5")
        #expect(out.contains("PASS #3 get /databases/(default)/documents/rooms/r1: expected DENY, got DENY @ room.rules:5:"))
        #expect(out.hasSuffix("2 passed, 2 failed.\n") == false)
        #expect(out.hasSuffix("3 passed, 1 failed.\n"))
    }

    @Test func jsonOutputIsTheTestRulesetResponse() throws {
        let (out, _) = RulesCommandLine.test(source: CommandLineTests.roomRules, fileName: "room.rules", suiteJSON: CommandLineTests.suite, json: true)
        let response = try JSON.parse(out)
        let results = try #require(response["testResults"]?.arrayValue)
        #expect(results.count == 4)
        #expect(results[0]["state"] == .string("SUCCESS"))
        #expect(results[0]["functionCalls"]?[0]?["function"] == .string("get"))
        #expect(results[0]["functionCalls"]?[0]?["args"]?[0] == .string("/databases/(default)/documents/members/u1"))
        #expect(results[0]["visitedExpressions"]?[0]?["value"] == .bool(true))
        #expect(results[0]["visitedExpressions"]?[0]?["sourcePosition"]?["line"] == .int(5))
        #expect(results[1]["state"] == .string("FAILURE"))
        #expect(results[1]["expressionReports"]?.arrayValue?.isEmpty == false)
        #expect(results[2]["errorPosition"]?["line"] == .int(5))
        #expect(results[2]["debugMessages"]?[0] == .string("Null value error."))
        #expect(results[3]["debugMessages"]?[0]?.stringValue?.contains("returned undefined") == true)
        #expect(response["issues"] == nil)
    }

    @Test func benchJudgesEachCaseOnTheFirestorePath() throws {
        let (out, status) = RulesCommandLine.bench(source: CommandLineTests.roomRules, fileName: "room.rules",
                                                   suiteJSON: CommandLineTests.suite, iterations: 3, json: true)
        #expect(status == 0)
        let report = try JSON.parse(out)
        #expect(report["file"] == .string("room.rules"))
        #expect(report["iterations"] == .int(3))
        #expect((report["compileMs"]?.doubleValue ?? -1) > 0)
        let cases = try #require(report["cases"]?.arrayValue)
        #expect(cases.count == 4)
        // The verdicts are the evaluator's own, not the expectations: case 2 expects ALLOW but is denied.
        #expect(cases.map { $0["allowed"] } == [.bool(true), .bool(false), .bool(false), .bool(false)])
        #expect(cases[1]["expectation"] == .string("ALLOW"))
        #expect(cases[0]["path"] == .string("/databases/(default)/documents/rooms/r1"))
        for c in cases {
            #expect((c["nsPerDecision"]?.doubleValue ?? 0) > 0)
            #expect((c["nsPerDecisionWithCoverage"]?.doubleValue ?? 0) > 0)
        }
        let (text, _) = RulesCommandLine.bench(source: CommandLineTests.roomRules, fileName: "room.rules",
                                               suiteJSON: CommandLineTests.suite, iterations: 1, json: false)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines[0].hasPrefix("compile room.rules: "))
        #expect(lines[2].hasPrefix("#2 get /databases/(default)/documents/rooms/r1 → DENY (expected ALLOW): "))
    }

    @Test func benchRefusesBrokenRulesAndSuites() {
        let broken = RulesCommandLine.bench(source: "service cloud.firestore { match /x { allow read: if ; } }", fileName: "bad.rules",
                                            suiteJSON: CommandLineTests.suite, iterations: 1, json: false)
        #expect(broken.exitStatus == 1)
        #expect(broken.output.contains("nothing was measured"))
        #expect(RulesCommandLine.bench(source: CommandLineTests.roomRules, fileName: "r", suiteJSON: "{", iterations: 1, json: false).exitStatus == 1)
        let invalid = RulesCommandLine.bench(source: CommandLineTests.roomRules, fileName: "r",
                                             suiteJSON: #"{"testCases": [{"expectation": "ALLOW", "request": {"method": "get"}}]}"#,
                                             iterations: 1, json: false)
        #expect(invalid.exitStatus == 1)
        #expect(invalid.output == "error: test case #1: request.path is required\n")
    }

    @Test func compileErrorsSkipTheTestCases() throws {
        let response = RulesTestRunner.run(source: "service cloud.firestore { match /x { allow read: if ; } }", fileName: "bad.rules",
                                           testSuite: try JSON.parse(CommandLineTests.suite))
        #expect(response["testResults"] == nil)
        #expect(response["issues"]?[0]?["severity"] == .string("ERROR"))
        #expect(response["issues"]?[0]?["sourcePosition"]?["line"] == .int(1))
        let (out, status) = RulesCommandLine.test(source: "service {", fileName: "bad.rules", suiteJSON: CommandLineTests.suite, json: false)
        #expect(status == 1)
        #expect(out.contains("no test case was run"))
    }

    @Test func malformedSuite() {
        #expect(RulesCommandLine.test(source: "", fileName: "f", suiteJSON: "{", json: false).exitStatus == 1)
        #expect(RulesCommandLine.test(source: "", fileName: "f", suiteJSON: "{}", json: false).output.contains("no \"testCases\""))
    }

    @Test func typedValuesAndTimeInSuites() throws {
        let source = rules("""
            match /t/{id} {
              allow create: if request.resource.data.at == request.time && request.resource.data.b is bytes
                && request.resource.data.g is latlng && request.resource.data.at is timestamp;
            }
        """)
        let suite = """
        {"testCases": [{"expectation": "ALLOW", "request": {"auth": null, "path": "/databases/(default)/documents/t/1", "method": "create",
          "time": "2026-01-01T00:00:00.5Z", "resource": {"data": {"at": {"timestampValue": "2026-01-01T00:00:00.500Z"},
          "b": {"bytesValue": "AQI="}, "g": {"geoPointValue": {"latitude": 1.5, "longitude": 2}}}}}}]}
        """
        let (out, status) = RulesCommandLine.test(source: source, fileName: "t.rules", suiteJSON: suite, json: false)
        #expect(status == 0, "\(out)")
    }
}
