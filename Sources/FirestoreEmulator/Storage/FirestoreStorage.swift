import Foundation
import HearthCore
import HearthSQLite

/// Documents and their single-field indexes in SQLite.
///
/// Data of one database (`project/database`) lives under a *space* id. Clearing a database
/// points its name at a fresh space (one UPDATE, constant time however many documents it held)
/// and hands the old space to a background collector that deletes its rows in small batches.
///
/// Tables (all `WITHOUT ROWID`, clustered on their primary keys):
/// - `fs_documents(space, key, collection_id, fields, create_time, update_time)`, keyed by
///   the document's order-preserving path key, so a collection's documents and all their
///   descendants are one key range: collection scans and sub-collection listing walk it and seek
///   past sub-collections (`walkSkipping`). One secondary index, once a collection-group query has
///   needed it: `(space, collection_id, key)` (collection-group scans: `GroupScanIndex`). The
///   parent's key is the document's key without its last segment (`OrderedEncoding.parentKey`).
/// - `fs_index(space, scope, field, kind, value, doc_key)`: one row per index entry and scope;
///   a query seeks `(space, scope, field, kind)` and a value range, already in Firestore order.
///   `doc_key` is the document's key relative to the scope (`IndexEntry.docKey`): under a collection
///   scope only the id's segment (the scope is the rest of the key), under a group scope the whole key.
///   Rows exist only for the (collection id, field) pairs listed in
///   `fs_index_fields(space, collection_id, field)` (`IndexedFields`), each registered, with its
///   rows built, by the first query that needs it (`buildFields`). For those, collection-scope
///   rows exist for every document; collection-group rows only for the collection
///   ids listed in `fs_group_indexes(space, collection_id, built_upto)`, built in the background
///   when a collection-group query first needs them (`built_upto` NULL: complete; otherwise the
///   documents up to that key have their rows and the build goes on from there).
/// - `fs_history(space, key, ended, fields, create_time, update_time)`, indexed `(space, ended)`:
///   versions replaced or deleted in the last hour, with the commit time that ended them, for
///   reads at a `readTime` (Firestore keeps one hour too). The current-state tables never hold
///   history, so current reads do not pay for it.
final class FirestoreStorage: @unchecked Sendable {
    // `spaces`, `groupBuilds`, `groupMarkers` and `lastPrune` are guarded by `lock`; everything
    // else is immutable.
    private let lock = NSLock()
    /// Keyed by the database itself: its `spaceName` is a string built (and, past 15 bytes, allocated)
    /// per call, and every commit and read looks its space up.
    private var spaces: [DatabaseID: Int64] = [:]
    /// `space/collectionID` of collection-group index builds under way.
    private var groupBuilds = Set<ExactString>()  // by bytes: collection ids are byte strings
    /// `fs_group_indexes` as committed, per `space/collectionID` looked up by a writer: `.some(nil)`
    /// no group index, `.some(.some(marker))` its `built_upto` (nil: complete). Spares every write a
    /// SELECT. Only the group-index build changes that table (space ids are never reused), and it
    /// drops its entry inside its own write transaction, so a writer never sees a stale one.
    private var groupMarkers: [GroupName: [UInt8]??] = [:]
    /// Per space, the commit time of the last pruning of `fs_history` (see `remember`).
    private var lastPrune: [Int64: Int64] = [:]
    let database: Database
    let logger: Logger
    let collector = DispatchQueue(label: "hearth.firestore.gc", qos: .utility)

    /// Firestore's own file has small pages: a commit changes a few pages of small rows (see `Database.Layout.small`).
    static let layout = Database.Layout.small

    static let migrations: [Migration] = [
        Migration("firestore.1", """
        CREATE TABLE fs_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE fs_spaces (name TEXT PRIMARY KEY, space INTEGER NOT NULL UNIQUE) WITHOUT ROWID;
        CREATE TABLE fs_garbage (space INTEGER PRIMARY KEY);
        CREATE TABLE fs_documents (
            space INTEGER NOT NULL,
            key BLOB NOT NULL,
            parent BLOB NOT NULL,
            collection_id TEXT NOT NULL,
            fields BLOB NOT NULL,
            create_time INTEGER NOT NULL,
            update_time INTEGER NOT NULL,
            PRIMARY KEY (space, key)
        ) WITHOUT ROWID;
        CREATE INDEX fs_documents_group ON fs_documents (space, collection_id, key);
        CREATE TABLE fs_index (
            space INTEGER NOT NULL,
            scope BLOB NOT NULL,
            field TEXT NOT NULL,
            kind INTEGER NOT NULL,
            value BLOB NOT NULL,
            doc_key BLOB NOT NULL,
            PRIMARY KEY (space, scope, field, kind, value, doc_key)
        ) WITHOUT ROWID;
        INSERT INTO fs_meta (key, value) VALUES ('next_space', 1), ('last_commit', 0);
        """),
        Migration("firestore.2", """
        CREATE TABLE fs_history (
            space INTEGER NOT NULL,
            key BLOB NOT NULL,
            ended INTEGER NOT NULL,
            fields BLOB NOT NULL,
            create_time INTEGER NOT NULL,
            update_time INTEGER NOT NULL,
            PRIMARY KEY (space, key, ended)
        ) WITHOUT ROWID;
        CREATE INDEX fs_history_ended ON fs_history (ended);
        """),
        // Pruning and historical collection-group queries look up one space's recent versions.
        Migration("firestore.3", """
        DROP INDEX fs_history_ended;
        CREATE INDEX fs_history_space_ended ON fs_history (space, ended);
        """),
        // Collection-group index rows are kept only for collection ids a collection-group query has
        // used (see `groupScopes`); databases written before kept them for every collection id.
        Migration("firestore.4", """
        CREATE TABLE fs_group_indexes (
            space INTEGER NOT NULL,
            collection_id TEXT NOT NULL,
            built_upto BLOB,
            PRIMARY KEY (space, collection_id)
        ) WITHOUT ROWID;
        INSERT INTO fs_group_indexes (space, collection_id, built_upto)
            SELECT DISTINCT space, collection_id, NULL FROM fs_documents;
        """),
        // Numeric ids (`__id<N>__`) sort before string ids: keys stored before hold them as strings.
        NumericIDMigration.migration,
        // Collection-scope index rows hold the document's key past their scope (`IndexEntry.docKey`),
        // not the whole key, which repeated the scope. Bytes, not characters: `substr` and `length`
        // count a BLOB's bytes. The rows' order within a scope stays (the removed prefix is common).
        Migration("firestore.6", """
        UPDATE fs_index SET doc_key = substr(doc_key, length(scope) + 1)
            WHERE substr(scope, 1, 1) <> x'FF' AND substr(doc_key, 1, length(scope)) = scope;
        """),
        // Index rows only for the (collection id, field) pairs some query has needed (`IndexedFields`).
        IndexFieldsMigration.migration,
        // The collection-group scan index is built when first needed (`GroupScanIndex`): every
        // create paid a b-tree insert for it though only collection-group queries read it.
        Migration("firestore.8", "DROP INDEX IF EXISTS \(GroupScanIndex.name);"),
        // Collection scans, documents.list and listCollectionIds walk the primary key and seek past
        // sub-collections (`walkSkipping`): every create paid a b-tree insert into `(space, parent,
        // key)` for reads the key answers. (`firestore.1` of binaries before this created it; a
        // file from such a binary loses it here. An older binary refuses a file that records this.)
        Migration("firestore.9", "DROP INDEX IF EXISTS \(parentIndexName);"),
        // Nothing indexes or reads `parent` (the parent's key, a prefix of the document's key) any
        // more: ~44 bytes of every row and of every page a create dirties. SQLite rewrites each row
        // without it inside the migration's transaction (a file's `firestore.1` still creates it: the
        // migrations are its history, and `firestore.5` updates it). An older binary refuses a file
        // that records this.
        Migration("firestore.10", "ALTER TABLE fs_documents DROP COLUMN parent;"),
    ]

    /// The index `(space, parent, key)` binaries before `firestore.9` kept (a skip scan of the
    /// primary key reads what it served: `walkSkipping`).
    static let parentIndexName = "fs_documents_parent"

    /// How long replaced versions stay readable: Firestore's version retention period without
    /// point-in-time recovery ("reads are supported on any version of the data from within the
    /// past 1 hour").
    static let historyMicros: Int64 = 3_600_000_000

    /// Commit times; a ceiling above them stored when a transaction passes the committed one (by
    /// `batcher`'s `beforeCommit`, `CommitTimes`).
    private let commitTimes = CommitTimes()
    /// Write transactions of concurrent requests, committed together.
    let batcher: GroupCommit
    /// Documents as last read; every write transaction below empties it once it has ended.
    let readCache = DocumentCache()
    /// The (collection id, field) pairs whose index rows exist (`fs_index_fields`).
    let indexedFields = IndexedFields()
    /// The versions read-write transactions last committed (`TransactionWrites`): `put` and `delete`
    /// make a replaced document's slot pending.
    let transactionWrites = TransactionWrites()
    /// Whether `fs_documents_group` exists (built when a collection-group query first needs it).
    let groupScans = GroupScanIndex()

    init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
        let times = commitTimes
        batcher = GroupCommit(database: database, savepoint: "fs_batched_write",
                              beforeCommit: { conn in try times.flush(conn) },
                              afterTransaction: { committed in times.ended(committed: committed) })
        // Readers take their view of the indexed fields before their snapshot; until this is loaded
        // they ask their snapshot instead (a failure here is retried by the first write).
        try? database.read { conn in try indexedFields.loadIfNeeded(conn) }
        // Unknown after a failure: readers then ask their snapshot, and a build finds out.
        try? database.read { conn in try groupScans.load(conn) }
    }

    /// Runs `body` in a write transaction, committed together with concurrent ones (`GroupCommit`);
    /// returns after the commit, or throws (its changes undone).
    /// `savepoint`: false when `body` throws only before its first write (`GroupCommit.perform`).
    func write<T>(savepoint: Bool = true, _ body: (Connection) throws -> T) throws -> T {
        // Before the caller hears of the commit (or of its failure: nothing cached may outlive it).
        defer { readCache.invalidate() }
        do {
            return try batcher.perform(savepoint: savepoint, body)
        } catch GroupCommitError.batchFailed(let error) {
            throw batchFailed(error)
        }
    }

    /// `write` without holding the calling thread while the batch waits (`GroupCommit.submit`):
    /// `completion` gets its result on the thread that committed the batch.
    func submit<T>(savepoint: Bool = true, lead: Bool = true, _ body: @escaping (Connection) throws -> T,
                   completion: @escaping (Result<T, any Error>) -> Void) {
        batcher.submit(savepoint: savepoint, lead: lead, body) { [self] result in
            readCache.invalidate()
            if case .failure(GroupCommitError.batchFailed(let error)) = result { return completion(.failure(batchFailed(error))) }
            completion(result)
        }
    }

    /// The error of a batch that failed as a whole: a body may have found (and cached) a space
    /// another body of the batch created, so the cached spaces go.
    private func batchFailed(_ error: any Error) -> any Error {
        lock.lock()
        spaces.removeAll()
        lock.unlock()
        return error
    }

    // MARK: Spaces

    /// The space of `db`, or nil when it has never been written.
    ///
    /// Only the writer fills the cache (inside its transaction, so it always holds committed
    /// state); a reader's snapshot may predate a clear, so what a reader looks up is not cached.
    func space(of db: DatabaseID, _ conn: Connection) throws -> Int64? {
        lock.lock()
        let cached = spaces[db]
        lock.unlock()
        if let cached { return cached }
        return try conn.scalarInt("SELECT space FROM fs_spaces WHERE name = ?", [db.spaceName])
    }

    /// The space of `db` as the last writer saw it committed, when cached (no read needed).
    func cachedSpace(of db: DatabaseID) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        return spaces[db]
    }

    /// The space of `db`, created when missing (inside a write transaction).
    func writableSpace(of db: DatabaseID, _ conn: Connection) throws -> Int64 {
        // Runs in every commit on the single writer: a cached space is not stored again, and the
        // name is built only when the space is not cached.
        lock.lock()
        let cached = spaces[db]
        lock.unlock()
        if let cached { return cached }
        let name = db.spaceName
        if let s = try conn.scalarInt("SELECT space FROM fs_spaces WHERE name = ?", [name]) {
            lock.lock()
            spaces[db] = s
            lock.unlock()
            return s
        }
        let s = try allocateSpace(conn)
        try conn.run("INSERT INTO fs_spaces (name, space) VALUES (?, ?)", [name, s])
        // Not cached yet: this transaction may still roll back; the next writer caches it.
        return s
    }

    /// The space of `db` on the writer, cached when it exists (nil: never written; not created).
    func existingSpace(of db: DatabaseID, _ conn: Connection) throws -> Int64? {
        if let cached = cachedSpace(of: db) { return cached }
        guard let s = try conn.scalarInt("SELECT space FROM fs_spaces WHERE name = ?", [db.spaceName]) else { return nil }
        lock.lock()
        spaces[db] = s
        lock.unlock()
        return s
    }

    private func allocateSpace(_ conn: Connection) throws -> Int64 {
        let s = try conn.scalarInt("SELECT value FROM fs_meta WHERE key = 'next_space'") ?? 1
        try conn.run("UPDATE fs_meta SET value = ? WHERE key = 'next_space'", [s + 1])
        return s
    }

    /// Empties one database in constant time; its rows are collected in the background.
    func clear(_ db: DatabaseID) throws {
        defer { readCache.invalidate() }
        let garbage: Int64? = try database.write { conn in
            // Forget the cached space inside the write transaction: no writer can use it after this.
            lock.lock()
            spaces[db] = nil
            lock.unlock()
            transactionWrites.removeAll()
            guard let old = try conn.scalarInt("SELECT space FROM fs_spaces WHERE name = ?", [db.spaceName]) else { return nil }
            try conn.run("DELETE FROM fs_spaces WHERE name = ?", [db.spaceName])
            try conn.run("INSERT OR IGNORE INTO fs_garbage (space) VALUES (?)", [old])
            return old
        }
        if garbage != nil { scheduleCollection() }
    }

    /// Empties every database.
    func clearAll() throws {
        defer { readCache.invalidate() }
        try database.write { conn in
            lock.lock()
            spaces.removeAll()
            lock.unlock()
            transactionWrites.removeAll()
            try conn.run("INSERT OR IGNORE INTO fs_garbage (space) SELECT space FROM fs_spaces")
            try conn.run("DELETE FROM fs_spaces")
        }
        scheduleCollection()
    }

    /// Deletes rows of cleared spaces in batches small enough not to stall writers.
    func scheduleCollection() {
        collector.async { [weak self] in self?.collectGarbage() }
    }

    /// Runs the collector to completion (tests and shutdown).
    func collectGarbage() {
        let batch = 2000
        while true {
            do {
                let more: Bool = try database.write { conn in
                    guard let space = try conn.scalarInt("SELECT space FROM fs_garbage ORDER BY space LIMIT 1") else { return false }
                    try conn.run("""
                        DELETE FROM fs_index WHERE (space, scope, field, kind, value, doc_key) IN
                        (SELECT space, scope, field, kind, value, doc_key FROM fs_index WHERE space = ? LIMIT ?)
                        """, [space, batch])
                    let removedIndex = conn.changes
                    try conn.run("""
                        DELETE FROM fs_documents WHERE (space, key) IN
                        (SELECT space, key FROM fs_documents WHERE space = ? LIMIT ?)
                        """, [space, batch])
                    let removedDocs = conn.changes
                    try conn.run("""
                        DELETE FROM fs_history WHERE (space, key, ended) IN
                        (SELECT space, key, ended FROM fs_history WHERE space = ? LIMIT ?)
                        """, [space, batch])
                    let removedHistory = conn.changes
                    if removedIndex == 0 && removedDocs == 0 && removedHistory == 0 {
                        try conn.run("DELETE FROM fs_group_indexes WHERE space = ?", [space])
                        try conn.run("DELETE FROM fs_index_fields WHERE space = ?", [space])
                        // Nothing reads or writes a collected space again: forgetting it early is harmless.
                        indexedFields.remove(space: space)
                        try conn.run("DELETE FROM fs_garbage WHERE space = ?", [space])
                    }
                    return true
                }
                if !more { return }
            } catch {
                logger.error("firestore: collecting cleared data failed", [("error", .string("\(error)"))])
                return
            }
        }
    }

    // MARK: Commit times

    /// The next commit time — the clock's time, but always after the previous commit's — without
    /// taking it (reads only; call inside a write transaction of `write`/`submit`): a body reads it
    /// first and takes it once its checks passed (`record(commitTime:)`).
    func commitTime(now: Instant, _ conn: Connection) throws -> Instant {
        try commitTimes.next(now: now, conn)
    }

    /// Takes `t` (from `commitTime`) as the last commit time, inside the transaction that commits
    /// with it: `batcher` stores a ceiling above it just before its COMMIT, unless the committed
    /// ceiling is above it already (`CommitTimes`).
    func record(commitTime t: Instant) {
        commitTimes.record(t)
    }

    /// The latest commit time handed out by this process (0 before the first commit).
    ///
    /// Commit times may run ahead of a frozen clock (+1 µs each), and a running one by up to a
    /// millisecond (a server timestamp rewritten within one, `WriteApplier.commitTime(_:afterStampedAt:now:)`),
    /// so "now" for read times is the later of the clock and this.
    var latestCommitMicros: Int64 { commitTimes.latestMicros }

    /// Loads the stored commit-time ceiling of a database opened from disk (so read times stay ahead
    /// of every commit made before).
    func loadLastCommit() throws {
        try commitTimes.load(database)
    }

    // MARK: Documents

    static let documentColumns = "key, fields, create_time, update_time"

    /// Decodes a row selected with `documentColumns` starting at column `first`.
    static func document(from row: Statement, first: Int = 0) throws -> StoredDocument {
        guard let segments = OrderedEncoding.segments(ofKey: row.blob(first)) else { throw StoredValueCodec.DecodeError() }
        let fields = try row.withBlob(first + 1) { buffer throws(StoredValueCodec.DecodeError) in
            try StoredValueCodec.decodeFields(buffer)
        }
        return StoredDocument(path: ResourcePath(segments), fields: fields,
                              createTime: Instant(unixMicros: row.int64(first + 2)),
                              updateTime: Instant(unixMicros: row.int64(first + 3)))
    }

    /// `document(from:)` of a row read in `db` through `cache`: the kept entry's when it holds this
    /// version (the fields are not decoded), else a new one (`DocumentCache.version(in:key:…)`).
    static func version(from row: Statement, in db: DatabaseID, _ cache: DocumentCache) throws -> DocumentCache.Version {
        let key = row.blob(0)
        return try cache.version(in: db, key: key, createTime: Instant(unixMicros: row.int64(2)),
                                 updateTime: Instant(unixMicros: row.int64(3))) {
            guard let segments = OrderedEncoding.segments(ofKey: key) else { throw StoredValueCodec.DecodeError() }
            return ResourcePath(segments)
        } decode: {
            try row.withBlob(1) { buffer throws(StoredValueCodec.DecodeError) in try StoredValueCodec.decodeFields(buffer) }
        }
    }

    /// The document at `path`, or nil.
    func document(space: Int64, path: ResourcePath, _ conn: Connection) throws -> StoredDocument? {
        try document(space: space, key: path.key, conn)
    }

    /// The current document whose key is `key` (`ResourcePath.key`), or nil.
    func document(space: Int64, key: [UInt8], _ conn: Connection) throws -> StoredDocument? {
        let select = try conn.prepare(Self.selectDocument)
        select.reset()
        try select.bind(space, at: 1)
        try select.bindScratch(key, at: 2)
        defer { select.reset() }
        return try select.step() ? try Self.document(from: select) : nil
    }

    private static let selectDocument = PreparedSQL("SELECT \(documentColumns) FROM fs_documents WHERE space = ? AND key = ?")

    /// Keeps `old` readable at read times before `ended`, and forgets this space's versions that
    /// ended before the retention window (an index seek that usually finds nothing).
    /// `key` is `old.path.key` and `encoded` its fields' stored form when the caller has them already.
    private func remember(space: Int64, _ old: StoredDocument, key: [UInt8]? = nil, encoded: [UInt8]? = nil, ended: Instant,
                          _ conn: Connection) throws {
        let insert = try conn.prepare(Self.insertHistory)
        insert.reset()
        try insert.bind(space, at: 1)
        try insert.bindScratch(key ?? old.path.key, at: 2)
        try insert.bind(ended.unixMicros, at: 3)
        try insert.bindScratch(encoded ?? StoredValueCodec.encodeFields(old.fields), at: 4)
        try insert.bind(old.createTime.unixMicros, at: 5)
        try insert.bind(old.updateTime.unixMicros, at: 6)
        try insert.runBound()
        // A reader may ask for any time down to (latest commit − window); `ended` is the latest commit.
        // Versions that ended before the window are never read (older read times are refused), so
        // pruning only saves space: once per `pruneIntervalMicros` of commit time per space is
        // enough, and spares most writes a statement.
        lock.lock()
        let due = lastPrune[space].map { ended.unixMicros &- $0 >= Self.pruneIntervalMicros } ?? true
        if due { lastPrune[space] = ended.unixMicros }
        lock.unlock()
        if due {
            try conn.run("DELETE FROM fs_history WHERE space = ? AND ended < ?", [space, ended.unixMicros - Self.historyMicros])
        }
    }

    // Every update and delete runs it on the single writer: prepared once, bound in place (no
    // statement lookup by its text, no array of boxed values).
    private static let insertHistory = PreparedSQL("""
        INSERT OR REPLACE INTO fs_history (space, key, ended, fields, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?)
        """)

    /// How often (in commit time) replaced versions beyond the retention window are deleted.
    static let pruneIntervalMicros: Int64 = 1_000_000

    /// The version of `path` that was current at `time`, or nil when none was (within the window).
    func document(space: Int64, path: ResourcePath, at time: Instant, _ conn: Connection) throws -> StoredDocument? {
        if let current = try document(space: space, path: path, conn), current.updateTime <= time { return current }
        // The oldest version that ended after `time` is the one current then, if it had begun.
        let old = try conn.first("""
            SELECT key, fields, create_time, update_time FROM fs_history
            WHERE space = ? AND key = ? AND ended > ? ORDER BY ended LIMIT 1
            """, [space, path.key, time.unixMicros]) { try Self.document(from: $0) }
        guard let old, old.updateTime <= time else { return nil }
        return old
    }

    /// For every document under `prefix` (the whole space when nil) that changed after `time`, the
    /// version current at `time`; documents that did not exist then are left out.
    ///
    /// A document unchanged since `time` has its current version; one changed since has a history
    /// row that ended after `time`, and the oldest such row is the version current then if it had
    /// begun (otherwise the document was absent at `time`). So a historical read is the current
    /// state minus documents updated after `time`, plus these.
    func versions(space: Int64, changedAfter time: Instant, under prefix: [UInt8]?, _ conn: Connection) throws -> [StoredDocument] {
        // SQLite takes the bare columns of a MIN() aggregate from the row holding the minimum.
        var sql = "SELECT \(Self.documentColumns), MIN(ended) FROM fs_history WHERE space = ?"
        var values: [any SQLBindable] = [space]
        if let prefix, !prefix.isEmpty {
            sql += " AND key > ? AND key < ?"
            values.append(prefix)
            values.append(OrderedEncoding.prefixEnd(prefix))
        }
        sql += " AND ended > ? GROUP BY key"
        values.append(time.unixMicros)
        var out: [StoredDocument] = []
        try Self.forEachRow(conn, sql, values) { row in
            if row.int64(3) <= time.unixMicros { out.append(try Self.document(from: row)) }
            return true
        }
        return out
    }

    /// Whether any document below `prefix` existed at `time`: a current one unchanged since, or a
    /// replaced or deleted version that was current then.
    func anyDocument(space: Int64, under prefix: [UInt8], at time: Instant, _ conn: Connection) throws -> Bool {
        let end = OrderedEncoding.prefixEnd(prefix)
        if try conn.scalarInt("SELECT 1 FROM fs_documents WHERE space = ? AND key > ? AND key < ? AND update_time <= ? LIMIT 1",
                              [space, prefix, end, time.unixMicros]) != nil {
            return true
        }
        return try conn.scalarInt("""
            SELECT 1 FROM fs_history WHERE space = ? AND key > ? AND key < ? AND ended > ? AND update_time <= ? LIMIT 1
            """, [space, prefix, end, time.unixMicros, time.unixMicros]) != nil
    }

    /// Writes `new` (replacing `old`, the current version or nil) and updates its index rows.
    /// Stores `new` over `old` (nil: a create); returns `new`'s fields in their stored form.
    /// `oldEncoded`: `old`'s fields in that form, when the caller holds them (`TransactionWrites`);
    /// `key`: `new.path.key`, when the caller has it (the key it read `old` by).
    @discardableResult
    func put(space: Int64, _ new: StoredDocument, replacing old: StoredDocument?, oldEncoded: [UInt8]? = nil,
             key given: [UInt8]? = nil, _ conn: Connection) throws -> [UInt8] {
        // The document's key is its parent's and one segment more: encoded once for both, when the
        // caller has neither (the parent's alone is needed only for index rows, below).
        var parentKey: [UInt8]?
        let key: [UInt8]
        if let given {
            key = given
        } else {
            let parent = OrderedEncoding.key(new.path.segments.dropLast())
            var made = parent
            OrderedEncoding.appendSegment(new.path.segments.last ?? "", to: &made)
            key = made
            parentKey = parent
        }
        if let old {
            // A create needs no mark (`TransactionWrites`): no slot holds a document that does not exist.
            transactionWrites.replacing(space: space, path: old.path)
            // The same path as `new`: its key is the one just made.
            try remember(space: space, old, key: key, encoded: oldEncoded, ended: new.updateTime, conn)
        }
        let insert = try conn.prepare(Self.insertDocument)
        insert.reset()
        try insert.bind(space, at: 1)
        try insert.bindScratch(key, at: 2)
        try insert.bindScratch(new.path.collectionID, at: 3)
        // Sorted once: the stored encoding and the index entries both walk the fields in this order.
        let members = OrderedEncoding.sortedMembers(new.fields)
        let encoded = StoredValueCodec.encodeFields(sorted: members)
        try insert.bindScratch(encoded, at: 4)
        try insert.bind(new.createTime.unixMicros, at: 5)
        try insert.bind(new.updateTime.unixMicros, at: 6)
        try insert.runBound()
        // Only the fields some query has needed have rows: most collections none, and then the
        // entries are not even worked out.
        guard let indexed = try indexedFields.fields(space: space, collectionID: new.path.collectionID, conn) else { return encoded }
        let collection = parentKey ?? OrderedEncoding.key(new.path.segments.dropLast())
        let keys = RowKeys(key: key, collection: collection)
        let newEntries = Self.entries(IndexEntry.entries(ofSorted: members), in: indexed)
        let scopes = try indexScopes(space: space, path: new.path, parentKey: collection, key: key, conn)
        guard let old else {
            try addIndex(space: space, keys: keys, scopes: scopes, entries: newEntries, conn)
            return encoded
        }
        let (added, removed) = IndexEntry.difference(newEntries, Self.entries(IndexEntry.entries(of: old.fields), in: indexed))
        try removeIndex(space: space, keys: keys, scopes: scopes, entries: removed, conn)
        try addIndex(space: space, keys: keys, scopes: scopes, entries: added, conn)
        return encoded
    }

    /// The entries whose fields are among `indexed` (still sorted).
    static func entries(_ all: [IndexEntry], in indexed: Set<ExactString>) -> [IndexEntry] {
        all.filter { indexed.contains(ExactString($0.field)) }
    }

    private static let insertDocument = PreparedSQL("""
        INSERT INTO fs_documents (space, key, collection_id, fields, create_time, update_time)
        VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (space, key) DO UPDATE SET fields = excluded.fields,
            create_time = excluded.create_time, update_time = excluded.update_time
        """)

    /// Deletes `old` and its index rows.
    func delete(space: Int64, _ old: StoredDocument, at time: Instant, _ conn: Connection) throws {
        let key = old.path.key, parentKey = old.path.parent.key
        transactionWrites.replacing(space: space, path: old.path)
        try remember(space: space, old, key: key, ended: time, conn)
        try conn.run("DELETE FROM fs_documents WHERE space = ? AND key = ?", [space, key])
        guard let indexed = try indexedFields.fields(space: space, collectionID: old.path.collectionID, conn) else { return }
        try removeIndex(space: space, keys: RowKeys(key: key, collection: parentKey),
                        scopes: try indexScopes(space: space, path: old.path, parentKey: parentKey, key: key, conn),
                        entries: Self.entries(IndexEntry.entries(of: old.fields), in: indexed), conn)
    }

    /// A document's key and the `doc_key` of its index rows under each kind of scope, worked out by
    /// `IndexEntry.docKey` once per document instead of once per row.
    struct RowKeys {
        /// Under its collection group's scope: the whole key.
        let key: [UInt8]
        /// Under its collection's scope (`collection`, the parent's key): the id's segment.
        let id: [UInt8]

        init(key: [UInt8], collection: [UInt8]) {
            self.key = key
            id = IndexEntry.docKey(key, under: collection)
        }

        /// The `doc_key` of the rows under `scope`.
        func docKey(under scope: [UInt8]) -> [UInt8] { IndexEntry.isGroupScope(scope) ? key : id }
    }

    /// A collection id of one space (the key of `groupMarkers`).
    private struct GroupName: Hashable {
        let space: Int64
        let collectionID: String
    }

    /// The scopes the index rows of the document at `key` live under: its collection, and its
    /// collection group when that group's index is kept and its build has reached the document.
    private func indexScopes(space: Int64, path: ResourcePath, parentKey: [UInt8], key: [UInt8], _ conn: Connection) throws -> [[UInt8]] {
        try indexScopes(space: space, collectionID: path.collectionID, parentKey: parentKey, key: key, conn)
    }

    func indexScopes(space: Int64, collectionID: String, parentKey: [UInt8], key: [UInt8], _ conn: Connection) throws -> [[UInt8]] {
        var scopes = [parentKey]
        let name = GroupName(space: space, collectionID: collectionID)
        lock.lock()
        let cached = groupMarkers[name]
        lock.unlock()
        let marker: [UInt8]??
        if let cached {
            marker = cached
        } else {
            marker = try conn.first("SELECT built_upto FROM fs_group_indexes WHERE space = ? AND collection_id = ?",
                                    [space, collectionID]) { row -> [UInt8]? in row.isNull(0) ? nil : row.blob(0) }
            lock.lock()
            if groupMarkers.count >= Self.groupMarkerCapacity { groupMarkers.removeAll() }
            groupMarkers[name] = .some(marker)
            lock.unlock()
        }
        if let marker, marker.map({ OrderedEncoding.compare(key, $0) <= 0 }) ?? true {
            scopes.append(IndexEntry.groupScope(collectionID))
        }
        return scopes
    }

    /// Adds index rows, up to `indexRowsPerInsert` per statement: one statement for a document's
    /// rows instead of one each spares the per-statement work (bind, reset, opening the cursor).
    /// The rows go in in key order (`entries` is sorted), each bound straight into the statement.
    func addIndex(space: Int64, keys: RowKeys, scopes: [[UInt8]], entries: [IndexEntry], _ conn: Connection) throws {
        let total = entries.count * scopes.count
        var done = 0
        while done < total {
            let n = min(total - done, Self.indexRowsPerInsert)
            let insert = try conn.prepare(Self.insertIndexRows[n - 1])
            insert.reset()
            for r in 0..<n {
                let row = done + r
                // Scope-major: a scope's rows are adjacent in `fs_index`.
                let scope = scopes[row / entries.count], e = entries[row % entries.count]
                let p = r * 6
                try insert.bind(space, at: p + 1)
                try insert.bindScratch(scope, at: p + 2)
                try insert.bindScratch(e.field, at: p + 3)
                try insert.bind(Int64(e.kind), at: p + 4)
                try insert.bindScratch(e.value, at: p + 5)
                try insert.bindScratch(keys.docKey(under: scope), at: p + 6)
            }
            try insert.runBound()
            done += n
        }
    }

    /// Index rows one INSERT adds at most (6 parameters each, well under SQLite's limit of 999).
    static let indexRowsPerInsert = 16
    /// `insertIndexRows[n - 1]` inserts n index rows.
    private static let insertIndexRows: [PreparedSQL] = (1...indexRowsPerInsert).map { n in
        PreparedSQL("INSERT OR IGNORE INTO fs_index (space, scope, field, kind, value, doc_key) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?)", count: n).joined(separator: ", "))
    }

    private func removeIndex(space: Int64, keys: RowKeys, scopes: [[UInt8]], entries: [IndexEntry], _ conn: Connection) throws {
        guard !entries.isEmpty else { return }
        let remove = try conn.prepare(Self.deleteIndexRow)
        for e in entries {
            for scope in scopes {
                remove.reset()
                try remove.bind(space, at: 1)
                try remove.bindScratch(scope, at: 2)
                try remove.bindScratch(e.field, at: 3)
                try remove.bind(Int64(e.kind), at: 4)
                try remove.bindScratch(e.value, at: 5)
                try remove.bindScratch(keys.docKey(under: scope), at: 6)
                try remove.runBound()
            }
        }
    }

    private static let deleteIndexRow = PreparedSQL(
        "DELETE FROM fs_index WHERE space = ? AND scope = ? AND field = ? AND kind = ? AND value = ? AND doc_key = ?")

    // MARK: Collection-group index

    /// Cached `fs_group_indexes` lookups kept at most (the cache is emptied when full).
    static let groupMarkerCapacity = 4096

    /// Whether the collection-group index rows of `collectionID` are complete in `conn`'s snapshot
    /// (a query may then read them; otherwise it scans the group's documents).
    func groupIndexComplete(space: Int64, collectionID: String, _ conn: Connection) throws -> Bool {
        try conn.scalarInt("SELECT built_upto IS NULL FROM fs_group_indexes WHERE space = ? AND collection_id = ?",
                           [space, collectionID]) == 1
    }

    /// Starts building the collection-group index of `collectionID` in the background, unless a
    /// build of it is already under way.
    func scheduleGroupIndex(space: Int64, collectionID: String) {
        let name = ExactString("\(space)/\(collectionID)")
        lock.lock()
        let fresh = groupBuilds.insert(name).inserted
        lock.unlock()
        guard fresh else { return }
        collector.async { [weak self] in
            guard let self else { return }
            self.buildGroupIndex(space: space, collectionID: collectionID)
            self.lock.lock()
            self.groupBuilds.remove(name)
            self.lock.unlock()
        }
    }

    /// Adds the collection-group rows of `collectionID`'s documents, a batch of documents per short
    /// write transaction so writers never stall. Writers keep the rows of documents up to the
    /// batch cursor (`built_upto`) current; the build reads the later ones as they are when it gets
    /// there. Stops when the space was cleared meanwhile.
    /// - Parameters:
    ///   - batch: documents per transaction.
    ///   - transactions: stop after this many (tests stop a build half-way).
    func buildGroupIndex(space: Int64, collectionID: String, batch: Int = 256, transactions: Int = .max) {
        // Its batches find the group's documents by the scan index (without it, each would walk
        // the space's documents from its cursor); a group query is what asks for both.
        do {
            try groupScans.build(database)
        } catch {
            logger.error("firestore: building the collection-group scan index failed", [("error", .string("\(error)"))])
        }
        for _ in 0..<transactions {
            do {
                let done: Bool = try database.write { conn in
                    // Writers re-read this collection's marker from the transaction's outcome.
                    lock.lock()
                    groupMarkers[GroupName(space: space, collectionID: collectionID)] = nil
                    lock.unlock()
                    guard try conn.scalarInt("SELECT 1 FROM fs_spaces WHERE space = ?", [space]) != nil else { return true }
                    let marker = try conn.first("SELECT built_upto FROM fs_group_indexes WHERE space = ? AND collection_id = ?",
                                                [space, collectionID]) { row -> [UInt8]? in row.isNull(0) ? nil : row.blob(0) }
                    let cursor: [UInt8]
                    switch marker {
                    case nil:
                        // No document key is empty, so an empty cursor means none is indexed yet.
                        cursor = []
                        try conn.run("INSERT INTO fs_group_indexes (space, collection_id, built_upto) VALUES (?, ?, ?)",
                                     [space, collectionID, cursor])
                    case .some(nil):
                        return true
                    case .some(.some(let c)):
                        cursor = c
                    }
                    let scope = [IndexEntry.groupScope(collectionID)]
                    // Only registered fields have rows (none: the build only moves its cursor).
                    let indexed = try indexedFields.fields(space: space, collectionID: collectionID, conn) ?? []
                    var last: [UInt8]?
                    var count = 0
                    try Self.forEachRow(conn, """
                        SELECT key, fields FROM fs_documents WHERE space = ? AND collection_id = ? AND key > ? ORDER BY key LIMIT ?
                        """, [space, collectionID, cursor, batch]) { row in
                        let key = row.blob(0)
                        let fields = try row.withBlob(1) { buffer throws(StoredValueCodec.DecodeError) in
                            try StoredValueCodec.decodeFields(buffer)
                        }
                        // Only group-scope rows are added here, and they hold the whole key.
                        try addIndex(space: space, keys: RowKeys(key: key, collection: key), scopes: scope,
                                     entries: Self.entries(IndexEntry.entries(of: fields), in: indexed), conn)
                        last = key
                        count += 1
                        return true
                    }
                    let complete = count < batch
                    try conn.run("UPDATE fs_group_indexes SET built_upto = ? WHERE space = ? AND collection_id = ?",
                                 [complete ? nil : last, space, collectionID])
                    return complete
                }
                if done { return }
            } catch {
                logger.error("firestore: building a collection-group index failed", [("error", .string("\(error)"))])
                return
            }
        }
    }

    // MARK: Scans

    /// Steps `sql` row by row until `body` returns false; the statement is reset afterwards.
    static func forEachRow(_ conn: Connection, _ sql: String, _ values: [any SQLBindable], _ body: (Statement) throws -> Bool) throws {
        let statement = try conn.prepare(sql)
        try statement.bind(values)
        defer { try? statement.bind([]) }  // resets the statement so it holds no read snapshot
        while try statement.step() {
            if try !body(statement) { break }
        }
    }
}
