import HearthCore
import Testing
@testable import SecurityRules

/// Cloud Storage rules on the shared engine: object paths under `/b/{bucket}/o`, `request.resource`
/// fields, and `firestore.get()` / `firestore.exists()` through the lookup seam.
@Suite struct StorageRulesTests {
    struct Docs: RulesDocumentLookup {
        var documents: [[String]: RulesValue]
        func get(_ path: [String]) -> RulesValue? { documents[path] }
        func getAfter(_ path: [String]) -> RulesValue? { documents[path] }
    }

    static let source = """
    rules_version = '2';
    service firebase.storage {
      match /b/{bucket}/o {
        match /users/{uid}/{path=**} {
          allow create: if request.auth.uid == uid && request.resource.size < 100
            && request.resource.contentType.matches('image/.*') && request.resource.metadata.kind == 'avatar';
          allow get: if firestore.exists(/databases/(default)/documents/shares/$(uid))
            && firestore.get(/databases/(default)/documents/shares/$(uid)).data.reader == request.auth.uid;
        }
      }
    }
    """

    func decide(_ method: RulesMethod, _ uid: String, _ resource: RulesValue? = nil, docs: [[String]: RulesValue] = [:]) throws -> Bool {
        let ruleset = try #require(Ruleset.compile(Self.source, fileName: "storage.rules").ruleset)
        let request = RulesRequest(method: method, path: ["b", "bkt", "o", "users", "alice", "a", "b.png"],
                                   auth: .auth(uid: uid, claims: ["sub": .string(uid)]), time: .timestamp(seconds: 0, nanos: 0),
                                   requestResource: resource)
        return ruleset.evaluate(request, lookup: Docs(documents: docs)).allowed
    }

    static func object(size: Int64, type: String, kind: String) -> RulesValue {
        .map(["size": .int(size), "contentType": .string(type), "metadata": .map(["kind": .string(kind)])])
    }

    @Test func requestResourceFieldsDecideUploads() throws {
        #expect(try decide(.create, "alice", Self.object(size: 10, type: "image/png", kind: "avatar")))
        #expect(try !decide(.create, "bob", Self.object(size: 10, type: "image/png", kind: "avatar")))
        #expect(try !decide(.create, "alice", Self.object(size: 100, type: "image/png", kind: "avatar")))
        #expect(try !decide(.create, "alice", Self.object(size: 10, type: "text/plain", kind: "avatar")))
        #expect(try !decide(.create, "alice", Self.object(size: 10, type: "image/png", kind: "banner")))
    }

    @Test func firestoreGetReadsThroughTheLookup() throws {
        let share: [String] = ["databases", "(default)", "documents", "shares", "alice"]
        let doc = RulesValue.map(["data": .map(["reader": .string("bob")])])
        #expect(try decide(.get, "bob", docs: [share: doc]))
        #expect(try !decide(.get, "carol", docs: [share: doc]))
        #expect(try !decide(.get, "bob"))
    }
}
