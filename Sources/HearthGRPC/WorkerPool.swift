import Foundation
import HearthCore

/// A fixed set of threads running queued jobs: where gRPC handlers run, never on a loop thread.
final class WorkerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0

    init(threads: Int, name: String) {
        for i in 0..<max(1, threads) {
            let t = Thread { [self] in
                ThreadName.setCurrent("\(name)-\(i)")
                work()
            }
            t.start()
        }
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.unlock()
        // After the unlock: a worker woken while the submitter still held the lock blocked on it
        // at once and had to be woken a second time (strace of the RunQuery row: a futex wait on
        // the mutex and two wakes per call). No wake-up is lost: a worker checks for jobs and
        // starts waiting under the lock, so it either sees this job or is waiting when signalled.
        condition.signal()
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs = []
                head = 0
            }
            condition.unlock()
            job()
        }
    }
}

/// Runs one stream's jobs on a pool one at a time, in order, holding no thread while none is queued.
///
/// A job may finish later than it returns (`submit(async:)`): the next job starts only once it
/// calls its `done`, and no thread is held meanwhile.
final class SerialJobs: @unchecked Sendable {
    private let pool: WorkerPool
    private let lock = NSLock()
    // Under `lock`.
    private var queued: [@Sendable (_ done: @escaping @Sendable () -> Void) -> Void] = []
    private var running = false
    private var phase = Phase.idle

    /// Where the job started last is.
    private enum Phase {
        case idle
        /// Started, and neither returned nor done.
        case started
        /// Done before it returned: the drain goes on.
        case doneEarly
        /// Returned before it was done: the drain stopped, `done` restarts it.
        case awaitingDone
    }

    init(pool: WorkerPool) { self.pool = pool }

    func submit(_ job: @escaping @Sendable () -> Void) {
        submit(async: { done in
            job()
            done()
        })
    }

    /// Queues a job that calls `done` (once, from any thread) when the next may start.
    func submit(async job: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void) {
        lock.lock()
        queued.append(job)
        let start = !running
        running = true
        lock.unlock()
        if start { pool.submit { [self] in drain() } }
    }

    /// Runs `job` now on the calling thread when nothing is queued or running (true), else leaves
    /// it (false: the caller submits it). Jobs queued while it runs, or after it returned but before
    /// it is done, go to a worker as `submit`'s do: this thread only ever runs the one job.
    func runHereIfIdle(_ job: (_ done: @escaping @Sendable () -> Void) -> Void) -> Bool {
        lock.lock()
        guard !running, queued.isEmpty else {
            lock.unlock()
            return false
        }
        running = true
        phase = .started
        lock.unlock()
        job { [self] in finished() }
        guard settle(returned: true) else { return true }
        // Done before it returned: whatever was queued meanwhile goes to a worker.
        lock.lock()
        guard !queued.isEmpty else {
            running = false
            lock.unlock()
            return true
        }
        lock.unlock()
        pool.submit { [self] in drain() }
        return true
    }

    private func drain() {
        while true {
            lock.lock()
            guard !queued.isEmpty else {
                running = false
                lock.unlock()
                return
            }
            let job = queued.removeFirst()
            phase = .started
            lock.unlock()
            job { [self] in finished() }
            // Not done yet: `finished` restarts the drain.
            guard settle(returned: true) else { return }
        }
    }

    /// The job started last returned (`returned`) or is done; true once both have happened.
    private func settle(returned: Bool) -> Bool {
        lock.withLock {
            if phase == .started {
                phase = returned ? .awaitingDone : .doneEarly
                return false
            }
            phase = .idle
            return true
        }
    }

    /// The running job is done: the drain goes on, in the drain itself if the job has not returned
    /// yet, else on a worker when something is queued (none is woken for an empty queue).
    private func finished() {
        guard settle(returned: false) else { return }
        lock.lock()
        guard !queued.isEmpty else {
            running = false
            lock.unlock()
            return
        }
        lock.unlock()
        pool.submit { [self] in drain() }
    }
}
