import Foundation

/// A serial queue with a thread of its own at the process's nice value: where the Listen engine's
/// feed and each of its shards run (`ListenQueue`, `ListenEngine.feedQueue`, `ListenShard.queue`)
/// and where the rules' coverage is folded (`RulesCoverage`).
///
/// Why not a serial `DispatchQueue` on the global pool, as before: on Linux libdispatch's pool
/// threads run at the nice value of their QoS class (0 for the default class, utility's too),
/// whatever the process was started with. Under `nice -n -15` (as `make bench` runs everything) the
/// threads that match a commit against its listeners and hand the snapshots over ran at nice 0
/// while the HTTP/2 loops that wait for those snapshots, and the clients reading them, ran at −15:
/// the scheduler let a woken shard wait behind them (or behind any other nice-0 process) for up to
/// 6 ms, half a commit's listeners were served that much later, and those commits set the
/// 1,000-listener p99 (docs/benchmarks.md, *1,000 listeners, round seven*). The coverage fold on
/// the pool fell behind the same way, until the writer folded the backlog itself inside its write
/// transaction (*The rules coverage fold*). This thread takes the process's nice value (the main
/// thread's) when it starts, so the threads it serves and it are scheduled alike.
///
/// Tasks run in the order queued; `sync` runs its body on the caller's thread while this thread is
/// held (as `DispatchQueue.sync` does), so calling it from the queue's own thread deadlocks, as
/// there. The thread starts with the first task (a queue nobody uses costs no thread) and ends once
/// the queue is gone and what was queued has run; timers still pending then are dropped.
public final class ThreadQueue: @unchecked Sendable {
    private let state: State

    /// `name` names the thread (for `top -H`, perf, gdb; the kernel keeps 15 bytes).
    public init(name: String) {
        state = State(name: name)
    }

    deinit {
        state.stop()
    }

    /// Queues `task` (any thread).
    public func async(_ task: @escaping @Sendable () -> Void) {
        state.enqueue(task)
    }

    /// Queues `task` once `nanoseconds` have passed (monotonic clock).
    public func asyncAfter(nanoseconds: UInt64, _ task: @escaping @Sendable () -> Void) {
        state.schedule(at: DispatchTime.now().uptimeNanoseconds &+ nanoseconds, task)
    }

    /// Runs `body` on the calling thread once every task queued before has run, with no task of
    /// this queue running until it returns.
    public func sync<T>(_ body: () throws -> T) rethrows -> T {
        let hold = Hold()
        state.enqueue { hold.park() }
        hold.waitParked()
        defer { hold.release() }
        return try body()
    }

    /// `sync`'s hand-shake with the queue's thread, on a pthread condition (so that ThreadSanitizer
    /// sees the order between the queue's tasks and the caller's body, as it did with libdispatch).
    private final class Hold: @unchecked Sendable {
        private let condition = NSCondition()
        private var parked = false
        private var released = false

        /// On the queue's thread: says it is held, then waits for `release`.
        func park() {
            condition.lock()
            parked = true
            condition.broadcast()
            while !released { condition.wait() }
            condition.unlock()
        }

        func waitParked() {
            condition.lock()
            while !parked { condition.wait() }
            condition.unlock()
        }

        func release() {
            condition.lock()
            released = true
            condition.broadcast()
            condition.unlock()
        }
    }

    /// What the thread shares with the queue: the thread holds this, not the queue, so the queue
    /// can go away (and the thread with it).
    private final class State: @unchecked Sendable {
        let name: String
        // Under `condition`.
        let condition = NSCondition()
        var tasks: [@Sendable () -> Void] = []
        /// Timers, the soonest last (popped from the end).
        var timers: [(at: UInt64, task: @Sendable () -> Void)] = []
        var started = false
        var stopping = false

        init(name: String) {
            self.name = name
        }

        func enqueue(_ task: @escaping @Sendable () -> Void) {
            condition.lock()
            tasks.append(task)
            let start = !started
            started = true
            condition.unlock()
            // After the unlock, as in `WorkerPool.submit`: a thread woken under the lock would
            // block on it at once. Nothing is lost: the thread checks and waits under the lock.
            condition.signal()
            if start { startThread() }
        }

        func schedule(at deadline: UInt64, _ task: @escaping @Sendable () -> Void) {
            condition.lock()
            let i = timers.firstIndex { $0.at <= deadline } ?? timers.count
            timers.insert((deadline, task), at: i)
            // A timer may be the queue's first task: it starts the thread too.
            let start = !started
            started = true
            condition.unlock()
            condition.signal()
            if start { startThread() }
        }

        func stop() {
            condition.lock()
            stopping = true
            condition.unlock()
            condition.signal()
        }

        private func startThread() {
            let thread = Thread { [self] in
                ThreadName.setCurrent(name)
                Self.takeProcessNice()
                run()
            }
            // The default stack, as the pool threads had: a shard also reads first results (SQLite,
            // the rules' evaluation, queries) on it.
            thread.start()
        }

        /// Gives the calling thread the nice value of the process's main thread (a thread
        /// inherits its creator's, and the creator may be a pool thread). Raising priority needs
        /// the privilege `nice -n -N` needed; without it the thread keeps what it inherited.
        private static func takeProcessNice() {
            errno = 0
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
            guard errno == 0 else { return }
            // On Linux `who` 0 is the calling thread, not every thread of the process.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice)
        }

        private func run() {
            var batch: [@Sendable () -> Void] = []
            while true {
                condition.lock()
                while true {
                    if !tasks.isEmpty { break }
                    if stopping { break }
                    if let soonest = timers.last {
                        let now = DispatchTime.now().uptimeNanoseconds
                        if soonest.at <= now { break }
                        _ = condition.wait(until: Date(timeIntervalSinceNow: Double(soonest.at - now) / 1e9))
                    } else {
                        condition.wait()
                    }
                }
                if tasks.isEmpty && stopping {
                    condition.unlock()
                    return
                }
                // Swapped, so neither array is reallocated per pass.
                swap(&tasks, &batch)
                let now = DispatchTime.now().uptimeNanoseconds
                while let soonest = timers.last, soonest.at <= now {
                    batch.append(soonest.task)
                    timers.removeLast()
                }
                condition.unlock()
                for task in batch { task() }
                batch.removeAll(keepingCapacity: true)
            }
        }
    }
}
