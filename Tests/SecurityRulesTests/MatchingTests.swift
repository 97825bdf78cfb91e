import Testing
@testable import SecurityRules

struct MatchingTests {
    static func allowed(_ source: String, _ method: RulesMethod, _ path: String, uid: String? = nil) -> Bool {
        compiled(source).evaluate(Req.make(method, path, uid: uid), lookup: MapLookup()).allowed
    }

    /// (rules_version, match path, document path, matches?)
    static let wildcardCases: [(Int, String, String, Bool)] = [
        (2, "/{doc=**}", "a/b", true),
        (2, "/{doc=**}", "a/b/c/d", true),
        (1, "/{doc=**}", "a/b/c/d", true),
        (2, "/a/{doc=**}", "a/b", true),
        (2, "/a/{doc}", "a/b", true),
        (2, "/a/{doc}", "a/b/c/d", false),
        (2, "/a/{doc}", "x/b", false),
        (2, "/a/b/{rest=**}", "a/b", true),     // v2: zero segments
        (1, "/a/b/{rest=**}", "a/b", false),    // v1: one or more
        (2, "/{path=**}/posts/{post}", "users/u/posts/p", true),
        (2, "/{path=**}/posts/{post}", "posts/p", true),
        (2, "/{path=**}/posts/{post}", "users/u/comments/c", false),
        (2, "/a/{x}/c/{y}", "a/1/c/2", true),
        (2, "/a/{x}/c/{y}", "a/1/d/2", false),
    ]

    @Test(arguments: wildcardCases)
    func wildcards(_ version: Int, _ pattern: String, _ path: String, _ expected: Bool) {
        let source = rules("    match \(pattern) { allow read; }", version: version)
        #expect(MatchingTests.allowed(source, .get, path) == expected)
    }

    @Test func bindingsAreStringsAndPaths() {
        let source = rules("""
            match /{path=**}/posts/{post} {
              allow get: if path == /users/u1 && path is path && post == 'p1' && post is string;
            }
        """)
        #expect(MatchingTests.allowed(source, .get, "users/u1/posts/p1"))
        #expect(!MatchingTests.allowed(source, .get, "users/u2/posts/p1"))
    }

    @Test func nestedMatchesAppendPaths() {
        let source = rules("""
            match /stores/{store} {
              allow read: if store == 's1';
              match /menus/{menu} {
                allow read: if store == 's1' && menu == 'm1';
              }
            }
        """)
        #expect(MatchingTests.allowed(source, .get, "stores/s1"))
        #expect(MatchingTests.allowed(source, .get, "stores/s1/menus/m1"))
        #expect(!MatchingTests.allowed(source, .get, "stores/s1/menus/m2"))
        // Rules do not cascade: the store rule says nothing about other subcollections.
        #expect(!MatchingTests.allowed(source, .get, "stores/s1/staff/x"))
    }

    @Test func allowsAcrossBlocksAreOred() {
        let source = rules("""
            match /cities/{c} { allow read: if false; }
            match /cities/{d=**} { allow read: if true; }
        """)
        #expect(MatchingTests.allowed(source, .get, "cities/sf"))
        let twoAllows = rules("""
            match /x/{y} {
              allow read: if false;
              allow read: if y == 'ok';
            }
        """)
        #expect(MatchingTests.allowed(twoAllows, .get, "x/ok"))
        #expect(!MatchingTests.allowed(twoAllows, .get, "x/no"))
    }

    static let methodCases: [(String, RulesMethod, Bool)] = [
        ("read", .get, true), ("read", .list, true), ("read", .create, false),
        ("write", .create, true), ("write", .update, true), ("write", .delete, true), ("write", .get, false),
        ("get", .get, true), ("get", .list, false), ("list", .list, true), ("create", .create, true), ("create", .update, false),
        ("update", .update, true), ("delete", .delete, true), ("get, delete", .delete, true), ("get, delete", .list, false),
    ]

    @Test(arguments: methodCases)
    func methods(_ methods: String, _ method: RulesMethod, _ expected: Bool) {
        let source = rules("    match /x/{y} { allow \(methods); }")
        #expect(MatchingTests.allowed(source, method, "x/1") == expected)
    }

    @Test func noMatchingAllowMessage() {
        let r = compiled(rules("    match /x/{y} { allow read; }"))
        let d = r.evaluate(Req.make(.create, "x/1"), lookup: MapLookup())
        #expect(!d.allowed)
        #expect(d.message == "No matching allow statements")
        let other = r.evaluate(Req.make(.get, "elsewhere/1"), lookup: MapLookup())
        #expect(other.message == "No matching allow statements")
        #expect(other.trace.matches.isEmpty)
    }

    @Test func errorInOneAllowDeniesOnlyThatStatement() {
        let source = rules("""
            match /x/{y} {
              allow read: if request.auth.uid == 'u1';
              allow read: if true;
            }
        """)
        #expect(MatchingTests.allowed(source, .get, "x/1"))
    }

    @Test func serviceLevelFunctionsAndNonStandardRoots() {
        // A function declared in the service block (outside every match), called from a nested match.
        let source = """
            service cloud.firestore {
              function same(field) {
                return field in resource.data && field in request.resource.data
                  && resource.data[field] == request.resource.data[field];
              }
              match /databases/{db}/documents {
                match /{path=**} {
                  allow read: if true;
                  allow update: if request.resource.data.keys() == resource.data.keys() && same("name");
                }
              }
            }
            """
        let r = compiled(source)
        let ok = r.evaluate(Req.make(.update, "a/b", data: ["name": .string("n"), "x": .int(2)], existing: ["name": .string("n"), "x": .int(1)]), lookup: MapLookup())
        #expect(ok.allowed)
        let renamed = r.evaluate(Req.make(.update, "a/b", data: ["name": .string("m"), "x": .int(1)], existing: ["name": .string("n"), "x": .int(1)]), lookup: MapLookup())
        #expect(!renamed.allowed)
    }
}
