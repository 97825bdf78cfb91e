import Foundation
import HearthCore
import HearthSQLite

/// The (collection id, field path) pairs of each space whose single-field index entries exist:
/// `fs_index_fields(space, collection_id, field)` as committed, kept in memory.
///
/// A write adds or removes `fs_index` rows only for entries whose pair is registered, so a commit
/// pays only for the fields some query has needed (the bench's create wrote ~12 index rows on ~9
/// leaves for fields nothing ever queried). For a registered pair every document of that
/// collection id has its entries of that field under its collection's scope (and under the group
/// scope as far as `fs_group_indexes` says); an unregistered pair has no rows at all, so adding it
/// builds its rows from the documents alone (`FirestoreStorage.buildFields`).
///
/// Only the single writer changes the set, and only after the transaction that registered a pair
/// committed, while it still holds the writer: every later write sees the pair, and a reader that
/// took a `View` before opening its snapshot sees the rows of every pair in the view.
final class IndexedFields: @unchecked Sendable {
    /// A collection id of one space.
    struct Collection: Hashable, Sendable {
        let space: Int64
        let collectionID: ExactString
    }

    /// The pairs as they were when taken (copy on write: taking one copies nothing).
    struct View: Sendable {
        fileprivate let fields: [Collection: Set<ExactString>]

        /// Whether every one of `fields` of `collectionID` was registered.
        func contains(space: Int64, collectionID: String, _ fields: [String]) -> Bool {
            guard let known = self.fields[Collection(space: space, collectionID: ExactString(collectionID))] else { return fields.isEmpty }
            return fields.allSatisfy { known.contains(ExactString($0)) }
        }
    }

    private let lock = NSLock()
    private var fields: [Collection: Set<ExactString>] = [:]
    /// Whether `fields` holds the table (loaded on first use, on the connection that needs it).
    private var loaded = false

    /// The pairs of `collectionID` in `space` (nil: none), loading the table first when needed.
    /// On the writer the answer is exact: only the writer changes the set.
    func fields(space: Int64, collectionID: String, _ conn: Connection) throws -> Set<ExactString>? {
        // Every write asks: one lock when loaded (always, after the first).
        let key = Collection(space: space, collectionID: ExactString(collectionID))
        lock.lock()
        if loaded {
            defer { lock.unlock() }
            return fields[key]
        }
        lock.unlock()
        try loadIfNeeded(conn)
        lock.lock()
        defer { lock.unlock() }
        return fields[key]
    }

    /// The pairs now (nil before the table was loaded); take it before opening the snapshot it is
    /// used with.
    func view() -> View? {
        lock.lock()
        defer { lock.unlock() }
        return loaded ? View(fields: fields) : nil
    }

    /// Adds pairs whose registration has committed (call on the writer, before giving it up).
    func insert(space: Int64, collectionID: String, _ added: [String]) {
        lock.lock()
        fields[Collection(space: space, collectionID: ExactString(collectionID)), default: []].formUnion(added.map { ExactString($0) })
        lock.unlock()
    }

    /// Forgets a space whose rows were collected (space ids are never reused).
    func remove(space: Int64) {
        lock.lock()
        fields = fields.filter { $0.key.space != space }
        lock.unlock()
    }

    /// Loads the table (at open, so readers get a view before any write).
    func loadIfNeeded(_ conn: Connection) throws {
        lock.lock()
        let done = loaded
        lock.unlock()
        if done { return }
        var all: [Collection: Set<ExactString>] = [:]
        try FirestoreStorage.forEachRow(conn, "SELECT space, collection_id, field FROM fs_index_fields", []) { row in
            all[Collection(space: row.int64(0), collectionID: ExactString(row.text(1))), default: []].insert(ExactString(row.text(2)))
            return true
        }
        lock.lock()
        // A writer may have registered pairs since (it loaded first): keep the union.
        if !loaded {
            fields.merge(all) { $0.union($1) }
            loaded = true
        }
        lock.unlock()
    }
}
