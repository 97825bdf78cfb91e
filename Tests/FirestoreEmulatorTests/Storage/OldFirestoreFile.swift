import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// Files as binaries before `firestore.10` wrote them, made by SQL: their `fs_documents` kept each
/// document's parent key in a `parent` column, which the current code no longer writes (writing an
/// "old file" through it would make rows no old binary made). The schema comes from the first
/// `count` migrations, and is checked against the old table's text below, kept here as data.
enum OldFirestoreFile {
    /// `fs_documents` as `firestore.1` created it and binaries before `firestore.10` kept it.
    static let documentsTable = """
        CREATE TABLE fs_documents (
            space INTEGER NOT NULL,
            key BLOB NOT NULL,
            parent BLOB NOT NULL,
            collection_id TEXT NOT NULL,
            fields BLOB NOT NULL,
            create_time INTEGER NOT NULL,
            update_time INTEGER NOT NULL,
            PRIMARY KEY (space, key)
        ) WITHOUT ROWID
        """

    /// The space of `demo-test/(default)` in every old file made here.
    static let space: Int64 = 1

    /// A file at `path` with the first `count` migrations applied and the space of
    /// `demo-test/(default)`; `fs_documents` is checked to be the old table.
    static func create(path: String?, migrations count: Int) throws -> Database {
        let database = try Database(path: path, layout: FirestoreService.databaseLayout)
        let older = Array(FirestoreService.migrations.prefix(count))
        #expect(older.count == count && !older.contains { $0.id == "firestore.10" })
        try database.migrate(older)
        let sql = try database.read { try $0.first("SELECT sql FROM sqlite_master WHERE name = 'fs_documents'") { $0.text(0) } }
        #expect(sql.map(squeezed) == squeezed(documentsTable), "\(sql ?? "none")")
        try database.write { conn in
            try conn.run("INSERT INTO fs_spaces (name, space) VALUES ('demo-test/(default)', ?)", [space])
            try conn.run("UPDATE fs_meta SET value = ? WHERE key = 'next_space'", [space + 1])
        }
        return database
    }

    /// Inserts documents as an old binary stored them: the key, the parent's key, the collection id,
    /// the stored fields, and commit times ten seconds before the test harness's clock (within the
    /// hour a read time may ask for). No index rows: a file with no registered fields has none.
    static func insert(_ database: Database, _ documents: [(path: [String], fields: [ExactString: FirestoreValue])]) throws {
        let time = Instant(rfc3339: "2026-01-02T03:03:55.123456Z")!.unixMicros
        try database.write { conn in
            for (i, d) in documents.enumerated() {
                let path = ResourcePath(d.path)
                try conn.run("""
                    INSERT INTO fs_documents (space, key, parent, collection_id, fields, create_time, update_time)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, [space, path.key, path.parent.key, path.collectionID, StoredValueCodec.encodeFields(d.fields),
                          time + Int64(i), time + Int64(i)])
            }
            try conn.run("UPDATE fs_meta SET value = ? WHERE key = 'last_commit'", [time + Int64(documents.count)])
        }
    }

    /// The names of `fs_documents`' columns.
    static func columns(_ database: Database) throws -> [String] {
        try database.read { try $0.rows("SELECT name FROM pragma_table_info('fs_documents')") { $0.text(0) } }
    }

    private static func squeezed(_ s: String) -> String {
        s.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
    }
}
