import HearthCore
import Testing
@testable import FirestoreEmulator

@Suite struct TransactionRegistryTests {
    let db = DatabaseID(project: "p", database: "(default)")

    func registry() -> TransactionRegistry {
        TransactionRegistry(clock: Clock(frozenAt: Instant(unixMicros: 1_700_000_000_000_000)), ids: IDGenerator(seed: 3))
    }

    @Test func idsAreCanonicalBase64OfTwentyFourBytes() {
        let r = registry()
        for _ in 0..<32 {
            let id = r.begin(db, readOnly: false, readTime: nil)
            #expect(id.utf8.count == 32)
            #expect(Base64.isCanonical(id))
            #expect(ValueJSON.decodeBase64(id)?.count == 24)
        }
    }

    /// The finished ids are remembered oldest-first up to `closedLimit`: past it, each newly finished
    /// one makes the oldest unknown again, whatever the number finished.
    @Test(arguments: [0, 1, 5, TransactionRegistry.closedLimit, TransactionRegistry.closedLimit * 2 + 3])
    func finishedIdsAreForgottenOldestFirst(_ extra: Int) {
        let r = registry()
        let total = TransactionRegistry.closedLimit + extra
        var ids: [String] = []
        for _ in 0..<total {
            let id = r.begin(db, readOnly: false, readTime: nil)
            ids.append(id)
            #expect(r.finish(id) != nil)
        }
        let forgotten = max(0, total - TransactionRegistry.closedLimit)
        for (i, id) in ids.enumerated() {
            #expect(r.isClosed(id) == (i >= forgotten), "\(i)")
            #expect(r.isKnown(id) == (i >= forgotten), "\(i)")
        }
        // Finishing again changes nothing: the id is not recorded twice.
        #expect(r.finish(ids[total - 1]) == nil)
        #expect(r.isClosed(ids[forgotten]))
    }

    @Test func anOpenTransactionIsKnownAndNotClosed() throws {
        let r = registry()
        let id = r.begin(db, readOnly: true, readTime: nil)
        #expect(r.isKnown(id) && !r.isClosed(id))
        #expect(try r.use(id, database: db).readOnly)
        r.finish(id)
        #expect(r.isClosed(id))
        #expect(throws: FirestoreError.invalidArgument(TransactionRegistry.closedMessage)) { try r.use(id, database: self.db) }
    }

    /// A transaction's reads keep each path's first version, whatever the number of paths (the first
    /// inline, the others in a dictionary), and the commit's walk meets every path once.
    @Test(arguments: [1, 2, 7])
    func readsKeepEachPathsFirstVersion(_ paths: Int) {
        let r = registry()
        let id = r.begin(db, readOnly: false, readTime: nil)
        let names = (0..<paths).map { ResourcePath(["c", "d\($0)"]) }
        for round in 0..<3 {
            for (i, p) in names.enumerated() {
                r.recordRead(id, path: p, updateTime: round == 0 && i % 2 == 1 ? nil : Instant(unixMicros: Int64(100 * round + i)))
            }
        }
        guard let reads = r.finish(id)?.reads else {
            Issue.record("the transaction was not open")
            return
        }
        #expect(reads.count == paths)
        var walked: [ResourcePath: Int64] = [:]
        for (p, v) in reads { #expect(walked.updateValue(v, forKey: p) == nil, "\(p) met twice") }
        for (i, p) in names.enumerated() {
            let first: Int64 = i % 2 == 1 ? -1 : Int64(i)
            #expect(walked[p] == first)
            #expect(reads[p] == first)
        }
        #expect(reads[ResourcePath(["c", "other"])] == nil)
        // A read-only transaction records none.
        let ro = r.begin(db, readOnly: true, readTime: nil)
        r.recordRead(ro, path: names[0], updateTime: nil)
        #expect(r.finish(ro)?.reads.count == 0)
    }
}
