import HearthBlobs
import HearthCore
import HearthSQLite
import Testing

private enum Sealed: BlobNamespace { static let tables = BlobTables(prefix: "sealed") }


@Suite struct BlobDataKeyTests {
    private func read(_ db: Database, blob: Int64, _ range: Range<Int64>, key: BlobDataKey?) throws -> [UInt8] {
        let segments = try db.read { c in try BlobStore<Sealed>.segments(c, blobID: blob, start: range.lowerBound, end: range.upperBound) }
        let source = BlobBodySource<Sealed>(database: db, segments: segments, start: range.lowerBound, end: range.upperBound, dataKey: key)
        var out = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 100_000)
        while case let n = try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), n > 0 { out += buffer[0..<n] }
        return out
    }

    @Test func sealedChunksOpenOnlyWithTheirKeyAndKeepPlaintextSlices() throws {
        let db = try Database(path: nil)
        try db.migrate([Migration("sealed", Sealed.tables.createStatements + Sealed.tables.inlineDataStatement + Sealed.tables.chunkFileStatement)])
        let bytes = (0..<((5 << 19) + 123)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let key = BlobDataKey.random()
        let writer = BlobWriter<Sealed, NoChecksum>(database: db, now: Instant(unixSeconds: 0), checksums: [], dataKey: key)
        try bytes.withUnsafeBytes { try writer.append($0) }
        let blob = try db.write { c in try writer.commit(c) }
        writer.committed()
        // Each row is its slice plus the GCM nonce and tag, and none holds the plaintext.
        let rows = try db.read { c in try c.rows("SELECT data FROM sealed_chunks ORDER BY id") { r in r.withBlob(0) { Array($0) } } }
        #expect(rows.map(\.count) == [(1 << 20) + BlobDataKey.overhead, (1 << 20) + BlobDataKey.overhead, (1 << 19) + 123 + BlobDataKey.overhead])
        #expect(!rows[0].dropFirst(12).prefix(64).elementsEqual(bytes.prefix(64)))  // after the 12-byte nonce: ciphertext
        // Whole, and a range across a chunk boundary, through the slices' plaintext coordinates.
        #expect(try read(db, blob: blob, 0..<Int64(bytes.count), key: key) == bytes)
        #expect(try read(db, blob: blob, (1 << 20) - 5..<(1 << 20) + 7, key: key) == Array(bytes[((1 << 20) - 5)..<((1 << 20) + 7)]))
        // A copy of a range shares the sealed chunks and opens with the same key.
        let copy = try db.write { c in try BlobStore<Sealed>.copyRange(c, from: blob, start: 1000, length: 2 << 20, now: Instant(unixSeconds: 0)) }
        #expect(try read(db, blob: copy, 0..<(2 << 20), key: key) == Array(bytes[1000..<(1000 + (2 << 20))]))
        #expect(throws: ChunkUnreadable.self) { try read(db, blob: blob, 0..<10, key: BlobDataKey.random()) }
    }

    /// A small sealed body is stored sealed in its blob's own row, and opens only with its key.
    @Test func smallSealedBodyIsSealedInItsRow() throws {
        let db = try Database(path: nil)
        try db.migrate([Migration("sealed", Sealed.tables.createStatements + Sealed.tables.inlineDataStatement + Sealed.tables.chunkFileStatement)])
        let bytes = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 1) }
        let key = BlobDataKey.random()
        let writer = BlobWriter<Sealed, NoChecksum>(database: db, now: Instant(unixSeconds: 0), checksums: [], dataKey: key)
        try bytes.withUnsafeBytes { try writer.append($0) }
        let blob = try db.write { c in try writer.commit(c) }
        writer.committed()
        let row = try db.read { c in try BlobStore<Sealed>.inlineBytes(c, blobID: blob) }
        #expect(row?.count == 4096 + BlobDataKey.overhead)
        #expect(try db.read { c in try c.scalarInt("SELECT count(*) FROM sealed_chunks") } == 0)
        #expect(try read(db, blob: blob, 0..<4096, key: key) == bytes)
        #expect(try read(db, blob: blob, 100..<200, key: key) == Array(bytes[100..<200]))
        #expect(throws: ChunkUnreadable.self) { try read(db, blob: blob, 0..<10, key: BlobDataKey.random()) }
    }
}
