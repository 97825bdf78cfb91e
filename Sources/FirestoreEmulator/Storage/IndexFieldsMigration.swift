import HearthSQLite

/// `firestore.7`: index entries only for registered (collection id, field) pairs (`IndexedFields`).
///
/// Files written before hold every field's entries for every document, so every pair that has
/// rows is registered here: for each of them every document of the collection id has its rows,
/// which is what a registered pair promises, and writes go on keeping them. Pairs without rows
/// (fields no document has) are left unregistered, as in a new file, and built when first queried.
/// One transaction with the table's creation (`Database.migrate`): a `kill -9` leaves the file as
/// it was or migrated.
enum IndexFieldsMigration {
    static let migration = Migration("firestore.7", sql: """
        CREATE TABLE fs_index_fields (
            space INTEGER NOT NULL,
            collection_id TEXT NOT NULL,
            field TEXT NOT NULL,
            PRIMARY KEY (space, collection_id, field)
        ) WITHOUT ROWID;
        """, transform: registerExistingPairs)

    /// Registers the distinct (space, scope, field) prefixes of `fs_index`, each found by one seek
    /// past the previous one (a skip scan: the distinct prefixes, not every row, are read).
    static func registerExistingPairs(_ conn: Connection) throws {
        let next = try conn.prepare("""
            SELECT space, scope, field FROM fs_index WHERE (space, scope, field) > (?, ?, ?)
            ORDER BY space, scope, field LIMIT 1
            """)
        let insert = try conn.prepare("INSERT OR IGNORE INTO fs_index_fields (space, collection_id, field) VALUES (?, ?, ?)")
        // Below every real prefix: space ids start at 1.
        var after: (Int64, [UInt8], String) = (Int64.min, [], "")
        while true {
            guard let row = try next.first([after.0, after.1, after.2], { ($0.int64(0), $0.blob(1), $0.text(2)) }) else { return }
            after = row
            guard let collectionID = collectionID(ofScope: row.1) else { continue }
            try insert.run([row.0, collectionID, row.2])
        }
    }

    /// The collection id a scope's rows belong to: after the group marker, or the last segment of
    /// the collection's key.
    static func collectionID(ofScope scope: [UInt8]) -> String? {
        if IndexEntry.isGroupScope(scope) { return String(decoding: scope.dropFirst(), as: UTF8.self) }
        return OrderedEncoding.segments(ofKey: scope)?.last
    }
}
