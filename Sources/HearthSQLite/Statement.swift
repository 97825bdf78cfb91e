internal import CSQLite

/// A prepared statement owned by one connection; finalised in `deinit`.
public final class Statement {
    let handle: OpaquePointer
    public let sql: String
    private unowned let connection: Connection

    init(connection: Connection, sql: String) throws {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw connection.error(rc, sql: sql) }
        self.handle = stmt
        self.sql = sql
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
        for chunk in scratch { chunk.deallocate() }
    }

    /// Memory holding copies of values bound with `bindScratch`, reused from the start by every
    /// `reset()`; chunks are added, never moved, so values bound earlier stay where SQLite reads them.
    private var scratch: [UnsafeMutableRawBufferPointer] = []
    private var scratchChunk = 0
    private var scratchUsed = 0
    private var boundScratch = false
    /// Values longer than this are bound with SQLite's own copy: the scratch stays small.
    private static let scratchValueLimit = 1024
    private static let scratchChunkSize = 4096

    /// `?` parameters of the statement.
    public lazy var parameterCount = Int(sqlite3_bind_parameter_count(handle))

    /// Resets the statement and binds `values` to `?1…?n`.
    public func bind(_ values: [any SQLBindable]) throws {
        sqlite3_reset(handle)
        dropScratch()
        // Parameters not in `values` must read NULL, not what a previous run bound; when every
        // one is bound again, clearing them first is wasted work.
        if values.count < parameterCount { sqlite3_clear_bindings(handle) }
        for (i, v) in values.enumerated() {
            let index = i + 1
            switch v.sqlValue {
            case .null: try check(sqlite3_bind_null(handle, Int32(index)))
            case .integer(let n): try bind(n, at: index)
            case .real(let d): try check(sqlite3_bind_double(handle, Int32(index), d))
            case .text(let s): try bind(s, at: index)
            case .blob(let b): try bind(b, at: index)
            }
        }
    }

    // Binding one parameter at a time (`reset`, the `bind(_:at:)`s, `runBound`) spares a
    // statement run many times per request the `[any SQLBindable]` array and its boxed values.

    /// Resets the statement to bind it anew (bindings not bound again keep their values, except
    /// `bindScratch` ones, which `runBound` drops).
    public func reset() {
        sqlite3_reset(handle)
        dropScratch()
    }

    /// Drops bindings into the scratch memory (left by a bind that threw before `runBound`), so
    /// that none can point into memory about to be reused.
    private func dropScratch() {
        if boundScratch {
            sqlite3_clear_bindings(handle)
            boundScratch = false
        }
        scratchChunk = 0
        scratchUsed = 0
    }

    /// Binds an integer to parameter `index` (1-based).
    public func bind(_ value: Int64, at index: Int) throws {
        try check(sqlite3_bind_int64(handle, Int32(index), value))
    }

    /// Binds text to parameter `index` (1-based); SQLite keeps its own copy.
    public func bind(_ value: String, at index: Int) throws {
        var value = value
        // Native strings are contiguous UTF-8: no NUL-terminated copy is needed, SQLite takes the length.
        let rc = value.withUTF8 { p -> Int32 in
            guard let base = p.baseAddress, p.count > 0 else { return sqlite3_bind_text(handle, Int32(index), "", 0, nil) }
            return base.withMemoryRebound(to: CChar.self, capacity: p.count) { c in
                sqlite3_bind_text64(handle, Int32(index), c, sqlite3_uint64(p.count), hearth_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
        }
        try check(rc)
    }

    /// Binds a blob to parameter `index` (1-based); SQLite keeps its own copy.
    public func bind(_ value: [UInt8], at index: Int) throws {
        try value.withUnsafeBytes { p in
            // A zero-length blob must still bind as a blob, not NULL.
            try check(sqlite3_bind_blob64(handle, Int32(index), p.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                          sqlite3_uint64(p.count), hearth_sqlite_transient()))
        }
    }

    /// Binds a blob to parameter `index` (1-based) from a copy in the statement's own scratch
    /// memory, which SQLite reads in place (`SQLITE_STATIC`): a copy SQLite makes itself is a
    /// malloc per value and a free when it is bound again, most of what binding a small blob
    /// costs. Only between `reset()` and `runBound()`, which drops these bindings before the
    /// scratch can be reused.
    public func bindScratch(_ value: [UInt8], at index: Int) throws {
        guard value.count <= Self.scratchValueLimit, !value.isEmpty else { return try bind(value, at: index) }
        let target = value.withUnsafeBytes { scratchCopy($0) }
        // nil is SQLITE_STATIC: the scratch outlives the binding (`runBound` clears it).
        try check(sqlite3_bind_blob64(handle, Int32(index), target, sqlite3_uint64(value.count), nil))
    }

    /// Binds text to parameter `index` (1-based) from a copy in the statement's scratch memory,
    /// as `bindScratch(_:at:)` binds a blob: SQLite's own copy of a text value is a malloc and a
    /// free too (a Firestore create bound eight of them on the single writer: the collection id,
    /// each index row's field name). Same rules: only between `reset()` and `runBound()`.
    public func bindScratch(_ value: String, at index: Int) throws {
        var value = value
        let target: UnsafeMutableRawPointer? = value.withUTF8 { p in
            guard p.count <= Self.scratchValueLimit, p.count > 0 else { return nil }
            return scratchCopy(UnsafeRawBufferPointer(p))
        }
        guard let target else { return try bind(value, at: index) }
        let count = value.utf8.count
        try check(target.withMemoryRebound(to: CChar.self, capacity: count) { c in
            sqlite3_bind_text64(handle, Int32(index), c, sqlite3_uint64(count), nil, UInt8(SQLITE_UTF8))
        })
    }

    /// Copies `bytes` (non-empty, at most `scratchValueLimit`) into the scratch memory; where they now are.
    private func scratchCopy(_ bytes: UnsafeRawBufferPointer) -> UnsafeMutableRawPointer {
        if scratchChunk < scratch.count, scratchUsed + bytes.count > scratch[scratchChunk].count {
            scratchChunk += 1
            scratchUsed = 0
        }
        if scratchChunk == scratch.count {
            scratch.append(.allocate(byteCount: Self.scratchChunkSize, alignment: 8))
        }
        let target = scratch[scratchChunk].baseAddress! + scratchUsed
        target.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        scratchUsed += bytes.count
        boundScratch = true
        return target
    }

    /// Runs the statement with what is bound, ignoring rows, and resets it.
    public func runBound() throws {
        defer {
            sqlite3_reset(handle)
            // No binding may point into scratch memory the next `reset()` reuses.
            dropScratch()
        }
        while try step() {}
    }

    private func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    /// Binds a blob from raw memory at `index` (1-based) without an intermediate array.
    public func bindBlob(_ bytes: UnsafeRawBufferPointer, at index: Int) throws {
        let rc = sqlite3_bind_blob64(handle, Int32(index), bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                     sqlite3_uint64(bytes.count), hearth_sqlite_transient())
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    /// Runs the statement once with `values` bound to `?1…?n` and `bytes` at `index`, which SQLite
    /// reads in place instead of copying them first (`SQLITE_STATIC`): for a 1 MiB blob chunk the copy
    /// was a third of the memory traffic inside the INSERT. The binding is dropped before returning,
    /// so the statement never keeps the borrowed pointer.
    public func runBorrowing(_ bytes: UnsafeRawBufferPointer, at index: Int, _ values: [any SQLBindable] = []) throws {
        try bind(values)
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        // nil is SQLITE_STATIC: the bytes stay the caller's, valid for the whole call.
        let rc = sqlite3_bind_blob64(handle, Int32(index), bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                     sqlite3_uint64(bytes.count), nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
        while try step() {}
    }

    /// Advances; true when a row is available.
    @discardableResult
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            sqlite3_reset(handle)
            throw connection.error(rc, sql: sql)
        }
    }

    /// Runs to completion, ignoring rows.
    public func run(_ values: [any SQLBindable] = []) throws {
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    /// All rows, each mapped by `row`.
    public func rows<T>(_ values: [any SQLBindable] = [], _ row: (Statement) throws -> T) throws -> [T] {
        try bind(values)
        defer { sqlite3_reset(handle) }
        var out: [T] = []
        while try step() { out.append(try row(self)) }
        return out
    }

    /// The first row mapped by `row`, or nil.
    public func first<T>(_ values: [any SQLBindable] = [], _ row: (Statement) throws -> T) throws -> T? {
        try bind(values)
        defer { sqlite3_reset(handle) }
        return try step() ? try row(self) : nil
    }

    /// Number of result columns.
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// Whether column `i` (0-based) is NULL.
    public func isNull(_ i: Int) -> Bool { sqlite3_column_type(handle, Int32(i)) == SQLITE_NULL }
    public func int64(_ i: Int) -> Int64 { sqlite3_column_int64(handle, Int32(i)) }
    public func int(_ i: Int) -> Int { Int(sqlite3_column_int64(handle, Int32(i))) }
    public func double(_ i: Int) -> Double { sqlite3_column_double(handle, Int32(i)) }
    public func bool(_ i: Int) -> Bool { sqlite3_column_int64(handle, Int32(i)) != 0 }

    public func text(_ i: Int) -> String {
        guard let p = sqlite3_column_text(handle, Int32(i)) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, Int32(i)))
        return String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self)
    }

    public func optionalText(_ i: Int) -> String? { isNull(i) ? nil : text(i) }

    public func blob(_ i: Int) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(handle, Int32(i)))
        guard n > 0, let p = sqlite3_column_blob(handle, Int32(i)) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    /// Calls `body` with column `i`'s bytes without copying; valid only inside `body`.
    public func withBlob<T>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let n = Int(sqlite3_column_bytes(handle, Int32(i)))
        let p = sqlite3_column_blob(handle, Int32(i))
        return try body(UnsafeRawBufferPointer(start: n > 0 ? p : nil, count: n))
    }

    /// Column `i` as a `SQLValue`.
    public func value(_ i: Int) -> SQLValue {
        switch sqlite3_column_type(handle, Int32(i)) {
        case SQLITE_INTEGER: .integer(int64(i))
        case SQLITE_FLOAT: .real(double(i))
        case SQLITE_TEXT: .text(text(i))
        case SQLITE_BLOB: .blob(blob(i))
        default: .null
        }
    }
}
