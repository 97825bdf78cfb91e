import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// A seeded random walk over Listen streams: targets added and removed, commits of sets and
/// deletes, streams dropped and resumed from their last token, heartbeats, the odd clear. Each
/// stream's view is kept as a client builds it from the events alone; at every snapshot (the
/// global NO_CHANGE) each current target's view must equal the target read afresh at that
/// snapshot's read time, and read times never go back on a stream.
@Suite struct ListenModelCheckTests {
    /// The target shapes the walk picks from (limits, orders, filters, a named document).
    static func shape(_ i: Int, _ g: inout SplitMix) -> (json: JSON?, doc: String?) {
        switch i {
        case 0: (ListenEngineTests.allOfC, nil)
        case 1: (ListenEngineTests.whereEq("color", str("red")), nil)
        case 2: (ListenEngineTests.ordered("n", limit: 3), nil)
        case 3: (ListenEngineTests.ordered("n", limit: 2, descending: true), nil)
        case 4: (ListenEngineTests.whereEq("color", str("blue"), extra: [
                    ("orderBy", .array([.object(["field": .object(["fieldPath": .string("n")]), "direction": .string("ASCENDING")])])),
                    ("limit", .int(2))]), nil)
        default: (nil, "c/d\(g.next(8))")
        }
    }

    /// One client stream and what it holds.
    final class Client {
        var listener: TestListener
        /// target id → its spec, and whether CURRENT arrived.
        var targets: [Int32: (kind: ListenTarget.Kind, current: Bool)] = [:]
        /// target id → document path → update time, as built from the events.
        var views: [Int32: [ResourcePath: Instant]] = [:]
        var lastReadTime = Instant(unixMicros: 0)
        var lastToken: [UInt8]?
        var nextID: Int32 = 1

        init(_ l: TestListener) { listener = l }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func everySnapshotEqualsAFreshReadAtItsReadTime(seed: UInt64) throws {
        var g = SplitMix(seed: seed)
        let h = try TestHarness()
        let db = DatabaseID(project: h.project, database: "(default)")
        let clients = (0..<3).map { _ in Client(TestListener(h)) }
        var snapshots = 0

        func kind(_ shape: (json: JSON?, doc: String?)) throws -> ListenTarget.Kind {
            if let doc = shape.doc { return .documents([ResourcePath(doc.split(separator: "/").map(String.init))]) }
            return .query(try QueryParser(database: db, parent: .root).parse(ProtoObject(json: shape.json!, path: "q")))
        }

        /// What `kind` holds at `time`, read directly.
        func truth(_ kind: ListenTarget.Kind, at time: Instant) throws -> [ResourcePath: Instant] {
            try h.service.read { conn in
                let space = try h.service.storage.space(of: db, conn)
                var out: [ResourcePath: Instant] = [:]
                switch kind {
                case .query(let q):
                    for d in try QueryExecutor(storage: h.service.storage, database: db).run(q, space: space, conn, at: time).documents {
                        out[d.path] = d.updateTime
                    }
                case .documents(let paths):
                    for p in paths { if let d = try h.service.load(space, p, at: time, conn) { out[p] = d.updateTime } }
                }
                return out
            }
        }

        /// Applies what the client received, as an SDK does, checking each snapshot.
        func drain(_ c: Client, step: Int) throws {
            for event in c.listener.take().flatMap({ $0 }) {
                switch event {
                case .targetChange(.add, _, _, _, _):
                    break
                case .targetChange(.noChange, let ids, _, _, _) where !ids.isEmpty:
                    break
                case .targetChange(.remove, let ids, let cause, _, _):
                    #expect(cause == nil, "seed \(seed) step \(step): unexpected denial")
                    for id in ids { c.targets[id] = nil; c.views[id] = nil }
                case .targetChange(.reset, let ids, _, _, _):
                    for id in ids { c.views[id] = [:] }
                case .targetChange(.current, let ids, _, _, _):
                    for id in ids { c.targets[id]?.current = true }
                case .targetChange(.noChange, _, _, let readTime?, let token):
                    snapshots += 1
                    #expect(readTime >= c.lastReadTime, "seed \(seed) step \(step): read time went back")
                    c.lastReadTime = readTime
                    c.lastToken = token
                    for (id, t) in c.targets where t.current {
                        let want = try truth(t.kind, at: readTime)
                        #expect(c.views[id, default: [:]] == want,
                                "seed \(seed) step \(step) target \(id): view \(c.views[id, default: [:]].keys.map(\.lastSegment).sorted()) != \(want.keys.map(\.lastSegment).sorted())")
                    }
                case .targetChange(.noChange, _, _, nil, _):
                    Issue.record("seed \(seed) step \(step): a global NO_CHANGE without a read time")
                case .documentChange(let d, let ids):
                    for id in ids where c.targets[id] != nil { c.views[id, default: [:]][d.path] = d.updateTime }
                case .documentDelete(let p, let ids, _), .documentRemove(let p, let ids, _):
                    for id in ids { c.views[id]?[p] = nil }
                case .existenceFilter(let id, let count, let bloom):
                    #expect(count == c.views[id, default: [:]].count, "seed \(seed) step \(step): filter count")
                    for p in c.views[id, default: [:]].keys { #expect(bloom?.mightContain(db.name(of: p)) == true) }
                case .end(let error):
                    Issue.record("seed \(seed) step \(step): stream ended with \(error)")
                }
            }
        }

        for step in 0..<150 {
            let c = clients[g.next(clients.count)]
            switch g.next(100) {
            case 0..<18 where c.targets.count < 5:
                let shape = Self.shape(g.next(6), &g)
                let id = c.nextID
                c.nextID += 1
                c.targets[id] = (try kind(shape), false)
                c.views[id] = [:]
                if let doc = shape.doc {
                    c.listener.addDocuments([doc], id: id)
                } else {
                    try c.listener.addQuery(shape.json!, id: id)
                }
            case 18..<26 where !c.targets.isEmpty:
                let id = c.targets.keys.sorted()[g.next(c.targets.count)]
                c.listener.remove(id)
                c.targets[id] = nil
                c.views[id] = nil
            case 26..<31 where c.lastToken != nil && !c.targets.isEmpty:
                // The connection drops; the client resumes every target from its last snapshot,
                // keeping what it holds (targets still waiting for CURRENT start over).
                h.service.listeners.close(c.listener.stream)
                c.listener = TestListener(h)
                for (id, t) in c.targets.sorted(by: { $0.key < $1.key }) {
                    let token = t.current ? c.lastToken : nil
                    if !t.current { c.views[id] = [:] }
                    c.targets[id]?.current = false
                    h.service.listeners.add(ListenTarget(database: db, id: id, kind: t.kind, resumeToken: token,
                                                         expectedCount: token == nil ? nil : c.views[id, default: [:]].count),
                                            to: c.listener.stream)
                }
            case 31..<33:
                #expect(h.call("DELETE", "/emulator/v1/projects/\(h.project)/databases/(default)/documents").status == 200)
            case 33..<38:
                h.service.listeners.sync { h.service.listeners.heartbeat() }
                h.put("elsewhere/e", ["n": int(Int64(step))])
            default:
                var writes: [JSON] = []
                var used = Set<Int>()
                for _ in 0..<1 + g.next(3) {
                    let k = g.next(8)
                    guard used.insert(k).inserted else { continue }
                    if g.next(4) == 0 {
                        writes.append(h.deleteWrite("c/d\(k)"))
                    } else {
                        writes.append(h.updateWrite("c/d\(k)", ["n": int(Int64(g.next(6))),
                                                               "color": str(g.next(2) == 0 ? "red" : "blue")]))
                    }
                }
                h.commit(writes)
            }
            for c in clients { try drain(c, step: step) }
        }
        #expect(snapshots > 50)
        #expect(h.service.listeners.feed.outstanding == 0)
    }
}
