@testable import SecurityRules

/// Differential: the rules evaluator with recording (what traces, coverage and denials use) and
/// without it (the fast path every allowed request takes: no per-node bookkeeping, fused string
/// chains and `keys().has…`). Both must reach the same decision, and every allow statement tried
/// must end with the same value or the same error.
extension FuzzTargets {
    /// A whole rules file when the input names a service, else an expression judged inside
    /// `match /databases/{database}/documents/{document=**}` for every method.
    static func rulesEvaluation(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let text = text(bytes)
        let source = text.contains("service") ? text : """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                function f(x) { return x; }
                match /{document=**} {
                  allow read, write: if \(text);
                  allow get: if f(\(text)) == true || request.auth.uid == 'u1';
                }
              }
            }
            """
        guard let ruleset = Ruleset.compile(source, fileName: "fuzz.rules").ruleset else { return }
        for request in RulesFuzzFixtures.requests {
            var recorded = Evaluation(program: ruleset.program, request: request, accessor: RulesFuzzFixtures.accessor, recording: true)
            var fast = Evaluation(program: ruleset.program, request: request, accessor: RulesFuzzFixtures.accessor, recording: false)
            let a = recorded.run(), b = fast.run()
            guard a == b else {
                throw FuzzFailure("\(request.method) \(request.path.joined(separator: "/")): recorded \(a ? "allows" : "denies"), fast \(b ? "allows" : "denies")")
            }
            FuzzChecks.count("rules-eval")
            guard recorded.attempts.count == fast.attempts.count else {
                throw FuzzFailure("\(request.method): \(recorded.attempts.count) allows tried with recording, \(fast.attempts.count) without")
            }
            for (x, y) in zip(recorded.attempts, fast.attempts) {
                switch (x.result, y.result) {
                case (.value(let v)?, .value(let w)?) where v == w: continue
                case (.error(let e)?, .error(let f)?) where e.message == f.message && e.fatal == f.fatal: continue
                case (nil, nil): continue
                default:
                    throw FuzzFailure("\(request.method) \(request.path.joined(separator: "/")): recorded \(String(describing: x.result)), fast \(String(describing: y.result))")
                }
            }
        }
    }
}

/// The requests and documents the rules-eval target judges with: signed in and out, with data
/// of every type, so expressions reach strings, lists, maps, paths, timestamps and lookups.
enum RulesFuzzFixtures {
    static let time = RulesValue.timestamp(seconds: 1_767_225_600, nanos: 0)

    static func path(_ p: String) -> [String] { ["databases", "(default)", "documents"] + p.split(separator: "/").map(String.init) }

    static func document(_ p: String, _ data: [String: RulesValue]) -> RulesValue {
        .map(["data": .map(RulesMap(data)), "id": .string(path(p).last!), "__name__": .path(path(p))])
    }

    static let data: [String: RulesValue] = [
        "name": .string("Ada"), "n": .int(3), "x": .float(2.5), "ok": .bool(true), "none": .null,
        "tags": .list([.string("a"), .string("b"), .int(1)]),
        "nested": .map(RulesMap(["k": .string("v"), "deep": .map(RulesMap(["z": .int(-1)]))])),
        "owner": .string("u1"), "at": time, "ref": .path(path("users/u1")),
    ]

    static let auth = RulesValue.map(["uid": .string("u1"), "token": .map(RulesMap([
        "sub": .string("u1"), "email": .string("ada@example.com"), "email_verified": .bool(true),
        "admin": .bool(true), "n": .int(2), "firebase": .map(RulesMap(["sign_in_provider": .string("password")])),
    ]))])

    static let requests: [RulesRequest] = [
        RulesRequest(method: .get, path: path("users/u1"), auth: auth, time: time, resource: document("users/u1", data)),
        RulesRequest(method: .get, path: path("users/u2"), auth: nil, time: time),
        RulesRequest(method: .create, path: path("posts/p1"), auth: auth, time: time, requestResource: document("posts/p1", data)),
        RulesRequest(method: .update, path: path("posts/p1"), auth: auth, time: time,
                     requestResource: document("posts/p1", data.merging(["n": .int(4)]) { $1 }), resource: document("posts/p1", data)),
        RulesRequest(method: .delete, path: path("a/b/c/d"), auth: auth, time: time, resource: document("a/b/c/d", [:])),
        RulesRequest(method: .list, path: path("posts/{any}"), auth: auth, time: time, resource: document("posts/{any}", data),
                     query: .map(["limit": .int(10), "offset": .int(0), "orderBy": .map(["name": .string("ASC")])])),
    ]

    struct Lookup: RulesDocumentLookup {
        func get(_ p: [String]) -> RulesValue? {
            p.last == "u1" || p.last == "p1" ? RulesFuzzFixtures.document(p.dropFirst(3).joined(separator: "/"), RulesFuzzFixtures.data) : nil
        }
        func getAfter(_ p: [String]) -> RulesValue? { get(p) }
    }

    static var accessor: LookupAccessor { LookupAccessor(lookup: Lookup()) }
}
