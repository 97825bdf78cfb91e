import Foundation
import HearthCore
import HearthSQLite

/// Firestore's commit times: each commit's is the clock's time but after the previous commit's, and
/// `fs_meta`'s `last_commit` holds a bound on every one handed out, so that commits and read times
/// after a restart stay after every commit made before it.
///
/// The stored value is a ceiling, not the last time: a transaction whose latest commit time is above
/// the ceiling already committed stores a new one, that time plus `leaseMicros`, just before its
/// COMMIT (the group commit's `beforeCommit` hook, `flush`); the transactions after it, until their
/// times pass that ceiling, store nothing. Storing the exact time in every write transaction cost each
/// commit a WAL page of its own (`fs_meta`'s leaf, ~6k instructions with the UPDATE's, written again
/// by the checkpoint) for one row: with the lease, one transaction in every `leaseMicros` of commit
/// time writes it (at the running clock, one in ~500 at 5,000 commits/s; every one at under 10 a second,
/// as before).
///
/// The guarantee is the one the exact time gave: after `kill -9` the stored value is at least every
/// acknowledged commit's time. An acknowledged commit's transaction either stored a ceiling above its
/// time in its own COMMIT, or found one above it already committed (`durable` is raised only once the
/// COMMIT that stored it succeeded, `ended`; the WAL keeps commits in order, so a transaction that
/// survives a crash has every earlier one with it). A ceiling whose transaction rolled back is not
/// taken as stored; its commits were not acknowledged, and the next transaction above `durable` stores
/// again. The price: the first commit after a restart comes after the ceiling, up to `leaseMicros`
/// after the last commit before it — with the running clock only when the restart took less than
/// that (a start takes longer), with a frozen clock always (times then move on from the ceiling).
/// Files written with the exact time open as before: an exact last time is a ceiling too.
final class CommitTimes: @unchecked Sendable {
    /// How far above a transaction's latest commit time the ceiling it stores reaches.
    static let leaseMicros: Int64 = 100_000

    // Every field is guarded by `lock`.
    private let lock = NSLock()
    /// The latest commit time handed out (nil until loaded or first read from `fs_meta`).
    private var last: Int64?
    /// Recorded since the last flush: the latest time the current transaction's commits took.
    private var unstored: Int64?
    /// The ceiling a committed transaction stored (or that `load` read): every time up to it is covered.
    private var durable: Int64 = Int64.min
    /// The ceiling the current transaction stored, durable once its COMMIT succeeds (`ended`).
    private var pending: Int64?

    /// The next commit time after `now`'s clock reading and every commit before it (reads only; call
    /// inside the write transaction that will commit with it, then `record` it).
    func next(now: Instant, _ conn: Connection) throws -> Instant {
        lock.lock()
        let cached = last
        lock.unlock()
        let previous = try cached ?? Self.stored(conn)
        return Instant(unixMicros: max(now.unixMicros, previous + 1))
    }

    /// Takes `t` (from `next`) as the latest commit time; the transaction's `flush` covers it.
    func record(_ t: Instant) {
        lock.lock()
        last = t.unixMicros
        unstored = t.unixMicros
        lock.unlock()
    }

    /// Stores a new ceiling when the time recorded since the last flush is above the one already
    /// committed (the group commit's `beforeCommit`: inside the transaction, after its last body).
    func flush(_ conn: Connection) throws {
        lock.lock()
        let t = unstored
        unstored = nil
        let covered = durable
        lock.unlock()
        guard let t, t > covered else { return }
        let ceiling = t + Self.leaseMicros
        let update = try conn.prepare(Self.updateLastCommit)
        update.reset()
        try update.bind(ceiling, at: 1)
        try update.runBound()
        lock.lock()
        pending = ceiling
        lock.unlock()
    }

    /// The transaction `flush` ran in has ended (the group commit's `afterTransaction`): its
    /// ceiling is the committed one when its COMMIT succeeded, forgotten when it rolled back.
    func ended(committed: Bool) {
        lock.lock()
        if committed, let p = pending { durable = max(durable, p) }
        pending = nil
        lock.unlock()
    }

    private static let updateLastCommit = PreparedSQL("UPDATE fs_meta SET value = ? WHERE key = 'last_commit'")

    /// The latest commit time handed out by this process, or the stored ceiling before its first
    /// commit (0 before any).
    var latestMicros: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return last ?? 0
    }

    /// Takes the stored ceiling as the latest time, unless commits ran already (a database opened
    /// from disk), and as committed.
    func load(_ database: Database) throws {
        let stored = try database.read { conn in try Self.stored(conn) }
        lock.lock()
        if last == nil { last = stored }
        durable = max(durable, stored)
        lock.unlock()
    }

    private static func stored(_ conn: Connection) throws -> Int64 {
        try conn.scalarInt("SELECT value FROM fs_meta WHERE key = 'last_commit'") ?? 0
    }
}
