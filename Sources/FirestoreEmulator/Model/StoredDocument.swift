import HearthCore

/// One stored document.
struct StoredDocument: Sendable, Equatable {
    var path: ResourcePath
    var fields: [ExactString: FirestoreValue]
    var createTime: Instant
    var updateTime: Instant

    /// Equal when every property is; the times first: a commit asks whether its new version differs
    /// from the old one, and their update times usually answer it before the field maps are compared
    /// (~3k instructions a REST transaction's commit spent in the maps' `==`).
    static func == (a: StoredDocument, b: StoredDocument) -> Bool {
        a.updateTime == b.updateTime && a.createTime == b.createTime && a.path == b.path && a.fields == b.fields
    }

    /// The REST `Document` JSON, limited to `mask` when given.
    func json(in database: DatabaseID, mask: [FieldPath]? = nil) -> JSON {
        var o: [(String, JSON)] = [("name", .string(database.name(of: path)))]
        let shown = mask.map { DocumentFields.project(fields, onto: $0) } ?? fields
        if !shown.isEmpty { o.append(("fields", ValueJSON.encodeFields(shown))) }
        o.append(("createTime", .string(ValueJSON.formatTimestamp(createTime))))
        o.append(("updateTime", .string(ValueJSON.formatTimestamp(updateTime))))
        return .object(JSONObject(o))
    }

    /// Firestore's storage size of the document (name + fields + 32), per the documented rules.
    var storageSize: Int {
        DocumentFields.nameSize(path.segments) + DocumentFields.size(of: fields) + 32
    }

    /// Largest document Firestore stores.
    static let maxSize = 1_048_576
}
