import Foundation
import HearthCore
import Testing
@testable import HearthSQLite

@Suite struct GroupCommitTests {
    func database() throws -> Database {
        let db = try Database(path: nil)
        try db.write { c in try c.run("CREATE TABLE t (v TEXT NOT NULL)") }
        return db
    }

    func values(_ db: Database) throws -> [String] {
        try db.read { c in try c.rows("SELECT v FROM t ORDER BY rowid") { $0.text(0) } }
    }

    struct Refused: Error, Equatable {}

    /// Collects what concurrent callers got (guarded by its lock).
    final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var byName: [String: Result<Int, Refused>] = [:]
        func set(_ name: String, _ r: Result<Int, Refused>) { lock.withLock { byName[name] = r } }
        subscript(name: String) -> Result<Int, Refused>? { lock.withLock { byName[name] } }
    }

    @Test func aloneBodyCommitsAndReturnsItsResult() throws {
        let db = try database()
        let batcher = GroupCommit(database: db)
        let n = try batcher.perform { c in
            try c.run("INSERT INTO t (v) VALUES ('a')")
            return 7
        }
        #expect(n == 7)
        #expect(try values(db) == ["a"])
    }

    @Test func aloneBodyThatThrowsLeavesNothing() throws {
        let db = try database()
        let batcher = GroupCommit(database: db)
        #expect(throws: Refused.self) {
            try batcher.perform { c -> Int in
                try c.run("INSERT INTO t (v) VALUES ('a')")
                throw Refused()
            }
        }
        #expect(try values(db).isEmpty)
        // The batcher is usable afterwards.
        _ = try batcher.perform { c in try c.run("INSERT INTO t (v) VALUES ('b')") }
        #expect(try values(db) == ["b"])
    }

    /// Lines up bodies behind a held writer so they run in one transaction: the one that throws
    /// loses only its own changes, the others are committed, each caller gets its own outcome.
    @Test func batchedBodyThatThrowsRollsBackOnlyItself() throws {
        // Each body in its own savepoint: the one that throws after writing loses only its rows.
        let (outcomes, stored) = try batch([Body(name: "leader"), Body(name: "kept"),
                                            Body(name: "refused", failAfterWriting: true),
                                            Body(name: "also-kept")])
        #expect(outcomes["leader"] == .success(6))
        #expect(outcomes["kept"] == .success(4))
        #expect(outcomes["also-kept"] == .success(9))
        #expect(outcomes["refused"] == .failure(Refused()))
        #expect(stored == ["leader", "kept", "also-kept"])
    }

    /// How a lined-up body behaves: `bare` runs with `savepoint: false`.
    struct Body {
        var name: String
        var bare = false
        var failBeforeWriting = false
        var failAfterWriting = false
    }

    /// Runs `bodies` in one transaction behind a held writer (the first leads) and returns what
    /// each caller got and what the table holds afterwards.
    func batch(_ bodies: [Body]) throws -> (Outcomes, Set<String>) {
        let db = try database()
        let batcher = GroupCommit(database: db)
        let outcomes = Outcomes()
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        // Hold the writer so the first caller (the leader) blocks inside the batcher.
        DispatchQueue.global().async(group: group) {
            _ = try? db.write { _ in
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        for (i, b) in bodies.enumerated() {
            DispatchQueue.global().async(group: group) {
                do {
                    let r = try batcher.perform(savepoint: !b.bare) { c -> Int in
                        if b.failBeforeWriting { throw Refused() }
                        try c.run("INSERT INTO t (v) VALUES (?)", [b.name])
                        if b.failAfterWriting { throw Refused() }
                        return b.name.utf8.count
                    }
                    outcomes.set(b.name, .success(r))
                } catch {
                    outcomes.set(b.name, .failure(Refused()))
                }
            }
            // The leader first takes its own body and blocks on the held writer; the rest queue.
            if i == 0 { usleep(50_000) }
        }
        while batcher.queued < bodies.count - 1 { usleep(1000) }
        release.signal()
        group.wait()
        return (outcomes, Set(try values(db)))
    }

    /// A body without a savepoint that throws before writing leaves the batch as it was.
    @Test func bareBodyThatThrowsBeforeWritingFailsAlone() throws {
        let (outcomes, stored) = try batch([Body(name: "leader"), Body(name: "kept", bare: true),
                                            Body(name: "refused", bare: true, failBeforeWriting: true),
                                            Body(name: "also-kept", bare: true)])
        #expect(outcomes["leader"] == .success(6))
        #expect(outcomes["kept"] == .success(4))
        #expect(outcomes["also-kept"] == .success(9))
        #expect(outcomes["refused"] == .failure(Refused()))
        #expect(stored == ["leader", "kept", "also-kept"])
    }

    /// A body without a savepoint that throws after writing cannot be undone alone: the whole batch
    /// fails and nothing of it is stored (never half of it).
    @Test func bareBodyThatThrowsAfterWritingFailsItsBatch() throws {
        let (outcomes, stored) = try batch([Body(name: "leader"), Body(name: "kept", bare: true),
                                            Body(name: "refused", bare: true, failAfterWriting: true),
                                            Body(name: "with-savepoint")])
        for name in ["leader", "kept", "refused", "with-savepoint"] {
            #expect(outcomes[name] == .failure(Refused()), "\(name)")
        }
        #expect(stored.isEmpty)
    }

    @Test func concurrentCallersAllCommit() throws {
        let db = try database()
        let batcher = GroupCommit(database: db)
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            _ = try? batcher.perform { c in try c.run("INSERT INTO t (v) VALUES (?)", ["v\(i)"]) }
        }
        #expect(Set(try values(db)) == Set((0..<64).map { "v\($0)" }))
    }
}
