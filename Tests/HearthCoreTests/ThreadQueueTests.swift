import Foundation
import Testing
import HearthCore

/// The serial queue of the Listen engine and the coverage fold: tasks run one at a time, in order, on
/// one thread that is not the caller's and has the process's nice value; `sync` runs after what was
/// queued before it and holds the queue while it runs; timers fire after their delay, in deadline
/// order.
@Suite struct ThreadQueueTests {
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        private var threads = Set<ObjectIdentifier>()
        func add(_ s: String) {
            lock.withLock {
                entries.append(s)
                threads.insert(ObjectIdentifier(Thread.current))
            }
        }
        var all: [String] { lock.withLock { entries } }
        var threadCount: Int { lock.withLock { threads.count } }
    }

    @Test func tasksRunInOrderOnOneThreadOfTheProcessNice() {
        let queue = ThreadQueue(name: "queue-test")
        let log = Log()
        let caller = ObjectIdentifier(Thread.current)
        let nice = Atomic(Int32.min)
        let other = Atomic(false)
        for i in 0..<200 {
            queue.async {
                log.add("\(i)")
                if i == 0 {
                    nice.set(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
                    other.set(ObjectIdentifier(Thread.current) != caller)
                }
            }
        }
        queue.sync {}
        #expect(log.all == (0..<200).map { "\($0)" })
        #expect(log.threadCount == 1)
        #expect(other.get())
        #expect(nice.get() == getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid())))
    }

    /// Started by a thread with another nice value (as a libdispatch pool thread at its QoS's nice
    /// may start it), the queue's thread still takes the process's. Raising a thread's priority back
    /// needs the privilege a negative `nice` needs, so only checked where the test has it.
    @Test func theThreadTakesTheProcessNiceNotItsCreators() throws {
        try #require(geteuid() == 0, "raising a thread's priority needs root")
        let queue = ThreadQueue(name: "queue-test")
        let creator = Atomic(Int32.min)
        let seen = Atomic(Int32.min)
        let done = DispatchSemaphore(value: 0)
        let main = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        let t = Thread {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, main + 5)
            creator.set(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
            queue.async {
                seen.set(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
                done.signal()
            }
        }
        t.start()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(creator.get() == main + 5)
        #expect(seen.get() == main)
    }

    @Test func syncRunsAfterEarlierTasksAndHoldsTheQueue() {
        let queue = ThreadQueue(name: "queue-test")
        let log = Log()
        queue.async {
            Thread.sleep(forTimeInterval: 0.02)
            log.add("before")
        }
        let value = queue.sync { () -> Int in
            log.add("sync")
            // Queued while the queue is held: runs only after this body returns.
            queue.async { log.add("after") }
            Thread.sleep(forTimeInterval: 0.02)
            #expect(log.all == ["before", "sync"])
            return 7
        }
        #expect(value == 7)
        queue.sync {}
        #expect(log.all == ["before", "sync", "after"])
    }

    @Test func syncRethrows() {
        struct Boom: Error {}
        let queue = ThreadQueue(name: "queue-test")
        #expect(throws: Boom.self) { try queue.sync { throw Boom() } }
        // The queue is released after a throw.
        #expect(queue.sync { 1 } == 1)
    }

    @Test func timersFireAfterTheirDelayInDeadlineOrder() {
        let queue = ThreadQueue(name: "queue-test")
        let log = Log()
        let done = DispatchSemaphore(value: 0)
        let start = DispatchTime.now().uptimeNanoseconds
        let late = Atomic(UInt64(0))
        queue.asyncAfter(nanoseconds: 60_000_000) {
            late.set(DispatchTime.now().uptimeNanoseconds - start)
            log.add("60ms")
            done.signal()
        }
        queue.asyncAfter(nanoseconds: 20_000_000) { log.add("20ms") }
        queue.async { log.add("now") }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(log.all == ["now", "20ms", "60ms"])
        #expect(late.get() >= 60_000_000)
    }

    @Test func aTimerAloneStartsTheThread() {
        let queue = ThreadQueue(name: "queue-test")
        let done = DispatchSemaphore(value: 0)
        queue.asyncAfter(nanoseconds: 1_000_000) { done.signal() }
        #expect(done.wait(timeout: .now() + 30) == .success)
    }

    /// A value set on one thread and read on another (the test's own small lock box).
    final class Atomic<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: T
        init(_ v: T) { value = v }
        func set(_ v: T) { lock.withLock { value = v } }
        func get() -> T { lock.withLock { value } }
    }
}
