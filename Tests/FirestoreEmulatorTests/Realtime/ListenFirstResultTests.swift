import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// A plain query's first result is paged out as the client reads: while the client waits, the
/// whole result is one outbox entry (not its documents, nor even their names), it arrives whole
/// and in the query's order, and the commits after it follow it; the target then holds nothing per
/// document.
@Suite struct ListenFirstResultTests {
    /// Whether the test's client reads (flow control).
    final class Gate: @unchecked Sendable {
        private let lock = NSLock()
        private var open = false
        var isOpen: Bool {
            get { lock.withLock { open } }
            set { lock.withLock { open = newValue } }
        }
    }

    /// `n` documents `c/d0000`…, in commits of 400 writes: `k` = i % 7, `g` = "x" for even i.
    static func fill(_ h: TestHarness, _ n: Int) {
        for start in stride(from: 0, to: n, by: 400) {
            h.commit((start..<min(n, start + 400)).map { i in
                h.updateWrite(String(format: "c/d%04d", i), ["k": int(Int64(i % 7)), "g": str(i % 2 == 0 ? "x" : "y")])
            })
        }
    }

    /// Waits until the engine handed everything over to the listener.
    static func drain(_ l: TestListener) {
        let engine = l.harness.service.listeners
        for _ in 0..<5_000 where engine.sync({ l.stream.pending }) > 0 { usleep(1_000) }
    }

    /// The names the whole query returns, as runQuery orders them.
    static func expected(_ h: TestHarness, _ l: TestListener, _ structured: JSON) throws -> [String] {
        let q = try QueryParser(database: l.db, parent: .root).parse(ProtoObject(json: structured, path: "q"))
        return try h.service.read { conn in
            let space = try h.service.storage.space(of: l.db, conn)
            return try QueryExecutor(storage: h.service.storage, database: l.db).run(q, space: space, conn).documents.map(\.path.lastSegment)
        }
    }

    /// `n` documents and a listener of all of them whose client is not reading yet.
    static func waitingListener(_ h: TestHarness, documents n: Int) throws -> (TestListener, Gate) {
        fill(h, n)
        let gate = Gate()
        let l = TestListener(h, writable: { gate.isOpen })
        try l.addQuery(ListenEngineTests.allOfC, id: 1)
        return (l, gate)
    }

    @Test func aLargeFirstResultWaitsAsOneEntryAndArrivesWholeThenTheCommitsAfterIt() throws {
        let h = try TestHarness()
        let (l, gate) = try Self.waitingListener(h, documents: 1_200)
        let engine = h.service.listeners
        // ADD, the first result, CURRENT, NO_CHANGE: four entries however large the result.
        #expect(engine.sync { l.stream.pending } == 4)
        #expect(engine.sync { l.stream.outboxBytes } < 1_000)
        h.put("c/d0005", ["k": int(100)])
        h.delete("c/d0006")
        #expect(engine.sync { l.stream.pending } == 8)

        gate.isOpen = true
        Self.drain(l)
        let batches = l.take()
        let events = batches.flatMap { $0 }
        let summary = events.map(TestListener.describe)
        #expect(summary.first == "ADD[1]")
        #expect(summary.dropFirst().prefix(1_200) == ArraySlice((0..<1_200).map { String(format: "CHANGE d%04d [1]", $0) }))
        #expect(summary.dropFirst(1_201) == ["CURRENT[1]", "NO_CHANGE[]", "CHANGE d0005 [1]", "NO_CHANGE[]", "DELETE d0006 [1]", "NO_CHANGE[]"])
        // The first result is as of its read time: d0005 as it was before the later commit.
        if case .documentChange(let d, _) = events[6] { #expect(d.fields["k"] == .integer(5)) } else { Issue.record("not a change") }
        #expect(batches.allSatisfy { $0.count <= ListenEngine.chunk })
        #expect(engine.sync { l.stream.targets[1]?.known.isEmpty } == true)

        // Changes after it are incremental, from the commit alone: a document that stops matching leaves.
        try l.addQuery(ListenEngineTests.whereEq("g", str("x")), id: 2)
        Self.drain(l)
        _ = l.take()
        h.put("c/d0000", ["g": str("y")])
        #expect(l.takeSummary() == ["CHANGE d0000 [1]", "REMOVE_DOC d0000 [2]", "NO_CHANGE[]"])
        h.put("c/d0001", ["g": str("x")])
        #expect(l.takeSummary() == ["CHANGE d0001 [1]", "CHANGE d0001 [2]", "NO_CHANGE[]"])
        #expect(engine.sync { l.stream.targets[2]?.known.isEmpty } == true)
    }

    /// A clear while a first result still waits for the client: its pages would be read from a
    /// space being collected, so the stream ends ABORTED (the SDKs listen again) instead of sending a
    /// result that was never whole.
    @Test func aClearUnderAWaitingFirstResultEndsTheStream() throws {
        let h = try TestHarness()
        let (l, gate) = try Self.waitingListener(h, documents: 600)
        #expect(h.service.listeners.sync { l.stream.pending } == 4)
        #expect(h.call("DELETE", "/emulator/v1/projects/\(h.project)/databases/(default)/documents").status == 200)
        gate.isOpen = true
        for _ in 0..<5_000 where !h.service.listeners.sync({ l.stream.closed }) { usleep(1_000) }
        let summary = l.takeSummary()
        #expect(!summary.contains { $0.hasPrefix("CHANGE") })
        #expect(summary.last == "END \(FirestoreError.aborted("").status)", "\(summary.suffix(3))")
        #expect(!summary.contains("CURRENT[1]"))
    }

    static func orderedBy(_ field: String, descending: Bool, whereG: String? = nil) -> JSON {
        var o: [(String, JSON)] = [
            ("from", .array([.object(["collectionId": .string("c")])])),
            ("orderBy", .array([.object(["field": .object(["fieldPath": .string(field)]),
                                         "direction": .string(descending ? "DESCENDING" : "ASCENDING")])])),
        ]
        if let whereG {
            o.append(("where", .object(["fieldFilter": .object(["field": .object(["fieldPath": .string("g")]),
                                                                "op": .string("EQUAL"), "value": str(whereG)])])))
        }
        return .object(JSONObject(o))
    }

    /// Pages seek by value and name (ties included), by name within an equality's matches, and
    /// in descending order: each first result is exactly the query's result.
    @Test(arguments: [
        orderedBy("k", descending: false), orderedBy("k", descending: true),
        orderedBy("__name__", descending: true), orderedBy("__name__", descending: false, whereG: "x"),
    ])
    func pagedFirstResultsMatchTheQuery(_ structured: JSON) throws {
        let h = try TestHarness()
        Self.fill(h, 1_100)
        let l = TestListener(h)
        try l.addQuery(structured, id: 1)
        Self.drain(l)
        let names = l.take().flatMap { $0 }.compactMap { e -> String? in
            if case .documentChange(let d, _) = e { return d.path.lastSegment } else { return nil }
        }
        let want = try Self.expected(h, l, structured)
        #expect(want.count >= 550)
        #expect(names == want)
    }
}
