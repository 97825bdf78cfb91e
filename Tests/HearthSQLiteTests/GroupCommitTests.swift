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

    // MARK: submit (no thread waits for the batch)

    /// What submitted bodies' completions got, in the order they were called.
    final class Completions: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [(String, Result<Int, Refused>)] = []
        func add(_ name: String, _ r: Result<Int, any Error>) {
            lock.withLock { list.append((name, r.mapError { _ in Refused() })) }
        }
        var names: [String] { lock.withLock { list.map(\.0) } }
        subscript(name: String) -> Result<Int, Refused>? { lock.withLock { list.first { $0.0 == name }?.1 } }
        var count: Int { lock.withLock { list.count } }
    }

    /// A table whose rows need a parent row by COMMIT (a deferred foreign key): a body inserting an
    /// orphan succeeds, and the COMMIT of its batch fails.
    func databaseWithDeferredCheck() throws -> Database {
        let db = try Database(path: nil)
        try db.withWriter { c in try c.run("PRAGMA foreign_keys=ON") }
        try db.write { c in
            try c.run("CREATE TABLE t (v TEXT NOT NULL)")
            try c.run("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
            try c.run("CREATE TABLE child (pid INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
        }
        return db
    }

    /// Submits `bodies` while the first one's body runs (it leads, on another thread, and waits
    /// inside its body until released): the others return at once, queued, and run in the same
    /// transaction. Returns the completions, the table, and how many write transactions ran.
    func submitted(_ bodies: [Body], orphan: Set<String> = [], db given: Database? = nil, batcher reused: GroupCommit? = nil) throws
        -> (Completions, [String], Int) {
        let db = try given ?? database()
        let batcher = reused ?? GroupCommit(database: db)
        let completions = Completions()
        let running = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let all = DispatchSemaphore(value: 0)
        let generation = db.writeGeneration
        @Sendable func submit(_ b: Body, leader: Bool) {
            batcher.submit(savepoint: !b.bare, { c -> Int in
                if leader {
                    running.signal()
                    release.wait()
                }
                if b.failBeforeWriting { throw Refused() }
                try c.run("INSERT INTO t (v) VALUES (?)", [b.name])
                if orphan.contains(b.name) { try c.run("INSERT INTO child (pid) VALUES (42)") }
                if b.failAfterWriting { throw Refused() }
                return b.name.utf8.count
            }, completion: { r in
                completions.add(b.name, r)
                if completions.count == bodies.count { all.signal() }
            })
        }
        DispatchQueue.global().async { submit(bodies[0], leader: true) }
        running.wait()
        // The others queue and return without waiting.
        for b in bodies.dropFirst() { submit(b, leader: false) }
        #expect(batcher.queued == bodies.count - 1)
        #expect(completions.count == 0)
        release.signal()
        all.wait()
        return (completions, try values(db), db.writeGeneration - generation)
    }

    @Test func submittedBodiesShareOneTransactionAndCompleteInOrder() throws {
        let names = (0..<16).map { "s\($0)" }
        let (completions, stored, transactions) = try submitted(names.map { Body(name: $0, bare: true) })
        #expect(completions.names == names)
        for n in names { #expect(completions[n] == .success(n.utf8.count)) }
        #expect(stored == names)
        #expect(transactions == 1)
    }

    @Test func submittedBodyThatThrowsFailsAloneInItsBatch() throws {
        let (completions, stored, transactions) = try submitted([
            Body(name: "leader"), Body(name: "kept"), Body(name: "refused", failAfterWriting: true),
            Body(name: "bare-refused", bare: true, failBeforeWriting: true), Body(name: "also-kept", bare: true),
        ])
        #expect(completions.names == ["leader", "kept", "refused", "bare-refused", "also-kept"])
        #expect(completions["refused"] == .failure(Refused()))
        #expect(completions["bare-refused"] == .failure(Refused()))
        #expect(completions["also-kept"] == .success(9))
        #expect(stored == ["leader", "kept", "also-kept"])
        #expect(transactions == 1)
    }

    /// A COMMIT that fails fails every body of its batch (each completion gets the error), and
    /// stores nothing of any of them; bodies queued after it run in the next transaction.
    @Test func failedCommitFailsEveryBodyOfItsBatch() throws {
        let db = try databaseWithDeferredCheck()
        let batcher = GroupCommit(database: db)
        let (completions, stored, _) = try submitted([Body(name: "leader", bare: true), Body(name: "a"),
                                                      Body(name: "orphan", bare: true), Body(name: "b", bare: true)],
                                                     orphan: ["orphan"], db: db, batcher: batcher)
        for n in ["leader", "a", "orphan", "b"] { #expect(completions[n] == .failure(Refused()), "\(n)") }
        #expect(stored.isEmpty)
        // The batcher goes on.
        let done = DispatchSemaphore(value: 0)
        let after = Completions()
        batcher.submit({ c -> Int in try c.run("INSERT INTO t (v) VALUES ('later')"); return 1 }) { r in
            after.add("later", r)
            done.signal()
        }
        done.wait()
        #expect(after["later"] == .success(1))
        #expect(try values(db) == ["later"])
    }

    /// Bodies submitted while a batch whose COMMIT will fail is running join it and fail with it;
    /// a body submitted after its completions ran commits on its own.
    @Test func bodiesQueuedIntoAFailedBatchFailToo() throws {
        let db = try databaseWithDeferredCheck()
        let (completions, stored, transactions) = try submitted([Body(name: "orphan", bare: true), Body(name: "queued-1"),
                                                                 Body(name: "queued-2", bare: true)],
                                                                orphan: ["orphan"], db: db)
        #expect(completions.names == ["orphan", "queued-1", "queued-2"])
        for n in ["orphan", "queued-1", "queued-2"] { #expect(completions[n] == .failure(Refused()), "\(n)") }
        #expect(stored.isEmpty)
        #expect(transactions == 1)
    }

    /// Waiting callers and submitted bodies from many threads at once: every one commits once, a
    /// waiting caller returns after its commit, and no submitted body is left without a leader.
    @Test func waitingAndSubmittedCallersAllCommit() throws {
        let db = try database()
        let batcher = GroupCommit(database: db)
        let completions = Completions()
        let group = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: 200) { i in
            if i % 3 == 0 {
                let r = try? batcher.perform { c in try c.run("INSERT INTO t (v) VALUES (?)", ["v\(i)"]) }
                #expect(r != nil)
                #expect((try? values(db))?.contains("v\(i)") == true)
            } else {
                group.enter()
                batcher.submit(savepoint: i % 2 == 0, { c -> Int in
                    try c.run("INSERT INTO t (v) VALUES (?)", ["v\(i)"])
                    return i
                }, completion: { r in
                    completions.add("v\(i)", r)
                    group.leave()
                })
            }
        }
        group.wait()
        #expect(completions.count == 200 - 67)
        #expect(Set(try values(db)) == Set((0..<200).map { "v\($0)" }))
        #expect(try values(db).count == 200)
    }

    /// Sixteen threads of waiting callers (more than the cores, as the HTTP workers are) committing
    /// in a loop while the test's thread submits bodies: waiters sleep on their own jobs and are woken
    /// only when their body ran or the lead is theirs, so a lost wake-up would hang a thread here
    /// (the run would not finish) and a double run would store a value twice.
    @Test func sixteenWaitingThreadsAllReturn() throws {
        let db = try database()
        let batcher = GroupCommit(database: db)
        let rounds = 40
        let done = DispatchGroup()
        for t in 0..<16 {
            done.enter()
            Thread.detachNewThread {
                for r in 0..<rounds {
                    // A failure leaves its value missing, which the check of what was stored finds.
                    _ = try? batcher.perform(savepoint: r % 2 == 0) { c in try c.run("INSERT INTO t (v) VALUES (?)", ["w\(t)-\(r)"]) }
                }
                done.leave()
            }
        }
        let submitted = DispatchGroup()
        for r in 0..<rounds {
            submitted.enter()
            batcher.submit({ c in try c.run("INSERT INTO t (v) VALUES (?)", ["s-\(r)"]) }, completion: { _ in submitted.leave() })
        }
        #expect(done.wait(timeout: .now() + 120) == .success)
        #expect(submitted.wait(timeout: .now() + 120) == .success)
        let stored = try values(db)
        var expected = Set((0..<rounds).map { "s-\($0)" })
        for t in 0..<16 { for r in 0..<rounds { expected.insert("w\(t)-\(r)") } }
        #expect(stored.count == 16 * rounds + rounds)
        #expect(Set(stored) == expected)
        #expect(batcher.queued == 0)
    }

    /// A caller sleeps on its thread's one semaphore, kept for the thread's life, in whichever group
    /// commit it waits: threads alternating between two batchers (each busy with the others'
    /// callers) reuse it in both, and a signal left on it — or one meant for another wait — would
    /// return a caller before its body ran (its value missing, `notRun` thrown).
    @Test func oneSemaphorePerThreadServesEveryBatcher() throws {
        let dbs = [try database(), try database()]
        let batchers = dbs.map { GroupCommit(database: $0) }
        let rounds = 30
        let failures = Completions()
        let done = DispatchGroup()
        for t in 0..<12 {
            done.enter()
            Thread.detachNewThread {
                for r in 0..<rounds {
                    let k = (t + r) % 2
                    do {
                        try batchers[k].perform(savepoint: r % 3 != 0) { c in try c.run("INSERT INTO t (v) VALUES (?)", ["w\(t)-\(r)"]) }
                    } catch {
                        failures.add("w\(t)-\(r)", .failure(error))
                    }
                }
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + 120) == .success)
        #expect(failures.count == 0)
        for k in 0..<2 {
            var expected = Set<String>()
            for t in 0..<12 { for r in 0..<rounds where (t + r) % 2 == k { expected.insert("w\(t)-\(r)") } }
            let stored = try values(dbs[k])
            #expect(stored.count == expected.count)
            #expect(Set(stored) == expected)
            #expect(batchers[k].queued == 0)
        }
    }

    /// `lead: false` (a loop thread queuing a commit) never runs a body on the submitting thread,
    /// whether or not a batch is running, and completions still come in submission order, each
    /// after its body's COMMIT.
    @Test func submittedWithoutLeadingRunsElsewhereInOrder() throws {
        let db = try database()
        let batcher = GroupCommit(database: db)
        let completions = Completions()
        let submitter = pthread_self()
        let bodiesOnSubmitter = Completions()
        let all = DispatchSemaphore(value: 0)
        let names = (0..<40).map { "q\($0)" }
        for name in names {
            batcher.submit(lead: false, { c -> Int in
                if pthread_equal(pthread_self(), submitter) != 0 { bodiesOnSubmitter.add(name, .success(0)) }
                try c.run("INSERT INTO t (v) VALUES (?)", [name])
                return name.utf8.count
            }, completion: { r in
                completions.add(name, r)
                if completions.count == names.count { all.signal() }
            })
        }
        #expect(all.wait(timeout: .now() + 60) == .success)
        #expect(bodiesOnSubmitter.count == 0)
        #expect(completions.names == names)
        #expect(try values(db) == names)
        #expect(batcher.queued == 0)
    }

    // MARK: beforeCommit (once per transaction)

    /// What a `beforeCommit` hook saw, call by call: the rows of `t` then (guarded by its lock).
    final class HookLog: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [[String]] = []
        private var failing = false
        var calls: [[String]] { lock.withLock { seen } }
        /// The next call throws after writing.
        func failNext() { lock.withLock { failing = true } }

        /// The hook: records the rows, writes its own row to `h`, and throws when told to.
        func hook(_ c: Connection) throws {
            let rows = try c.rows("SELECT v FROM t ORDER BY rowid") { $0.text(0) }
            try c.run("INSERT INTO h (n) VALUES (?)", [rows.count])
            let fail = lock.withLock {
                seen.append(rows)
                defer { failing = false }
                return failing
            }
            if fail { throw Refused() }
        }
    }

    /// A batcher whose `beforeCommit` is `log`'s hook, on `db` with the hook's table `h` added.
    func hooked(_ db: Database, _ log: HookLog) throws -> GroupCommit {
        try db.write { c in try c.run("CREATE TABLE h (n INTEGER NOT NULL)") }
        return GroupCommit(database: db, beforeCommit: { c in try log.hook(c) })
    }

    func hookRows(_ db: Database) throws -> [Int] {
        try db.read { c in try c.rows("SELECT n FROM h ORDER BY rowid") { Int($0.int64(0)) } }
    }

    /// One call per transaction, after its last body (it sees every body's rows), and its own
    /// writes commit with them.
    @Test func beforeCommitRunsOncePerTransactionAfterItsLastBody() throws {
        let db = try database()
        let log = HookLog()
        let batcher = try hooked(db, log)
        let names = (0..<16).map { "s\($0)" }
        let (completions, stored, transactions) = try submitted(names.map { Body(name: $0, bare: true) }, db: db, batcher: batcher)
        for n in names { #expect(completions[n] == .success(n.utf8.count)) }
        #expect(stored == names)
        #expect(transactions == 1)
        #expect(log.calls == [names])
        #expect(try hookRows(db) == [16])
    }

    /// A body rolled back to its savepoint leaves the others' transaction, and its hook call, as they were.
    @Test func beforeCommitRunsBesideABodyRolledBackAlone() throws {
        let db = try database()
        let log = HookLog()
        let batcher = try hooked(db, log)
        let (completions, stored, _) = try submitted([Body(name: "leader"), Body(name: "refused", failAfterWriting: true),
                                                      Body(name: "kept")], db: db, batcher: batcher)
        #expect(completions["refused"] == .failure(Refused()))
        #expect(completions["kept"] == .success(4))
        #expect(stored == ["leader", "kept"])
        #expect(log.calls == [["leader", "kept"]])
        #expect(try hookRows(db) == [2])
    }

    /// A hook that throws fails every body of its transaction, and nothing of the transaction
    /// (bodies' rows, the hook's own) is stored; the next transaction calls it again.
    @Test func beforeCommitThatThrowsFailsItsWholeBatch() throws {
        let db = try database()
        let log = HookLog()
        let batcher = try hooked(db, log)
        log.failNext()
        let (completions, stored, _) = try submitted([Body(name: "leader", bare: true), Body(name: "a"), Body(name: "b", bare: true)],
                                                     db: db, batcher: batcher)
        for n in ["leader", "a", "b"] { #expect(completions[n] == .failure(Refused()), "\(n)") }
        #expect(stored.isEmpty)
        #expect(try hookRows(db).isEmpty)
        _ = try batcher.perform { c in try c.run("INSERT INTO t (v) VALUES ('later')") }
        #expect(try values(db) == ["later"])
        #expect(try hookRows(db) == [1])
        #expect(log.calls.count == 2)
    }

    /// A lone body that throws rolls its transaction back before the hook: it is not called, and a
    /// COMMIT that fails (a deferred check) undoes the hook's writes with the bodies'.
    @Test func beforeCommitIsNotCalledForAFailedLoneBodyAndGoesWithAFailedCommit() throws {
        let db = try databaseWithDeferredCheck()
        let log = HookLog()
        let batcher = try hooked(db, log)
        #expect(throws: Refused.self) {
            try batcher.perform { c -> Int in
                try c.run("INSERT INTO t (v) VALUES ('a')")
                throw Refused()
            }
        }
        #expect(log.calls.isEmpty)
        #expect(throws: (any Error).self) {
            try batcher.perform { c in
                try c.run("INSERT INTO t (v) VALUES ('orphan')")
                try c.run("INSERT INTO child (pid) VALUES (42)")
            }
        }
        #expect(log.calls == [["orphan"]])
        #expect(try values(db).isEmpty)
        #expect(try hookRows(db).isEmpty)
    }

    // MARK: afterTransaction (whether the COMMIT succeeded)

    /// What an `afterTransaction` hook was told, and the rows of `t` committed when it was (guarded
    /// by its lock).
    final class EndLog: @unchecked Sendable {
        private let lock = NSLock()
        private var told: [Bool] = []
        var ends: [Bool] { lock.withLock { told } }
        func add(_ committed: Bool) { lock.withLock { told.append(committed) } }
    }

    /// Told true after a COMMIT that succeeded, false after a lone body threw, after a hook threw
    /// and after a COMMIT that failed (a deferred check) — once per transaction, before its callers
    /// hear of it.
    @Test func afterTransactionLearnsWhetherTheCommitSucceeded() throws {
        let db = try databaseWithDeferredCheck()
        let ends = EndLog()
        let failHook = HookLog()
        try db.write { c in try c.run("CREATE TABLE h (n INTEGER NOT NULL)") }
        let batcher = GroupCommit(database: db, beforeCommit: { c in try failHook.hook(c) },
                                  afterTransaction: { ends.add($0) })
        try batcher.perform { c in try c.run("INSERT INTO t (v) VALUES ('a')") }
        #expect(ends.ends == [true])
        #expect(throws: Refused.self) {
            try batcher.perform { c -> Int in
                try c.run("INSERT INTO t (v) VALUES ('b')")
                throw Refused()
            }
        }
        #expect(ends.ends == [true, false])
        failHook.failNext()
        #expect(throws: (any Error).self) {
            try batcher.perform { c in try c.run("INSERT INTO t (v) VALUES ('c')") }
        }
        #expect(ends.ends == [true, false, false])
        #expect(throws: (any Error).self) {
            try batcher.perform { c in try c.run("INSERT INTO child (pid) VALUES (42)") }
        }
        #expect(ends.ends == [true, false, false, false])
        // A batch of submitted bodies is one transaction: told once, before the first completion.
        let names = (0..<8).map { "s\($0)" }
        let (completions, _, transactions) = try submitted(names.map { Body(name: $0, bare: true) }, db: db, batcher: batcher)
        for n in names { #expect(completions[n] == .success(n.utf8.count)) }
        #expect(ends.ends == [true, false, false, false] + Array(repeating: true, count: transactions))
        #expect(try values(db) == ["a"] + names)
    }
}
