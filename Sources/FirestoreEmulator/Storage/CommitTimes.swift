import Foundation
import HearthCore
import HearthSQLite

/// Firestore's commit times: each commit's is the clock's time but after the previous commit's, and
/// the last one handed out is kept in `fs_meta` (`last_commit`) so that commits and read times after
/// a restart stay after every commit made before it.
///
/// The stored value is written once per write transaction, not once per commit: a commit records
/// its time here (`record`), and the group commit's `beforeCommit` hook (`flush`) stores the latest
/// recorded time just before its COMMIT — one UPDATE for a batch of up to `GroupCommit.maxBatch`
/// commits. That keeps the guarantee a per-commit UPDATE gave: an acknowledged commit's transaction
/// stored a time at least its own (times only grow, and the flush comes after every body of the
/// transaction), in the same COMMIT, so after `kill -9` the stored time is ≥ every acknowledged
/// commit's. A recorded time whose transaction rolled back is not stored then, and need not be:
/// nothing acknowledged carries it, and the next commit's time is later still (the in-memory time
/// is never taken back).
final class CommitTimes: @unchecked Sendable {
    // `last` and `unstored` are guarded by `lock`.
    private let lock = NSLock()
    /// The latest commit time handed out (nil until loaded or first read from `fs_meta`).
    private var last: Int64?
    /// Recorded since the last flush: the time the next flush stores.
    private var unstored: Int64?

    /// The next commit time after `now`'s clock reading and every commit before it (reads only; call
    /// inside the write transaction that will commit with it, then `record` it).
    func next(now: Instant, _ conn: Connection) throws -> Instant {
        lock.lock()
        let cached = last
        lock.unlock()
        let previous = try cached ?? Self.stored(conn)
        return Instant(unixMicros: max(now.unixMicros, previous + 1))
    }

    /// Takes `t` (from `next`) as the latest commit time; the transaction's `flush` stores it.
    func record(_ t: Instant) {
        lock.lock()
        last = t.unixMicros
        unstored = t.unixMicros
        lock.unlock()
    }

    /// Stores the time recorded since the last flush, if any (the group commit's `beforeCommit`:
    /// inside the transaction, after its last body).
    func flush(_ conn: Connection) throws {
        lock.lock()
        let t = unstored
        unstored = nil
        lock.unlock()
        guard let t else { return }
        let update = try conn.prepare(Self.updateLastCommit)
        update.reset()
        try update.bind(t, at: 1)
        try update.runBound()
    }

    private static let updateLastCommit = PreparedSQL("UPDATE fs_meta SET value = ? WHERE key = 'last_commit'")

    /// The latest commit time handed out by this process or stored before it (0 before any).
    var latestMicros: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return last ?? 0
    }

    /// Takes the stored time as the latest, unless commits ran already (a database opened from disk).
    func load(_ database: Database) throws {
        let stored = try database.read { conn in try Self.stored(conn) }
        lock.lock()
        if last == nil { last = stored }
        lock.unlock()
    }

    private static func stored(_ conn: Connection) throws -> Int64 {
        try conn.scalarInt("SELECT value FROM fs_meta WHERE key = 'last_commit'") ?? 0
    }
}
