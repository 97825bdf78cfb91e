import HearthCore
import Testing
@testable import SecurityRules

/// The cheaper get decision (grpcrules29) against the general paths it stands in for: matching
/// that binds nothing (`Evaluation.matchPositional`, variables read from the path by place) must
/// give every decision, message and trace the binding walk gives, and a map or list visit counted
/// by its storage (`CoverageHints` kinds 3 and 4) must leave the coverage report byte for byte as
/// folding the visit does.
struct GetFastPathTests {
    /// Rules without a recursive wildcard (so matched by position), with nested blocks, a
    /// variable shadowed, a function reading a variable, claims and their absence, and errors.
    static let body = """
        match /users/{uid} {
          function isOwner() { return request.auth != null && request.auth.uid == uid; }
          allow get: if isOwner();
          allow list: if request.auth.uid == uid || uid == 'open';
          match /files/{fileId} {
            allow get: if isOwner() && fileId != 'hidden';
            allow get: if request.auth.token.admin == true;
            allow update: if request.auth.uid == uid && request.resource.data.owner == uid
              && resource.data.n + 1 == request.resource.data.n;
            allow list: if fileId is string && request.auth.uid == uid;
          }
          match /{uid}/{second} {
            allow get: if uid == second;
          }
        }
        match /items/{id} {
          allow list: if id != 'secret' || request.auth.uid == 'admin';
          allow get: if id.size() > 3 && request.auth.uid in ['u1', id];
        }
    """
    /// The same rules, plus a block with a recursive wildcard that no request here reaches: its
    /// program matches by binding walk (`matchSegments`), everything else the same (the block
    /// comes last, so no line of the others moves).
    static let walked = compiled(rules(body + "\n    match /never/{rest=**} { allow read; }\n"))
    static let positional = compiled(rules(body))

    static func list(_ p: String, uid: String?) -> RulesRequest {
        RulesRequest(method: .list, path: Req.path(p), auth: Req.auth(uid), time: Req.time,
                     resource: .map(["data": .map([:])]), query: .map(["orderBy": .map([:])]), listPlaceholder: "__list__")
    }

    static var requests: [(String, RulesRequest)] {
        [
            ("owner get", Req.make(.get, "users/u1", uid: "u1")),
            ("null auth", Req.make(.get, "users/u1")),
            ("wrong uid", Req.make(.get, "users/u1", uid: "u2")),
            ("file owner", Req.make(.get, "users/u1/files/f1", uid: "u1", existing: ["n": .int(1)])),
            ("hidden file", Req.make(.get, "users/u1/files/hidden", uid: "u1")),
            ("admin claim", Req.make(.get, "users/u1/files/hidden", uid: "u2", claims: ["admin": .bool(true)])),
            ("missing claim", Req.make(.get, "users/u1/files/hidden", uid: "u2")),
            ("null auth, claim read", Req.make(.get, "users/u1/files/hidden")),
            ("absent document", Req.make(.get, "users/u1/files/none", uid: "u1")),
            ("update", Req.make(.update, "users/u1/files/f1", uid: "u1", data: ["owner": .string("u1"), "n": .int(2)],
                                existing: ["owner": .string("u1"), "n": .int(1)])),
            ("update, wrong n", Req.make(.update, "users/u1/files/f1", uid: "u1", data: ["owner": .string("u1"), "n": .int(3)],
                                         existing: ["owner": .string("u1"), "n": .int(1)])),
            ("update, no resource", Req.make(.update, "users/u1/files/f1", uid: "u1", data: ["owner": .string("u1"), "n": .int(3)])),
            ("shadowed variable", Req.make(.get, "users/u1/x/x", uid: "u9")),
            ("shadowed, unequal", Req.make(.get, "users/u1/x/y", uid: "u9")),
            ("no match", Req.make(.get, "other/u1", uid: "u1")),
            ("too deep", Req.make(.get, "users/u1/files/f1/more/m", uid: "u1")),
            ("list, placeholder id", list("items/__list__", uid: "u2")),
            ("list, placeholder, admin", list("items/__list__", uid: "admin")),
            ("list of files", list("users/u1/files/__list__", uid: "u1")),
            ("list of files, wrong uid", list("users/u1/files/__list__", uid: "u2")),
            ("list, placeholder uid", list("users/__list__", uid: "u1")),
            ("item, short id", Req.make(.get, "items/ab", uid: "u1")),
            ("item, id as uid", Req.make(.get, "items/abcd", uid: "abcd")),
            ("item, canonically equal id", Req.make(.get, "items/caf\u{E9}x", uid: "cafe\u{301}x")),
            ("item, null auth", Req.make(.get, "items/abcd")),
        ]
    }

    @Test func positionalMatchingIsTheBindingWalk() {
        #expect(Self.positional.program.positionalMatching)
        #expect(!Self.walked.program.positionalMatching)
        for (label, request) in Self.requests {
            for trace in [false, true] {
                let a = Self.positional.evaluate(request, lookup: MapLookup(), trace: trace)
                let b = Self.walked.evaluate(request, lookup: MapLookup(), trace: trace)
                #expect(a.allowed == b.allowed, "\(label)")
                #expect(a.message == b.message, "\(label): \(a.message) / \(b.message)")
                #expect(a.trace.lines == b.trace.lines, "\(label)")
                #expect(a.trace.matches.map(\.pattern) == b.trace.matches.map(\.pattern), "\(label)")
                #expect(a.trace.matches.map(\.bindings) == b.trace.matches.map(\.bindings), "\(label)")
            }
            // And with coverage, both reports the same (the two programs' node ids agree: the
            // extra block is checked last).
            let c1 = RulesCoverage(), c2 = RulesCoverage()
            let a = Self.positional.evaluate(request, lookup: MapLookup(), coverage: c1)
            let b = Self.walked.evaluate(request, lookup: MapLookup(), coverage: c2)
            #expect(a.allowed == b.allowed && a.message == b.message, "\(label), with coverage")
        }
        // The expected decisions themselves, so both paths cannot be wrong alike.
        let expected: [String: Bool] = [
            "owner get": true, "null auth": false, "wrong uid": false, "file owner": true, "hidden file": false,
            "admin claim": true, "missing claim": false, "null auth, claim read": false, "update": true,
            "update, wrong n": false, "update, no resource": false, "shadowed variable": true, "shadowed, unequal": false,
            "no match": false, "list, placeholder id": false, "list, placeholder, admin": true, "list of files": true,
            "list of files, wrong uid": false, "item, short id": false, "item, id as uid": true,
            "item, null auth": false,
        ]
        for (label, request) in Self.requests {
            guard let want = expected[label] else { continue }
            #expect(Self.positional.evaluate(request, lookup: MapLookup()).allowed == want, "\(label)")
        }
    }

    @Test func everyBlockKnowsItsVariablesPlaces() {
        func walk(_ b: CheckedMatch) {
            #expect(b.positions?.count == b.allVariableNames.count)
            b.children.forEach(walk)
        }
        Self.positional.program.matches.forEach(walk)
        // Below a recursive wildcard no place is fixed.
        let r = compiled(rules("match /a/{rest=**} { match /b/{c} { allow read; } }"))
        #expect(r.program.matches[0].positions != nil)  // `database` alone
        #expect(r.program.matches[0].children[0].positions == nil)
        #expect(r.program.matches[0].children[0].children[0].positions == nil)
        #expect(!r.program.positionalMatching)
    }

    static let shippedSource = CoverageCountedTests.shippedSource

    /// A get of users/u1/files/f1 on the shipped rules with `auth` as `request.auth`.
    static func get(_ auth: RulesValue?, uid: String = "u1") -> RulesRequest {
        RulesRequest(method: .get, path: ["databases", "(default)", "documents", "users", uid, "files", "f1"], auth: auth,
                     time: Req.time, resource: .map(["data": .map(["ownerUid": .string(uid)]), "id": .string("f1")]))
    }

    static func auth(_ uid: String, _ claims: [(String, RulesValue)]) -> RulesValue {
        .map(["uid": .string(uid), "token": .map(RulesMap(claims))])
    }

    /// The same `request.auth` storage request after request (Firestore's token cache hands out
    /// one value per token) is counted by the evaluator, and the report is the folding one's.
    @Test func aRepeatedAuthMapIsCountedByItsStorage() throws {
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        let kept = Self.auth("u1", [("email", .string("a@b.c")), ("iat", .int(1)), ("firebase", .map(["p": .list([.string("x")])]))])
        let pair = CoverageCountedTests.Pair()
        for _ in 0..<70 { pair.judge(shipped, Self.get(kept)) }
        pair.compare(shipped, "warm")
        let hints = try #require(pair.counting.hints(for: shipped))
        var e = Evaluation(program: shipped.program, request: Self.get(kept), accessor: LookupAccessor(lookup: MapLookup()), hints: hints)
        let granted = e.run()
        #expect(granted)
        #expect(e.visited.isEmpty, "every visit of a repeated get is counted, the auth map's too: \(e.visited.map(\.node))")
        // A map equal to it but built apart is folded (compared), not counted.
        let apart = Self.auth("u1", [("email", .string("a@b.c")), ("iat", .int(1)), ("firebase", .map(["p": .list([.string("x")])]))])
        var f = Evaluation(program: shipped.program, request: Self.get(apart), accessor: LookupAccessor(lookup: MapLookup()), hints: hints)
        let grantedApart = f.run()
        #expect(grantedApart)
        #expect(!f.visited.isEmpty)
        pair.compare(shipped, "counted")
    }

    /// Gets whose `request.auth` changes between requests in every way the offer must notice:
    /// signed out, another uid, a claim missing or added, maps equal but built apart, strings
    /// with two spellings (which must never be offered), floats (0.0 equals -0.0), an empty
    /// token, lists — and the same storages again after each. The reports must stay the folding
    /// collector's, byte for byte, at every step.
    @Test func authMapsThatChangeReportAsFolded() {
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        let pair = CoverageCountedTests.Pair()
        let plain = Self.auth("u1", [("email", .string("a@b.c"))])
        let variants: [(String, RulesValue?, String)] = [
            ("plain", plain, "u1"),
            ("signed out", nil, "u1"),
            ("wrong uid", Self.auth("u2", [("email", .string("a@b.c"))]), "u1"),
            ("missing claim", .map(["uid": .string("u1")]), "u1"),
            ("added claim", Self.auth("u1", [("email", .string("a@b.c")), ("admin", .bool(true))]), "u1"),
            ("built apart", Self.auth("u1", [("email", .string("a@b.c"))]), "u1"),
            ("precomposed", Self.auth("u1", [("name", .string("caf\u{E9}"))]), "u1"),
            ("decomposed", Self.auth("u1", [("name", .string("cafe\u{301}"))]), "u1"),
            ("kelvin", Self.auth("u1", [("name", .string("\u{212A}"))]), "u1"),
            ("K", Self.auth("u1", [("name", .string("K"))]), "u1"),
            ("zero", Self.auth("u1", [("score", .float(0.0))]), "u1"),
            ("minus zero", Self.auth("u1", [("score", .float(-0.0))]), "u1"),
            ("empty token", .map(["uid": .string("u1"), "token": .map([:])]), "u1"),
            ("list claim", Self.auth("u1", [("groups", .list([.string("a"), .int(2)]))]), "u1"),
            ("uid with K", Self.auth("uK", [("email", .string("a@b.c"))]), "uK"),
        ]
        for (label, auth, uid) in variants {
            // Enough of each to publish hints (a fold every 64), then the others in turn.
            for _ in 0..<80 { pair.judge(shipped, Self.get(auth, uid: uid)) }
            pair.compare(shipped, label)
            for (_, other, otherUid) in variants { pair.judge(shipped, Self.get(other, uid: otherUid)) }
            for _ in 0..<3 { pair.judge(shipped, Self.get(auth, uid: uid)) }
            pair.compare(shipped, "\(label), after the others")
        }
        // Decisions as the rules say.
        #expect(shipped.evaluate(Self.get(plain), lookup: MapLookup(), coverage: pair.counting).allowed)
        #expect(!shipped.evaluate(Self.get(nil), lookup: MapLookup(), coverage: pair.counting).allowed)
        #expect(!shipped.evaluate(Self.get(Self.auth("u2", [])), lookup: MapLookup(), coverage: pair.counting).allowed)
        #expect(!shipped.evaluate(Self.get(.map(["token": .map([:])])), lookup: MapLookup(), coverage: pair.counting).allowed)
    }

    @Test func containersOfferedOnlyWithOneSpelling() {
        #expect(CoverageHints.offerable(container: .map(["a": .string("x"), "b": .list([.int(1), .null, .bool(true)])])))
        #expect(!CoverageHints.offerable(container: .map([:])))
        #expect(!CoverageHints.offerable(container: .list([])))
        #expect(!CoverageHints.offerable(container: .map(["a": .string("caf\u{E9}")])))
        #expect(!CoverageHints.offerable(container: .map(["K": .int(1)])))
        #expect(!CoverageHints.offerable(container: .list([.float(1)])))
        #expect(!CoverageHints.offerable(container: .list([.map(["x": .list([.string("a;b")])])])))
        #expect(!CoverageHints.offerable(container: .list(Array(repeating: .int(1), count: 65))))
        #expect(CoverageHints.offerable(container: .list(Array(repeating: .int(1), count: 64))))
        #expect(!CoverageHints.offerable(container: .string("x")))
    }
}
