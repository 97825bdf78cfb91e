import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// Data directories of the old layout (Firestore's tables in the file shared with the other
/// services) move to Firestore's own file, whatever step a previous attempt died after.
@Suite struct FirestoreFileMoveTests {
    /// Another service's schema in the shared file, which the move must leave alone.
    static let other = [Migration("other.1", "CREATE TABLE other_rows (v TEXT NOT NULL); INSERT INTO other_rows VALUES ('kept');")]

    struct OldLayout {
        let dir: URL
        var shared: String { dir.appendingPathComponent("hearth.sqlite").path }
        var own: String { dir.appendingPathComponent("firestore.sqlite").path }
        /// Every document written, with its REST JSON as read back before the move.
        let documents: [String: JSON]
    }

    /// A shared 16 KiB-page file, migrated and written the way the old layout was, with documents
    /// (top-level, nested, one deleted, one updated: history rows too).
    static func oldLayout() throws -> OldLayout {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fs-move-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let shared = try Database(path: dir.appendingPathComponent("hearth.sqlite").path)
        try shared.migrate(FirestoreService.migrations + other)
        let h = try TestHarness(database: shared)
        for i in 0..<30 { _ = h.put("items/i\(i)", ["n": int(Int64(i)), "tag": str(i % 2 == 0 ? "even" : "odd")]) }
        _ = h.put("users/u1/files/f1", ["name": str("a.png")])
        _ = h.put("items/i3", ["n": int(333)])
        #expect(h.call("DELETE", h.api("/items/i4")).status == 200)
        var documents: [String: JSON] = [:]
        for path in (0..<30).filter({ $0 != 4 }).map({ "items/i\($0)" }) + ["users/u1/files/f1"] {
            let got = h.call("GET", h.api("/" + path))
            #expect(got.status == 200)
            documents[path] = got.json
        }
        #expect(try shared.pageSize() == 16384)
        return OldLayout(dir: dir, documents: documents)
    }

    /// Opens the data directory as `hearth start` does after a crash: the shared file migrated with
    /// the old list, the move run to its end, then each file with its own schema.
    static func reopen(_ layout: OldLayout) throws -> (shared: Database, own: Database) {
        let shared = try Database(path: layout.shared)
        #expect(try FirestoreFileMove.isNeeded(in: shared))
        try shared.migrate(FirestoreService.migrations + other)
        try FirestoreFileMove.run(from: shared, to: layout.own)
        #expect(try !FirestoreFileMove.isNeeded(in: shared))
        // The shared file's ledger no longer names Firestore's migrations (else this would refuse it).
        try shared.migrate(other)
        let own = try Database(path: layout.own, layout: FirestoreService.databaseLayout)
        try own.migrate(FirestoreService.migrations)
        return (shared, own)
    }

    static func expectEverything(_ layout: OldLayout, _ files: (shared: Database, own: Database)) throws {
        #expect(try files.own.pageSize() == 4096)
        #expect(try files.shared.pageSize() == 16384)
        let fsTables = try files.shared.read { try $0.scalarInt("SELECT count(*) FROM sqlite_master WHERE name LIKE 'fs\\_%' ESCAPE '\\'") }
        #expect(fsTables == 0)
        #expect(try files.shared.read { try $0.rows("SELECT v FROM other_rows") { $0.text(0) } } == ["kept"])
        #expect(!FileManager.default.fileExists(atPath: layout.own + ".moving"))
        let h = try TestHarness(database: files.own)
        for (path, json) in layout.documents {
            let got = h.call("GET", h.api("/" + path))
            #expect(got.status == 200, "\(path) is missing after the move")
            #expect(got.json == json, "\(path) changed in the move")
        }
        #expect(h.call("GET", h.api("/items/i4")).status == 404)
        #expect(h.query(sq("items", where: ff("tag", "EQUAL", str("even")))).ids.count == 14)
        // Commit times go on from the moved ones.
        let later = h.put("items/new", [:])["updateTime"]?.stringValue ?? ""
        let earlier = layout.documents["items/i3"]?["updateTime"]?.stringValue ?? "~"
        #expect(later > earlier)
    }

    @Test(arguments: [FirestoreFileMove.Step?.none, .schemaCreated, .copied, .renamed])
    func movesEveryDocumentWhereverAnEarlierAttemptStopped(stop: FirestoreFileMove.Step?) throws {
        let layout = try Self.oldLayout()
        defer { try? FileManager.default.removeItem(at: layout.dir) }
        if let stop {
            // The first attempt dies right after `stop` (a later start reopens the files).
            let shared = try Database(path: layout.shared)
            try FirestoreFileMove.run(from: shared, to: layout.own, stoppingAfter: stop)
        }
        try Self.expectEverything(layout, try Self.reopen(layout))
    }

    @Test func aTornTemporaryFileIsStartedOver() throws {
        let layout = try Self.oldLayout()
        defer { try? FileManager.default.removeItem(at: layout.dir) }
        try Data("not a database, half written".utf8).write(to: URL(fileURLWithPath: layout.own + ".moving"))
        try Data("stale".utf8).write(to: URL(fileURLWithPath: layout.own + ".moving-journal"))
        try Self.expectEverything(layout, try Self.reopen(layout))
    }

    @Test func documentsAnOlderHearthWroteAfterTheMoveAreNeverDropped() throws {
        let layout = try Self.oldLayout()
        defer { try? FileManager.default.removeItem(at: layout.dir) }
        _ = try Self.reopen(layout)
        // An older hearth on the moved directory recreates Firestore's tables in the shared file.
        let shared = try Database(path: layout.shared)
        try shared.migrate(FirestoreService.migrations + Self.other)
        let old = try TestHarness(database: shared)
        // It runs later than the hearth that wrote the moved documents. (Both harnesses' clocks stand
        // at one instant, and the commit clock stores its first commit's time plus a lease
        // (`CommitTimes`): the same instant for both would store the same value, which a later run's
        // clock, and an older hearth's exact times, never do.)
        #expect(old.clock.advance(seconds: 60))
        _ = old.put("late/doc", ["v": str("written by the older hearth")])
        #expect(throws: FirestoreFileMove.MoveError.self) { try FirestoreFileMove.run(from: shared, to: layout.own) }
        #expect(old.call("GET", old.api("/late/doc")).status == 200)
        #expect(try FirestoreFileMove.isNeeded(in: shared))
    }
}
