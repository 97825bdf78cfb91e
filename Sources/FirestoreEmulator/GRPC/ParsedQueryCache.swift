import Foundation
import HearthCore

/// RunQuery requests already read, by their bytes: a client runs the same query again and again
/// (a screen's list, the bench's one query), and reading its bytes through proto3 JSON into
/// `QueryParser` was ~140k instructions of each call (docs/benchmarks.md, grpcreads2) — a sixth of
/// it — for the same `Query` every time. Only a request that passed every check that depends on its
/// bytes alone and reads current data (no transaction, no read time) is kept: what it yields is then
/// fixed by its bytes, and the checks that depend on the call (the caller, the rules) still run on
/// every call, in the same order (`RESTBridge.prepareRunQuery`).
final class ParsedQueryCache: @unchecked Sendable {
    /// A request's database and query.
    struct Parsed: Sendable {
        let db: DatabaseID
        let query: Query
    }

    /// Requests larger than this are read every time (a client's queries are a few hundred bytes).
    static let maxRequestBytes = 4096
    /// Entries kept; when full the cache starts again (a client rotates through a few queries).
    static let capacity = 64

    private let lock = NSLock()
    /// By the request's bytes, hashed at once (`[UInt8]`'s own hash fed them one by one: ~2.5k
    /// instructions a call for the bench's request).
    private var entries: [RequestBytesKey: Parsed] = [:]

    func parsed(_ request: [UInt8]) -> Parsed? {
        lock.lock()
        defer { lock.unlock() }
        return entries[RequestBytesKey(bytes: request)]
    }

    func keep(_ request: [UInt8], _ parsed: Parsed) {
        guard request.count <= Self.maxRequestBytes else { return }
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= Self.capacity { entries = [:] }
        entries[RequestBytesKey(bytes: request)] = parsed
    }

    /// Entries kept (tests).
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}
