import Foundation
import Testing
@testable import HearthSQLite

/// The WAL-index locks decided in memory (`SharedMemoryLocks`): between the process's own
/// connections exactly as SQLite's unix VFS decides them, and another process kept out while the
/// process holds the file — or, when another process was there first, SQLite's own locks as before.
@Suite struct SharedMemoryLocksTests {
    static func open(_ path: String) throws -> Connection {
        let c = try Connection(path: path)
        try c.execute("PRAGMA journal_mode=WAL")
        return c
    }

    static func busy(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch let e as SQLiteError {
            return e.code & 0xFF == 5 // SQLITE_BUSY, any extended code
        } catch {
            return false
        }
    }

    @Test func connectionsOfTheProcessLockEachOtherAsSQLiteDoes() throws {
        let path = temporaryDatabasePath()
        let writer = try Self.open(path)
        try writer.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        try writer.execute("INSERT INTO t (v) VALUES ('a')")
        let other = try Self.open(path)
        let reader = try Self.open(path)

        // One writer at a time (the WAL write lock).
        try writer.execute("BEGIN IMMEDIATE")
        #expect(Self.busy { try other.execute("BEGIN IMMEDIATE") })
        try writer.execute("INSERT INTO t (v) VALUES ('b')")
        // A reader reads the last commit while the write is open (its read mark)…
        try reader.execute("BEGIN")
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 1)
        try writer.execute("COMMIT")
        // …and keeps its snapshot after the commit, until it ends.
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 1)
        // A checkpoint cannot restart the WAL under the open snapshot, nor copy past it.
        #expect(try writer.first("PRAGMA wal_checkpoint(RESTART)") { $0.int(0) } == 1)
        try reader.execute("COMMIT")
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 2)
        // The write lock was released: the other connection writes now.
        try other.execute("BEGIN IMMEDIATE")
        try other.execute("INSERT INTO t (v) VALUES ('c')")
        try other.execute("COMMIT")
        #expect(try writer.first("PRAGMA wal_checkpoint(RESTART)") { $0.int(0) } == 0)
        #expect(try writer.scalarInt("SELECT count(*) FROM t") == 3)
    }

    @Test func manyThreadsWriteAndReadOneFile() async throws {
        let path = temporaryDatabasePath()
        let db = try Database(path: path, layout: .small)
        try db.migrate([Migration("t.1", "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for k in 0..<4 {
                group.addTask {
                    for i in 0..<100 {
                        try db.write { try $0.run("INSERT INTO t (id, v) VALUES (?, ?)", [k * 1000 + i, "v"]) }
                        _ = try db.read { try $0.scalarInt("SELECT count(*) FROM t") }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try db.read { try $0.scalarInt("SELECT count(*) FROM t") } == 400)
        #expect(try db.read { try $0.first("PRAGMA integrity_check") { $0.text(0) } } == "ok")
    }

    static let python = "/usr/bin/python3"

    /// Runs `script` in another process with the database's path as its argument; its output.
    static func otherProcess(_ script: String, _ path: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = ["-c", script, path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Reads the table's rows with no wait for locks; "locked" when SQLite says the file is busy.
    static let readElsewhere = """
        import sqlite3, sys
        try:
            c = sqlite3.connect(sys.argv[1], timeout=0)
            print(c.execute("SELECT count(*) FROM t").fetchone()[0])
        except sqlite3.OperationalError as e:
            print("locked" if "locked" in str(e) or "busy" in str(e) else str(e))
        """

    /// Whether another process could take a WAL-index slot (shared) now: "free" or "locked".
    static let slotElsewhere = """
        import fcntl, sys
        with open(sys.argv[1] + "-shm", "rb") as f:
            try:
                fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB, 8, 120)
                print("free")
            except OSError:
                print("locked")
        """

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: python)))
    func anotherProcessIsKeptOutWhileTheProcessHoldsTheFile() throws {
        let path = temporaryDatabasePath()
        do {
            let c = try Self.open(path)
            try c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
            try c.execute("INSERT INTO t VALUES (1)")
            // Mapped and in use: another process's SQLite can take no slot, so it can neither read
            // nor write (it would retry, then fail with SQLITE_PROTOCOL after ~10 s).
            #expect(try Self.otherProcess(Self.slotElsewhere, path) == "locked")
            try c.execute("INSERT INTO t VALUES (2)")
            #expect(try c.scalarInt("SELECT count(*) FROM t") == 2)
        }
        // Closed: the file is anyone's again, with every commit in it.
        #expect(try Self.otherProcess(Self.readElsewhere, path) == "2")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: python)))
    func whenAnotherProcessWasThereFirstSQLitesOwnLocksDecide() throws {
        let path = temporaryDatabasePath()
        do {
            let c = try Self.open(path)
            try c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
            try c.execute("INSERT INTO t VALUES (1)")
        }
        // Another process holds a read transaction open (a read mark) while this one opens the file.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: Self.python)
        holder.arguments = ["-c", """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            c.execute("BEGIN")
            print(c.execute("SELECT count(*) FROM t").fetchone()[0], flush=True)
            sys.stdin.read()
            c.execute("COMMIT")
            """, path]
        let input = Pipe()
        let output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        let ready = output.fileHandleForReading.availableData
        #expect(String(decoding: ready, as: UTF8.self).hasPrefix("1"))
        do {
            let c = try Self.open(path)
            try c.execute("INSERT INTO t VALUES (2)")
            #expect(try c.scalarInt("SELECT count(*) FROM t") == 2)
            // Both processes use the file with SQLite's own locks: a third takes a slot and reads.
            #expect(try Self.otherProcess(Self.slotElsewhere, path) == "free")
            #expect(try Self.otherProcess(Self.readElsewhere, path) == "2")
        }
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        #expect(holder.terminationStatus == 0)
    }
}
