import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The feed delivers in ticket order whatever order tickets settle in, and a withdrawn ticket
/// holds nothing up.
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
        let queue = DispatchQueue(label: "test.feed")
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
        let queue = DispatchQueue(label: "test.feed")
        let got = Delivered()
        let feed = ChangeFeed(queue: queue) { got.add($0) }
        let tickets = (0..<2000).map { _ in feed.reserve() }
        DispatchQueue.concurrentPerform(iterations: tickets.count) { i in
            if i % 7 == 0 { feed.withdraw(tickets[i]) } else { feed.publish(tickets[i], Self.change(Int64(i))) }
        }
        queue.sync {}
        #expect(got.all == (0..<2000).filter { $0 % 7 != 0 }.map(Int64.init))
    }
}
