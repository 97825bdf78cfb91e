/// A failed SQLite call: the result code, SQLite's message, and the statement when there was one.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The (extended) result code.
    public let code: Int32
    public let message: String
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        if let sql { return "SQLite error \(code): \(message) — in \(sql)" }
        return "SQLite error \(code): \(message)"
    }

    /// SQLITE_CONSTRAINT and its extended codes.
    public var isConstraintViolation: Bool { code & 0xff == 19 }
    /// SQLITE_BUSY / SQLITE_LOCKED.
    public var isBusy: Bool { code & 0xff == 5 || code & 0xff == 6 }
    /// SQLITE_FULL: the disk (or the file system holding the data directory) is full.
    public var isDiskFull: Bool { code & 0xff == 13 }
    /// SQLITE_IOERR, SQLITE_READONLY or SQLITE_CANTOPEN: the disk refused a read or write.
    public var isIOFailure: Bool { code & 0xff == 10 || code & 0xff == 8 || code & 0xff == 14 }
}
