// Runs Firebase Rules API test suites (`projects.test`): the same TestSuite in, the same
// TestRulesetResponse out, so suites written for Google's API run offline unchanged.
//
// Related: https://firebase.google.com/docs/reference/rules/rest/v1/projects/test

import Foundation
import HearthCore

/// Runs `TestSuite` JSON against a rules source.
public enum RulesTestRunner {
    /// Runs a Firebase Rules API `TestSuite` JSON against `source` and returns a `TestRulesetResponse`
    /// JSON (`issues`, and `testResults` when the source compiles), shaped as `projects.test` answers.
    public static func run(source: String, fileName: String, testSuite: JSON) -> JSON {
        run(source: source, fileName: fileName, testSuite: testSuite, now: Date()).response
    }

    /// One test case's outcome, with what the command line prints.
    struct CaseOutcome {
        var passed: Bool
        var summary: String
        var details: [String]
        var json: JSON
    }

    static func run(source: String, fileName: String, testSuite: JSON, now: Date) -> (response: JSON, issues: [RulesIssue], cases: [CaseOutcome]?) {
        let (ruleset, issues) = Ruleset.compile(source, fileName: fileName)
        var members: [(String, JSON)] = []
        if !issues.isEmpty { members.append(("issues", .array(issues.map(issueJSON)))) }
        guard let ruleset else { return (.object(JSONObject(members)), issues, nil) }
        let cases = (testSuite["testCases"]?.arrayValue ?? []).enumerated().map { i, c in
            runCase(c, index: i + 1, ruleset: ruleset, now: now)
        }
        members.append(("testResults", .array(cases.map(\.json))))
        return (.object(JSONObject(members)), issues, cases)
    }

    static func issueJSON(_ issue: RulesIssue) -> JSON {
        .object(JSONObject([
            ("sourcePosition", .object(JSONObject([
                ("fileName", .string(issue.fileName)), ("line", .int(Int64(issue.line))), ("column", .int(Int64(issue.column))),
            ]))),
            ("description", .string(issue.description)),
            ("severity", .string(issue.severity.rawValue)),
        ]))
    }

    // MARK: One case

    /// A test case turned into what the evaluator judges.
    struct PreparedCase {
        var request: RulesRequest
        var mocks: FunctionMocks
        var expectation: String
    }

    /// The request and mocks of a test case, or why the case is invalid.
    static func prepare(_ testCase: JSON, now: Date) -> Result<PreparedCase, CaseError> {
        let expectation = testCase["expectation"]?.stringValue ?? "EXPECTATION_UNSPECIFIED"
        let req = testCase["request"] ?? .object([:])
        let method = (req["method"]?.stringValue).flatMap { RulesMethod(rawValue: $0.lowercased()) }
        var path = RulesValue.pathSegments(req["path"]?.stringValue ?? "")
        // A Cloud Storage list is judged on its prefix; `users/u1/` ends in an empty segment, as the
        // Storage emulator splits it (so `match /users/{uid}/{file}` covers listing users/u1/).
        if method == .list, req["path"]?.stringValue?.hasSuffix("/") == true, path.first == "b" { path.append("") }
        guard let method else { return .failure(CaseError("request.method must be one of get, list, create, update, delete")) }
        guard !path.isEmpty else { return .failure(CaseError("request.path is required")) }
        guard expectation == "ALLOW" || expectation == "DENY" else { return .failure(CaseError("expectation must be ALLOW or DENY")) }

        var time: RulesValue = timestamp(now)
        if let t = req["time"] {
            switch RulesValue(json: t) {
            case .string(let s):
                guard let p = Timestamps.parse(s) else { return .failure(CaseError("request.time is not an RFC 3339 timestamp")) }
                time = .timestamp(seconds: p.seconds, nanos: p.nanos)
            case .timestamp(let s, let n): time = .timestamp(seconds: s, nanos: n)
            default: return .failure(CaseError("request.time is not an RFC 3339 timestamp"))
            }
        }
        var auth: RulesValue?
        if let a = req["auth"], a != .null {
            guard case .map(var m) = RulesValue(json: a) else { return .failure(CaseError("request.auth must be an object or null")) }
            if m["token"] == nil { m["token"] = .map([:]) }
            auth = .map(m)
        }
        let request = RulesRequest(method: method, path: path, auth: auth, time: time,
                                   requestResource: req["resource"].map { resource($0, path: path) },
                                   resource: testCase["resource"].flatMap { $0 == .null ? nil : resource($0, path: path) },
                                   query: req["query"].map(RulesValue.init(json:)))
        return .success(PreparedCase(request: request, mocks: FunctionMocks(testCase["functionMocks"]?.arrayValue ?? []),
                                     expectation: expectation))
    }

    /// Why a test case cannot run.
    struct CaseError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    private static func runCase(_ testCase: JSON, index: Int, ruleset: Ruleset, now: Date) -> CaseOutcome {
        var debug: [String] = []
        let prepared: PreparedCase
        switch prepare(testCase, now: now) {
        case .success(let p): prepared = p
        case .failure(let e):
            let json = JSON.object(JSONObject([("state", .string("FAILURE")), ("debugMessages", .array([.string(e.message)]))]))
            return CaseOutcome(passed: false, summary: "#\(index) invalid test case: \(e.message)", details: [], json: json)
        }
        let (request, mocks, expectation) = (prepared.request, prepared.mocks, prepared.expectation)
        let method = request.method, path = request.path
        let (decision, evaluation) = ruleset.evaluate(request, accessor: mocks, coverage: nil, recording: true)
        // Debug builds (the test suites) also judge the case the way Firestore does, without
        // recording, and insist on the same verdict.
        assert(ruleset.evaluate(request, accessor: mocks, coverage: nil).decision.allowed == decision.allowed,
               "fast and recorded evaluations disagree on test case #\(index)")
        debug.append(contentsOf: decision.trace.debugMessages)
        for a in decision.trace.allows { if case .error(let e) = a.outcome { debug.append(e) } }
        let passed = decision.allowed == (expectation == "ALLOW")

        var members: [(String, JSON)] = [("state", .string(passed ? "SUCCESS" : "FAILURE"))]
        if !debug.isEmpty { members.append(("debugMessages", .array(debug.map { .string($0) }))) }
        let position = errorPosition(evaluation, ruleset: ruleset, denied: !decision.allowed, failed: !passed)
        if let position { members.append(("errorPosition", ExpressionReports.position(ruleset, position))) }
        if !evaluation.functionCalls.isEmpty {
            members.append(("functionCalls", .array(evaluation.functionCalls.map { name, args in
                .object(JSONObject([("function", .string(name)), ("args", .array(args.map(\.json)))]))
            })))
        }
        let visited = evaluation.attempts.map { a -> JSON in
            let r = a.allow.condition.map { ruleset.program.nodes[Int($0.id)].range } ?? a.allow.range
            var m: [(String, JSON)] = [("sourcePosition", ExpressionReports.position(ruleset, r))]
            if case .value(let v)? = a.result { m.append(("value", v.json)) }
            return .object(JSONObject(m))
        }
        if !visited.isEmpty { members.append(("visitedExpressions", .array(visited))) }
        let level = testCase["expressionReportLevel"]?.stringValue ?? "NONE"
        if level == "FULL" || level == "VISITED" {
            var table: [Int32: [String: (JSON, Int)]] = [:]
            for visit in evaluation.visited {
                let id = visit.node
                let (key, json): (String, JSON) = switch visit.traced {
                case .value(let v): (v.rendered, v.json)
                case .error(let e): ("error:" + e.message, .object(JSONObject([("error", .string(e.message))])))
                }
                table[id, default: [:]][key, default: (json, 0)].1 += 1
            }
            let reports = ExpressionReports.build(ruleset, visitedOnly: level == "VISITED") { id in
                (table[id] ?? [:]).sorted { $0.key < $1.key }.map { _, entry in
                    .object(JSONObject([("value", entry.0), ("count", .int(Int64(entry.1)))]))
                }
            }
            members.append(("expressionReports", .array(reports)))
        }

        let verdict = decision.allowed ? "ALLOW" : "DENY"
        var summary = "#\(index) \(method.rawValue) /\(path.joined(separator: "/")): expected \(expectation), got \(verdict)"
        if let position { summary += " @ \(ruleset.fileName):\(position.start.line):\(position.start.column)" }
        var details: [String] = []
        if !passed {
            details = decision.allowed ? decision.trace.lines : decision.message.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        return CaseOutcome(passed: passed, summary: summary, details: details, json: .object(JSONObject(members)))
    }

    /// The principal error's position; for a failed case without errors, the first allow that was false.
    private static func errorPosition(_ e: Evaluation, ruleset: Ruleset, denied: Bool, failed: Bool) -> SourceRange? {
        for a in e.attempts {
            if case .error(let err)? = a.result, err.nodeID >= 0 { return ruleset.program.nodes[Int(err.nodeID)].range }
        }
        if failed, denied, let first = e.attempts.first { return first.allow.range }
        return nil
    }

    private static func timestamp(_ date: Date) -> RulesValue {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let s = Timestamps.floorDiv(micros, 1_000_000)
        return .timestamp(seconds: s, nanos: Int32((micros - s * 1_000_000) * 1000))
    }

    /// A resource from test JSON: `{data: {...}}` plus `id` and `__name__` derived from the path.
    static func resource(_ json: JSON, path: [String]) -> RulesValue {
        guard case .map(var m) = RulesValue(json: json) else { return RulesValue(json: json) }
        if m["id"] == nil, let last = path.last { m["id"] = .string(last) }
        if m["__name__"] == nil { m["__name__"] = .path(path) }
        if m["data"] == nil { m["data"] = .map([:]) }
        return .map(m)
    }
}

/// `functionMocks` as a document accessor.
struct FunctionMocks: DocumentAccessor {
    struct Mock {
        var function: String
        var args: [JSON?]   // nil: anyValue
        var result: JSON?   // nil: undefined
    }

    let mocks: [Mock]

    init(_ json: [JSON]) {
        mocks = json.compactMap { m in
            guard let f = m["function"]?.stringValue else { return nil }
            let args = (m["args"]?.arrayValue ?? []).map { a -> JSON? in a["exactValue"] }
            return Mock(function: f, args: args, result: m["result"]?["value"])
        }
    }

    private func find(_ function: String, _ path: [String]) -> Mock? {
        let slashed = "/" + path.joined(separator: "/")
        return mocks.first { m in
            guard m.function == function, m.args.count == 1 else { return false }
            guard let exact = m.args[0] else { return true }
            guard let s = exact.stringValue else { return false }
            return s == slashed || "/" + RulesValue.pathSegments(s).joined(separator: "/") == slashed
        }
    }

    func access(_ function: Builtin, _ path: [String]) -> Result<RulesValue, EvalError> {
        let name = function.rawValue
        let isExists = function == .exists || function == .existsAfter || function == .firestoreExists
        // An exists() without its own mock is answered from a get() mock; getAfter() from get().
        let candidates: [String] = switch function {
        case .exists: ["exists", "get"]
        case .firestoreExists: ["firestore.exists", "firestore.get"]
        case .firestoreGet: ["firestore.get"]
        case .existsAfter: ["existsAfter", "exists", "getAfter", "get"]
        case .getAfter: ["getAfter", "get"]
        default: ["get"]
        }
        for c in candidates {
            guard let mock = find(c, path) else { continue }
            guard let result = mock.result else {
                return .failure(EvalError("Function mock for \(c)(/\(path.joined(separator: "/"))) returned undefined."))
            }
            let isGetMock = c == "get" || c == "getAfter" || c == "firestore.get"
            if isExists {
                if isGetMock { return .success(.bool(result != .null)) }
                return .success(RulesValue(json: result))
            }
            return .success(result == .null ? .null : RulesTestRunner.resource(result, path: path))
        }
        return .failure(EvalError("Function not found error: Name: [\(name)]. No function mock matches \(name)(/\(path.joined(separator: "/")))."))
    }
}
