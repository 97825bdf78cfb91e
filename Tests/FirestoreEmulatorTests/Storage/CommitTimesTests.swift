import Dispatch
import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// `fs_meta`'s `last_commit` is a ceiling above every commit time handed out, stored only by a
/// transaction whose times pass the committed one (`CommitTimes`, flushed by the group commit's
/// `beforeCommit`, told by its `afterTransaction` whether it committed), and must still be at
/// least every acknowledged commit's after a crash.
@Suite struct CommitTimesTests {
    /// Commit times handed to completions (guarded by its lock).
    final class Times: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [Instant] = []
        func add(_ t: Instant) { lock.withLock { list.append(t) } }
        var all: [Instant] { lock.withLock { list } }
    }

    static let lease = CommitTimes.leaseMicros

    static func create(_ path: String) -> Write {
        Write(path: ResourcePath(path.split(separator: "/").map(String.init)), operation: .update(fields: ["n": .integer(1)], mask: nil),
              transforms: [], precondition: Precondition(exists: false))
    }

    static func stored(_ database: Database) throws -> Int64? {
        try database.read { c in try c.scalarInt("SELECT value FROM fs_meta WHERE key = 'last_commit'") }
    }

    /// Eight commits batched into one transaction whose times pass the stored ceiling, then the
    /// process "killed" (its connections left open, nothing checkpointed: what `kill -9` leaves) and
    /// the file opened again: the stored ceiling is the batch's last commit's time plus the lease,
    /// and under the same frozen clock the next commit comes 1 µs after it — so every commit of the
    /// batch, not only the one whose body ran last, is covered.
    @Test func ceilingOfABatchSurvivesACrash() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("commit-times-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("firestore.sqlite").path
        let h = try TestHarness(databasePath: path)
        let db = DatabaseID(project: h.project, database: "(default)")
        // The database's space exists before the batch (its commits then run without savepoints).
        let first = try h.service.commit(db, writes: [Self.create("c/first")], transaction: nil, caller: .admin).commitTime
        #expect(try Self.stored(h.database) == first.unixMicros + Self.lease)
        // Past the first commit's ceiling: the batch must store one of its own.
        #expect(h.clock.advance(seconds: 1))

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
        let firstOfBatch = try #require(committed.min())
        #expect(firstOfBatch == h.clock.now())
        #expect(last.unixMicros == firstOfBatch.unixMicros + 7)  // a frozen clock: 1 µs apart

        let reopened = try Database(path: path, layout: FirestoreService.databaseLayout)
        #expect(try Self.stored(reopened) == last.unixMicros + Self.lease)
        let restarted = try TestHarness(database: reopened)
        let next = try restarted.service.commit(db, writes: [Self.create("c/after")], transaction: nil, caller: .admin).commitTime
        #expect(next.unixMicros == last.unixMicros + Self.lease + 1)
    }

    /// Commits under the committed ceiling store nothing (a refused one neither); the first past it
    /// stores its own time plus the lease; and every commit is after every acknowledged one.
    @Test func commitsUnderTheCeilingStoreNothing() throws {
        let h = try TestHarness()
        let db = DatabaseID(project: h.project, database: "(default)")
        let a = try h.service.commit(db, writes: [Self.create("c/a")], transaction: nil, caller: .admin).commitTime
        let ceiling = a.unixMicros + Self.lease
        #expect(try Self.stored(h.database) == ceiling)
        #expect(throws: FirestoreError.self) {
            try h.service.commit(db, writes: [Self.create("c/a")], transaction: nil, caller: .admin)
        }
        #expect(try Self.stored(h.database) == ceiling)
        let b = try h.service.commit(db, writes: [Self.create("c/b")], transaction: nil, caller: .admin).commitTime
        #expect(b.unixMicros == a.unixMicros + 1)
        #expect(try Self.stored(h.database) == ceiling)
        // The clock reaches the ceiling: that commit is at it, still covered.
        #expect(h.clock.advance(seconds: Double(ceiling - h.clock.now().unixMicros) / 1_000_000))
        let c = try h.service.commit(db, writes: [Self.create("c/c")], transaction: nil, caller: .admin).commitTime
        #expect(c.unixMicros == ceiling)
        #expect(try Self.stored(h.database) == ceiling)
        // The next one passes it and stores a new one.
        let d = try h.service.commit(db, writes: [Self.create("c/d")], transaction: nil, caller: .admin).commitTime
        #expect(d.unixMicros == ceiling + 1)
        #expect(try Self.stored(h.database) == d.unixMicros + Self.lease)
    }

    /// A ceiling stored by a transaction that then rolled back is not taken as committed: the next
    /// transaction, though its time is under that ceiling, stores one again.
    @Test func aCeilingRolledBackIsStoredAgain() throws {
        let database = try Database(path: nil)
        try database.write { c in
            try c.run("CREATE TABLE fs_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID")
            try c.run("INSERT INTO fs_meta (key, value) VALUES ('last_commit', 0)")
        }
        let times = CommitTimes()
        final class Flag: @unchecked Sendable {
            private let lock = NSLock()
            private var value = false
            func set(_ v: Bool) { lock.withLock { value = v } }
            var isSet: Bool { lock.withLock { value } }
        }
        let failing = Flag()
        struct Refused: Error {}
        let batcher = GroupCommit(database: database, beforeCommit: { c in
            try times.flush(c)
            if failing.isSet { throw Refused() }
        }, afterTransaction: { times.ended(committed: $0) })
        let now = Instant(unixMicros: 1_000_000)

        failing.set(true)
        #expect(throws: (any Error).self) {
            try batcher.perform { c in times.record(try times.next(now: now, c)) }
        }
        #expect(try Self.stored(database) == 0)
        failing.set(false)
        let t = try batcher.perform { c -> Instant in
            let t = try times.next(now: now, c)
            times.record(t)
            return t
        }
        #expect(t.unixMicros == now.unixMicros + 1)  // after the rolled-back one, whose time is not taken back
        #expect(try Self.stored(database) == t.unixMicros + Self.lease)
        // Under the committed ceiling now: nothing stored.
        let u = try batcher.perform { c -> Instant in
            let u = try times.next(now: now, c)
            times.record(u)
            return u
        }
        #expect(u.unixMicros == t.unixMicros + 1)
        #expect(try Self.stored(database) == t.unixMicros + Self.lease)
    }

    /// A file written when the exact last commit time was stored opens as before: that time is a
    /// ceiling too, the next commit comes after it.
    @Test func anExactStoredTimeIsACeiling() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("commit-times-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("firestore.sqlite").path
        let h = try TestHarness(databasePath: path)
        let db = DatabaseID(project: h.project, database: "(default)")
        _ = try h.service.commit(db, writes: [Self.create("c/first")], transaction: nil, caller: .admin)
        // What an older binary left: the exact time of its last commit, far ahead of this clock.
        let old = h.clock.now().unixMicros + 5_000_000
        try h.database.write { c in try c.run("UPDATE fs_meta SET value = ? WHERE key = 'last_commit'", [old]) }
        let reopened = try Database(path: path, layout: FirestoreService.databaseLayout)
        let restarted = try TestHarness(database: reopened)
        let next = try restarted.service.commit(db, writes: [Self.create("c/after")], transaction: nil, caller: .admin).commitTime
        #expect(next.unixMicros == old + 1)
        #expect(try Self.stored(reopened) == old + 1 + Self.lease)
    }
}
