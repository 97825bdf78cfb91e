import Foundation
import Synchronization
internal import CSQLite

/// One schema change, identified by a stable id (`"s3.1"`), applied once and recorded.
public struct Migration: Sendable {
    public let id: String
    public let sql: String
    /// Work SQL cannot express (re-encoding stored keys), run after `sql` in the same transaction:
    /// when it throws, nothing of the migration is kept and the file is as it was.
    public let transform: (@Sendable (Connection) throws -> Void)?

    public init(_ id: String, _ sql: String) {
        self.id = id
        self.sql = sql
        transform = nil
    }

    /// A migration done by `transform` (after `sql`, when given).
    public init(_ id: String, sql: String = "", transform: @escaping @Sendable (Connection) throws -> Void) {
        self.id = id
        self.sql = sql
        self.transform = transform
    }
}

/// Why a database could not be opened for Hearth.
public enum DatabaseOpenError: Error, CustomStringConvertible, Sendable {
    case notHearth(path: String)
    case newerThanBinary(path: String, unknownMigrations: [String])
    case sqlite(SQLiteError)

    public var description: String {
        switch self {
        case .notHearth(let path): "\(path) is not a Hearth database (another application's SQLite file or not SQLite at all)"
        case .newerThanBinary(let path, let ids):
            "\(path) was written by a newer Hearth (unknown schema migrations: \(ids.joined(separator: ", "))); upgrade hearth or use another --data-dir"
        case .sqlite(let e): e.description
        }
    }
}

/// One SQLite database file (a data directory has two: `hearth.sqlite`, `firestore.sqlite`): a single
/// serialized write path and a pool of WAL readers.
///
/// Writes run on one writer connection behind a lock, each in a `BEGIN IMMEDIATE` transaction that
/// commits before the call returns; a thrown error rolls it back. Reads take a connection from the
/// pool (one per concurrently reading thread) and see the last committed state. With WAL and
/// `synchronous=NORMAL` a committed transaction survives the process being killed (`kill -9`);
/// `durability: .full` also survives power loss at the cost of an fsync per commit.
public final class Database: @unchecked Sendable {
    /// How hard commits are pushed to disk.
    public enum Durability: Sendable { case normal, full }

    /// `PRAGMA application_id` value marking Hearth files ("HRTH").
    public static let applicationID: Int32 = 0x4852_5448

    public let path: String?
    private let writer: Connection
    private let writeLock = NSLock()
    private let poolLock = NSLock()
    private var idleReaders: [Connection] = []
    /// Readers opened so far (idle or in use); the pool never closes one.
    private var readerCount = 0
    private let readerCacheKiB: Int
    private let writes = Atomic<Int>(0)
    private let durability: Durability
    /// Runs the checkpoints of a file whose layout asks for it (`Layout.checkpointBackstopPages`).
    private let checkpointThread: CheckpointThread?

    /// The page size of a file Hearth creates, and how many WAL pages trigger a checkpoint.
    ///
    /// One per file: a page size takes effect only on a new, empty database and is then fixed.
    public struct Layout: Sendable {
        public var pageSize: Int
        /// `PRAGMA wal_autocheckpoint`, counted in pages of `pageSize`: a file with other pages (one
        /// created before the layout changed keeps its own) gets the same WAL bytes (`walPages`).
        public var autocheckpointPages: Int
        /// `cache_size` of each pooled reader connection, in KiB (the writer's is `writerCacheKiB`).
        ///
        /// Small, because a reader's cache rarely outlives its transaction: SQLite empties a WAL
        /// reader's whole page cache when its next read transaction finds the file changed by a
        /// commit, so while anything writes, a reader only ever holds the pages of the read in hand.
        /// It keeps them only while nothing writes, and then every reader holds its own copy of the
        /// same hot pages (one reader per concurrently reading thread) while the OS page cache
        /// already holds the file. Measured in docs/reliability.md (*Reader page caches*).
        public var readerCacheKiB: Int
        /// `cache_size` of the writer, in KiB. Unlike a reader's, its cache stays valid from one
        /// transaction to the next (no other connection changes the file), so it keeps the pages every
        /// commit touches again: the tables' and indexes' upper levels and hot leaves.
        public var writerCacheKiB: Int
        /// Non-nil: checkpoints run on a thread of their own (`CheckpointThread`), woken at
        /// `autocheckpointPages` WAL pages, and the writer stops to finish one itself only when the
        /// WAL holds this many pages. Nil: SQLite's automatic checkpoint, on the committing thread.
        public var checkpointBackstopPages: Int?
        /// `pages` of this layout's size as pages of a file whose pages are `filePageSize` bytes: the
        /// checkpoint comes after as many WAL bytes whatever page size the file was created with.
        public func walPages(_ pages: Int, filePageSize: Int) -> Int {
            guard filePageSize > 0 else { return pages }
            return max(1, pages * pageSize / filePageSize)
        }

        public init(pageSize: Int, autocheckpointPages: Int, readerCacheKiB: Int = 2048, writerCacheKiB: Int = 16000,
                    checkpointBackstopPages: Int? = nil) {
            self.pageSize = pageSize
            self.autocheckpointPages = autocheckpointPages
            self.readerCacheKiB = readerCacheKiB
            self.writerCacheKiB = writerCacheKiB
            self.checkpointBackstopPages = checkpointBackstopPages
        }

        /// Large pages suit S3 bodies stored as 1 MiB chunk rows (fewer page writes per chunk), and a
        /// checkpoint every ~64 MiB of WAL rather than every 4 MiB: each checkpoint syncs, and large
        /// uploads would otherwise pay hundreds of syncs per GiB. The checkpoints run on their own
        /// thread, so a large upload's request thread does not wait for their syncs and copies; the
        /// WAL stays under the backstop's 96 MiB plus a transaction.
        public static let bulk = Layout(pageSize: 16384, autocheckpointPages: 4096, checkpointBackstopPages: 6144)

        /// Small pages suit small rows changed a few at a time (a Firestore commit changes ~11 pages:
        /// 47 KB of WAL at 4 KiB against 191 KB at 16 KiB, docs/benchmarks.md). The checkpoint comes
        /// after as many pages as `bulk`'s (16 MiB of WAL, a few hundred commits): the WAL index
        /// readers search stays the same size, and checkpoint syncs stay rare. It runs on the
        /// checkpoint thread too: inline, its syncs (~20 ms on the bench VM, the WAL's 16 MiB written
        /// out) stopped a commit every ~200 at one connection, ~90 µs a commit on average
        /// (docs/benchmarks.md, *The commit at one connection: where the other half goes*).
        /// Its writer's cache is half `bulk`'s: Firestore keeps an hour of replaced versions, so
        /// a busy writer's cache fills to its bound however large, and 16 MB took 18 minutes of the
        /// soak's mixed traffic to get there (docs/reliability.md) — 8 MiB still holds every upper
        /// b-tree level and the hot leaves of a few hundred thousand documents' tables and indexes.
        /// Smaller pages were measured and not taken: 2 KiB wrote 35% fewer WAL bytes per create but
        /// cost as many instructions at 16 clients and more per read, 1 KiB more everywhere
        /// (docs/benchmarks.md, *Firestore's page size, 4, 2 or 1 KiB*).
        public static let small = Layout(pageSize: 4096, autocheckpointPages: 4096, writerCacheKiB: 8192,
                                         checkpointBackstopPages: 6144)
    }

    /// Opens the database at `path` (nil: in memory, private to this object); a new file gets
    /// `layout`'s page size.
    public init(path: String?, durability: Durability = .normal, layout: Layout = .bulk) throws(DatabaseOpenError) {
        self.path = path
        self.durability = durability
        readerCacheKiB = layout.readerCacheKiB
        var thread: CheckpointThread?
        do {
            writer = try Connection(path: path ?? ":memory:")
            try writer.setBusyTimeout(5000)
            if let path {
                try writer.execute("PRAGMA page_size=\(layout.pageSize)")
                try writer.execute("PRAGMA journal_mode=WAL")
                // The file's own page size, which is the layout's only for a file created just now.
                let filePageSize = Int(try writer.scalarInt("PRAGMA page_size") ?? 0)
                let trigger = layout.walPages(layout.autocheckpointPages, filePageSize: filePageSize)
                try writer.execute("PRAGMA wal_autocheckpoint=\(trigger)")
                if let backstop = layout.checkpointBackstopPages {
                    let cacheKiB = layout.readerCacheKiB
                    thread = CheckpointThread(path: path, trigger: trigger,
                                              backstop: layout.walPages(backstop, filePageSize: filePageSize)) { c in
                        try Database.configure(c, durability: durability, cacheKiB: cacheKiB)
                    }
                    // After the pragma, which installs SQLite's own hook: this one takes its place.
                    thread?.attach(to: writer)
                }
            }
            try Database.configure(writer, durability: durability, cacheKiB: layout.writerCacheKiB)
        } catch let e as SQLiteError {
            // SQLITE_NOTADB (26): the file exists but is not a database.
            if e.code & 0xff == 26 { throw .notHearth(path: path ?? ":memory:") }
            throw .sqlite(e)
        } catch {
            throw .sqlite(SQLiteError(code: -1, message: "\(error)"))
        }
        // Its thread starts only at `trigger` WAL frames: a failed open above left none running.
        checkpointThread = thread
    }

    deinit {
        checkpointThread?.detach(from: writer)
    }

    private static func configure(_ c: Connection, durability: Durability, cacheKiB: Int) throws {
        try c.execute("PRAGMA synchronous=\(durability == .full ? "FULL" : "NORMAL")")
        try c.execute("PRAGMA foreign_keys=ON")
        try c.execute("PRAGMA temp_store=MEMORY")
        try c.execute("PRAGMA cache_size=-\(cacheKiB)")
    }

    /// Applies the migrations not yet recorded, in order, each in its own transaction.
    ///
    /// - Throws: `.notHearth` when the file holds another application's tables, `.newerThanBinary`
    ///   when it records migrations this binary does not know.
    public func migrate(_ migrations: [Migration]) throws(DatabaseOpenError) {
        do {
            try inWriteLock {
                let appID = try writer.scalarInt("PRAGMA application_id") ?? 0
                let tableCount = try writer.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0
                if appID != Int64(Database.applicationID) {
                    if tableCount > 0 { throw DatabaseOpenError.notHearth(path: path ?? ":memory:") }
                    try writer.execute("PRAGMA application_id=\(Database.applicationID)")
                }
                try writer.execute("CREATE TABLE IF NOT EXISTS hearth_migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
                let applied = Set(try writer.rows("SELECT id FROM hearth_migrations") { $0.text(0) })
                let known = Set(migrations.map(\.id))
                let unknown = applied.subtracting(known).sorted()
                if !unknown.isEmpty { throw DatabaseOpenError.newerThanBinary(path: path ?? ":memory:", unknownMigrations: unknown) }
                for m in migrations where !applied.contains(m.id) {
                    try writer.transaction(immediate: true) {
                        if !m.sql.isEmpty { try writer.execute(m.sql) }
                        try m.transform?(writer)
                        try writer.run("INSERT INTO hearth_migrations (id, applied_at) VALUES (?, strftime('%s','now'))", [m.id])
                    }
                }
                try writer.execute("PRAGMA user_version=\(migrations.count)")
            }
        } catch let e as DatabaseOpenError {
            throw e
        } catch let e as SQLiteError {
            if e.code & 0xff == 26 { throw .notHearth(path: path ?? ":memory:") }
            throw .sqlite(e)
        } catch {
            throw .sqlite(SQLiteError(code: -1, message: "\(error)"))
        }
    }

    private func inWriteLock<T>(_ body: () throws -> T) rethrows -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        return try body()
    }

    /// Runs `body` as one write transaction on the single writer; commits before returning.
    public func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try inWriteLock {
            defer { writes.add(1, ordering: .releasing) }
            return try writer.transaction(immediate: path != nil) { try body(writer) }
        }
    }

    /// Runs `body` on the writer without opening a transaction (for statements that manage their own,
    /// such as `VACUUM` or a checkpoint).
    public func withWriter<T>(_ body: (Connection) throws -> T) throws -> T {
        try inWriteLock {
            defer { writes.add(1, ordering: .releasing) }
            return try body(writer)
        }
    }

    /// A number that grows after every use of the writer ends (committed or not), so a cache of
    /// what a read found stays valid while it is unchanged: read it *before* the read transaction
    /// that fills the cache, and label the entry with it. A write that commits after that read began
    /// bumps it only once its commit is done (before its caller is answered), so an entry never
    /// outlives a write that was acknowledged.
    public var writeGeneration: Int { writes.load(ordering: .acquiring) }

    /// Runs `body` in a read transaction on a pooled reader connection (a consistent snapshot).
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        // An in-memory database is one connection: reads share the writer's lock.
        guard let path else { return try inWriteLock { try writer.transaction { try body(writer) } } }
        let reader = try takeReader(path: path)
        defer { returnReader(reader) }
        return try reader.transaction { try body(reader) }
    }

    private func takeReader(path: String) throws -> Connection {
        poolLock.lock()
        if let c = idleReaders.popLast() {
            poolLock.unlock()
            return c
        }
        poolLock.unlock()
        let c = try Connection(path: path)
        try c.setBusyTimeout(5000)
        try Database.configure(c, durability: durability, cacheKiB: readerCacheKiB)
        try c.execute("PRAGMA query_only=1")
        poolLock.lock()
        readerCount += 1
        poolLock.unlock()
        return c
    }

    private func returnReader(_ c: Connection) {
        poolLock.lock()
        idleReaders.append(c)
        poolLock.unlock()
    }

    /// Bytes SQLite has allocated in this process (every connection's page cache, prepared
    /// statements and schema): each connection's cache is bounded by its `cache_size`.
    public static var memoryInUse: Int { Int(sqlite3_memory_used()) }

    /// Where this file's page-cache memory is, for `/emulator/v1/stats`.
    public struct CacheUse: Sendable {
        /// The writer's page cache.
        public var writerBytes: Int
        /// The page caches of the readers idle in the pool (a reader in use belongs to its thread
        /// and is not looked at).
        public var idleReaderBytes: Int
        /// Readers opened so far, and how many of them are idle.
        public var readers: Int
        public var idleReaders: Int
    }

    /// The writer's and the idle readers' page-cache bytes now. Waits for a write in progress.
    public func cacheUse() -> CacheUse {
        let writerBytes = inWriteLock { writer.cacheBytes }
        poolLock.lock()
        defer { poolLock.unlock() }
        return CacheUse(writerBytes: writerBytes, idleReaderBytes: idleReaders.reduce(0) { $0 + $1.cacheBytes },
                        readers: readerCount, idleReaders: idleReaders.count)
    }

    /// The file's page size in bytes (fixed when the file was created).
    public func pageSize() throws -> Int {
        Int(try inWriteLock { try writer.scalarInt("PRAGMA page_size") } ?? 0)
    }

    /// Copies the WAL into the main file and truncates it (at shutdown).
    /// - Throws: the checkpoint's failure (nothing is lost: the WAL stays and is replayed at the
    ///   next open, but the caller should say so).
    public func checkpoint() throws {
        guard path != nil else { return }
        try inWriteLock {
            // Not beside a pass of the checkpoint thread: SQLite would answer SQLITE_BUSY at once.
            checkpointThread?.passLock.lock()
            defer { checkpointThread?.passLock.unlock() }
            try writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Checkpoint passes run so far on the checkpoint thread, and by the writer when the WAL
    /// reached its backstop (both 0 for a file without the thread).
    public var checkpointPasses: (thread: Int, writer: Int) { checkpointThread?.passes ?? (0, 0) }

    /// Seconds spent so far in those passes: the thread's, and the writer's at the backstop (its
    /// wait for the thread's pass in progress included), during which no commit of this file ran.
    public var checkpointSeconds: (thread: Double, writer: Double) { checkpointThread?.seconds ?? (0, 0) }
}
