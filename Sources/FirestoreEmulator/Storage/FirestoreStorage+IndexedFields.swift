import Foundation
import HearthCore
import HearthSQLite

/// Registering (collection id, field) pairs and building their index rows (`IndexedFields`).
extension FirestoreStorage {
    /// Registers the pairs of `fields` not registered yet and builds their rows for every document
    /// of `collectionID` (every collection of that id, and its group scope as far as its group index
    /// goes), in one write transaction on the single writer: writes before it are in the rows, writes
    /// after it see the pairs, and a `kill -9` leaves all of it or none. The set in memory takes the
    /// pairs after the commit, before the writer is given up. Nothing to do when `db` has no space.
    func buildFields(_ db: DatabaseID, collectionID: String, fields: [String]) throws {
        try database.withWriter { conn in
            var added: (space: Int64, fields: [String])?
            try conn.transaction(immediate: true) {
                guard let space = try existingSpace(of: db, conn) else { return }
                added = (space, try buildFields(space: space, collectionID: collectionID, fields: fields, conn))
            }
            if let added, !added.fields.isEmpty {
                indexedFields.insert(space: added.space, collectionID: collectionID, added.fields)
            }
        }
    }

    /// `buildFields` in `space` inside the caller's write transaction; returns the pairs it added.
    private func buildFields(space: Int64, collectionID: String, fields: [String], _ conn: Connection) throws -> [String] {
        let known = try indexedFields.fields(space: space, collectionID: collectionID, conn) ?? []
        var missing: [String] = []
        for f in fields where !known.contains(ExactString(f)) && !missing.contains(where: { ExactString.equal($0, f) }) {
            missing.append(f)
        }
        guard !missing.isEmpty else { return [] }
        for f in missing {
            try conn.run("INSERT OR IGNORE INTO fs_index_fields (space, collection_id, field) VALUES (?, ?, ?)", [space, collectionID, f])
        }
        let wanted = Set(missing.map { ExactString($0) })
        // By the collection-group scan index when it exists (exact here, on the writer); else every
        // document of the space, filtered (a build needs no group index of its own: `GroupScanIndex`).
        let source = groupScans.isBuilt ? "fs_documents INDEXED BY \(GroupScanIndex.name)" : "fs_documents"
        try Self.forEachRow(conn, """
            SELECT key, fields FROM \(source) WHERE space = ? AND collection_id = ?
            """, [space, collectionID]) { row in
            let key = row.blob(0)
            guard let parent = OrderedEncoding.parentKey(ofKey: key) else { throw MalformedKey(key: key) }
            let fields = try row.withBlob(1) { buffer throws(StoredValueCodec.DecodeError) in try StoredValueCodec.decodeFields(buffer) }
            let entries = Self.entries(IndexEntry.entries(of: fields), in: wanted)
            guard !entries.isEmpty else { return true }
            let scopes = try indexScopes(space: space, collectionID: collectionID, parentKey: parent, key: key, conn)
            try addIndex(space: space, keys: RowKeys(key: key, collection: parent), scopes: scopes, entries: entries, conn)
            return true
        }
        return missing
    }

    /// A stored document key that is not a sequence of segments (`buildFields` stops: its
    /// transaction is rolled back, and the query that asked answers by a scan).
    struct MalformedKey: Error, CustomStringConvertible {
        let key: [UInt8]
        var description: String { "firestore: a stored document key is malformed (\(key.count) bytes)" }
    }

    /// `buildFields` on the collector's queue, for a reader that found pairs missing in a snapshot it
    /// had already opened (it answers by a scan meanwhile).
    func scheduleFields(_ db: DatabaseID, collectionID: String, fields: [String]) {
        collector.async { [weak self] in
            do {
                try self?.buildFields(db, collectionID: collectionID, fields: fields)
            } catch {
                self?.logger.error("firestore: building index entries failed", [("error", .string("\(error)"))])
            }
        }
    }

    /// `groupScans.build` on the collector's queue, for a reader that scanned a collection group
    /// without it in a snapshot it had already opened (`GroupScanIndex`).
    func scheduleGroupScans() {
        groupScans.schedule(database, on: collector, logger: logger)
    }

    /// Whether every one of `fields` of `collectionID` has its rows in `conn`'s snapshot: from
    /// `view` when the caller took one before opening it, else from the snapshot's own table.
    func fieldsIndexed(space: Int64, collectionID: String, _ fields: [String], view: IndexedFields.View?,
                       _ conn: Connection) throws -> Bool {
        if fields.isEmpty { return true }
        if let view { return view.contains(space: space, collectionID: collectionID, fields) }
        let select = try conn.prepare(Self.selectIndexedField)
        for f in fields {
            select.reset()
            try select.bind(space, at: 1)
            try select.bind(collectionID, at: 2)
            try select.bind(f, at: 3)
            let found = try select.step()
            select.reset()
            if !found { return false }
        }
        return true
    }

    private static let selectIndexedField = PreparedSQL(
        "SELECT 1 FROM fs_index_fields WHERE space = ? AND collection_id = ? AND field = ?")
}
