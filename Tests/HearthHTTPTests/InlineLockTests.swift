import Foundation
import Testing
@testable import HearthHTTP

/// `InlineLock` excludes, and ThreadSanitizer sees it order its holders: four threads add to a
/// plain counter under one lock, contended (so unlocks hand over through the kernel's futex, which
/// ThreadSanitizer does not see). The total must be exact; under `make test-tsan` the run must also
/// leave no report, which it did not before the lock's release/acquire pair (docs/reliability.md,
/// *Sanitizers on the thirty-fifth session's code*).
struct InlineLockTests {
    final class Counter: @unchecked Sendable {
        let lock = InlineLock()
        var value = 0  // under `lock`
    }

    @Test func contendedHoldersAreOrdered() {
        let counter = Counter()
        let threads = 4, additions = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<additions {
                counter.lock.lock()
                counter.value += 1
                counter.lock.unlock()
                counter.lock.withLock { counter.value += 1 }
            }
        }
        #expect(counter.lock.withLock { counter.value } == 2 * threads * additions)
    }
}
