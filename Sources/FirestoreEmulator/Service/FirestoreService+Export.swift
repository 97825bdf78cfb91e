import HearthCore
import HearthSQLite

/// Seed data in and out: every current document of every database as REST `Document` JSON, the
/// format `hearth export` writes to `firestore/documents.json` (docs/import-export.md).
///
/// REST `Value` JSON keeps every type exact (integers as strings, bytes as base64, timestamps with
/// their nanoseconds, references, geo points, NaN), so an export diffs and round-trips losslessly.
extension FirestoreService {
    /// `{"databases": [{"name": "projects/p/databases/d", "documents": [{name, fields, createTime, updateTime}]}]}`,
    /// databases by name, documents in key order.
    public func exportDocuments() throws -> JSON {
        try read { conn in
            var spaces: [(name: String, space: Int64)] = []
            try FirestoreStorage.forEachRow(conn, "SELECT name, space FROM fs_spaces ORDER BY name", []) {
                spaces.append(($0.text(0), $0.int64(1)))
                return true
            }
            var databases: [JSON] = []
            for (name, space) in spaces {
                // Space names are `project/database` (DatabaseID.spaceName).
                guard let slash = name.firstIndex(of: "/") else { continue }
                let db = DatabaseID(project: String(name[..<slash]), database: String(name[name.index(after: slash)...]))
                var documents: [JSON] = []
                try FirestoreStorage.forEachRow(conn, "SELECT \(FirestoreStorage.documentColumns) FROM fs_documents WHERE space = ? ORDER BY key", [space]) {
                    documents.append(try FirestoreStorage.document(from: $0).json(in: db))
                    return true
                }
                if !documents.isEmpty {
                    databases.append(.object(["name": .string(db.name), "documents": .array(documents)]))
                }
            }
            return .object(["databases": .array(databases)])
        }
    }

    /// Writes every document of an export (as admin, rules not consulted; existing documents are
    /// replaced). Create and update times become the import's commit time, as in a managed import.
    /// - Returns: how many documents were written.
    /// - Throws: `DocumentStoreError` naming the first document that is not valid.
    @discardableResult
    public func importDocuments(_ export: JSON) throws -> Int {
        guard let databases = export["databases"]?.arrayValue else {
            throw DocumentStoreError(status: "INVALID_ARGUMENT", message: "an export needs a \"databases\" array")
        }
        var count = 0
        for database in databases {
            var writes: [(DatabaseID, Write)] = []
            for document in database["documents"]?.arrayValue ?? [] {
                writes.append(try Self.importedWrite(document))
            }
            // Batches of 500, Firestore's limit for one commit.
            var start = 0
            while start < writes.count {
                let batch = writes[start..<min(start + 500, writes.count)]
                for (db, group) in Dictionary(grouping: batch, by: { $0.0 }) {
                    do throws(FirestoreError) {
                        _ = try commit(db, writes: group.map(\.1), transaction: nil, caller: .admin)
                    } catch {
                        throw DocumentStoreError(status: error.status, message: error.message)
                    }
                }
                count += batch.count
                start += 500
            }
        }
        return count
    }

    /// The write that recreates one exported document.
    private static func importedWrite(_ document: JSON) throws -> (DatabaseID, Write) {
        guard let name = document["name"]?.stringValue else {
            throw DocumentStoreError(status: "INVALID_ARGUMENT", message: "a document without \"name\"")
        }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 7, parts[0] == "projects", parts[2] == "databases", parts[4] == "documents" else {
            throw DocumentStoreError(status: "INVALID_ARGUMENT", message: "\(name) is not a document name (projects/p/databases/d/documents/…)")
        }
        let db = DatabaseID(project: parts[1], database: parts[3])
        let path = ResourcePath(Array(parts[5...]))
        do throws(FirestoreError) {
            guard path.isDocument else { throw .invalidArgument("\(name) is not a document name.") }
            try path.validate(in: db)
            let fields = try ValueJSON.decodeFields(document["fields"] ?? .object([:]), path: "\(name).fields")
            try DocumentFields.validateWritten(fields)
            return (db, Write(path: path, operation: .update(fields: fields, mask: nil), transforms: [], precondition: nil))
        } catch {
            throw DocumentStoreError(status: error.status, message: error.message)
        }
    }
}
