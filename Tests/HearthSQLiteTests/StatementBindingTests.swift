import Testing
import HearthSQLite

/// Binding one parameter at a time (`reset`, `bind(_:at:)`, `bindScratch`, `runBound`) stores what
/// binding an array does, across scratch chunks, and leaves no binding behind that later runs see.
@Suite struct StatementBindingTests {
    private static let insertRows = PreparedSQL("INSERT INTO t (k, v, s, n) VALUES " + Array(repeating: "(?, ?, ?, ?)", count: 8).joined(separator: ", "))

    private func connection() throws -> Connection {
        let conn = try Connection(path: ":memory:")
        try conn.execute("CREATE TABLE t (k BLOB PRIMARY KEY, v BLOB, s TEXT, n INTEGER)")
        return conn
    }

    @Test func rowsBoundOneByOneAreStoredExactly() throws {
        let conn = try connection()
        let insert = try conn.prepare(Self.insertRows)
        #expect(insert.parameterCount == 32)
        var expected: [([UInt8], [UInt8], String, Int64)] = []
        for round in 0..<3 {
            insert.reset()
            for r in 0..<8 {
                // Values of 0…1,000 bytes fill several 4 KiB scratch chunks; one is over the scratch limit.
                let key: [UInt8] = [UInt8(round), UInt8(r)] + Array(repeating: UInt8(r), count: r * 120)
                let value: [UInt8] = r == 7 ? Array(repeating: 0xAB, count: 5000) : Array(repeating: UInt8(round * 8 + r), count: 1000 - r)
                // Text too: empty, non-ASCII, one over the scratch limit; half of it bound through the scratch.
                let text = r == 3 ? "" : r == 6 ? String(repeating: "ü", count: 700) : "é-\(round)-\(r)"
                try insert.bindScratch(key, at: r * 4 + 1)
                try insert.bindScratch(r == 5 ? [] : value, at: r * 4 + 2)
                if (round + r).isMultiple(of: 2) { try insert.bindScratch(text, at: r * 4 + 3) } else { try insert.bind(text, at: r * 4 + 3) }
                try insert.bind(Int64(round * 100 + r), at: r * 4 + 4)
                expected.append((key, r == 5 ? [] : value, text, Int64(round * 100 + r)))
            }
            try insert.runBound()
        }
        let stored = try conn.rows("SELECT k, v, s, n, typeof(v), typeof(s) FROM t ORDER BY n") {
            ($0.blob(0), $0.blob(1), $0.text(2), $0.int64(3), $0.text(4), $0.text(5))
        }
        #expect(stored.count == expected.count)
        for (s, e) in zip(stored, expected) {
            #expect(s.0 == e.0 && s.1 == e.1 && s.2 == e.2 && s.3 == e.3)
            #expect(s.4 == "blob")  // an empty blob binds as a blob, not NULL
            #expect(s.5 == "text")  // and empty text as text
        }
    }

    @Test func aQueryFindsRowsByScratchBoundValues() throws {
        let conn = try connection()
        try conn.run("INSERT INTO t (k, v, s, n) VALUES (?, ?, ?, ?), (?, ?, ?, ?)",
                     [[UInt8]([1, 2]), [UInt8]([7]), "naïve", Int64(1), [UInt8]([1, 3]), [UInt8]([8]), "plain", Int64(2)])
        let select = try conn.prepare(PreparedSQL("SELECT n FROM t WHERE k = ? AND s = ?"))
        for (key, text, expected) in [([UInt8]([1, 2]), "naïve", Int64(1)), ([1, 3], "plain", 2), ([1, 2], "plain", nil)] as [([UInt8], String, Int64?)] {
            select.reset()
            try select.bindScratch(key, at: 1)
            try select.bindScratch(text, at: 2)
            let found: Int64? = try select.step() ? select.int64(0) : nil
            #expect(found == expected)
            select.reset()
        }
    }

    @Test func aRunAfterScratchBindingsSeesNoneOfThem() throws {
        let conn = try connection()
        let one = PreparedSQL("INSERT INTO t (k, v) VALUES (?, ?)")
        let insert = try conn.prepare(one)
        insert.reset()
        try insert.bindScratch([1], at: 1)
        try insert.bindScratch([2, 2], at: 2)
        try insert.runBound()
        // Only the key bound again: the value must read NULL, not the scratch left by the last run.
        insert.reset()
        try insert.bind([3], at: 1)
        try insert.runBound()
        // A failed run drops its scratch bindings too.
        insert.reset()
        try insert.bindScratch([1], at: 1)
        try insert.bindScratch([9], at: 2)
        #expect(throws: SQLiteError.self) { try insert.runBound() }
        try insert.run([[UInt8]([4])])
        let rows = try conn.rows("SELECT k, v IS NULL FROM t ORDER BY k") { ($0.blob(0), $0.bool(1)) }
        #expect(rows.map(\.0) == [[1], [3], [4]])
        #expect(rows.map(\.1) == [false, true, true])
    }
}
