import Foundation
import HearthCore
import HearthSQLite

/// `fs_documents_group (space, collection_id, key)`: the documents of a collection group in name
/// order, for collection-group scans. It exists only once something has needed it.
///
/// Why lazy: every create inserted a row into it, a third of the b-trees a create touches (the
/// table, `fs_documents_parent`, this) and about one of the ~3.4 WAL frames a commit wrote at 16
/// connections, though only collection-group queries (and the collection-group index build) read
/// it. `firestore.8` drops it from existing files and a fresh file never has it; the first
/// collection-group query that scans builds it (`build`, one transaction on the single writer, so a
/// `kill -9` leaves it built or not), and from then on every write keeps it.
///
/// Only the writer creates it, and `isBuilt` turns true after the COMMIT, before the writer is
/// given up. A reader's snapshot may predate it, and a statement naming it (`INDEXED BY`) in such a
/// snapshot is an SQLite error, so readers ask their snapshot (`isVisible`); without it they scan
/// the space's documents in key order and filter by collection id (the same rows, in the same order).
final class GroupScanIndex: @unchecked Sendable {
    static let name = "fs_documents_group"
    static let create = "CREATE INDEX IF NOT EXISTS fs_documents_group ON fs_documents (space, collection_id, key)"

    // Guarded by `lock`.
    private let lock = NSLock()
    /// Whether it is committed (nil: not known yet; asked of the snapshot).
    private var built: Bool?
    /// Whether a background build is queued or running.
    private var queued = false

    /// Whether it is committed, as far as this process knows. Exact on the writer (only the writer
    /// creates it); a reader's snapshot may still be older (`isVisible`).
    var isBuilt: Bool {
        lock.lock()
        defer { lock.unlock() }
        return built == true
    }

    /// Reads whether the file has it (at open; a writer's `build` sets it too).
    func load(_ conn: Connection) throws {
        let found = try Self.exists(conn)
        lock.lock()
        if built == nil { built = found }
        lock.unlock()
    }

    /// Whether `conn`'s snapshot has it (a statement may then name it).
    func isVisible(_ conn: Connection) throws -> Bool {
        lock.lock()
        let known = built
        lock.unlock()
        // Not committed when this was read, so not in a snapshot opened before either: no need to ask.
        // (It may have committed since; scanning without it is still right.)
        if known == false { return false }
        return try Self.exists(conn)
    }

    private static func exists(_ conn: Connection) throws -> Bool {
        let select = try conn.prepare(selectIndex)
        select.reset()
        defer { select.reset() }
        return try select.step()
    }

    private static let selectIndex = PreparedSQL("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = '\(name)'")

    /// Creates it on the single writer in one transaction, unless it exists; `isBuilt` turns true
    /// after the COMMIT, while the writer is still held, so every later write keeps it.
    func build(_ database: Database) throws {
        try database.withWriter { conn in
            if isBuilt { return }
            try conn.transaction(immediate: true) { try conn.execute(Self.create) }
            lock.lock()
            built = true
            lock.unlock()
        }
    }

    /// `build` on `queue`, for a reader that met it missing and cannot take the writer itself (a
    /// Listen target, a transaction's query re-run on the writer): it scans meanwhile.
    func schedule(_ database: Database, on queue: DispatchQueue, logger: Logger) {
        lock.lock()
        let start = built != true && !queued
        if start { queued = true }
        lock.unlock()
        guard start else { return }
        queue.async { [self] in
            do {
                try build(database)
            } catch {
                logger.error("firestore: building the collection-group scan index failed", [("error", .string("\(error)"))])
            }
            lock.lock()
            queued = false
            lock.unlock()
        }
    }
}
