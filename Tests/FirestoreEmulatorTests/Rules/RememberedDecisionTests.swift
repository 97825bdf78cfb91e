import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// Remembered rules decisions (`DecisionMemo`, docs/rules.md) through Firestore's reads: a rules
/// change, another caller, another path and another token (an expired one included) each take a
/// decision of their own, and the coverage report counts every request as if each were evaluated.
@Suite struct RememberedDecisionTests {
    static let source = RulesEnforcementTests.rules("""
        match /users/{uid}/files/{fileId} {
          allow read: if request.auth != null && request.auth.uid == uid;
        }
    """)

    /// Hits and misses of the project's remembered decisions.
    static func stats(_ h: TestHarness) -> [Int] {
        guard let s = h.service.rules.inForce(for: h.project, database: "(default)").ruleset?.rememberedDecisions else { return [] }
        return [s.hits, s.misses]
    }

    /// An unsigned test token for `uid` whose `iat` and `exp` are given (`TestHarness.token`'s shape).
    static func bearer(_ uid: String, iat: Int64 = 0, exp: Int64) -> TestHarness.As {
        let header = Data(#"{"alg":"none","type":"JWT"}"#.utf8)
        let claims: [(String, JSON)] = [("sub", .string(uid)), ("user_id", .string(uid)), ("iat", .int(iat)), ("exp", .int(exp)),
                                        ("firebase", .object(["sign_in_provider": .string("custom"), "identities": .object([:])]))]
        let payload = Data(JSON.object(JSONObject(claims)).serialized().utf8)
        return .header("Bearer " + TestHarness.base64url(header) + "." + TestHarness.base64url(payload) + ".")
    }

    @Test func eachKeyTakesItsOwnDecision() throws {
        let h = try TestHarness(rules: Self.source)
        h.put("users/u1/files/a", ["n": int(1)])
        h.put("users/u1/files/b", ["n": int(2)])
        h.put("users/u2/files/a", ["n": int(3)])
        #expect(h.service.rules.inForce(for: h.project, database: "(default)").ruleset?.remembers(.get) == true)

        #expect(h.call("GET", h.api("/users/u1/files/a"), as: .user("u1")).status == 200)
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: .user("u1")).status == 200)
        #expect(Self.stats(h) == [1, 1])
        // Another caller at the same path, and nobody.
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: .user("u2")).status == 403)
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: .anonymous).status == 403)
        // Another path: another user's folder, another document of one's own.
        #expect(h.call("GET", h.api("/users/u2/files/a"), as: .user("u1")).status == 403)
        #expect(h.call("GET", h.api("/users/u1/files/b"), as: .user("u1")).status == 200)
        #expect(Self.stats(h) == [1, 5])
        // Each again, answered as it was decided.
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: .user("u2")).status == 403)
        #expect(h.call("GET", h.api("/users/u2/files/a"), as: .user("u1")).status == 403)
        #expect(h.call("GET", h.api("/users/u1/files/b"), as: .user("u1")).status == 200)
        #expect(Self.stats(h) == [4, 5])
        // A denial's message is the evaluation's.
        let denied = h.call("GET", h.api("/users/u1/files/a"), as: .user("u2"))
        #expect(denied.json["error"]?["message"]?.stringValue?.contains("false for 'get' @ L") == true)

        // batchGet judges each document through the same memo.
        let names: JSON = .object(["documents": .array([.string(h.root + "/users/u1/files/a"), .string(h.root + "/users/u1/files/b")])])
        #expect(h.call("POST", h.api(":batchGet"), names, as: .user("u1")).status == 200)
        #expect(h.call("POST", h.api(":batchGet"), names, as: .user("u2")).status == 403)
        #expect(Self.stats(h)[1] == 5)
    }

    @Test func anotherTokenOfTheSameUserIsDecidedAgain() throws {
        let h = try TestHarness(rules: Self.source)
        h.put("users/u1/files/a", ["n": int(1)])
        let now = Int64(1_767_323_045)  // the harness's frozen clock, 2026-01-02T03:04:05Z
        let fresh = Self.bearer("u1", exp: now + 3600)
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: fresh).status == 200)
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: fresh).status == 200)
        #expect(Self.stats(h) == [1, 1])
        // Past its expiry: the Firestore emulator takes the token as decoded (it never checks
        // expiry); its claims differ, so it is judged afresh, not answered from the fresh token's entry.
        let expired = Self.bearer("u1", exp: now - 60)
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: expired).status == 200)
        #expect(Self.stats(h) == [1, 2])
        // The fresh token's entry still answers it.
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: fresh).status == 200)
        #expect(Self.stats(h) == [2, 2])
    }

    @Test func aRulesChangeForgetsEveryDecision() throws {
        let h = try TestHarness(rules: Self.source)
        h.put("users/u1/files/a", ["n": int(1)])
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: .user("u1")).status == 200)
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: .user("u1")).status == 200)
        let put = h.call("PUT", "/emulator/v1/projects/\(h.project):securityRules", .object(["rules": .object(["files": .array([
            .object(["name": .string("firestore.rules"), "content": .string(RulesEnforcementTests.rules("""
                match /users/{uid}/files/{fileId} { allow read: if request.auth != null && request.auth.uid == 'admin'; }
            """))]),
        ])])]), as: .anonymous)
        #expect(put.status == 200)
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: .user("u1")).status == 403)
        #expect(h.call("GET", h.api("/users/u1/files/a"), as: .user("admin")).status == 200)
        #expect(Self.stats(h) == [0, 2])
    }

    @Test func coverageCountsEveryRequest() throws {
        let h = try TestHarness(rules: Self.source)
        h.put("users/u1/files/a", ["n": int(1)])
        for _ in 0..<5 { #expect(h.call("GET", h.api("/users/u1/files/a"), as: .user("u1")).status == 200) }
        for _ in 0..<3 { #expect(h.call("GET", h.api("/users/u1/files/a"), as: .user("u2")).status == 403) }
        #expect(Self.stats(h) == [6, 2])
        let report = h.call("GET", "/emulator/v1/projects/\(h.project):ruleCoverage", as: .anonymous).json
        func counts(_ text: String) -> [String: Int64] {
            var out: [String: Int64] = [:]
            func walk(_ entries: [JSON]) {
                for e in entries {
                    if let pos = e["sourcePosition"], let start = pos["currentOffset"]?.intValue, let end = pos["endOffset"]?.intValue,
                       String(decoding: Array(Self.source.utf8)[Int(start)..<Int(end)], as: UTF8.self) == text {
                        for v in e["values"]?.arrayValue ?? [] { out[v["value"]?.serialized() ?? "?"] = v["count"]?.intValue }
                    }
                    walk(e["children"]?.arrayValue ?? [])
                }
            }
            walk(report["report"]?.arrayValue ?? [])
            return out
        }
        #expect(counts("request.auth.uid == uid") == ["true": 5, "false": 3])
        #expect(counts("request.auth != null") == ["true": 8])
        #expect(counts("request.auth.uid") == ["\"u1\"": 5, "\"u2\"": 3])
    }
}
