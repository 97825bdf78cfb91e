import Testing
@testable import SecurityRules

/// get(), exists(), getAfter(), existsAfter() through the lookup, and the per-request access limit.
struct AccessTests {
    static let source = rules("""
        match /rooms/{room} {
          allow get: if get(/databases/$(database)/documents/members/$(request.auth.uid)).data.role == 'admin';
          allow list: if exists(/databases/$(database)/documents/members/$(request.auth.uid));
          allow create: if getAfter(/databases/$(database)/documents/rooms/$(room)).data.owner == request.auth.uid
                        && existsAfter(/databases/$(database)/documents/logs/$(room));
          allow update: if n(0) && n(1) && n(2) && n(3) && n(4) && n(5) && n(6) && n(7) && n(8) && n(9) && n(10);
          allow delete: if exists(/databases/$(database)/documents/members/a) && get(/databases/$(database)/documents/members/a) != null
                        && exists(/databases/$(database)/documents/members/a);
          function n(i) { return !exists(/databases/$(database)/documents/nothing/$(i)); }
        }
    """)

    static let lookup = MapLookup(
        documents: ["databases/(default)/documents/members/u1": ["role": .string("admin")],
                    "databases/(default)/documents/members/u2": ["role": .string("member")],
                    "databases/(default)/documents/members/a": [:]],
        after: ["databases/(default)/documents/rooms/r1": ["owner": .string("u1")],
                "databases/(default)/documents/logs/r1": [:]])

    @Test(arguments: [("u1", true), ("u2", false), ("u3", false)])
    func getReadsThroughTheLookup(_ uid: String, _ expected: Bool) {
        let d = compiled(AccessTests.source).evaluate(Req.make(.get, "rooms/r1", uid: uid), lookup: AccessTests.lookup)
        #expect(d.allowed == expected)
        #expect(d.trace.functionCalls.map(\.function) == ["get"])
    }

    @Test func missingDocumentIsNullSoDataIsANullValueError() {
        let d = compiled(AccessTests.source).evaluate(Req.make(.get, "rooms/r1", uid: "u3"), lookup: AccessTests.lookup)
        #expect(d.message.hasPrefix("Null value error. for 'get' @ L5"))
    }

    @Test func existsAndAfterVariants() {
        let r = compiled(AccessTests.source)
        #expect(r.evaluate(Req.make(.list, "rooms/r1", uid: "u2"), lookup: AccessTests.lookup).allowed)
        #expect(!r.evaluate(Req.make(.list, "rooms/r1", uid: "u9"), lookup: AccessTests.lookup).allowed)
        #expect(r.evaluate(Req.make(.create, "rooms/r1", uid: "u1", data: [:]), lookup: AccessTests.lookup).allowed)
        #expect(!r.evaluate(Req.make(.create, "rooms/r2", uid: "u1", data: [:]), lookup: AccessTests.lookup).allowed)
    }

    @Test func overTheLimitDeniesTheWholeRequest() {
        let r = compiled(AccessTests.source)
        let d = r.evaluate(Req.make(.update, "rooms/r1", uid: "u1", data: [:], existing: [:]), lookup: AccessTests.lookup)
        #expect(!d.allowed)
        #expect(d.message.hasPrefix("Exceeded the limit of 10 document access calls (get, exists, getAfter, existsAfter) for this request. for 'update' @ L"))
        #expect(d.trace.fatalError != nil)
        // Batches and transactions allow 20.
        let batch = r.evaluate(Req.make(.update, "rooms/r1", uid: "u1", data: [:], existing: [:], accessLimit: 20), lookup: AccessTests.lookup)
        #expect(batch.allowed)
    }

    @Test func repeatedReadsOfOneDocumentCountOnce() {
        let r = compiled(AccessTests.source)
        let d = r.evaluate(Req.make(.delete, "rooms/r1", uid: "u1", existing: [:], accessLimit: 1), lookup: AccessTests.lookup)
        #expect(d.allowed)
        #expect(d.trace.functionCalls.count == 3)
    }

    @Test func ordinaryErrorsDoNotEscapeAbsorption() {
        // A limit error is not absorbed by `false && …` style rules: it is fatal.
        let source = rules("""
            match /x/{y} {
              allow read: if !a(0) && !a(1) || true;
              function a(i) { return exists(/databases/$(database)/documents/z/$(i)); }
            }
        """)
        let d = compiled(source).evaluate(Req.make(.get, "x/1", accessLimit: 1), lookup: MapLookup())
        #expect(!d.allowed)
        #expect(d.trace.fatalError?.hasPrefix("Exceeded the limit of 1") == true)
    }
}
