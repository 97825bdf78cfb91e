import Foundation
import HearthCore

/// Group commit: runs the write transactions of concurrent callers together in one SQLite
/// transaction, each in its own savepoint.
///
/// COMMIT writes every page a transaction changed to the WAL (16 KiB each here); concurrent small
/// writes to one table change mostly the same pages (its last leaves, its indexes), so committing
/// them together writes those pages once. Measured: writing, checksumming and checkpointing pages
/// was ~40% of the CPU of a one-document Firestore commit and ~25% of 16 concurrent 4 KiB PUTs.
///
/// Each caller still sees its own transaction: its body runs alone on the single writer, in a
/// savepoint, after the bodies queued before it; a body that throws rolls back to its savepoint
/// (only its own changes) and its caller gets the error. Callers return only after the COMMIT that
/// made their changes durable, so an acknowledged write survives `kill -9` as an unbatched one
/// does; when that COMMIT fails, every caller whose body succeeded gets the error and nothing of
/// theirs is stored. A caller arriving with no batch running leads: it takes every queued body
/// (its own included), runs them, keeps taking bodies queued meanwhile (up to `maxBatch`),
/// commits, and wakes their callers. A body alone in its transaction runs without a savepoint, so
/// a lone write costs what it did unbatched.
///
/// A savepoint is not free: SQLite copies every page a savepoint first changes into its sub-journal
/// (16 KiB each here), which cost a batched Firestore create as much as the WAL pages batching saved.
/// A caller whose body makes every check before its first write passes `savepoint: false`: its
/// body then runs bare; if it throws having written nothing (counted by `sqlite3_total_changes`)
/// nothing needs undoing and the batch goes on; if it throws after writing, only the whole
/// transaction's rollback can undo that, so the batch fails as a whole (`batchFailed`) — nothing of
/// any body in it is stored.
///
/// A caller that must not hold its thread while it waits (a gRPC Commit or Write-stream request:
/// a worker blocked in `perform` is one fewer request decoded meanwhile, which capped a batch at
/// the worker count) uses `submit`: its body is queued like any other and its completion is called
/// by the thread that ran the batch, after the COMMIT, in commit order — so a stream's answers
/// go out in the order its bodies ran. Submitted bodies need a leader when no waiting caller is
/// there to lead: the submitter leads its first batch itself (a lone write costs no hand-off) and
/// the bodies queued meanwhile are led on `drainer`, which keeps taking them until none is queued.
/// A submitter that must never run a batch (an HTTP/2 event loop: a batch there would stall every
/// connection it serves) passes `lead: false`, and `drainer` leads from the first body on. The
/// completions of a batch run inside one `HeldWakeUps` scope: the event loops they hand answers to
/// are woken once per batch, after the last, not once per answer.
///
/// `beforeCommit`, when given, runs once per transaction, after its last body and before its
/// COMMIT, on the same connection: work that every body would otherwise repeat can be done once per
/// batch there (Firestore stores its last commit time there instead of in every commit's body). Its
/// writes commit with the bodies'; if it throws, the transaction rolls back and every body of the
/// batch fails with it (`batchFailed`). A lone body that throws rolls its transaction back before
/// the hook would run. `afterTransaction`, when given, is told once per transaction, after its end
/// and before any of its callers hears of it, whether its COMMIT succeeded: what `beforeCommit`
/// wrote is committed state from then on only if it did (Firestore's commit clock stores a ceiling
/// there only when the committed one is passed, so it must know which one is committed).
///
/// A waiting caller sleeps on its job's semaphore (its thread's own) and is woken only when it has
/// something to do: its body ran (it returns, without taking the lock again), or the lead is handed
/// to it. One broadcast to every waiter woke them all after each batch, and with 16 callers most
/// went back to sleep at once: about one wasted wake-up and context switch per commit
/// (docs/benchmarks.md, *Commit CPU, round four*).
public final class GroupCommit: @unchecked Sendable {
    // `queue`, `leading` and every job's `finished` and `sleeping` are guarded by `lock`; a job's
    // `failure` is written by the leader before it marks the job `finished`, and read by its
    // caller after that.
    private let lock = NSLock()
    private var queue: [Job] = []
    private var leading = false
    private let database: Database
    private let savepoint: String
    private let beforeCommit: (@Sendable (Connection) throws -> Void)?
    private let afterTransaction: (@Sendable (_ committed: Bool) -> Void)?
    /// Leads submitted bodies that no caller is waiting to lead: a thread of its own, started when
    /// first needed, that sleeps on `drainWake` between runs. Not a GCD queue: libdispatch gives
    /// its threads the nice value of their QoS class (0 or 2 for a default queue, measured), not
    /// the process's, so under a process run at nice −15 the writer itself ran at nice 0–2 behind
    /// the event loops and the load generator, and the rates halved (docs/benchmarks.md, grpcwrite).
    private var drainer: Thread?
    private let drainWake = DispatchSemaphore(value: 0)
    /// This object while `drainer` holds the lead (under `lock`): the thread itself holds it only
    /// weakly, so a group commit no longer used ends its thread.
    private var draining: GroupCommit?

    /// Bodies run in one transaction at most: bounds how long the first caller of a busy stream waits.
    public static let maxBatch = 64

    /// One caller's transaction body; it stores its own result in its caller's frame.
    private final class Job {
        /// Dropped once run: the caller's closure must not outlive its call.
        var body: ((Connection) throws -> Void)?
        var failure: (any Error)?
        var finished = false
        /// Its caller waits on `wake` (a `perform` caller, not leading); whoever signals clears it
        /// first, so every signal meets exactly one wait.
        var sleeping = false
        /// Its caller's thread's semaphore (`sleeper`), set when it first sleeps (submitted bodies
        /// and leaders never do).
        var wake: DispatchSemaphore?
        /// Written by whoever signals `wake`, before the signal: whether the body had run. Its
        /// caller reads it after the wait (the semaphore orders the two) and, when it had, returns
        /// without taking `lock` again — the leader holds it while it wakes the batch's other
        /// callers, and each woken caller that queued on it slept and was woken a second time.
        var finishedWhenWoken = false
        /// Whether the body runs in its own savepoint when it shares a transaction.
        let savepoint: Bool
        /// A submitted body's completion, called with its failure by the leader (nil: a caller waits).
        let completion: (((any Error)?) -> Void)?

        init(savepoint: Bool, _ body: @escaping (Connection) throws -> Void, completion: (((any Error)?) -> Void)? = nil) {
            self.savepoint = savepoint
            self.body = body
            self.completion = completion
        }

        func run(_ conn: Connection) throws {
            guard let body else { throw GroupCommitError.notRun }
            try body(conn)
        }
    }

    deinit {
        // Its drainer thread, if any, wakes, finds this object gone and ends.
        drainWake.signal()
    }

    /// Batches writes to `database`; `savepoint` names the savepoint each body runs in, and
    /// `beforeCommit` runs once per transaction before its COMMIT, and `afterTransaction` learns
    /// whether that COMMIT succeeded (see the type's comment).
    public init(database: Database, savepoint: String = "group_commit",
                beforeCommit: (@Sendable (Connection) throws -> Void)? = nil,
                afterTransaction: (@Sendable (_ committed: Bool) -> Void)? = nil) {
        self.database = database
        self.savepoint = savepoint
        self.beforeCommit = beforeCommit
        self.afterTransaction = afterTransaction
    }

    /// Bodies waiting for a transaction (tests use it to line up a batch).
    public var queued: Int {
        lock.lock()
        defer { lock.unlock() }
        return queue.count
    }

    /// Runs `body` in a write transaction (shared with concurrent callers, in its own savepoint);
    /// returns after the commit, or throws the body's error (its changes undone) or the commit's
    /// (`GroupCommitError.batchFailed` when the transaction it shared with others failed as a
    /// whole: its COMMIT, or a savepoint SQLite had already rolled back; a body of the batch may
    /// then have seen another's uncommitted changes, so caches filled from them are suspect).
    /// - Parameter savepoint: false when `body` throws only before its first write (then it needs
    ///   no savepoint; see the type's comment).
    public func perform<T>(savepoint: Bool = true, _ body: (Connection) throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            var result: T?
            // The job never outlives this call: the caller waits below until it has run.
            let job = Job(savepoint: savepoint) { conn in result = try body(conn) }
            lock.lock()
            queue.append(job)
            var locked = true
            while !job.finished {
                if leading {
                    // Woken when the body ran, or to lead (the loop tells which).
                    let wake = job.wake ?? Self.sleeper()
                    job.wake = wake
                    job.sleeping = true
                    lock.unlock()
                    wake.wait()
                    if job.finishedWhenWoken {
                        locked = false
                        break
                    }
                    lock.lock()
                    continue
                }
                leading = true
                leadBatch()
                handOff()
            }
            if locked { lock.unlock() }
            if let failure = job.failure { throw failure }
            guard let result else { throw GroupCommitError.notRun }
            return result
        }
    }

    /// Queues `body` to run in a write transaction (shared with concurrent ones, as `perform`'s) and
    /// returns without waiting for it, unless no batch is running: then this thread runs the batch.
    /// `completion` gets what `perform` would have returned or thrown, once, after the COMMIT that
    /// made the body's changes durable (or after its failure), on the thread that ran the batch and
    /// before the next batch starts: completions come in commit order. It must not wait for this
    /// group commit (it runs while its batch still leads) and should be quick (it delays the next batch).
    ///
    /// `lead: false` (a connection's event loop queuing a commit) never runs the batch on this
    /// thread: with no batch running, `drainer` is handed the lead.
    public func submit<T>(savepoint: Bool = true, lead: Bool = true, _ body: @escaping (Connection) throws -> T,
                          completion: @escaping (Result<T, any Error>) -> Void) {
        // Written by the body and read by the completion, both on the batch's thread, in that order.
        var result: T?
        let job = Job(savepoint: savepoint, { conn in result = try body(conn) }, completion: { failure in
            if let failure { return completion(.failure(failure)) }
            guard let value = result else { return completion(.failure(GroupCommitError.notRun)) }
            completion(.success(value))
        })
        lock.lock()
        queue.append(job)
        if !leading {
            leading = true
            if lead {
                leadBatch()
                handOff()
            } else {
                startDrain()
            }
        }
        lock.unlock()
    }

    /// Runs the queued bodies as one batch (called leading, with `lock` held; returns so):
    /// completes the submitted ones, then wakes the waiting callers whose bodies ran.
    ///
    /// The signals stay under `lock`: signalled after it (the next leader last, as here), the
    /// arriving callers no longer slept on the lock, but they then led smaller batches sooner and
    /// the rate fell (docs/benchmarks.md, commit27; commitfront found the same with the next
    /// leader signalled first).
    private func leadBatch() {
        let first = queue
        queue.removeAll(keepingCapacity: true)
        lock.unlock()
        let ran = runTransaction(first)
        for j in ran { j.body = nil }
        // Before another batch can start: completions keep commit order. The threads they hand
        // answers to (event loops) are woken once, after the last (`HeldWakeUps`).
        HeldWakeUps.batch {
            for j in ran { j.completion?(j.failure) }
        }
        lock.lock()
        for j in ran {
            j.finished = true
            Self.wake(j)
        }
    }

    /// Wakes a job's sleeping caller (`lock` held). Every signal meets exactly one wait: the
    /// caller sets `sleeping` again (under `lock`) only after that wait returned.
    private static func wake(_ job: Job) {
        guard job.sleeping else { return }
        job.sleeping = false
        job.finishedWhenWoken = job.finished
        job.wake?.signal()
    }

    private static let sleepers = ThreadLocalObject<DispatchSemaphore>()

    /// The calling thread's semaphore to sleep on in `perform`, made on its first sleep and kept
    /// for the thread's life: one per sleep was an allocation, a dispatch object and their
    /// release — the last often on the waking leader's thread — for most REST commits at 16
    /// connections. Sharing one per thread is safe because every signal meets exactly one wait
    /// (`wake`): when `perform` returns, nothing is left on it, and a thread waits in
    /// one `perform` at a time.
    private static func sleeper() -> DispatchSemaphore {
        sleepers.current { DispatchSemaphore(value: 0) }
    }

    /// After a caller's batch (leading, `lock` held): who leads what is queued. The first waiting
    /// caller does (woken here, unless it is awake already: then it is on its way to lead);
    /// submitted bodies alone go to `drainer`, so no caller is held past its own batch (a gRPC
    /// worker would starve its stream's next request).
    private func handOff() {
        if queue.isEmpty {
            leading = false
        } else if let caller = queue.first(where: { $0.completion == nil }) {
            leading = false
            Self.wake(caller)
        } else {
            startDrain()
        }
    }

    /// Hands the lead to `drainer` (`lock` held, `leading` set): one signal per hand-off, and the
    /// drainer gives the lead back (`leading = false`) before it waits again.
    private func startDrain() {
        draining = self
        if drainer == nil {
            let wake = drainWake
            let t = Thread { [weak self] in
                // Else it carries the name of the thread that started it (an HTTP/2 loop).
                ThreadName.setCurrent("group-commit")
                while true {
                    wake.wait()
                    guard let self else { return }
                    self.drain()
                }
            }
            t.name = "group-commit"
            drainer = t
            t.start()
        }
        drainWake.signal()
    }

    /// Leads batches until nothing is queued (on `drainer`, which was handed the lead).
    private func drain() {
        lock.lock()
        while !queue.isEmpty { leadBatch() }
        leading = false
        let owner = draining
        draining = nil
        lock.unlock()
        _ = owner
    }

    /// Queued bodies, at most `limit`, taken off the queue.
    private func take(_ limit: Int) -> [Job] {
        lock.lock()
        defer { lock.unlock() }
        guard limit > 0, !queue.isEmpty else { return [] }
        let n = min(limit, queue.count)
        let taken = Array(queue.prefix(n))
        queue.removeFirst(n)
        return taken
    }

    /// Runs `first` and, in the same transaction, every body queued meanwhile (until none is waiting
    /// or `maxBatch` ran), then commits; records each body's failure. Returns the jobs it ran.
    private func runTransaction(_ first: [Job]) -> [Job] {
        var ran: [Job] = []
        var failures: [(any Error)?] = []
        var aloneFailed = false
        // Taken but not yet started: when the transaction fails part-way these never ran, and
        // they fail with it (their callers must not wait for a run that is not coming).
        var pending = first
        var started = 0
        do {
            try database.write { conn in
                while !pending.isEmpty {
                    started = 0
                    for job in pending {
                        started += 1
                        ran.append(job)
                        failures.append(nil)
                        let k = ran.count - 1
                        if k == 0 && pending.count == 1 {
                            // Alone so far: no savepoint. If it throws, the transaction rolls back
                            // exactly as an unbatched write's; bodies queued meanwhile run in the next.
                            do { try job.run(conn) } catch {
                                failures[k] = error
                                aloneFailed = true
                                throw error
                            }
                            continue
                        }
                        if !job.savepoint {
                            let before = conn.totalChanges
                            do { try job.run(conn) } catch {
                                failures[k] = error
                                // Written, then failed: only the whole transaction's rollback undoes it.
                                if conn.totalChanges != before { throw error }
                            }
                            continue
                        }
                        try conn.run("SAVEPOINT \(savepoint)")
                        do {
                            try job.run(conn)
                            try conn.run("RELEASE \(savepoint)")
                        } catch {
                            failures[k] = error
                            // Undoes this body only. After errors that make SQLite roll back the
                            // whole transaction (a full disk) the savepoint is gone: this throws,
                            // and the batch fails as a whole.
                            try conn.run("ROLLBACK TO \(savepoint)")
                            try conn.run("RELEASE \(savepoint)")
                        }
                    }
                    pending = take(Self.maxBatch - ran.count)
                }
                // Every body taken has run: nothing joins the transaction after this.
                try beforeCommit?(conn)
            }
            afterTransaction?(true)
        } catch {
            afterTransaction?(false)
            if !aloneFailed {
                for k in ran.indices where failures[k] == nil { failures[k] = GroupCommitError.batchFailed(error) }
            }
            for job in pending.dropFirst(started) {
                ran.append(job)
                failures.append(GroupCommitError.batchFailed(error))
            }
        }
        for (k, job) in ran.enumerated() { job.failure = failures[k] }
        return ran
    }
}

/// Why a batched commit failed besides its own body's error.
public enum GroupCommitError: Error {
    /// The transaction it shared with other bodies failed as a whole.
    case batchFailed(any Error)
    /// It ended without a result or an error (not expected to happen).
    case notRun
}
