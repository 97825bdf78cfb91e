import HearthCore

/// Server-side writes for other services (the uploads API's `complete`): admin, rules bypassed.
extension FirestoreService: DocumentStore {
    /// Errors of a server-side write.
    public struct DocumentStoreError: Error, CustomStringConvertible, Sendable {
        /// Google's status name (`INVALID_ARGUMENT`, …).
        public let status: String
        public let message: String
        public var description: String { "\(status): \(message)" }
    }

    /// Replaces the document at `path` (`users/u1/files/f1`) in `projectID`'s default database;
    /// `fields` are REST `Value` JSON; `serverTimestampFields` (field paths) get the commit time.
    public func setDocument(projectID: String, path: String, fields: JSONObject, serverTimestampFields: [String]) throws -> JSON {
        let db = DatabaseID(project: projectID, database: "(default)")
        do throws(FirestoreError) {
            let docPath = ResourcePath(path.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
            guard docPath.isDocument else {
                throw .invalidArgument("\"\(path)\" is not a document path (it needs collection/document pairs).")
            }
            try docPath.validate(in: db)
            let values = try ValueJSON.decodeFields(.object(fields), path: "document.fields")
            try DocumentFields.validateWritten(values)
            var transforms: [FieldTransform] = []
            for name in serverTimestampFields {
                transforms.append(FieldTransform(field: try QueryParser.fieldPath(name), kind: .serverTime))
            }
            let w = Write(path: docPath, operation: .update(fields: values, mask: nil), transforms: transforms, precondition: nil)
            let (_, results) = try commit(db, writes: [w], transaction: nil, caller: .admin)
            guard let doc = results.first?.document else { throw .internal("The write left no document.") }
            return doc.json(in: db)
        } catch {
            throw DocumentStoreError(status: error.status, message: error.message)
        }
    }
}
