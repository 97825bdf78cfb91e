import Foundation
import Synchronization
import Testing
@testable import HearthCore

@Suite struct ThreadLocalObjectTests {
    final class Counted: @unchecked Sendable {
        static let alive = Atomic<Int>(0)
        let made: Int
        init(_ made: Int) {
            self.made = made
            Self.alive.add(1, ordering: .relaxed)
        }
        deinit { Self.alive.subtract(1, ordering: .relaxed) }
    }

    static let perThread = ThreadLocalObject<Counted>()
    static let makes = Atomic<Int>(0)

    static func mine() -> Counted {
        perThread.current { Counted(makes.add(1, ordering: .relaxed).newValue) }
    }

    /// Each thread makes its own object once and gets that one back on every later use; the
    /// object is released when its thread ends.
    @Test func oneObjectPerThreadForTheThreadsLife() throws {
        let seen = Mutex<[Int: Set<Int>]>([:])
        let done = DispatchGroup()
        for t in 0..<8 {
            done.enter()
            Thread.detachNewThread {
                for _ in 0..<50 {
                    let made = Self.mine().made
                    seen.withLock { $0[t, default: []].insert(made) }
                }
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        let sets = seen.withLock { $0 }
        #expect(sets.count == 8)
        #expect(sets.values.allSatisfy { $0.count == 1 })
        #expect(Set(sets.values.map { $0.first! }).count == 8)
        // The threads' destructors run as they exit, after `leave`: wait for them.
        let deadline = Date().addingTimeInterval(10)
        while Counted.alive.load(ordering: .relaxed) > 0 && Date() < deadline { usleep(1_000) }
        #expect(Counted.alive.load(ordering: .relaxed) == 0)
    }
}
