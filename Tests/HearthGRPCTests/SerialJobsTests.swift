import Foundation
import Testing
@testable import HearthGRPC

/// A stream's jobs run one at a time in order; a job that finishes later (`submit(async:)`, a write
/// answered when its batch commits) holds the next one back without holding a worker.
@Suite struct SerialJobsTests {
    /// What ran, in order (appended from worker threads).
    final class Trace: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ s: String) { lock.withLock { list.append(s) } }
        var entries: [String] { lock.withLock { list } }
    }

    /// Holds the `done` of an async job until the test calls it.
    final class Held: @unchecked Sendable {
        private let lock = NSLock()
        private var done: (@Sendable () -> Void)?
        func set(_ d: @escaping @Sendable () -> Void) { lock.withLock { done = d } }
        var isSet: Bool { lock.withLock { done != nil } }
        func call() { lock.withLock { done }?() }
    }

    static func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<15_000 {
            if condition() { return true }
            usleep(2000)
        }
        return condition()
    }

    @Test func aJobNotYetDoneHoldsTheNextWithoutHoldingAWorker() {
        // One worker: were it held by the waiting job, the other stream's job could not run.
        let pool = WorkerPool(threads: 1, name: "serial-test")
        let jobs = SerialJobs(pool: pool)
        let other = SerialJobs(pool: pool)
        let trace = Trace()
        let held = Held()
        jobs.submit(async: { done in
            trace.add("first returned")
            held.set(done)
        })
        jobs.submit { trace.add("second") }
        #expect(Self.eventually { held.isSet })
        other.submit { trace.add("other stream") }
        #expect(Self.eventually { trace.entries.contains("other stream") })
        #expect(!trace.entries.contains("second"))
        held.call()
        #expect(Self.eventually { trace.entries.contains("second") })
        #expect(trace.entries == ["first returned", "other stream", "second"])
    }

    @Test func jobsDoneBeforeReturningRunInOrderAndTheQueueRestartsAfterIdle() {
        let pool = WorkerPool(threads: 2, name: "serial-test")
        let jobs = SerialJobs(pool: pool)
        let trace = Trace()
        for i in 0..<50 {
            if i % 2 == 0 {
                jobs.submit(async: { done in
                    trace.add("\(i)")
                    done()
                })
            } else {
                jobs.submit { trace.add("\(i)") }
            }
        }
        #expect(Self.eventually { trace.entries.count == 50 })
        #expect(trace.entries == (0..<50).map { "\($0)" })
        // Done from another thread after the queue went idle: the next job still runs.
        let held = Held()
        jobs.submit(async: { done in held.set(done) })
        #expect(Self.eventually { held.isSet })
        DispatchQueue.global().async { held.call() }
        jobs.submit { trace.add("after") }
        #expect(Self.eventually { trace.entries.last == "after" })
    }

    /// `runHereIfIdle` runs a job on the calling thread only when the stream has nothing queued or
    /// running; jobs submitted meanwhile wait for its `done` and then run on a worker, in order.
    @Test func aJobRunsHereOnlyWhenTheStreamIsIdle() {
        let pool = WorkerPool(threads: 1, name: "serial-test")
        let jobs = SerialJobs(pool: pool)
        let trace = Trace()
        let held = Held()
        let caller = pthread_self()
        let ranHere = jobs.runHereIfIdle { done in
            trace.add(pthread_equal(pthread_self(), caller) != 0 ? "here" : "elsewhere")
            held.set(done)
        }
        #expect(ranHere)
        // Running (not done): neither a second inline job nor a submitted one starts.
        #expect(!jobs.runHereIfIdle { done in
            trace.add("must not run")
            done()
        })
        jobs.submit { trace.add(pthread_equal(pthread_self(), caller) != 0 ? "queued here" : "queued on a worker") }
        usleep(20_000)
        #expect(trace.entries == ["here"])
        held.call()
        #expect(Self.eventually { trace.entries.count == 2 })
        #expect(trace.entries == ["here", "queued on a worker"])
        // Idle again: the next one runs here, done before it returns.
        #expect(jobs.runHereIfIdle { done in
            trace.add(pthread_equal(pthread_self(), caller) != 0 ? "here again" : "elsewhere")
            done()
        })
        #expect(trace.entries.last == "here again")
    }
}
