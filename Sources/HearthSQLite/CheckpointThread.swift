import Foundation
import Synchronization
import HearthCore
internal import CSQLite

/// Runs a WAL file's checkpoints on a thread of its own, so that a writer committing one large
/// upload chunk after another does not stop for each of them.
///
/// Why: a checkpoint syncs the WAL, copies its frames into the database file and syncs that file;
/// SQLite's automatic checkpoint runs it inside the COMMIT that crossed the threshold, on the
/// committing thread. A 1 GiB upload into `hearth.sqlite` paid 16 of them on its request thread
/// (each `fdatasync` 0.05–0.2 s on the bench VM, and the copy into new page-cache pages the largest
/// CPU item; docs/benchmarks.md, *1 GiB uploads: checkpoints off the request thread*). Here the
/// writer's WAL hook only wakes this thread once the WAL holds `trigger` frames, and the thread runs
/// a PASSIVE checkpoint on its own connection: the same syncs in the same order SQLite's own
/// checkpoint makes, so crash safety is SQLite's (a commit is in the WAL before any checkpoint sees
/// it; a checkpoint cut short by `kill -9` is redone from the WAL at the next open).
///
/// The WAL starts again from its beginning only when a write transaction begins with every frame
/// copied. A writer that keeps committing while the thread copies never finds it so, and the WAL
/// would grow for as long as the upload lasts. So once the WAL holds `backstop` frames, the
/// writer's own hook finishes the job — it waits for the pass in progress and runs one more PASSIVE
/// pass itself over the frames the thread has not reached (SQLite's automatic checkpoint, on what
/// is left), after which its next transaction restarts the WAL. The WAL stays under `backstop`
/// frames plus one transaction, and the writer waits for one short pass per `backstop` frames
/// instead of a whole checkpoint per `trigger`. With readers holding old snapshots a pass copies
/// less, as SQLite's own did; the writer then runs its pass on each commit past `backstop`, as
/// SQLite's automatic checkpoint ran on each commit past its threshold.
final class CheckpointThread: @unchecked Sendable {
    private let path: String
    private let configure: (Connection) throws -> Void
    private let trigger: Int32
    private let backstop: Int32
    /// Guards `requested`, `stopping`, `started` and `running`.
    private let condition = NSCondition()
    private var requested = false
    private var stopping = false
    private var started = false
    private var running = false
    /// One checkpoint at a time — the thread's pass, the writer's backstop pass, the shutdown
    /// checkpoint: SQLite answers a second concurrent one SQLITE_BUSY instead of waiting.
    let passLock = NSLock()
    private let threadPasses = Atomic<Int>(0)
    private let writerPasses = Atomic<Int>(0)
    /// Nanoseconds the thread spent in its passes, and the writer at the backstop (waiting for the
    /// thread's pass in progress, then its own): the writer's are a stop of every commit behind it.
    private let threadNanos = Atomic<Int>(0)
    private let writerNanos = Atomic<Int>(0)

    /// - Parameters:
    ///   - configure: sets up the thread's connection (opened on first use) as the writer's is, so
    ///     its checkpoints sync as the writer's would (`synchronous`).
    ///   - trigger, backstop: WAL frames at which the thread is woken, and the writer stops to finish.
    init(path: String, trigger: Int, backstop: Int, configure: @escaping (Connection) throws -> Void) {
        self.path = path
        self.trigger = Int32(clamping: trigger)
        self.backstop = Int32(clamping: max(backstop, trigger))
        self.configure = configure
    }

    /// Replaces `writer`'s automatic checkpoint with this one (`sqlite3_wal_hook` takes the place of
    /// `wal_autocheckpoint`'s hook).
    func attach(to writer: Connection) {
        sqlite3_wal_hook(writer.handle, checkpointThreadHook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Removes the hook from `writer` and ends the thread (after its pass in progress).
    func detach(from writer: Connection) {
        sqlite3_wal_hook(writer.handle, nil, nil)
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    /// Checkpoint passes run so far by the thread, and by the writer at the backstop.
    var passes: (thread: Int, writer: Int) {
        (threadPasses.load(ordering: .relaxed), writerPasses.load(ordering: .relaxed))
    }

    /// Seconds spent so far in the thread's passes, and by the writer at the backstop.
    var seconds: (thread: Double, writer: Double) {
        (Double(threadNanos.load(ordering: .relaxed)) / 1e9, Double(writerNanos.load(ordering: .relaxed)) / 1e9)
    }

    /// Called by the writer's WAL hook after each commit, on the writer's thread, with the WAL's
    /// frame count.
    fileprivate func committed(frames: Int32, writer: OpaquePointer?) {
        if frames >= backstop {
            let start = DispatchTime.now().uptimeNanoseconds
            passLock.lock()
            defer {
                passLock.unlock()
                writerNanos.add(Int(DispatchTime.now().uptimeNanoseconds - start), ordering: .relaxed)
            }
            // As SQLite's automatic checkpoint: its result is not the commit's (which is done); a pass
            // that fails (disk full) leaves the frames in the WAL, and the next commit tries again.
            _ = sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            writerPasses.add(1, ordering: .relaxed)
        } else if frames >= trigger {
            condition.lock()
            requested = true
            if !started {
                started = true
                running = true
                Thread { [self] in
                    // Else it carries the kernel name of the writer that started it (a Firestore
                    // worker, or the group commit's drainer), and per-thread CPU put its copies there.
                    ThreadName.setCurrent("checkpoint")
                    run()
                }.start()
            } else {
                condition.signal()
            }
            condition.unlock()
        }
    }

    private func run() {
        // Opened here: a file that never reaches `trigger` frames costs no connection and no thread.
        let connection: Connection?
        do {
            let c = try Connection(path: path)
            try c.setBusyTimeout(5000)
            try configure(c)
            connection = c
        } catch {
            // Without its own connection the thread can do nothing; the writer's backstop still
            // checkpoints, so the WAL stays bounded.
            connection = nil
        }
        while true {
            condition.lock()
            while !requested && !stopping { condition.wait() }
            if stopping {
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            requested = false
            condition.unlock()
            guard let connection else { continue }
            let writerPassesBefore = writerPasses.load(ordering: .relaxed)
            passLock.lock()
            // The writer ran its backstop pass while this one waited for the lock: every frame this
            // request was about is copied. Skip the pass — run now, it would overlap the writer's
            // next transaction, whose restart of the WAL then fails on the read locks the pass
            // takes, and the WAL grows past the backstop by a transaction more (seen under load).
            // A commit after the writer's pass that wants a pass requests one anew.
            if writerPasses.load(ordering: .relaxed) != writerPassesBefore {
                passLock.unlock()
                continue
            }
            let start = DispatchTime.now().uptimeNanoseconds
            _ = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            threadNanos.add(Int(DispatchTime.now().uptimeNanoseconds - start), ordering: .relaxed)
            passLock.unlock()
            threadPasses.add(1, ordering: .relaxed)
        }
    }
}

/// The writer's WAL hook (a C function pointer cannot capture: the thread object is its context).
private func checkpointThreadHook(_ context: UnsafeMutableRawPointer?, _ db: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                  _ frames: Int32) -> Int32 {
    // Only the file's own WAL: an attached database (a Firestore file being moved) is not ours.
    guard let context, let name, strcmp(name, "main") == 0 else { return SQLITE_OK }
    Unmanaged<CheckpointThread>.fromOpaque(context).takeUnretainedValue().committed(frames: frames, writer: db)
    return SQLITE_OK
}
