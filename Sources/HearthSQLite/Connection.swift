internal import CSQLite

/// One SQLite connection; use it from one thread at a time (the `Database` pool guarantees that).
public final class Connection {
    let handle: OpaquePointer
    private var cache: [String: Statement] = [:]
    /// Statements of `PreparedSQL`s, by identity (they live in statics, so identities are never reused).
    private var identityCache: [ObjectIdentifier: Statement] = [:]
    /// Run when the outermost transaction ends (`atTransactionEnd`).
    private var endActions: [(Connection) -> Void] = []
    /// What the progress handler counts into (`startCountingInstructions`).
    private let instructionCount = InstructionCount()
    private final class InstructionCount { var value = 0 }

    /// Opens (creating if needed) the database at `path`; `":memory:"` is a private in-memory database.
    public init(path: String, readOnly: Bool = false) throws {
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        // Hearth's VFS: the unix one, with WAL frame writes gathered (`WALBufferingVFS`).
        let vfs = WALBufferingVFS.name
        let rc = sqlite3_open_v2(path, &db, flags, vfs.isEmpty ? nil : vfs)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message)
        }
        handle = db
        // Always SQLITE_OK for an open handle; checked all the same, as every call is.
        guard sqlite3_extended_result_codes(db, 1) == SQLITE_OK else {
            sqlite3_close_v2(db)
            throw SQLiteError(code: SQLITE_ERROR, message: "cannot enable extended result codes")
        }
    }

    deinit {
        cache.removeAll()
        identityCache.removeAll()
        sqlite3_close_v2(handle)
    }

    func error(_ rc: Int32, sql: String? = nil) -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle) != 0 ? sqlite3_extended_errcode(handle) : rc,
                    message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// Runs one or more statements with no parameters and no results.
    public func execute(_ sql: String) throws {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
    }

    /// A cached prepared statement for `sql` (prepared once per connection).
    public func prepare(_ sql: String) throws -> Statement {
        if let s = cache[sql] { return s }
        let s = try Statement(connection: self, sql: sql)
        cache[sql] = s
        return s
    }

    /// The prepared statement of `sql`, found by identity (see `PreparedSQL`).
    public func prepare(_ sql: PreparedSQL) throws -> Statement {
        let id = ObjectIdentifier(sql)
        if let s = identityCache[id] { return s }
        let s = try prepare(sql.text)
        identityCache[id] = s
        return s
    }

    /// Prepares, binds and runs `sql` once.
    public func run(_ sql: String, _ values: [any SQLBindable] = []) throws {
        try prepare(sql).run(values)
    }

    /// All rows of `sql`.
    public func rows<T>(_ sql: String, _ values: [any SQLBindable] = [], _ row: (Statement) throws -> T) throws -> [T] {
        try prepare(sql).rows(values, row)
    }

    /// The first row of `sql`, or nil.
    public func first<T>(_ sql: String, _ values: [any SQLBindable] = [], _ row: (Statement) throws -> T) throws -> T? {
        try prepare(sql).first(values, row)
    }

    /// A single integer result (`SELECT count(*) …`), or nil when there is no row.
    public func scalarInt(_ sql: String, _ values: [any SQLBindable] = []) throws -> Int64? {
        try first(sql, values) { $0.isNull(0) ? nil : $0.int64(0) } ?? nil
    }

    /// Rowid of the last insert on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes64(handle)) }
    /// Rows changed by every statement since the connection opened (grows with each write).
    public var totalChanges: Int { Int(sqlite3_total_changes64(handle)) }
    /// Whether a transaction is open.
    public var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Starts counting the SQLite virtual-machine instructions every statement on this connection
    /// runs, triggers included (SQLite's progress handler, called at each one), until
    /// `stopCountingInstructions`. For tests that bound how much work an operation does — e.g. that
    /// a clear does not visit the rows it drops — by a count no machine's load changes, where a
    /// wall-clock bound would fail on a slow machine. Use the connection as ever: from one thread
    /// at a time, under the lock that hands it out.
    public func startCountingInstructions() {
        instructionCount.value = 0
        sqlite3_progress_handler(handle, 1, { context in
            if let context { Unmanaged<InstructionCount>.fromOpaque(context).takeUnretainedValue().value += 1 }
            return 0
        }, Unmanaged.passUnretained(instructionCount).toOpaque())
    }

    /// Stops counting and returns the instructions run since `startCountingInstructions`.
    public func stopCountingInstructions() -> Int {
        sqlite3_progress_handler(handle, 0, nil, nil)
        return instructionCount.value
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back and rethrows when it throws.
    /// Nested calls use savepoints.
    public func transaction<T>(immediate: Bool = false, _ body: () throws -> T) throws -> T {
        if inTransaction {
            try execute("SAVEPOINT hearth_nested")
            do {
                let v = try body()
                try execute("RELEASE hearth_nested")
                return v
            } catch {
                try? execute("ROLLBACK TO hearth_nested")
                try? execute("RELEASE hearth_nested")
                throw error
            }
        }
        // Prepared once and kept, like every other statement: `execute` (sqlite3_exec) compiles its
        // SQL on every call, which cost more than a small read transaction's own query.
        try prepare(immediate ? "BEGIN IMMEDIATE" : "BEGIN").run()
        defer { runEndActions() }
        do {
            let v = try body()
            try prepare("COMMIT").run()
            return v
        } catch {
            if inTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs `action` on this connection once the outermost transaction in progress has ended,
    /// committed or rolled back, before `transaction` returns (for a `Database`'s writer: still
    /// under its write lock, so no other write starts in between); at once when none is open.
    ///
    /// For state outside the database that must follow what the transaction left, such as files
    /// named by rows: the action is not told how it ended — savepoints rolled back inside it make
    /// "committed" too coarse — and looks at the rows instead.
    public func atTransactionEnd(_ action: @escaping (Connection) -> Void) {
        guard inTransaction else { return action(self) }
        endActions.append(action)
    }

    private func runEndActions() {
        while !endActions.isEmpty {
            let actions = endActions
            endActions = []
            for action in actions { action(self) }
        }
    }

    /// The path of the database file (nil for an in-memory or temporary database).
    public var filename: String? {
        guard let name = sqlite3_db_filename(handle, "main") else { return nil }
        let path = String(cString: name)
        return path.isEmpty ? nil : path
    }

    /// Whether commits on this connection sync to disk (`PRAGMA synchronous` FULL or EXTRA), as
    /// `Database.Durability.full` sets.
    public var syncsEachCommit: Bool { ((try? scalarInt("PRAGMA synchronous")) ?? 1) >= 2 }

    /// Sets the busy timeout in milliseconds.
    public func setBusyTimeout(_ ms: Int) throws {
        let rc = sqlite3_busy_timeout(handle, Int32(ms))
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    /// Bytes this connection's page cache holds now (`SQLITE_DBSTATUS_CACHE_USED`). Only from the
    /// thread that owns the connection, or under the lock that hands it out: the handle is opened
    /// without SQLite's mutex.
    public var cacheBytes: Int {
        var current: Int32 = 0, highwater: Int32 = 0
        // Fails only for an unknown status verb; 0 then, as nothing was measured.
        guard sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_USED, &current, &highwater, 0) == SQLITE_OK else { return 0 }
        return Int(current)
    }
}
