import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The engine's shards: streams grouped by the transport thread that writes them, and every
/// stream of every shard seeing every commit whole and in commit order.
@Suite struct ListenShardTests {
    @Test func streamsOfOneTransportThreadShareAShardAndThreadsAreSpread() throws {
        let h = try TestHarness()
        let engine = h.service.listeners
        #expect(engine.shards.count >= 2)
        // Two stand-ins for two connections' loop threads.
        let loopA = NSObject(), loopB = NSObject()
        func open(_ loop: NSObject?) -> ListenStream {
            engine.open(caller: .admin, affinity: loop.map { ObjectIdentifier($0) }) { _, _ in true }
        }
        let a1 = open(loopA), a2 = open(loopA), b1 = open(loopB), b2 = open(loopB)
        #expect(a1.shard === a2.shard)
        #expect(b1.shard === b2.shard)
        #expect(a1.shard !== b1.shard)
        // Without an affinity (a transport with no threads of its own), streams are spread one by one.
        let n1 = open(nil), n2 = open(nil)
        #expect(n1.shard !== n2.shard)
        for s in [a1, a2, b1, b2, n1, n2] { engine.close(s) }
        #expect(engine.sync { engine.streams.isEmpty })
    }

    @Test func everyStreamOnEveryShardSeesEveryCommitWholeAndInCommitOrder() throws {
        let h = try TestHarness()
        let listeners = (0..<8).map { _ in TestListener(h) }
        #expect(Set(listeners.map { ObjectIdentifier($0.stream.shard) }).count >= 2)
        for l in listeners { try l.addQuery(ListenEngineTests.allOfC, id: 1) }
        for l in listeners { #expect(l.takeSummary() == ["ADD[1]", "CURRENT[1]", "NO_CHANGE[]"]) }

        // Commits from four threads at once, so they reach the feed interleaved; a batch of two
        // documents each, which must never be seen split across snapshots.
        let group = DispatchGroup()
        for w in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for i in 0..<10 {
                    let r = h.call("POST", h.api(":commit"), .object(["writes": .array(["x", "y"].map { side in
                        .object(["update": .object(["name": .string(h.root + "/c/w\(w)-\(i)-\(side)"),
                                                    "fields": .object(["n": int(Int64(i))])])])
                    })]))
                    precondition(r.status == 200, "commit failed: \(r.json)")
                }
            }
        }
        group.wait()

        var sequences: [[[String]]] = []
        for l in listeners {
            // One snapshot per commit: its document changes, then a NO_CHANGE whose read time grows.
            var snapshots: [[String]] = []
            var current: [String] = []
            var last = Instant(unixMicros: 0)
            for e in l.take().flatMap({ $0 }) {
                switch e {
                case .documentChange(let d, _):
                    current.append(d.path.string)
                case .targetChange(.noChange, _, _, let readTime?, _):
                    #expect(readTime > last, "read times must grow")
                    last = readTime
                    snapshots.append(current)
                    current = []
                default:
                    Issue.record("unexpected \(e)")
                }
            }
            #expect(current.isEmpty)
            #expect(snapshots.count == 40)
            for s in snapshots {
                // Both documents of a batch, in one snapshot.
                #expect(s.count == 2 && s[0].dropLast(1) == s[1].dropLast(1), "\(s)")
            }
            sequences.append(snapshots)
        }
        // The same commits in the same order for every stream, whatever its shard.
        #expect(Set(sequences.map { $0.description }).count == 1)
    }
}
