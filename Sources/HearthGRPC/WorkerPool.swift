import Foundation

/// A fixed set of threads running queued jobs: where gRPC handlers run, never on a loop thread.
final class WorkerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0

    init(threads: Int, name: String) {
        for i in 0..<max(1, threads) {
            let t = Thread { [self] in work() }
            t.name = "\(name)-\(i)"
            t.start()
        }
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
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
final class SerialJobs: @unchecked Sendable {
    private let pool: WorkerPool
    private let lock = NSLock()
    private var queued: [@Sendable () -> Void] = []
    private var running = false

    init(pool: WorkerPool) { self.pool = pool }

    func submit(_ job: @escaping @Sendable () -> Void) {
        lock.lock()
        queued.append(job)
        let start = !running
        running = true
        lock.unlock()
        if start { pool.submit { [self] in drain() } }
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
            lock.unlock()
            job()
        }
    }
}
