import HearthCore
import HearthHTTP
import HearthSQLite

/// The hub's read of a project's databases and of the rules judging each, for the web UI's rules
/// view and data browser (`docs/ui.md`): which databases exist, and whose rules decide their
/// requests — their own, the project's, the rules file's or the configured (shipped) ones.
extension FirestoreService {
    /// `GET /emulator/v1/firestore/projects/{p}/databases` on the hub.
    public func registerHubRoutes(_ hub: Router) {
        hub.get("/emulator/v1/firestore/projects/{project}/databases") { [self] _, params in
            guard let project = params["project"], !project.isEmpty else {
                return .json(.object(["error": .object(["code": .int(400), "message": .string("A project id is required."),
                                                        "status": .string("INVALID_ARGUMENT")])]), status: 400)
            }
            do throws(FirestoreError) {
                return .json(try databasesJSON(project: project))
            } catch {
                return .json(error.json, status: error.httpStatus)
            }
        }
    }

    /// `{"databases": [{name, database, hasDocuments, ownRules, rules: {from, state, fileName?, path?, message?}}]}`:
    /// `(default)` first, then every database written to (and not cleared since) or given rules of
    /// its own, by id. `from` is `database`, `project`, `file`, `configured` or `none`; `state`
    /// `loaded`, `open` (every request allowed) or `denied` (rules that never compiled, or another
    /// service's: every request denied, `message` says why).
    func databasesJSON(project: String) throws(FirestoreError) -> JSON {
        let written: [(database: String, hasDocuments: Bool)] = try read { conn in
            // Space names are `project/database` (DatabaseID.spaceName): the project's are the
            // names between `p/` and `p0` ('0' follows '/').
            var spaces: [(String, Int64)] = []
            try FirestoreStorage.forEachRow(conn, "SELECT name, space FROM fs_spaces WHERE name > ? AND name < ? ORDER BY name",
                                            [project + "/", project + "0"]) {
                spaces.append((String($0.text(0).dropFirst(project.utf8.count + 1)), $0.int64(1)))
                return true
            }
            return try spaces.map { name, space in
                (name, try conn.scalarInt("SELECT EXISTS (SELECT 1 FROM fs_documents WHERE space = ?)", [space]) == 1)
            }
        }
        let own = Set(rules.databasesWithOwnRules(project: project))
        var hasDocuments: [String: Bool] = ["(default)": false]
        for w in written { hasDocuments[w.database] = w.hasDocuments }
        for d in own where hasDocuments[d] == nil { hasDocuments[d] = false }
        let ids = hasDocuments.keys.sorted { a, b in a == "(default)" ? b != "(default)" : b == "(default)" ? false : a < b }
        let file = rules.rulesFilePath
        return .object(["databases": .array(ids.map { id in
            let (source, force) = rules.provenance(for: project, database: id)
            var r: JSONObject = ["from": .string(source.rawValue)]
            if let ruleset = force.ruleset {
                r["state"] = .string("loaded")
                r["fileName"] = .string(ruleset.fileName)
            } else if let why = force.broken {
                r["state"] = .string("denied")
                r["message"] = .string(why)
            } else {
                r["state"] = .string("open")
            }
            if source == .file, let file { r["path"] = .string(file) }
            return .object(["name": .string(DatabaseID(project: project, database: id).name), "database": .string(id),
                            "hasDocuments": .bool(hasDocuments[id] ?? false), "ownRules": .bool(own.contains(id)),
                            "rules": .object(r)])
        })])
    }
}
