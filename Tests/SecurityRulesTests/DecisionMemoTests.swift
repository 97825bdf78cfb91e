import HearthCore
import Testing
@testable import SecurityRules

/// Remembered decisions (`DecisionMemo`): which methods the analysis lets be remembered, and that a
/// remembered decision is the one an evaluation gives — same verdict, message and coverage report.
struct DecisionMemoTests {
    /// Hits and misses of `r`'s remembered decisions.
    static func counts(_ r: Ruleset) -> [Int] { [r.rememberedDecisions.hits, r.rememberedDecisions.misses] }
    /// The get rule of `body`, in a block of its own, with the functions given.
    static func getRule(_ condition: String, functions: String = "") -> Ruleset {
        compiled(rules("""
            match /users/{uid}/files/{fileId} {
              \(functions)
              allow get: if \(condition);
              allow create: if request.resource.data.owner == uid;
            }
        """))
    }

    @Test("conditions reading only auth, method, path, wildcards and constants are remembered")
    func pureConditions() {
        let pure = [
            "request.auth != null && request.auth.uid == uid",
            "request.auth.token.admin == true || fileId.size() > 3",
            "request.method == 'get' && request.path[3] == 'users'",
            "database == '(default)' && uid in ['a', 'b']",
            "request.auth.uid.matches('u[0-9]+') && debug(uid) == uid",
            "path('/databases/' + database + '/documents/users/' + uid) == /databases/$(database)/documents/users/$(uid)",
            "isOwner()",
            "owns(uid)",
            "true",
        ]
        let functions = """
            function isOwner() { return request.auth != null && request.auth.uid == uid; }
            function owns(u) { let me = request.auth.uid; return me == u; }
        """
        for c in pure {
            let r = Self.getRule(c, functions: functions)
            #expect(r.remembers(.get), "\(c)")
            // create reads request.resource: never remembered.
            #expect(!r.remembers(.create), "\(c)")
        }
        // An allow without a condition, and a method no allow covers.
        let bare = compiled(rules("match /a/{b} { allow get; }"))
        #expect(bare.remembers(.get) && bare.remembers(.list) && bare.remembers(.update))
    }

    @Test("anything else read makes the method evaluated every time")
    func impureConditions() {
        let impure = [
            "request.time < timestamp.date(2030, 1, 1)",
            "resource.data.owner == request.auth.uid",
            "resource == null",
            "request.resource == null",
            "request.query.limit <= 10",
            "'resource' in request",
            "request['auth'] != null",
            "get(/databases/$(database)/documents/users/$(uid)).data.open == true",
            "exists(/databases/$(database)/documents/users/$(uid))",
            "getAfter(/databases/$(database)/documents/users/$(uid)) != null",
            "existsAfter(/databases/$(database)/documents/users/$(uid))",
            // Through a function, a nested call, a let, an argument.
            "fresh()",
            "outer()",
            "withLet()",
            "owns(resource.data.owner)",
            "request.auth.uid == uid && (fileId == 'x' ? true : resource.data.open)",
            "[request.time][0] != null",
            "{'t': request.time}.t != null",
        ]
        let functions = """
            function fresh() { return request.time > timestamp.date(2020, 1, 1); }
            function outer() { return request.auth != null && fresh(); }
            function withLet() { let d = resource.data; return d.owner == request.auth.uid; }
            function owns(u) { return u == request.auth.uid; }
        """
        for c in impure {
            let r = Self.getRule(c, functions: functions)
            #expect(!r.remembers(.get), "\(c)")
        }
        // One impure allow among pure ones decides for the whole method, in any block.
        let mixed = compiled(rules("""
            match /a/{b} { allow get: if request.auth != null; }
            match /{path=**} { allow read: if resource.data.public == true; }
        """))
        #expect(!mixed.remembers(.get) && !mixed.remembers(.list))
        #expect(mixed.remembers(.create))
    }

    @Test("a remembered decision is the evaluated one, allow and deny, for each key")
    func sameDecisions() {
        let body = """
            match /users/{uid}/files/{fileId} {
              function isOwner() { return request.auth != null && request.auth.uid == uid; }
              allow read: if isOwner() && fileId != 'hidden';
              allow get: if request.auth.token.admin == true;
            }
        """
        let memo = compiled(rules(body))
        let (plainOpt, _) = Ruleset.compile(rules(body), fileName: "test.rules", memoize: false)
        let plain = plainOpt!
        #expect(memo.remembers(.get) && !plain.remembers(.get))
        let requests = [
            Req.make(.get, "users/u1/files/f1", uid: "u1"),
            Req.make(.get, "users/u1/files/f1", uid: "u2"),
            Req.make(.get, "users/u1/files/f1"),
            Req.make(.get, "users/u1/files/hidden", uid: "u1"),
            Req.make(.get, "users/u1/files/hidden", uid: "u2", claims: ["admin": .bool(true)]),
            Req.make(.get, "users/u1/files/hidden", uid: "u2", claims: ["admin": .bool(false)]),
            Req.make(.get, "users/u2/files/f1", uid: "u1"),
            Req.make(.get, "users/u2/files/f1", uid: "u2"),
            Req.make(.get, "other/x", uid: "u1"),
        ]
        for round in 0..<3 {
            for (i, r) in requests.enumerated() {
                let a = memo.evaluate(r, lookup: MapLookup()), b = plain.evaluate(r, lookup: MapLookup())
                #expect(a.allowed == b.allowed, "request \(i), round \(round)")
                #expect(a.message == b.message, "request \(i), round \(round)")
            }
        }
        let stats = memo.rememberedDecisions
        #expect(stats.misses == requests.count)
        #expect(stats.hits == 2 * requests.count)
        #expect(Self.counts(plain) == [0, 0])
    }

    @Test("another caller, path, method or claim is a fresh decision")
    func keys() {
        let r = compiled(rules("""
            match /users/{uid}/files/{fileId} {
              allow get, list: if request.auth.uid == uid || request.auth.token.get('role', '') == 'reader';
            }
        """))
        #expect(r.evaluate(Req.make(.get, "users/u1/files/f", uid: "u1"), lookup: MapLookup()).allowed)
        #expect(Self.counts(r) == [0, 1])
        // Another user at the same path: denied, not u1's allow.
        #expect(!r.evaluate(Req.make(.get, "users/u1/files/f", uid: "u2"), lookup: MapLookup()).allowed)
        // The same uid with another claim (another token): its own decision.
        #expect(r.evaluate(Req.make(.get, "users/u1/files/f", uid: "u2", claims: ["role": .string("reader")]), lookup: MapLookup()).allowed)
        #expect(!r.evaluate(Req.make(.get, "users/u1/files/f", uid: "u2", claims: ["role": .string("writer")]), lookup: MapLookup()).allowed)
        // Signed out.
        #expect(!r.evaluate(Req.make(.get, "users/u1/files/f"), lookup: MapLookup()).allowed)
        // Another path, another method.
        #expect(!r.evaluate(Req.make(.get, "users/u3/files/f", uid: "u1"), lookup: MapLookup()).allowed)
        #expect(r.evaluate(Req.make(.list, "users/u1/files/f", uid: "u1"), lookup: MapLookup()).allowed)
        #expect(Self.counts(r) == [0, 7])
        // And again: each remembered as it was decided.
        #expect(!r.evaluate(Req.make(.get, "users/u1/files/f", uid: "u2", claims: ["role": .string("writer")]), lookup: MapLookup()).allowed)
        #expect(r.evaluate(Req.make(.get, "users/u1/files/f", uid: "u1"), lookup: MapLookup()).allowed)
        #expect(Self.counts(r) == [2, 7])
        // u2 without claims shares its slot with u2's two later keys (the hash reads the uid, not
        // the claims; a slot holds two): displaced, it is decided again, and denied again.
        #expect(!r.evaluate(Req.make(.get, "users/u1/files/f", uid: "u2"), lookup: MapLookup()).allowed)
        #expect(Self.counts(r) == [2, 8])
        // A trace asked for is always evaluated.
        #expect(r.evaluate(Req.make(.get, "users/u1/files/f", uid: "u1"), lookup: MapLookup(), trace: true).allowed)
        #expect(Self.counts(r) == [2, 8])
    }

    @Test("strings the rules tell apart by their bytes are two keys, though Swift calls them equal")
    func bytesNotCanonicalEquivalence() {
        let r = compiled(rules("match /users/{uid} { allow get: if request.auth.uid == uid; }"))
        let nfc = "\u{E9}", nfd = "e\u{301}"
        #expect(nfc == nfd)  // what a key compared with Swift's == would share
        #expect(r.evaluate(Req.make(.get, "users/\(nfc)", uid: nfc), lookup: MapLookup()).allowed)
        #expect(!r.evaluate(Req.make(.get, "users/\(nfd)", uid: nfc), lookup: MapLookup()).allowed)
        #expect(!r.evaluate(Req.make(.get, "users/\(nfc)", uid: nfd), lookup: MapLookup()).allowed)
        #expect(r.evaluate(Req.make(.get, "users/\(nfd)", uid: nfd), lookup: MapLookup()).allowed)
        #expect(Self.counts(r) == [0, 4])
        // The same under one hash (the hash reads the bytes too, so only a collision would reach
        // the comparison): the entry compares bytes.
        let base = Req.make(.get, "users/\(nfc)", uid: nfc)
        let entry = DecisionMemo.Entry(hash: 7, request: base, decision: r.evaluate(base, lookup: MapLookup(), trace: true), visits: [])
        #expect(entry.matches(base, hash: 7))
        #expect(!entry.matches(base, hash: 8))
        #expect(!entry.matches(Req.make(.get, "users/\(nfd)", uid: nfc), hash: 7))
        #expect(!entry.matches(Req.make(.get, "users/\(nfc)", uid: nfd), hash: 7))
        #expect(!entry.matches(Req.make(.get, "users/\(nfc)"), hash: 7))
        #expect(!entry.matches(Req.make(.list, "users/\(nfc)", uid: nfc), hash: 7))
        // A float claim: -0.0 and 0.0 are equal numbers but two keys (a message renders them apart).
        let f = compiled(rules("match /p/{d} { allow get: if request.auth.token.n == 1; }"))
        _ = f.evaluate(Req.make(.get, "p/d", uid: "u", claims: ["n": .float(0.0)]), lookup: MapLookup())
        _ = f.evaluate(Req.make(.get, "p/d", uid: "u", claims: ["n": .float(-0.0)]), lookup: MapLookup())
        #expect(Self.counts(f) == [0, 2])
    }

    @Test("a fatal evaluation is not remembered")
    func fatalNotRemembered() {
        // 1,000 evaluated expressions at most: a list of 600 reads of the uid goes over.
        let items = Array(repeating: "d.uid", count: 600).joined(separator: ", ")
        let r = compiled(rules("""
            match /users/{uid} {
              function f(d) { return [\(items)].size() > 0; }
              allow get: if f(request.auth);
            }
            """))
        #expect(r.remembers(.get))
        let req = Req.make(.get, "users/u1", uid: "u1")
        let first = r.evaluate(req, lookup: MapLookup())
        #expect(!first.allowed)
        #expect(first.trace.fatalError != nil)
        _ = r.evaluate(req, lookup: MapLookup())
        #expect(Self.counts(r) == [0, 2])
    }

    @Test("the memo stays bounded and answers right after replacing entries")
    func bounded() {
        let r = compiled(rules("match /users/{uid} { allow get: if request.auth.uid == uid; }"))
        let n = DecisionMemo.capacity * 3
        for i in 0..<n {
            let uid = "u\(i)"
            #expect(r.evaluate(Req.make(.get, "users/\(uid)", uid: uid), lookup: MapLookup()).allowed)
            #expect(!r.evaluate(Req.make(.get, "users/\(uid)", uid: "v\(i)"), lookup: MapLookup()).allowed)
        }
        #expect(r.memo!.kept <= DecisionMemo.capacity)
        #expect(r.memo!.kept > DecisionMemo.capacity / 2)
        #expect(r.rememberedDecisions.misses == 2 * n)
    }

    /// The coverage tests' rules, compiled with a memo and without, and their requests (allowed and
    /// denied, a list, a claim, a uid with `K`).
    static func coverageCase() -> (memo: Ruleset, plain: Ruleset, requests: [RulesRequest]) {
        let body = """
            match /users/{uid}/files/{fileId} {
              function isOwner() { return request.auth != null && request.auth.uid == uid; }
              allow read: if isOwner() && fileId.size() > 1;
              allow get: if request.auth.token.admin == true;
            }
        """
        return (compiled(rules(body)), Ruleset.compile(rules(body), fileName: "test.rules", memoize: false).ruleset!, [
            Req.make(.get, "users/u1/files/f1", uid: "u1"),
            Req.make(.get, "users/u1/files/f1", uid: "u2"),
            Req.make(.get, "users/u1/files/f", uid: "u1"),
            Req.make(.get, "users/u1/files/f1"),
            Req.make(.list, "users/u1/files/f1", uid: "u1"),
            Req.make(.get, "users/u1/files/f1", uid: "u2", claims: ["admin": .bool(true)]),
            Req.make(.get, "users/K/files/f1", uid: "K"),
        ])
    }

    @Test("coverage with remembered decisions reports what evaluating every request reports")
    func coverageSame() {
        let (memo, plain, requests) = Self.coverageCase()
        let withMemo = RulesCoverage(), without = RulesCoverage()
        for _ in 0..<200 {
            for r in requests {
                _ = memo.evaluate(r, lookup: MapLookup(), coverage: withMemo)
                _ = plain.evaluate(r, lookup: MapLookup(), coverage: without)
            }
        }
        #expect(memo.rememberedDecisions.hits == 199 * requests.count)
        let a = withMemo.json(for: memo).serialized(pretty: true), b = without.json(for: plain).serialized(pretty: true)
        #expect(a == b)
        #expect(a.contains("200"))
    }

    @Test("a hit's split of its visits is kept per hints: a reset's new hints split them again, reports unchanged")
    func replayKeptPerHints() {
        let (memo, plain, requests) = Self.coverageCase()
        let withMemo = RulesCoverage(), without = RulesCoverage()
        func run(_ order: [RulesRequest], times: Int) {
            for _ in 0..<times {
                for r in order {
                    let v = memo.verdict(r, lookup: MapLookup(), coverage: withMemo)
                    let d = plain.evaluate(r, lookup: MapLookup(), coverage: without)
                    #expect(v.allowed == d.allowed && v.message == d.message)
                }
            }
        }
        func keptSerials() -> Set<UInt64> {
            var out = Set<UInt64>()
            for r in requests {
                if let (_, kept) = memo.memo!.find(r, hash: DecisionMemo.hash(r)), let kept { out.insert(kept.serial) }
            }
            return out
        }
        // A report folds what waits (the hints then stay as they are); one more pass hits with them.
        // A background fold queued before the report must have run first: run after it, it folds
        // the start of that pass and publishes new hints in its midst, so the pass's entries keep
        // splits for two hints (session 37's flake under load: serials [187, 189]).
        func settle(_ order: [RulesRequest]) -> CoverageHints? {
            withMemo.awaitQueuedFolds()
            _ = withMemo.json(for: memo)
            _ = without.json(for: plain)
            run(order, times: 1)
            return withMemo.hints(for: memo)
        }
        run(requests, times: 149)
        let hints = settle(requests)
        #expect(hints != nil)
        // Every entry's split was made for the hints in force, and kept.
        #expect(keptSerials() == [hints!.serial])
        #expect(withMemo.json(for: memo).serialized(pretty: true) == without.json(for: plain).serialized(pretty: true))
        // A reset: the tables start over, in another order (so each outcome's entry moves), and
        // new hints are published; a split kept for the old ones would count at the old entries.
        withMemo.reset()
        without.reset()
        run(requests.reversed(), times: 149)
        let newHints = settle(requests.reversed())
        #expect(newHints != nil && newHints!.serial != hints!.serial)
        #expect(keptSerials() == [newHints!.serial])
        let a = withMemo.json(for: memo).serialized(pretty: true), b = without.json(for: plain).serialized(pretty: true)
        #expect(a == b)
        #expect(a.contains("150"))
    }

    @Test("a path is the same as an entry's when it is the very array, or the same bytes; never by canonical equivalence")
    func sameSegments() {
        let kept = ["databases", "(default)", "documents", "users", "caf\u{E9}"]
        #expect(DecisionMemo.sameSegments(kept, kept))
        var copied = kept
        copied.reserveCapacity(copied.count + 10)  // another buffer, the same strings
        #expect(DecisionMemo.sameSegments(kept, copied))
        let decomposed = ["databases", "(default)", "documents", "users", "cafe\u{301}"]
        #expect(kept == decomposed)  // Swift's ==: canonically equivalent
        #expect(!DecisionMemo.sameSegments(kept, decomposed))
        #expect(!DecisionMemo.sameSegments(kept, Array(kept.dropLast())))
        #expect(DecisionMemo.sameSegments([], []))
    }
}
