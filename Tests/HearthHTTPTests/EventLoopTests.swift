import Foundation
import HearthCore
import Testing
@testable import HearthHTTP

/// What a loop's pass holds back: work scheduled on the loop thread for the end of the pass (the
/// rules coverage fold) runs after the pass's tasks (the answers' writes), not where it was scheduled.
@Suite struct EventLoopTests {
    final class Record: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [String] = []
        func add(_ e: String) { lock.withLock { events.append(e) } }
        var all: [String] { lock.withLock { events } }
    }

    @Test func workScheduledOnTheLoopRunsAtTheEndOfThePass() throws {
        let loop = try EventLoop(name: "test-pass")
        loop.start()
        defer { loop.stop() }
        let record = Record()
        let done = DispatchSemaphore(value: 0)
        final class Target {}
        let target = Target()
        let id = ObjectIdentifier(target)
        // The loop waits at the gate while the next two tasks are queued: they run in one pass.
        let gate = DispatchSemaphore(value: 0)
        loop.execute { gate.wait() }
        loop.execute {
            let held = PassEndWork.schedule(id) {
                record.add("woken")
                done.signal()
            }
            record.add(held ? "held" : "not held")
        }
        loop.execute { record.add("next task") }
        gate.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(record.all == ["held", "next task", "woken"])
        // Off the loop nothing is held.
        #expect(!PassEndWork.schedule(id) {})
        _ = target
    }
}
