import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The feed delivers in ticket order whatever order tickets settle in, and a withdrawn ticket
/// holds nothing up; made with a catch-up, it skips what comes due with no listener open and
/// loses nothing for a listener that opens while changes come due.
@Suite struct ChangeFeedTests {
    final class Delivered: @unchecked Sendable {
        private let lock = NSLock()
        private var times: [Int64] = []
        func add(_ c: CommittedChange) { lock.withLock { times.append(c.commitTime.unixMicros) } }
        var all: [Int64] { lock.withLock { times } }
    }

    static func change(_ t: Int64) -> CommittedChange {
        CommittedChange(database: DatabaseID(project: "p", database: "(default)"), commitTime: Instant(unixMicros: t),
                        kind: .documents([], space: 1))
    }

    @Test func settlesOutOfOrderDeliverInOrder() {
        let queue = ListenQueue(name: "test-feed")
        let got = Delivered()
        let feed = ChangeFeed(queue: queue) { got.add($0) }
        let t = (0..<5).map { _ in feed.reserve() }
        feed.publish(t[2], Self.change(2))
        feed.publish(t[1], Self.change(1))
        queue.sync {}
        #expect(got.all.isEmpty)  // ticket 0 is still out
        feed.withdraw(t[0])
        queue.sync {}
        #expect(got.all == [1, 2])
        feed.publish(t[4], Self.change(4))
        queue.sync {}
        #expect(got.all == [1, 2])
        feed.withdraw(t[3])
        queue.sync {}
        #expect(got.all == [1, 2, 4])
        #expect(feed.outstanding == 0)
    }

    @Test func concurrentSettlersNeverReorder() {
        let queue = ListenQueue(name: "test-feed")
        let got = Delivered()
        let feed = ChangeFeed(queue: queue) { got.add($0) }
        let tickets = (0..<2000).map { _ in feed.reserve() }
        DispatchQueue.concurrentPerform(iterations: tickets.count) { i in
            if i % 7 == 0 { feed.withdraw(tickets[i]) } else { feed.publish(tickets[i], Self.change(Int64(i))) }
        }
        queue.sync {}
        #expect(got.all == (0..<2000).filter { $0 % 7 != 0 }.map(Int64.init))
    }

    /// What ran on the delivery queue, in order: `d<time>` a delivery, `c<time>` a catch-up.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        func add(_ e: String) { lock.withLock { entries.append(e) } }
        var all: [String] { lock.withLock { entries } }
    }

    static func skippingFeed(_ queue: ListenQueue, _ log: Log) -> ChangeFeed {
        ChangeFeed(queue: queue, catchUp: { log.add("c\($0.unixMicros)") }) { log.add("d\($0.commitTime.unixMicros)") }
    }

    @Test func withNoListenerNothingIsQueuedAndTheNextListenerCatchesUpFirst() {
        let queue = ListenQueue(name: "test-feed")
        let log = Log()
        let feed = Self.skippingFeed(queue, log)
        let t = (0..<4).map { _ in feed.reserve() }
        feed.publish(t[1], Self.change(11))
        feed.publish(t[0], Self.change(10))
        feed.withdraw(t[2])
        queue.sync {}
        #expect(log.all.isEmpty)
        #expect(feed.outstanding == 1)
        // Opened while ticket 3 is still out: it comes due after the open, so it is delivered.
        feed.listenerOpened()
        feed.publish(t[3], Self.change(13))
        let t4 = feed.reserve()
        feed.publish(t4, Self.change(14))
        queue.sync {}
        #expect(log.all == ["c11", "d13", "d14"])
        // The last listener closes: skipped again, and a second opening catches up once, with the newest.
        feed.listenerClosed()
        for i in 15...17 { feed.publish(feed.reserve(), Self.change(Int64(i))) }
        feed.listenerOpened()
        feed.listenerOpened()
        feed.listenerClosed()
        feed.publish(feed.reserve(), Self.change(18))
        queue.sync {}
        #expect(log.all == ["c11", "d13", "d14", "c17", "d18"])
        #expect(feed.outstanding == 0)
    }

    @Test func aTapThatWantsChangesGetsThemWithNoListenerOpen() {
        let queue = ListenQueue(name: "test-feed")
        let log = Log()
        let feed = Self.skippingFeed(queue, log)
        let wants = Log()
        let got = Delivered()
        feed.tap(when: { wants.all.last == "yes" }) { got.add($0) }
        feed.publish(feed.reserve(), Self.change(1))
        wants.add("yes")
        feed.publish(feed.reserve(), Self.change(2))
        wants.add("no")
        feed.publish(feed.reserve(), Self.change(3))
        queue.sync {}
        #expect(got.all == [2])
        // The engine's delivery still skips them all.
        #expect(log.all.isEmpty)
        feed.listenerOpened()
        wants.add("yes")
        feed.publish(feed.reserve(), Self.change(4))
        queue.sync {}
        #expect(log.all == ["c3", "d4"])
        #expect(got.all == [2, 4])
    }

    /// Listeners open and close while changes settle from many threads, out of order: what runs on
    /// the queue goes forward in commit order (a catch-up's time is a change skipped after the last
    /// delivery), and once a listener stays open nothing is lost: every change not delivered was
    /// skipped before a catch-up that covers it.
    @Test func listenersOpeningWhileChangesComeDueLoseNothing() {
        for round in 0..<20 {
            let queue = ListenQueue(name: "test-feed")
            let log = Log()
            let feed = Self.skippingFeed(queue, log)
            let n = 3000
            let tickets = (0..<n).map { _ in feed.reserve() }
            let group = DispatchGroup()
            // One listener opens and closes in a loop while another opens partway and stays.
            let stop = Log()
            DispatchQueue.global().async(group: group) {
                var i = 0
                while stop.all.isEmpty {
                    feed.listenerOpened()
                    if (i + round) % 3 == 0 { usleep(20) }
                    feed.listenerClosed()
                    i += 1
                }
            }
            DispatchQueue.concurrentPerform(iterations: n) { i in
                if i == n / 2 { feed.listenerOpened() }
                if i % 11 == 0 { feed.withdraw(tickets[i]) } else { feed.publish(tickets[i], Self.change(Int64(i))) }
            }
            stop.add("stop")
            group.wait()
            queue.sync {}
            #expect(feed.outstanding == 0)

            let published = Set((0..<Int64(n)).filter { $0 % 11 != 0 })
            var delivered: Set<Int64> = []
            var last: Int64 = -1
            var lastCatchUp: Int64 = -1
            for e in log.all {
                let time = Int64(e.dropFirst())!
                #expect(time > last, "round \(round): \(e) after \(last)")
                #expect(published.contains(time), "round \(round): \(e) was withdrawn")
                if e.first == "c" { lastCatchUp = time } else { delivered.insert(time) }
                last = max(last, time)
            }
            let missed = published.subtracting(delivered)
            #expect(missed.allSatisfy { $0 <= lastCatchUp }, "round \(round): \(missed.filter { $0 > lastCatchUp }.sorted().prefix(5))")
        }
    }
}
