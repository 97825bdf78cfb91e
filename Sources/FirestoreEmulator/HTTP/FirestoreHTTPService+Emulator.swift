import HearthCore
import HearthHTTP
import SecurityRules

/// The Firebase emulator's own endpoints on the Firestore port (no authentication, as there).
extension FirestoreHTTPService {
    /// `/emulator/v1/projects/{p}…`.
    func emulator(_ request: Request, _ s: [String]) throws(FirestoreError) -> Response {
        guard s.count >= 3, s[0] == "v1", s[1] == "projects" else { return notFound(request) }
        // DELETE /emulator/v1/projects/{p}/databases/{d}/documents
        if s.count == 6, s[3] == "databases", s[5] == "documents" {
            guard request.method == "DELETE" else { return methodNotAllowed(request) }
            let db = DatabaseID(project: s[2], database: s[4])
            do {
                try service.clear(db)
            } catch {
                throw .internal("Internal error: \(error)")
            }
            return Response.json(.object([:]))
        }
        // DELETE /emulator/v1/projects/{p}/databases/{d}/documents/{path…}: that document or
        // collection and everything below it, as the emulator answers.
        if s.count > 6, s[3] == "databases", s[5] == "documents" {
            guard request.method == "DELETE" else { return methodNotAllowed(request) }
            let db = DatabaseID(project: s[2], database: s[4])
            let path = ResourcePath(Array(s[6...]))
            try path.validate(fullName: db.name(of: path), kind: path.isDocument ? "Document name" : "Collection name")
            try service.clear(db, under: path)
            return Response.json(.object([:]))
        }
        // `…/projects/{p}:action` (the project's rules: those of every database without rules of
        // its own) or `…/projects/{p}/databases/{d}:action` (that database's, as production deploys them).
        let perDatabase = s.count == 5 && s[3] == "databases" && !s[2].contains(":")
        guard s.count == 3 || perDatabase, let last = s.last, let colon = last.lastIndex(of: ":") else {
            return notFound(request)
        }
        let project = perDatabase ? s[2] : String(last[..<colon])
        let database = perDatabase ? String(last[..<colon]) : nil
        let action = String(last[last.index(after: colon)...])
        switch (request.method, action) {
        case ("PUT", "securityRules"), ("POST", "securityRules"):
            return try putRules(request, project: project, database: database)
        case ("GET", "securityRules"):
            return rulesSource(project: project, database: database)
        case ("GET", "ruleCoverage"):
            return coverage(project: project, database: database, html: false)
        case ("GET", "ruleCoverage.html"):
            return coverage(project: project, database: database, html: true)
        default:
            return notFound(request)
        }
    }

    /// `{"rules": {"files": [{"name": …, "content": …}]}}` → `{}`, or `{"issues": […]}` with the
    /// warnings. Rules that do not compile are not installed and answer 400 INVALID_ARGUMENT
    /// "Error compiling rules:" with a line `L<line>:<column> <description>` per error, as the
    /// official emulator answers (`@firebase/rules-unit-testing` throws on a failed load).
    private func putRules(_ request: Request, project: String, database: String?) throws(FirestoreError) -> Response {
        let json: JSON
        do {
            json = try JSON.parse(request.body)
        } catch {
            throw .invalidArgument("Invalid JSON payload received. \(error.reason) at byte \(error.offset).")
        }
        guard let files = json["rules"]?["files"]?.arrayValue, let file = files.first,
              let content = file["content"]?.stringValue
        else {
            throw .invalidArgument("Expected {\"rules\": {\"files\": [{\"name\": …, \"content\": …}]}}.")
        }
        let name = file["name"]?.stringValue ?? "firestore.rules"
        let issues = service.rules.install(project: project, database: database, source: content, fileName: name)
        let errors = issues.filter { $0.severity == .error }
        if !errors.isEmpty {
            throw .invalidArgument((["Error compiling rules:"] + errors.map { "L\($0.line):\($0.column) \($0.description)" })
                .joined(separator: "\n"))
        }
        if issues.isEmpty { return Response.json(.object([:])) }
        // A file sent without a name (as @firebase/rules-unit-testing sends it) is named in no
        // issue, as on the emulator.
        let named = file["name"]?.stringValue != nil
        let rendered: [JSON] = issues.map { issue in
            .object([
                "sourcePosition": .object(JSONObject((named ? [("fileName", .string(issue.fileName))] : []) + [
                    ("line", .int(Int64(issue.line))), ("column", .int(Int64(issue.column))),
                ])),
                "description": .string(issue.description),
                "severity": .string(issue.severity.rawValue),
            ])
        }
        return Response.json(.object(["issues": .array(rendered)]))
    }

    private func rulesSource(project: String, database: String?) -> Response {
        switch service.rules.active(for: project, database: database) {
        case .ruleset(let r, _):
            return Response.json(.object(["rules": .object(["files": .array([.object(["name": .string(r.fileName), "content": .string(r.source)])])])]))
        case .open, .broken:
            return Response.json(.object(["rules": .object(["files": .array([])])]))
        }
    }

    private func coverage(project: String, database: String?, html: Bool) -> Response {
        switch service.rules.active(for: project, database: database) {
        case .ruleset(let r, let coverage):
            if html { return Response.text(coverage.html(for: r), contentType: "text/html; charset=utf-8") }
            return Response.json(coverage.json(for: r))
        case .open:
            if html { return Response.text("<!doctype html><p>No security rules are loaded: every request is allowed.</p>", contentType: "text/html; charset=utf-8") }
            return Response.json(.object([:]))
        case .broken(let why):
            if html {
                let escaped = why.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                    .replacingOccurrences(of: ">", with: "&gt;")
                return Response.text("<!doctype html><p>\(escaped)</p>", contentType: "text/html; charset=utf-8")
            }
            return Response.json(.object(["error": .string(why)]))
        }
    }
}
