import Testing
@testable import HearthSQLite

/// Entries answer only at the generation they were read under; a newer one empties the cache.
@Suite struct GenerationCacheTests {
    @Test func entriesLiveForOneGeneration() {
        let cache = GenerationCache<String, Int?>(capacity: 2)
        cache.store("a", 1, generation: 5)
        cache.store("gone", nil, generation: 5)
        #expect(cache.lookup("a", generation: 5) == .some(.some(1)))
        // A known absence is an answer too.
        #expect(cache.lookup("gone", generation: 5) == .some(.none))
        #expect(cache.lookup("b", generation: 5) == nil)
        // Full: a third key is not remembered.
        cache.store("c", 3, generation: 5)
        #expect(cache.lookup("c", generation: 5) == nil)
        // Any write since: nothing answers, and what an older read found is not stored.
        #expect(cache.lookup("a", generation: 6) == nil)
        cache.store("a", 2, generation: 6)
        cache.store("b", 9, generation: 5)
        #expect(cache.lookup("a", generation: 6) == .some(.some(2)))
        #expect(cache.lookup("b", generation: 6) == nil)
        #expect(cache.lookup("b", generation: 5) == nil)
    }

    /// The generation moves with every write, committed or not, and not with reads.
    @Test func theDatabaseGenerationMovesWithEveryWrite() throws {
        let db = try Database(path: nil)
        let g0 = db.writeGeneration
        try db.write { c in try c.execute("CREATE TABLE t (x INTEGER)") }
        let g1 = db.writeGeneration
        #expect(g1 > g0)
        _ = try db.read { c in try c.scalarInt("SELECT count(*) FROM t") }
        #expect(db.writeGeneration == g1)
        struct Failed: Error {}
        _ = try? db.write { _ in throw Failed() }
        #expect(db.writeGeneration > g1)
    }
}
