import Testing
@testable import SecurityRules

/// Decisions at request time that depend on the request's shape and on how lets and document
/// reads fail, as the official Cloud Firestore emulator decides them (rulesrt33; the differential
/// cases are in Tests/CompatTests/firestore/differential/test_rules_requests.py).
struct RequestShapeTests {
    static let source = rules("""
        function lazy() { let bad = 1 / 0; return true; }
        function used() { let bad = 1 / 0; let ok = true; return ok && bad; }
        function member() { let m = {'a': 1}; let bad = m.b; return m.a == 1; }
        match /r/{id} {
          allow get, list, delete, create, update: if request.resource == null;
        }
        match /q/{id} {
          allow get, list, delete, create, update: if request.query == null;
        }
        match /k/{id} {
          allow get, list, delete, create, update: if 'resource' in request;
        }
        match /lazy/{id} { allow get: if lazy() && member(); }
        match /used/{id} { allow get: if used(); }
        match /coll/{id} { allow get: if !exists(/databases/$(database)/documents/coll); }
        match /otherdb/{id} { allow get: if !exists(/databases/other/documents/banned/x); }
        match /otherget/{id} { allow get: if get(/databases/other/documents/banned/x) == null; }
        match /otherafter/{id} { allow get: if !existsAfter(/databases/other/documents/banned/x); }
        match /outside/{id} { allow get: if !exists(/databases/$(database)/banned/x); }
        match /nowhere/{id} { allow get: if !exists(/nothing/x); }
        match /absorbed/{id} { allow get: if exists(/databases/other/documents/banned/x) || true; }
        match /same/{id} { allow get: if !exists(/databases/$(database)/documents/banned/x); }
    """)

    static func shaped(_ r: RulesRequest) -> RulesRequest {
        var r = r
        r.methodShaped = true
        return r
    }

    static func decide(_ method: RulesMethod, _ p: String, shaped: Bool = true) -> RulesDecision {
        var data: [String: RulesValue]? = nil
        var existing: [String: RulesValue]? = nil
        var query: RulesValue? = nil
        switch method {
        case .create: data = ["a": .int(1)]
        case .update: data = ["a": .int(1)]; existing = [:]
        case .delete: existing = [:]
        case .list: query = .map(["limit": .null, "offset": .int(0), "orderBy": .map([:])])
        default: break
        }
        var r = Req.make(method, p, uid: "u1", data: data, existing: existing, query: query)
        r.methodShaped = shaped
        return compiled(source).evaluate(r, lookup: MapLookup(documents: [:]))
    }

    /// Firestore's request map: `request.resource` on writes only (null on delete), undefined on
    /// get and list, so `request.resource == null` must not allow a read.
    @Test func requestResourceExistsOnWritesOnly() {
        #expect(!Self.decide(.get, "r/a").allowed)
        #expect(Self.decide(.get, "r/a").message.hasPrefix("Property resource is undefined on object. for 'get' @ L"))
        #expect(!Self.decide(.list, "r/a").allowed)
        #expect(Self.decide(.delete, "r/a").allowed)
        #expect(!Self.decide(.create, "r/a").allowed)
        // Without the Firestore shape (Storage rules, Rules API tests) an absent one is null.
        #expect(Self.decide(.get, "r/a", shaped: false).allowed)
    }

    @Test func requestQueryExistsOnListOnly() {
        for m: RulesMethod in [.get, .create, .update, .delete] {
            #expect(!Self.decide(m, "q/a").allowed, "\(m)")
            #expect(Self.decide(m, "q/a").message.hasPrefix("Property query is undefined on object."), "\(m)")
        }
        #expect(!Self.decide(.list, "q/a").allowed)   // a map, not null
        #expect(!Self.decide(.get, "k/a").allowed)
        #expect(!Self.decide(.list, "k/a").allowed)
        #expect(Self.decide(.delete, "k/a").allowed)
        #expect(Self.decide(.create, "k/a").allowed)
    }

    /// A let whose value is an error is the call's error only where it is read.
    @Test func aLetErrorCountsOnlyWhereItIsRead() {
        #expect(Self.decide(.get, "lazy/a").allowed)
        let used = Self.decide(.get, "used/a")
        #expect(!used.allowed)
        #expect(used.message.hasPrefix("Divide by zero error. for 'get' @ L"))
    }

    /// A path no store of this database can answer — another database's document, a path
    /// outside `/databases/{db}/documents` — is a `Service call error`, as on the official
    /// emulator, never "absent": `!exists(…)` of it allowed (fail open). The error is the call's
    /// alone: `|| true` still absorbs it.
    @Test(arguments: ["otherdb", "otherget", "otherafter", "outside", "nowhere"])
    func aPathOutsideTheDatabaseIsAnError(_ collection: String) {
        let d = Self.decide(.get, collection + "/a")
        #expect(!d.allowed, "\(collection)")
        #expect(d.message.hasPrefix("Service call error. Function: ["), "\(collection): \(d.message)")
    }

    @Test func aPathOfTheDatabaseStillReadsTheStore() {
        #expect(Self.decide(.get, "same/a").allowed)
        #expect(Self.decide(.get, "absorbed/a").allowed)
    }

    /// exists() of a collection is an error, so its negation cannot allow.
    @Test func aCollectionPathIsNoDocument() {
        let d = Self.decide(.get, "coll/a")
        #expect(!d.allowed)
        #expect(d.message.hasPrefix("Service call error. Function: [exists], Argument: [/databases/(default)/documents/coll]. for 'get' @ L"))
    }
}
