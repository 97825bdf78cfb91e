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
}
