import HearthBlobs
import HearthCore
import HearthSQLite
import Testing

private enum First: BlobNamespace { static let tables = BlobTables(prefix: "first") }
private enum Second: BlobNamespace { static let tables = BlobTables(prefix: "second") }


@Suite struct BlobNamespaceTests {
    func database() throws -> Database {
        let db = try Database(path: nil)
        try db.migrate([Migration("first", First.tables.createStatements + First.tables.inlineDataStatement + First.tables.chunkFileStatement),
                        Migration("second", Second.tables.createStatements + Second.tables.inlineDataStatement + Second.tables.chunkFileStatement)])
        return db
    }

    func count(_ db: Database, _ table: String) throws -> Int {
        try db.read { c in try c.scalarInt("SELECT count(*) FROM \(table)") }.map { Int($0) } ?? -1
    }

    @Test func namespacesKeepTheirBytesApart() throws {
        let db = try database()
        let bytes = (0..<(3 << 19)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let writer = BlobWriter<First, NoChecksum>(database: db, now: Instant(unixSeconds: 0), checksums: [])
        try bytes.withUnsafeBytes { try writer.append($0) }
        let blob = try db.write { c in try writer.commit(c) }
        writer.committed()
        #expect(try count(db, "first_chunks") == 2)
        #expect(try count(db, "second_chunks") == 0)

        // A staging blob left in the second namespace is swept there and nowhere else.
        _ = try db.write { c in try BlobStore<Second>.createStaging(c, now: Instant(unixSeconds: 0)) }
        #expect(try db.write { c in try BlobStore<Second>.deleteOrphans(c) } == 1)
        #expect(try db.write { c in try BlobStore<First>.deleteOrphans(c) } == 0)

        let segments = try db.read { c in try BlobStore<First>.segments(c, blobID: blob, start: 5, end: Int64(bytes.count)) }
        let source = BlobBodySource<First>(database: db, segments: segments, start: 5, end: Int64(bytes.count))
        var out = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 70_000)
        while case let n = try buffer.withUnsafeMutableBytes({ try source.read(into: $0) }), n > 0 { out += buffer[0..<n] }
        #expect(out == Array(bytes[5...]))
        #expect(writer.finalizeDigests().md5.count == 16)
    }
}
