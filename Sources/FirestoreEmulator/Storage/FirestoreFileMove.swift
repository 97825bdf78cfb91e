import Foundation
import HearthSQLite

/// Moves Firestore's tables (`fs_*`) out of a database shared with other services — the layout of
/// data directories before Firestore had a file of its own — into Firestore's own file.
///
/// Crash-safe at every point (`kill -9` included), because the new file appears under its final
/// name only once it is complete and synced, and the shared copy is dropped only after that:
/// 1. the tables are copied, in one transaction, into `<path>.moving`, a new file with Firestore's
///    page size and schema; the file is synced;
/// 2. `<path>.moving` is renamed to `<path>` and the directory synced;
/// 3. the shared database drops its `fs_*` tables and forgets Firestore's migrations, in one transaction.
/// A run that died in 1 starts over (the partial `.moving` file is deleted); one that died between
/// 2 and 3 finds `<path>` and only finishes 3. Until 3 commits, the shared database still holds
/// every document, so a start that fails in between loses nothing either.
public enum FirestoreFileMove {
    /// Where a test stops a move, as if the process died right after that step.
    public enum Step: Sendable { case schemaCreated, copied, renamed }

    /// Why the move could not finish (the shared database still holds every document).
    public struct MoveError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Key in the new file's `fs_meta` recording the shared database's `last_commit` when it was
    /// copied: tells an interrupted move (the same data in both files) from documents an older
    /// hearth wrote into the shared file after the move (which must not be dropped).
    static let movedMarker = "moved_last_commit"

    /// Whether `shared` still holds Firestore's tables or records their migrations.
    public static func isNeeded(in shared: Database) throws -> Bool {
        try shared.read { conn in
            let tables = try conn.scalarInt(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'fs\\_%' ESCAPE '\\'") ?? 0
            let hasLedger = (try conn.scalarInt(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'hearth_migrations'") ?? 0) > 0
            let recorded = hasLedger
                ? try conn.scalarInt("SELECT count(*) FROM hearth_migrations WHERE id LIKE 'firestore.%'") ?? 0 : 0
            return tables > 0 || recorded > 0
        }
    }

    /// Moves the tables of `shared` (already migrated to this binary's Firestore schema) into a new
    /// database at `path`, or finishes a move that was interrupted.
    /// - Throws: `MoveError` when `path` exists and `shared` holds documents written after it was made.
    public static func run(from shared: Database, to path: String, stoppingAfter stop: Step? = nil) throws {
        if !FileManager.default.fileExists(atPath: path) {
            let moving = path + ".moving"
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: moving + suffix) }
            try createSchema(at: moving)
            if stop == .schemaCreated { return }
            try copyTables(of: shared, into: moving)
            try syncFile(moving)
            if stop == .copied { return }
            guard rename(moving, path) == 0 else {
                throw MoveError(description: "cannot rename \(moving) to \(path): \(String(cString: strerror(errno)))")
            }
            try syncFile((path as NSString).deletingLastPathComponent)
            if stop == .renamed { return }
        }
        try dropTables(of: shared, movedTo: path)
    }

    /// A new file with Firestore's layout and schema, in rollback-journal mode while it is being
    /// filled: a file without a WAL beside it is complete on its own and can be renamed.
    private static func createSchema(at path: String) throws {
        let db = try Database(path: path, layout: FirestoreStorage.layout)
        try db.migrate(FirestoreStorage.migrations)
        try db.withWriter { conn in try conn.execute("PRAGMA journal_mode=DELETE") }
    }

    /// Copies every `fs_*` table of `shared` into the file at `path` in one transaction (synced).
    private static func copyTables(of shared: Database, into path: String) throws {
        try attached(path, as: "fs_moving", to: shared) { conn in
            try conn.execute("PRAGMA fs_moving.synchronous=FULL")
            try conn.transaction(immediate: true) {
                let tables = try conn.rows(
                    "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name LIKE 'fs\\_%' ESCAPE '\\' ORDER BY name") { $0.text(0) }
                for table in tables {
                    let columns = try conn.rows("SELECT name FROM pragma_table_info(?, 'main')", [table]) { "\"\($0.text(0))\"" }
                        .joined(separator: ", ")
                    // The new file's migrations seeded some tables (fs_meta): the shared rows replace them.
                    try conn.execute("DELETE FROM fs_moving.\"\(table)\"")
                    try conn.execute("INSERT INTO fs_moving.\"\(table)\" (\(columns)) SELECT \(columns) FROM main.\"\(table)\"")
                }
                try conn.execute("""
                    INSERT OR REPLACE INTO fs_moving.fs_meta (key, value)
                    VALUES ('\(movedMarker)', COALESCE((SELECT value FROM main.fs_meta WHERE key = 'last_commit'), 0))
                    """)
            }
        }
    }

    /// Drops the shared copy once `path` holds the documents; refuses when the shared copy has
    /// documents the moved file does not (an older hearth wrote them after the move).
    private static func dropTables(of shared: Database, movedTo path: String) throws {
        let marker = try attached(path, as: "fs_moved", to: shared) { conn in
            try conn.scalarInt("SELECT value FROM fs_moved.fs_meta WHERE key = ?", [movedMarker])
        }
        try shared.withWriter { conn in
            try conn.transaction(immediate: true) {
                let tables = try conn.rows(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'fs\\_%' ESCAPE '\\'") { $0.text(0) }
                if tables.contains("fs_documents"), tables.contains("fs_meta"),
                   try conn.scalarInt("SELECT count(*) FROM (SELECT 1 FROM fs_documents LIMIT 1)") ?? 0 > 0,
                   try conn.scalarInt("SELECT value FROM fs_meta WHERE key = 'last_commit'") != marker {
                    throw MoveError(description: "\(path) exists, but the database beside it holds Firestore documents "
                        + "written after it was made (an older hearth ran on this data directory); move one of the two away")
                }
                for table in tables { try conn.execute("DROP TABLE \"\(table)\"") }
                try conn.execute("DELETE FROM hearth_migrations WHERE id LIKE 'firestore.%'")
            }
        }
    }

    /// Runs `body` on the shared writer with the file at `path` attached as `name`.
    private static func attached<T>(_ path: String, as name: String, to shared: Database, _ body: (Connection) throws -> T) throws -> T {
        try shared.withWriter { conn in
            try conn.run("ATTACH DATABASE ? AS \(name)", [path])
            let result: T
            do { result = try body(conn) } catch {
                try? conn.execute("DETACH DATABASE \(name)")
                throw error
            }
            try conn.execute("DETACH DATABASE \(name)")
            return result
        }
    }

    /// fsync of a file or directory.
    private static func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw MoveError(description: "cannot open \(path) to sync it: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw MoveError(description: "cannot sync \(path): \(String(cString: strerror(errno)))") }
    }
}
