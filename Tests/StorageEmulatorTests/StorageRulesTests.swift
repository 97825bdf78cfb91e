import Foundation
import HearthCore
import Testing
@testable import StorageEmulator

@Suite struct StorageRulesTests {
    static let allowAll = "service firebase.storage { match /b/{bucket}/o { match /{p=**} { allow read, write; } } }\n"
    static let denyAll = "service firebase.storage { match /b/{bucket}/o { match /{p=**} { allow read, write: if false; } } }\n"

    func allows(_ rules: StorageRules) -> Bool? {
        guard case .ruleset(let r, _) = rules.current else { return nil }
        return r.source.contains("if false") ? false : true
    }

    @Test func theFileIsReloadedWhenItChangesAndABrokenEditKeepsTheLastGoodRules() throws {
        let path = NSTemporaryDirectory() + "storage-\(UUID().uuidString).rules"
        try Self.allowAll.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rules = StorageRules(path: path, source: nil, logger: Logger(quiet: true, sink: { _ in }))
        rules.startWatching(interval: 0.05)
        defer { rules.stopWatching() }
        #expect(allows(rules) == true)
        // A modification time one second later, so the change is seen whatever the clock's resolution.
        try Self.denyAll.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(1)], ofItemAtPath: path)
        let deadline = Date().addingTimeInterval(30)
        while allows(rules) != false, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(allows(rules) == false)
        try "service firebase.storage {".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(2)], ofItemAtPath: path)
        Thread.sleep(forTimeInterval: 0.4)
        #expect(allows(rules) == false)
    }

    /// Object names are split at their `/` bytes, as Cloud Storage's rules see them: a `/`
    /// followed by a combining mark is a `Character` of its own, and splitting `Character`s kept
    /// `x/\u{301}y` one segment, so `/users/{uid}/{file}` matched a name three levels deep.
    @Test func rulesPathsSplitAtEverySlashByte() {
        #expect(StorageService.rulesPath(bucket: "b", name: "users/alice/x/\u{301}y") == ["b", "b", "o", "users", "alice", "x", "\u{301}y"])
        #expect(StorageService.rulesPath(bucket: "b", name: "a//b/") == ["b", "b", "o", "a", "", "b", ""])
        #expect(StorageService.rulesPath(bucket: "b", name: "caf\u{e9}/\u{212A}") == ["b", "b", "o", "caf\u{e9}", "\u{212A}"])
    }

    @Test func missingOrFirestoreRulesDenyEverything() throws {
        let missing = StorageRules(path: "/nonexistent/storage.rules", source: nil, logger: Logger(quiet: true, sink: { _ in }))
        guard case .broken = missing.current else { Issue.record("a missing rules file must not allow"); return }
        let firestore = StorageRules(path: nil, source: "service cloud.firestore { match /databases/{d}/documents { allow read; } }",
                                     logger: Logger(quiet: true, sink: { _ in }))
        guard case .broken = firestore.current else { Issue.record("Firestore rules must not govern Storage"); return }
    }
}

/// What storage.rules see of a composite object.
@Suite struct CompositeObjectRulesTests {
    @Test func aComposedObjectHasNoMD5HashForTheRules() throws {
        let h = try StorageHarness(rules: """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /{file} { allow get: if resource.get('md5Hash', 'none') == 'none'; }
          }
        }
        """)
        let b = StorageHarness.bucket
        #expect(h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=a", body: [1]).status == 200)
        let composed = h.send("POST", "/storage/v1/b/\(b)/o/ab/compose", body: Array(#"{"sourceObjects": [{"name": "a"}, {"name": "a"}]}"#.utf8))
        #expect(composed.status == 200)
        let auth = [("Authorization", "Firebase alice")]
        #expect(h.send("GET", "/v0/b/\(b)/o/ab", headers: auth).status == 200)
        // A whole upload has its MD5, so the same rule denies it.
        #expect(h.send("GET", "/v0/b/\(b)/o/a", headers: auth).status == 403)
    }
}
