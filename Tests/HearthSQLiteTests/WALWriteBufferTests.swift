import Foundation
import Testing
@testable import HearthSQLite

/// WAL frame writes gathered into one write per run of frames (`WALWriteBuffer`, `WALBufferingVFS`):
/// what reaches the file, and when — a commit's frames before SQLite publishes it, so a copy of
/// the files taken at any moment after a commit returned (what `kill -9` leaves) holds it.
@Suite struct WALWriteBufferTests {
    /// The writes that reached the "file", in order.
    final class Sink {
        var writes: [(offset: Int64, bytes: [UInt8])] = []
        var file: [UInt8] = []

        func write(_ p: UnsafeRawPointer, _ n: Int, _ offset: Int64) -> Int32 {
            let bytes = Array(UnsafeRawBufferPointer(start: p, count: n))
            writes.append((offset, bytes))
            let end = Int(offset) + n
            if file.count < end { file += [UInt8](repeating: 0, count: end - file.count) }
            file.replaceSubrange(Int(offset)..<end, with: bytes)
            return 0
        }
    }

    static let page = 4096

    /// A frame header: page number, then the database size after the commit (0 but in a commit frame).
    static func header(page: UInt32, commitSize: UInt32) -> [UInt8] {
        var h = [UInt8](repeating: 0xAB, count: 24)
        for i in 0..<4 {
            h[i] = UInt8(truncatingIfNeeded: page >> (24 - 8 * i))
            h[4 + i] = UInt8(truncatingIfNeeded: commitSize >> (24 - 8 * i))
        }
        return h
    }

    static func write(_ b: WALWriteBuffer, _ sink: Sink, _ bytes: [UInt8], at offset: Int64) -> Int32 {
        bytes.withUnsafeBytes { b.write($0.baseAddress!, amount: bytes.count, offset: offset, through: sink.write) }
    }

    /// Writes a transaction of `pages` frames from `offset` as SQLite does: header, page, header, page…
    static func transaction(_ b: WALWriteBuffer, _ sink: Sink, pages: Int, at offset: Int64) -> Int64 {
        var at = offset
        for k in 0..<pages {
            let h = header(page: UInt32(k + 2), commitSize: k == pages - 1 ? 100 : 0)
            #expect(write(b, sink, h, at: at) == 0)
            #expect(write(b, sink, [UInt8](repeating: UInt8(k), count: page), at: at + 24) == 0)
            at += Int64(24 + page)
        }
        return at
    }

    @Test func aTransactionsFramesReachTheFileByItsCommitInOneWrite() {
        let b = WALWriteBuffer()
        let sink = Sink()
        let end = Self.transaction(b, sink, pages: 20, at: 32)
        // Every frame, the commit frame's header and page included, in one write at its page.
        #expect(sink.writes.count == 1)
        #expect(sink.writes[0].offset == 32 && sink.writes[0].bytes.count == 20 * (24 + Self.page))
        #expect(sink.file.count == Int(end))
        // Nothing is held back after the commit.
        #expect(b.settle(through: sink.write) == 0)
        #expect(sink.writes.count == 1)
    }

    @Test func aCommitHeaderAfterOtherFramesWaitsOnlyForItsPage() {
        let b = WALWriteBuffer()
        let sink = Sink()
        #expect(Self.write(b, sink, Self.header(page: 2, commitSize: 0), at: 32) == 0)
        #expect(Self.write(b, sink, [UInt8](repeating: 1, count: Self.page), at: 56) == 0)
        let commitAt = Int64(56 + Self.page)
        #expect(Self.write(b, sink, Self.header(page: 3, commitSize: 100), at: commitAt) == 0)
        #expect(sink.writes.isEmpty)
        #expect(Self.write(b, sink, [UInt8](repeating: 2, count: Self.page), at: commitAt + 24) == 0)
        #expect(sink.writes.count == 1 && sink.file.count == Int(commitAt) + 24 + Self.page)
        // Any other call in between (never made by SQLite) writes the header out before it.
        #expect(Self.write(b, sink, Self.header(page: 2, commitSize: 0), at: 32) == 0)
        #expect(Self.write(b, sink, Self.header(page: 3, commitSize: 100), at: 56) == 0)
        #expect(b.settle(through: sink.write) == 0)
        #expect(sink.writes.count == 2 && sink.writes[1].bytes.count == 48)
        #expect(Self.write(b, sink, [UInt8](repeating: 3, count: Self.page), at: 80) == 0)
        #expect(b.settle(through: sink.write) == 0)
        #expect(sink.writes.count == 3)
    }

    @Test func aLoneCommitFrameIsWrittenAsBefore() {
        // A transaction of one page: nothing is gathered before its commit header, which is written
        // at once; the page follows in a second write.
        let b = WALWriteBuffer()
        let sink = Sink()
        let end = Self.transaction(b, sink, pages: 1, at: 32)
        #expect(sink.writes.count == 2)
        #expect(sink.writes[0].bytes.count == 24 && sink.writes[1].offset == 56)
        #expect(sink.file.count == Int(end))
    }

    @Test func framesBeforeTheCommitWaitAndAnyOtherCallWritesThemOut() {
        let b = WALWriteBuffer()
        let sink = Sink()
        #expect(Self.write(b, sink, Self.header(page: 2, commitSize: 0), at: 32) == 0)
        #expect(Self.write(b, sink, [UInt8](repeating: 1, count: Self.page), at: 56) == 0)
        #expect(sink.writes.isEmpty)
        // A read, sync or truncate settles first (the VFS calls `settle` before forwarding).
        #expect(b.settle(through: sink.write) == 0)
        #expect(sink.writes.count == 1 && sink.writes[0].bytes.count == 24 + Self.page)
    }

    @Test func aWriteElsewhereWritesOutWhatWasGatheredFirst() {
        let b = WALWriteBuffer()
        let sink = Sink()
        #expect(Self.write(b, sink, Self.header(page: 2, commitSize: 0), at: 32) == 0)
        #expect(Self.write(b, sink, [UInt8](repeating: 1, count: Self.page), at: 56) == 0)
        // A page written again in place (SQLite rewrites a frame of its own transaction).
        #expect(Self.write(b, sink, [UInt8](repeating: 2, count: Self.page), at: 56) == 0)
        #expect(sink.writes.count == 1)
        #expect(b.settle(through: sink.write) == 0)
        #expect(sink.writes.count == 2)
        #expect(Array(sink.file[56..<(56 + Self.page)]) == [UInt8](repeating: 2, count: Self.page))
    }

    @Test func aCommitHeaderRewrittenAloneIsWrittenAtOnce() {
        // walRewriteChecksums rewrites the headers of a transaction's frames after its commit frame,
        // the commit frame's last, and no write follows it before SQLite publishes the commit.
        let b = WALWriteBuffer()
        let sink = Sink()
        let end = Self.transaction(b, sink, pages: 3, at: 32)
        let before = sink.writes.count
        #expect(Self.write(b, sink, Self.header(page: 4, commitSize: 100), at: end - Int64(24 + Self.page)) == 0)
        #expect(sink.writes.count == before + 1)
    }

    @Test func moreThanTheCapacityIsWrittenAsItGoes() {
        let b = WALWriteBuffer()
        let sink = Sink()
        let pages = WALWriteBuffer.capacity / Self.page + 10
        let end = Self.transaction(b, sink, pages: pages, at: 32)
        #expect(sink.writes.count >= 2)
        #expect(sink.writes.allSatisfy { $0.bytes.count <= WALWriteBuffer.capacity })
        #expect(sink.file.count == Int(end))
        // In order, without gaps or overlaps.
        var at: Int64 = 32
        for w in sink.writes {
            #expect(w.offset == at)
            at += Int64(w.bytes.count)
        }
        // A single write larger than the capacity goes straight through.
        let big = [UInt8](repeating: 9, count: WALWriteBuffer.capacity + 1)
        #expect(Self.write(b, sink, big, at: at) == 0)
        #expect(sink.writes.last?.bytes.count == big.count)
    }

    @Test func aFailedWriteIsReportedAndDropsWhatWasGathered() {
        let b = WALWriteBuffer()
        var calls = 0
        let failing: (UnsafeRawPointer, Int, Int64) -> Int32 = { _, _, _ in
            calls += 1
            return 13 // SQLITE_FULL
        }
        let h = Self.header(page: 2, commitSize: 0)
        #expect(h.withUnsafeBytes { b.write($0.baseAddress!, amount: 24, offset: 32, through: failing) } == 0)
        let commit = Self.header(page: 3, commitSize: 10)
        #expect(commit.withUnsafeBytes { b.write($0.baseAddress!, amount: 24, offset: 56, through: failing) } == 0)
        #expect(calls == 0)
        // The commit frame's page writes everything out, and its write fails SQLite's.
        let page = [UInt8](repeating: 1, count: Self.page)
        #expect(page.withUnsafeBytes { b.write($0.baseAddress!, amount: Self.page, offset: 80, through: failing) } == 13)
        #expect(calls == 1)
        #expect(b.settle(through: failing) == 0)
        #expect(calls == 1)
    }

    // MARK: Through SQLite

    /// Copies the database and its WAL as they are now (what a process killed at this moment leaves).
    private func snapshot(_ path: String) throws -> String {
        let copy = temporaryDatabasePath()
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        return copy
    }

    @Test func everyCommitIsInTheFilesWhenItReturns() throws {
        let path = temporaryDatabasePath()
        let db = try Database(path: path, layout: .small)
        try db.migrate([Migration("t.1", "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL); CREATE INDEX t_v ON t (v)")])
        for i in 0..<60 {
            try db.write { c in
                // Several pages per commit: the table and its index, rows of ~1 KiB.
                for k in 0..<4 {
                    try c.run("INSERT INTO t (id, v) VALUES (?, ?)", [i * 4 + k, String(repeating: "v\(i)-\(k)", count: 100)])
                }
            }
            // Another connection sees it at once…
            #expect(try db.read { try $0.scalarInt("SELECT count(*) FROM t") } == Int64(i * 4 + 4))
            // …and so does a copy of the files as they are (every few commits: copying takes time).
            if i % 15 == 14 {
                let copy = try snapshot(path)
                let reopened = try Database(path: copy, layout: .small)
                #expect(try reopened.read { try $0.scalarInt("SELECT count(*) FROM t") } == Int64(i * 4 + 4))
                #expect(try reopened.read { try $0.first("PRAGMA integrity_check") { $0.text(0) } } == "ok")
            }
        }
    }

    @Test func aTransactionThatSpillsAndRewritesItsPagesIsWhole() throws {
        // A writer with a tiny cache spills pages into the WAL mid-transaction and writes some again:
        // SQLite rewrites those frames in place and their checksums after the commit frame.
        let path = temporaryDatabasePath()
        let c = try Connection(path: path)
        try c.execute("PRAGMA journal_mode=WAL")
        try c.execute("PRAGMA cache_size=10")
        try c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        let blob = [UInt8](repeating: 5, count: 3000)
        try c.transaction(immediate: true) {
            for i in 0..<400 { try c.run("INSERT INTO t (id, v) VALUES (?, ?)", [i, blob]) }
            try c.run("UPDATE t SET v = ? WHERE id % 3 = 0", [[UInt8](repeating: 6, count: 3000)])
        }
        let copy = try snapshot(path)
        let reopened = try Connection(path: copy)
        #expect(try reopened.scalarInt("SELECT count(*) FROM t") == 400)
        #expect(try reopened.scalarInt("SELECT count(*) FROM t WHERE substr(v, 1, 1) = x'06'") == 134)
        #expect(try reopened.first("PRAGMA integrity_check") { $0.text(0) } == "ok")
    }
}
