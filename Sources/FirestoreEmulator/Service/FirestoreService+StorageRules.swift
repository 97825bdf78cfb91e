import SecurityRules

/// Cloud Storage rules read Firestore documents (`firestore.get()`), as production allows.
extension FirestoreService: FirestoreRulesReader {
    public func rulesResource(projectID: String, path: [String]) throws -> RulesValue? {
        guard path.count > 1 else { return nil }
        let db = DatabaseID(project: projectID, database: path[1])
        guard let p = RulesConversion.documentPath(path, in: db) else { return nil }
        return try read { conn in
            let space = try storage.space(of: db, conn)
            return try load(space, p, at: nil, conn).map { RulesConversion.resource(db, path: $0.path, fields: $0.fields) }
        }
    }
}
