import Foundation
import Testing
import HearthCore

/// Wake-ups held inside a scope run once per target when it ends; outside a scope nothing is held.
@Suite struct HeldWakeUpsTests {
    final class Target {}

    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var stored = true
        func set(_ v: Bool) { lock.withLock { stored = v } }
        var value: Bool { lock.withLock { stored } }
    }

    @Test func heldWakeUpsRunOncePerTargetAtTheScopeEnd() {
        let a = Target(), b = Target()
        var woken: [String] = []
        #expect(!HeldWakeUps.hold(ObjectIdentifier(a)) { woken.append("outside") })
        HeldWakeUps.batch {
            #expect(HeldWakeUps.hold(ObjectIdentifier(a)) { woken.append("a") })
            #expect(HeldWakeUps.hold(ObjectIdentifier(b)) { woken.append("b") })
            #expect(HeldWakeUps.hold(ObjectIdentifier(a)) { woken.append("a again") })
            // A nested scope joins the outer one: nothing runs at its end.
            HeldWakeUps.batch { #expect(HeldWakeUps.hold(ObjectIdentifier(b)) { woken.append("b nested") }) }
            #expect(woken.isEmpty)
        }
        #expect(woken == ["a", "b"])
        // The scope is closed: the next hold is refused again.
        #expect(!HeldWakeUps.hold(ObjectIdentifier(a)) { woken.append("after") })
        #expect(woken == ["a", "b"])
    }

    @Test func anotherThreadHoldsNothing() {
        let target = Target()
        let id = ObjectIdentifier(target)
        let other = DispatchSemaphore(value: 0)
        let heldElsewhere = Flag()
        HeldWakeUps.batch {
            Thread.detachNewThread {
                heldElsewhere.set(HeldWakeUps.hold(id) {})
                other.signal()
            }
            other.wait()
        }
        #expect(!heldElsewhere.value)
    }
}
