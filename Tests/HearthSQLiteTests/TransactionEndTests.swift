import HearthSQLite
import Testing

/// `Connection.atTransactionEnd`: the action runs once the outermost transaction has ended, either
/// way, and sees what it left.
@Suite struct TransactionEndTests {
    private func database() throws -> Database {
        let db = try Database(path: nil)
        try db.migrate([Migration("t.1", "CREATE TABLE t (id INTEGER PRIMARY KEY)")])
        return db
    }

    @Test func runsAfterTheCommitAndSeesItsRows() throws {
        let db = try database()
        var seen: [Int64?] = []
        try db.write { c in
            try c.run("INSERT INTO t (id) VALUES (1)")
            c.atTransactionEnd { c in seen.append(try? c.scalarInt("SELECT count(*) FROM t")) }
            // Nested transactions (savepoints) do not run it early.
            try c.transaction { c.atTransactionEnd { c in seen.append(c.inTransaction ? -1 : 0) } }
            #expect(seen.isEmpty)
        }
        #expect(seen == [1, 0])
    }

    @Test func runsAfterARollbackAndSeesNoRows() throws {
        let db = try database()
        struct Abort: Error {}
        var seen: Int64?
        #expect(throws: Abort.self) {
            try db.write { c in
                try c.run("INSERT INTO t (id) VALUES (1)")
                c.atTransactionEnd { c in seen = try? c.scalarInt("SELECT count(*) FROM t") }
                throw Abort()
            }
        }
        #expect(seen == 0)
        // Outside a transaction it runs at once.
        var now = false
        try db.withWriter { c in c.atTransactionEnd { _ in now = true } }
        #expect(now)
    }
}
