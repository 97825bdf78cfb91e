import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// Committed changes as watchers outside Firestore (the UI's live views) get them: each document
/// of each commit, in commit order, created / updated / deleted, and a clear.
@Suite struct DocumentChangeFeedTests {
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var notices: [DocumentChangeNotice] = []
        func add(_ n: [DocumentChangeNotice]) { lock.withLock { notices += n } }
        var all: [DocumentChangeNotice] { lock.withLock { notices } }
    }

    static func fields(_ n: String) -> JSON {
        .object(["fields": .object(["a": .object(["integerValue": .string(n)])])])
    }

    @Test func everyCommittedDocumentIsNoticedInCommitOrder() throws {
        let h = try TestHarness()
        let seen = Seen()
        h.service.watchDocumentChanges { seen.add($0) }
        let doc = "/v1/\(h.root)/notes/n1"
        #expect(h.call("PATCH", doc, Self.fields("1")).status == 200)
        #expect(h.call("PATCH", doc, Self.fields("2")).status == 200)
        #expect(h.call("DELETE", doc).status == 200)
        // A failed precondition commits nothing, so nothing is noticed.
        #expect(h.call("PATCH", doc + "?currentDocument.exists=true", .object(["fields": .object([:])])).status == 404)
        #expect(h.call("DELETE", "/emulator/v1/projects/\(h.project)/databases/(default)/documents").status == 200)
        h.service.listeners.sync {}
        let all = seen.all
        #expect(all.map(\.kind) == [.created, .updated, .deleted, .cleared])
        #expect(all.prefix(3).allSatisfy { $0.path == "notes/n1" && $0.database == "projects/\(h.project)/databases/(default)" })
        #expect(all.last?.path == "")
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.time <= $1.time })
    }

    /// A watcher that wants nothing during a commit gets nothing for it; one that wants gets all.
    @Test func aWatcherHearsOnlyCommitsItWants() throws {
        let h = try TestHarness()
        let idle = Seen(), busy = Seen()
        let asked = Seen()
        h.service.watchDocumentChanges(when: {
            asked.add([DocumentChangeNotice(database: nil, path: "", kind: .cleared, time: Instant(unixMicros: 0))])
            return false
        }) { idle.add($0) }
        h.service.watchDocumentChanges(when: { true }) { busy.add($0) }
        let doc = "/v1/\(h.root)/notes/n1"
        #expect(h.call("PATCH", doc, Self.fields("1")).status == 200)
        #expect(h.call("DELETE", doc).status == 200)
        h.service.listeners.sync {}
        #expect(idle.all.isEmpty)
        #expect(asked.all.count == 2)
        #expect(busy.all.map(\.kind) == [.created, .deleted])
    }
}
