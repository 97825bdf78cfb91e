import Testing
@testable import SecurityRules

/// Real rules files: every one compiles without error and behaves as the projects' own tests expect.
/// The files live in ../shared/reference; without it the suite is skipped with the reason.
@Suite(.enabled(if: Fixtures.hasCorpus, Fixtures.corpusMissing))
struct CorpusTests {
    @Test(arguments: Fixtures.corpusFiles)
    func compilesWithoutErrors(_ file: String) {
        let source = Fixtures.corpus(file)
        #expect(!source.isEmpty)
        let (r, issues) = Ruleset.compile(source, fileName: file)
        #expect(r != nil, "\(issues)")
        #expect(!issues.contains { $0.severity == .error })
    }

    @Test func corpusIsPresent() {
        #expect(Fixtures.corpusFiles.count >= 13)
    }

    static func ruleset(_ file: String) -> Ruleset { compiled(Fixtures.corpus(file), file) }

    @Test(arguments: ["quickstart-testing/unit-test-security-rules/firestore.rules", "quickstart-testing/unit-test-security-rules-v9/firestore.rules"])
    func quickstartTesting(_ file: String) {
        let r = CorpusTests.ruleset(file)
        let l = MapLookup()
        // "should let anyone read any profile"
        #expect(r.evaluate(Req.make(.get, "users/foobar"), lookup: l).allowed)
        // "should not allow users to create profiles they don't own" / "should let users create their own profile"
        #expect(!r.evaluate(Req.make(.create, "users/alice", uid: "bob", data: ["createdAt": Req.time]), lookup: l).allowed)
        #expect(r.evaluate(Req.make(.create, "users/alice", uid: "alice", data: ["createdAt": Req.time]), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.create, "users/alice", uid: "alice", data: ["createdAt": .timestamp(seconds: 1, nanos: 0)]), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.create, "users/alice", data: ["createdAt": Req.time]), lookup: l).allowed)
        // rooms: create as owner, update only by owner keeping ownership
        #expect(r.evaluate(Req.make(.create, "rooms/snow", uid: "alice", data: ["owner": .string("alice")]), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.create, "rooms/snow", uid: "alice", data: ["owner": .string("bob")]), lookup: l).allowed)
        let room: [String: RulesValue] = ["owner": .string("alice"), "topic": .string("x")]
        #expect(r.evaluate(Req.make(.update, "rooms/snow", uid: "alice", data: ["owner": .string("alice"), "topic": .string("y")], existing: room), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.update, "rooms/snow", uid: "alice", data: ["owner": .string("bob")], existing: room), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.update, "rooms/snow", uid: "bob", data: ["owner": .string("bob")], existing: room), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.delete, "rooms/snow", uid: "alice", existing: room), lookup: l).allowed)
    }

    @Test func danPurdyStores() {
        let r = CorpusTests.ruleset("firebase-firestore-testing-demo/firestore/firestore.rules")
        let l = MapLookup()
        let staff: [String: RulesValue] = ["stores": .list([.string("s1")])]
        #expect(r.evaluate(Req.make(.get, "stores/s1"), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.create, "stores/s1", uid: "u", claims: staff, data: [:]), lookup: l).allowed)
        #expect(r.evaluate(Req.make(.update, "stores/s1", uid: "u", claims: staff, data: [:], existing: [:]), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.update, "stores/s2", uid: "u", claims: staff, data: [:], existing: [:]), lookup: l).allowed)
        // Signed out: request.auth.token is a null error, so the update is denied.
        #expect(!r.evaluate(Req.make(.update, "stores/s1", data: [:], existing: [:]), lookup: l).allowed)
        #expect(r.evaluate(Req.make(.create, "stores/s1/menus/m", uid: "u", claims: staff, data: [:]), lookup: l).allowed)
        #expect(r.evaluate(Req.make(.update, "stores/s1/staff/u", uid: "u", claims: staff, data: [:], existing: [:]), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.update, "stores/s1/staff/v", uid: "u", claims: staff, data: [:], existing: [:]), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.get, "other/x"), lookup: l).allowed)
    }

    @Test func snippetsRBAC() {
        let r = CorpusTests.ruleset("snippets-rules/rules/solution-rbac/step5.rules")
        let story: [String: RulesValue] = ["title": .string("t"), "content": .string("c"),
                                           "roles": .map(["alice": .string("owner"), "bob": .string("writer"), "carol": .string("reader")])]
        let l = MapLookup(documents: ["databases/(default)/documents/stories/s1": story])
        #expect(r.evaluate(Req.make(.get, "stories/s1", uid: "carol", existing: story), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.get, "stories/s1", uid: "dave", existing: story), lookup: l).allowed)
        var edited = story
        edited["content"] = .string("new")
        #expect(r.evaluate(Req.make(.update, "stories/s1", uid: "bob", data: edited, existing: story), lookup: l).allowed)
        var retitled = edited
        retitled["title"] = .string("other")
        #expect(!r.evaluate(Req.make(.update, "stories/s1", uid: "bob", data: retitled, existing: story), lookup: l).allowed)
        #expect(r.evaluate(Req.make(.update, "stories/s1", uid: "alice", data: retitled, existing: story), lookup: l).allowed)
        #expect(r.evaluate(Req.make(.get, "stories/s1/comments/c", uid: "carol"), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.create, "stories/s1/comments/c", uid: "carol", data: ["user": .string("carol")]), lookup: l).allowed)
        #expect(r.evaluate(Req.make(.create, "stories/s1/comments/c", uid: "bob", data: ["user": .string("bob")]), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.create, "stories/s1/comments/c", uid: "bob", data: ["user": .string("alice")]), lookup: l).allowed)
    }

    @Test func groundLevelProjects() {
        let r = CorpusTests.ruleset("GroundLevel-firebase-es/packages/backend/firestore.rules")
        let project: [String: RulesValue] = ["title": .string("Calamity"), "created": .timestamp(seconds: 1, nanos: 0),
                                             "authors": .list([.string("abc")]), "members": .list([.string("abc"), .string("def")])]
        let l = MapLookup(documents: ["databases/(default)/documents/projects/1": project])
        #expect(r.evaluate(Req.make(.get, "projects/1", uid: "def", existing: project), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.get, "projects/1", uid: "ghi", existing: project), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.get, "projects/1", existing: project), lookup: l).allowed)
        var created = project
        created["created"] = Req.time
        #expect(r.evaluate(Req.make(.create, "projects/2", uid: "abc", data: created), lookup: l).allowed)
        var notServerTime = created
        notServerTime["created"] = .timestamp(seconds: 5, nanos: 0)
        #expect(!r.evaluate(Req.make(.create, "projects/2", uid: "abc", data: notServerTime), lookup: l).allowed)
        var removed = project
        removed["removed"] = Req.time
        #expect(r.evaluate(Req.make(.update, "projects/1", uid: "abc", data: removed, existing: project), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.update, "projects/1", uid: "def", data: removed, existing: project), lookup: l).allowed)
        // Sub-collection access goes through get() of the project.
        #expect(r.evaluate(Req.make(.get, "projects/1/userInfo/def", uid: "def"), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.get, "projects/1/userInfo/def", uid: "zzz"), lookup: l).allowed)
        #expect(r.evaluate(Req.make(.get, "temp/x"), lookup: l).allowed == false)   // /temp matches only the document "temp"
    }

    @Test func openRoboclubUsers() {
        let r = CorpusTests.ruleset("db-security-rules/firestore.rules")
        let admin = MapLookup(documents: ["databases/(default)/documents/users/boss": ["isAdmin": .bool(true)]])
        #expect(r.evaluate(Req.make(.get, "users/anyone"), lookup: admin).allowed)
        #expect(r.evaluate(Req.make(.get, "keys/k", uid: "boss"), lookup: admin).allowed)
        #expect(!r.evaluate(Req.make(.get, "keys/k", uid: "pleb"), lookup: admin).allowed)
        #expect(r.evaluate(Req.make(.delete, "notifications/n", uid: "boss", existing: [:]), lookup: admin).allowed)
        #expect(!r.evaluate(Req.make(.delete, "notifications/n", uid: "pleb", existing: [:]), lookup: admin).allowed)
        let feedback: [String: RulesValue] = ["dateTime": .string("d"), "feedback": .string("f"), "isMember": .bool(false)]
        #expect(r.evaluate(Req.make(.create, "feedbacks/x", data: feedback), lookup: admin).allowed)
        var extra = feedback
        extra["spam"] = .string("y")
        #expect(!r.evaluate(Req.make(.create, "feedbacks/x", data: extra), lookup: admin).allowed)
    }

    @Test func collaborativeLearningDemoChat() {
        let r = CorpusTests.ruleset("collaborative-learning/firestore.rules")
        let l = MapLookup()
        let message: [String: RulesValue] = ["uid": .string("u"), "kind": .string("user"), "createdAt": Req.time, "text": .string("hi")]
        let path = "demo/d1/chatTutor/c1/messages/m1"
        #expect(r.evaluate(Req.make(.create, path, uid: "u", data: message), lookup: l).allowed)
        var forged = message
        forged["kind"] = .string("assistant")
        #expect(!r.evaluate(Req.make(.create, path, uid: "u", data: forged), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.create, path, data: message), lookup: l).allowed)
        #expect(r.evaluate(Req.make(.update, "demo/d1/other/x", uid: "u", data: [:], existing: [:]), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.update, "demo/d1/chatTutor/x", uid: "u", data: [:], existing: [:]), lookup: l).allowed)
        #expect(r.evaluate(Req.make(.update, "qa/u/a/b/c", uid: "u", data: [:], existing: [:]), lookup: l).allowed)
        #expect(!r.evaluate(Req.make(.update, "qa/u/a/b/c", uid: "v", data: [:], existing: [:]), lookup: l).allowed)
    }
}
