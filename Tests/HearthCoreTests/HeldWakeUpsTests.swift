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

    @Test func passEndWorkWaitsForTheEndOfThePassOnItsThreadOnly() {
        let a = Target(), b = Target()
        let id = ObjectIdentifier(a)
        var woken: [String] = []
        // No holder installed: refused, the caller wakes now.
        #expect(!PassEndWork.schedule(id) { woken.append("before") })
        let pass = PassEndWork()
        pass.install()
        #expect(PassEndWork.schedule(id) { woken.append("a") })
        #expect(PassEndWork.schedule(ObjectIdentifier(b)) { woken.append("b") })
        #expect(PassEndWork.schedule(id) { woken.append("a again") })
        // Another thread holds nothing.
        let other = DispatchSemaphore(value: 0)
        let heldElsewhere = Flag()
        Thread.detachNewThread {
            heldElsewhere.set(PassEndWork.schedule(id) {})
            other.signal()
        }
        other.wait()
        #expect(!heldElsewhere.value)
        #expect(woken.isEmpty)
        pass.run()
        #expect(woken == ["a", "b"])
        // The next pass holds again, once per target; work that schedules more runs that too.
        #expect(PassEndWork.schedule(id) {
            woken.append("a2")
            _ = PassEndWork.schedule(ObjectIdentifier(b)) { woken.append("b from a2") }
        })
        pass.run()
        #expect(woken == ["a", "b", "a2", "b from a2"])
        // Uninstalled: what is held runs, and nothing is held after.
        #expect(PassEndWork.schedule(id) { woken.append("last") })
        pass.uninstall()
        #expect(woken.last == "last")
        #expect(!PassEndWork.schedule(id) { woken.append("after") })
    }
}
