import HearthSQLite

/// Migration `firestore.5`: stored keys re-encoded for the order of numeric ids.
///
/// Before it, `OrderedEncoding` held a numeric id `__id<N>__` as the string it is written as; now
/// it holds N, so such ids sort before string ids (Firestore's order). Every stored byte string made
/// from a name that holds one is rewritten: document keys and their parents, history keys, index
/// rows' document keys and collection scopes, and index values holding references. Nothing else
/// changed (string ids encode as before), and the old encoding kept ids as their UTF-8 bytes, so
/// only rows containing the bytes `__id` can be affected: the rest are not rewritten.
///
/// It runs inside the migration's transaction: a failure (a key no version of Hearth wrote) undoes
/// all of it and the file stays as it was, every acknowledged write in it.
enum NumericIDMigration {
    /// Why the migration stopped.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let migration = Migration("firestore.5", transform: { conn in try NumericIDMigration.run(conn) })

    /// `__id`: in every old key, scope or index value that names a numeric id.
    private static let marker: [UInt8] = Array("__id".utf8)

    static func run(_ conn: Connection) throws {
        try restartGroupBuilds(conn)
        try rewriteIndexRows(conn)
        try rekeyDocuments(conn)
        try rekeyHistory(conn)
    }

    /// `old` (a key of the old encoding) in the current one.
    static func rekey(_ old: [UInt8]) throws -> [UInt8] {
        // The old encoding never wrote `00 02`, so its keys decode as string segments.
        guard let segments = OrderedEncoding.segments(ofKey: old) else {
            throw Failure(description: "firestore.5: a stored document key is malformed (\(old.count) bytes); the file is left unchanged")
        }
        return OrderedEncoding.key(segments)
    }

    /// Collection-group index builds under way start over: their progress marker is a key, and the
    /// documents up to it are those with index rows, which in the new order is no longer a prefix
    /// of the documents. Their rows go, and the next collection-group query builds them again.
    private static func restartGroupBuilds(_ conn: Connection) throws {
        let builds = try conn.rows("SELECT space, collection_id FROM fs_group_indexes WHERE built_upto IS NOT NULL") {
            ($0.int64(0), $0.text(1))
        }
        for (space, collectionID) in builds {
            try conn.run("DELETE FROM fs_index WHERE space = ? AND scope = ?", [space, IndexEntry.groupScope(collectionID)])
            try conn.run("DELETE FROM fs_group_indexes WHERE space = ? AND collection_id = ?", [space, collectionID])
        }
    }

    /// A document whose index rows are rewritten: its space and old key.
    private struct Document: Hashable {
        let space: Int64
        let key: [UInt8]
    }

    /// Rows whose scope, document key or value may hold a numeric id are deleted, and the entries of
    /// their documents added again in the new encoding under the same (re-encoded) scopes. The
    /// document's other rows are unchanged, so adding them again is ignored.
    private static func rewriteIndexRows(_ conn: Connection) throws {
        var scopes: [Document: Set<[UInt8]>] = [:]
        let rows = try conn.rows("""
            SELECT space, scope, field, kind, value, doc_key FROM fs_index
            WHERE instr(scope, ?) > 0 OR instr(value, ?) > 0 OR instr(doc_key, ?) > 0
            """, [marker, marker, marker]) { row in
            (space: row.int64(0), scope: row.blob(1), field: row.text(2), kind: row.int64(3), value: row.blob(4), docKey: row.blob(5))
        }
        let delete = try conn.prepare("DELETE FROM fs_index WHERE space = ? AND scope = ? AND field = ? AND kind = ? AND value = ? AND doc_key = ?")
        for r in rows {
            try delete.run([r.space, r.scope, r.field, r.kind, r.value, r.docKey])
            scopes[Document(space: r.space, key: r.docKey), default: []].insert(r.scope)
        }
        let insert = try conn.prepare("INSERT OR IGNORE INTO fs_index (space, scope, field, kind, value, doc_key) VALUES (?, ?, ?, ?, ?, ?)")
        for (doc, oldScopes) in scopes {
            // An index row without its document answers nothing (queries join the documents): dropped.
            guard let fields = try conn.first("SELECT fields FROM fs_documents WHERE space = ? AND key = ?", [doc.space, doc.key], { row in
                try row.withBlob(0) { buffer throws(StoredValueCodec.DecodeError) in try StoredValueCodec.decodeFields(buffer) }
            }) else { continue }
            let key = try rekey(doc.key)
            let entries = IndexEntry.entries(of: fields)
            for old in oldScopes {
                // A collection-group scope is the collection id itself, not a key.
                let scope = old.first == 0xFF ? old : try rekey(old)
                for e in entries { try insert.run([doc.space, scope, e.field, e.kind, e.value, key]) }
            }
        }
    }

    private static func rekeyDocuments(_ conn: Connection) throws {
        let keys = try conn.rows("SELECT space, key FROM fs_documents WHERE instr(key, ?) > 0", [marker]) { ($0.int64(0), $0.blob(1)) }
        let update = try conn.prepare("UPDATE fs_documents SET key = ?, parent = ? WHERE space = ? AND key = ?")
        for (space, old) in keys {
            let key = try rekey(old)
            guard key != old, let segments = OrderedEncoding.segments(ofKey: key) else { continue }
            try update.run([key, OrderedEncoding.key(segments.dropLast()), space, old])
        }
    }

    private static func rekeyHistory(_ conn: Connection) throws {
        let keys = try conn.rows("SELECT DISTINCT space, key FROM fs_history WHERE instr(key, ?) > 0", [marker]) { ($0.int64(0), $0.blob(1)) }
        let update = try conn.prepare("UPDATE fs_history SET key = ? WHERE space = ? AND key = ?")
        for (space, old) in keys {
            let key = try rekey(old)
            if key != old { try update.run([key, space, old]) }
        }
    }
}
