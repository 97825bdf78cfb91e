import Dispatch
import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// The last commit time is stored once per write transaction (`CommitTimes`, flushed by the group
/// commit's `beforeCommit`), and must still be at least every acknowledged commit's after a crash.
@Suite struct CommitTimesTests {
    /// Commit times handed to completions (guarded by its lock).
    final class Times: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [Instant] = []
        func add(_ t: Instant) { lock.withLock { list.append(t) } }
        var all: [Instant] { lock.withLock { list } }
    }

    static func create(_ path: String) -> Write {
        Write(path: ResourcePath(path.split(separator: "/").map(String.init)), operation: .update(fields: ["n": .integer(1)], mask: nil),
              transforms: [], precondition: Precondition(exists: false))
    }

    /// Eight commits batched into one transaction, then the process "killed" (its connections left
    /// open, nothing checkpointed: what `kill -9` leaves) and the file opened again: the stored time
    /// is the batch's last commit's, and under the same frozen clock the next commit comes 1 µs after
    /// it — so every commit of the batch, not only the one whose body ran last, is covered.
    @Test func lastCommitTimeOfABatchSurvivesACrash() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("commit-times-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("firestore.sqlite").path
        let h = try TestHarness(databasePath: path)
        let db = DatabaseID(project: h.project, database: "(default)")
        // The database's space exists before the batch (its commits then run without savepoints).
        let first = try h.service.commit(db, writes: [Self.create("c/first")], transaction: nil, caller: .admin).commitTime

        // Hold the writer so the commits queue behind it and run as one transaction.
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? h.database.write { _ in
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        let times = Times(), all = DispatchSemaphore(value: 0)
        for i in 0..<8 {
            h.service.commit(db, writes: [Self.create("c/d\(i)")], transaction: nil, caller: .admin, lead: false) { r in
                if case .success(let committed) = r { times.add(committed.commitTime) }
                all.signal()
            }
        }
        // Each commit was queued before `commit` returned, while the writer was held: the drainer
        // takes one or more of them and waits for the writer, and its transaction runs the rest
        // queued meanwhile, so all eight share one. (Waiting for exactly seven queued hung when the
        // drainer started late and took several at once.)
        release.signal()
        for _ in 0..<8 { all.wait() }
        let committed = times.all
        #expect(committed.count == 8)
        #expect(Set(committed).count == 8)
        let last = try #require(committed.max())
        #expect(last.unixMicros == first.unixMicros + 8)  // a frozen clock: 1 µs apart

        let reopened = try Database(path: path, layout: FirestoreService.databaseLayout)
        let stored = try reopened.read { c in try c.scalarInt("SELECT value FROM fs_meta WHERE key = 'last_commit'") }
        #expect(stored == last.unixMicros)
        let restarted = try TestHarness(database: reopened)
        let next = try restarted.service.commit(db, writes: [Self.create("c/after")], transaction: nil, caller: .admin).commitTime
        #expect(next.unixMicros == last.unixMicros + 1)
    }

    /// A commit refused by its precondition after others took their times stores nothing of its own,
    /// and the next commit is still after every acknowledged one.
    @Test func refusedCommitLeavesTheStoredTimeAtTheLastAcknowledged() throws {
        let h = try TestHarness()
        let db = DatabaseID(project: h.project, database: "(default)")
        let a = try h.service.commit(db, writes: [Self.create("c/a")], transaction: nil, caller: .admin).commitTime
        #expect(throws: FirestoreError.self) {
            try h.service.commit(db, writes: [Self.create("c/a")], transaction: nil, caller: .admin)
        }
        let stored = try h.database.read { c in try c.scalarInt("SELECT value FROM fs_meta WHERE key = 'last_commit'") }
        #expect(stored == a.unixMicros)
        let b = try h.service.commit(db, writes: [Self.create("c/b")], transaction: nil, caller: .admin).commitTime
        #expect(b.unixMicros == a.unixMicros + 1)
        #expect(try h.database.read { c in try c.scalarInt("SELECT value FROM fs_meta WHERE key = 'last_commit'") } == b.unixMicros)
    }
}
