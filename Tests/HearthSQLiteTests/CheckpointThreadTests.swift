import Foundation
import Testing
import HearthSQLite

/// The checkpoint thread (`Layout.checkpointBackstopPages`): checkpoints leave the writer, nothing
/// committed is lost, and the WAL stays bounded while a writer never pauses.
@Suite struct CheckpointThreadTests {
    /// Small figures so a test crosses the backstop many times: woken at 64 pages, the writer
    /// finishes at 256 (4 KiB pages: ~1 MiB of WAL).
    static let layout = Database.Layout(pageSize: 4096, autocheckpointPages: 64, checkpointBackstopPages: 256)
    static let schema = [Migration("t.1", "CREATE TABLE chunks (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")]

    private func walSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0
    }

    @Test func aLongRunOfCommitsKeepsEveryRowAndTheWALUnderTheBackstop() throws {
        let path = temporaryDatabasePath()
        let rows = 600
        // 16 KiB a row: ~5 pages of WAL per commit, ~3,000 pages in all — 12 times the backstop.
        let chunk = (0..<16384).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var largestWAL = 0
        var passes = (thread: 0, writer: 0)
        do {
            let db = try Database(path: path, layout: Self.layout)
            try db.migrate(Self.schema)
            for i in 0..<rows {
                try db.write { try $0.run("INSERT INTO chunks (id, data) VALUES (?, ?)", [i, chunk + [UInt8(i & 0xff)]]) }
                largestWAL = max(largestWAL, walSize(path))
            }
            // The thread was woken: wait (a loaded machine is slow) for its first pass to be counted.
            let deadline = Date().addingTimeInterval(30)
            while db.checkpointPasses.thread == 0 && Date() < deadline { usleep(10_000) }
            #expect(db.checkpointPasses.thread > 0)
            // Every pass is timed: the thread's, and the writer's at the backstop when it ran any.
            #expect(db.checkpointSeconds.thread > 0)
            #expect((db.checkpointPasses.writer > 0) == (db.checkpointSeconds.writer > 0))
            // Every commit is there and the file is whole, read while the thread may still copy.
            #expect(try db.read { try $0.scalarInt("SELECT count(*) FROM chunks") } == Int64(rows))
            #expect(try db.read { try $0.first("PRAGMA integrity_check") { $0.text(0) } } == "ok")
            // The shutdown checkpoint waits for a pass in progress instead of failing SQLITE_BUSY.
            try db.checkpoint()
            #expect(walSize(path) == 0)
            passes = db.checkpointPasses
        }
        // A WAL frame is a page plus a 24-byte header, after a 32-byte file header. The bound: the
        // backstop plus the frames of one commit (a 16 KiB row: 5 overflow and leaf pages, a
        // few b-tree pages more — 16 is generous), far below the ~12 MiB a WAL that never restarts
        // would reach.
        let bound = (256 + 16) * (4096 + 24) + 32
        #expect(largestWAL > 0)
        #expect(largestWAL <= bound, "WAL reached \(largestWAL) bytes, bound \(bound); passes \(passes)")
        // Reopened: everything committed, byte for byte.
        let db = try Database(path: path, layout: Self.layout)
        let last = try db.read { try $0.first("SELECT data FROM chunks WHERE id = ?", [rows - 1]) { $0.blob(0) } }
        #expect(last == chunk + [UInt8((rows - 1) & 0xff)])
        #expect(try db.read { try $0.scalarInt("SELECT count(*) FROM chunks") } == Int64(rows))
    }

    @Test func readersWritersAndTheThreadTogetherLoseNothing() throws {
        let db = try Database(path: temporaryDatabasePath(), layout: Self.layout)
        try db.migrate(Self.schema)
        let chunk = [UInt8](repeating: 7, count: 8192)
        let group = DispatchGroup()
        let failures = Failures()
        for t in 0..<3 {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                do {
                    for i in 0..<150 {
                        try db.write { try $0.run("INSERT INTO chunks (id, data) VALUES (?, ?)", [t * 1000 + i, chunk]) }
                        // Each writer counts its own rows: all it committed, whatever a pass was doing.
                        let mine = try db.read { try $0.scalarInt("SELECT count(*) FROM chunks WHERE id / 1000 = ?", [t]) }
                        if mine != Int64(i + 1) { failures.add("writer \(t) saw \(mine ?? -1) rows after \(i + 1) commits") }
                    }
                } catch { failures.add("\(error)") }
            }
        }
        group.wait()
        #expect(failures.all.isEmpty)
        #expect(try db.read { try $0.scalarInt("SELECT count(*) FROM chunks") } == 450)
        #expect(try db.read { try $0.first("PRAGMA integrity_check") { $0.text(0) } } == "ok")
    }

    @Test func smallLayoutCheckpointsOnTheThread() throws {
        let db = try Database(path: temporaryDatabasePath(), layout: .small)
        try db.migrate(Self.schema)
        let chunk = [UInt8](repeating: 1, count: 16384)
        // ~5,000 pages: past `small`'s 4,096-page threshold, so the thread was woken (Firestore's
        // checkpoints left the committing request's thread too: docs/benchmarks.md, commitlat).
        for i in 0..<1000 {
            try db.write { try $0.run("INSERT INTO chunks (id, data) VALUES (?, ?)", [i, chunk]) }
        }
        let deadline = Date().addingTimeInterval(30)
        while db.checkpointPasses.thread == 0 && Date() < deadline { usleep(10_000) }
        #expect(db.checkpointPasses.thread > 0)
        // SQLite's own automatic checkpoint is off: the thread's WAL hook took its place.
        #expect(try db.withWriter { try $0.scalarInt("PRAGMA wal_autocheckpoint") } == 0)
        #expect(try db.read { try $0.scalarInt("SELECT count(*) FROM chunks") } == 1000)
    }
}
