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

/// A file declaring `cloud.firestore` and `firebase.storage` (the official emulator loads it): each
/// service is judged by its own block only, never by the other's (fail closed both ways).
@Suite struct BothServicesTests {
    static let source = """
    rules_version = '2';
    service cloud.firestore {
      match /{document=**} { allow read: if false; }
      match /databases/{database}/documents/a/{id} { allow get: if id == 'open'; }
    }
    service firebase.storage {
      match /{all=**} { allow read, write: if true; }
      match /b/{bucket}/o/{name} { allow get: if name == 'open'; }
    }
    """

    func allowed(_ service: RulesService, _ path: [String]) throws -> Bool {
        let (ruleset, issues) = Ruleset.compile(Self.source, service: service)
        #expect(issues.isEmpty)
        let r = try #require(ruleset)
        #expect(r.service == service)
        let request = RulesRequest(method: .get, path: path, auth: nil, time: .timestamp(seconds: 0, nanos: 0))
        return r.evaluate(request, lookup: MapLookup()).allowed
    }

    @Test func firestoreIsJudgedByItsOwnBlock() throws {
        #expect(try allowed(.firestore, Req.path("a/open")))
        // The storage block's `match /{all=**}` would allow this: it must not judge Firestore.
        #expect(try !allowed(.firestore, Req.path("a/closed")))
        #expect(try !allowed(.firestore, ["b", "bkt", "o", "closed"]))
    }

    @Test func storageIsJudgedByItsOwnBlock() throws {
        #expect(try allowed(.storage, ["b", "bkt", "o", "x"]))
        #expect(try allowed(.storage, Req.path("a/closed")))   // its own match /{all=**}
        let onlyFirestoreOpen = Self.source.replacingOccurrences(of: "match /{all=**} { allow read, write: if true; }", with: "")
            .replacingOccurrences(of: "allow read: if false;", with: "allow read: if true;")
        let r = try #require(Ruleset.compile(onlyFirestoreOpen, service: .storage).ruleset)
        let request = RulesRequest(method: .get, path: ["b", "bkt", "o", "closed"], auth: nil, time: .timestamp(seconds: 0, nanos: 0))
        // The Firestore block's `match /{document=**}` allows everything there: it must not judge Storage.
        #expect(!r.evaluate(request, lookup: MapLookup()).allowed)
    }
}
