import HearthCore
import SecurityRules
import Testing
@testable import FirestoreEmulator

/// A storage error while the rules read a document is a deny, never "document absent".
struct RulesLookupFailureTests {
    struct StorageDown: Error {}

    @Test func aFailedLookupDeniesEvenWhenAbsenceWouldAllow() throws {
        let h = try TestHarness(rules: """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /open/{id} { allow read: if !exists(/databases/$(database)/documents/locks/$(id)); }
          }
        }
        """)
        let db = DatabaseID(project: h.project, database: "(default)")
        let failing = RulesLookup(database: db, current: { _ in throw StorageDown() }, after: { _ in throw StorageDown() })
        let path = ResourcePath(["open", "a"])
        #expect(throws: FirestoreError.self) {
            try h.service.authorizeGet(db, path: path, document: nil, auth: nil, lookup: failing)
        }
        #expect(failing.failure is StorageDown)
        // The same request with a lookup that works (the lock is absent) is allowed.
        let working = RulesLookup(database: db, current: { _ in nil }, after: { _ in nil })
        try h.service.authorizeGet(db, path: path, document: nil, auth: nil, lookup: working)
    }

    /// The cached get's lookup (no store at hand) is a deny too when rules ask it anyway, and no
    /// failure when they do not.
    @Test func aReadWithoutTheStoreDenies() throws {
        let h = try TestHarness(rules: """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /open/{id} { allow read: if !exists(/databases/$(database)/documents/locks/$(id)); }
            match /free/{id} { allow read: if true; }
          }
        }
        """)
        let db = DatabaseID(project: h.project, database: "(default)")
        let asked = NoStoreLookup()
        #expect(throws: FirestoreError.self) {
            try h.service.authorizeGet(db, rulesPath: RulesConversion.path(db, ResourcePath(["open", "a"])), resource: nil,
                                       auth: nil, lookup: asked)
        }
        #expect(asked.failure is NoStoreLookup.NoStoreAtHand)
        let unasked = NoStoreLookup()
        try h.service.authorizeGet(db, rulesPath: RulesConversion.path(db, ResourcePath(["free", "a"])), resource: nil,
                                   auth: nil, lookup: unasked)
        #expect(unasked.failure == nil)
        // Any read made after a lookup was made fails it (fail closed), getAfter as get.
        #expect(NoStoreLookup().getAfter(["databases", "(default)", "documents", "locks", "a"]) == nil)
        #expect(unasked.failure != nil)
    }
}
