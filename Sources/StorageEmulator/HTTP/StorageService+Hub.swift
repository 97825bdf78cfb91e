import HearthCore
import HearthHTTP
import SecurityRules

extension StorageService {
    /// The hub's Storage routes: reset, rules loading, rules coverage.
    public func registerHubRoutes(_ hub: Router) {
        hub.delete("/emulator/v1/storage") { [self] _, _ in
            do {
                try reset()
                return .json(.object([:]))
            } catch {
                logger.error("storage: reset failed", [("error", .string("\(error)"))])
                return Self.hubError(500, "INTERNAL", "reset failed: \(error)")
            }
        }
        // Loads storage rules, shaped as the Firebase emulator's `PUT …:securityRules`
        // (`{"rules": {"files": [{"name", "content"}]}}`); a source that does not compile changes nothing.
        hub.put("/emulator/v1/projects/{project}/storage:securityRules") { [self] request, _ in
            let body: JSON
            do { body = try JSON.parse(request.body) } catch {
                return Self.hubError(400, "INVALID_ARGUMENT", "Invalid JSON payload received. \(error)")
            }
            guard let file = body["rules"]?["files"]?[0], let content = file["content"]?.stringValue else {
                return Self.hubError(400, "INVALID_ARGUMENT", "rules.files[0].content is required")
            }
            let issues = rules.install(source: content, fileName: file["name"]?.stringValue ?? "storage.rules")
            if issues.contains(where: { $0.severity == .error }) {
                return Self.hubError(400, "INVALID_ARGUMENT", issues.map(\.description).joined(separator: "; "))
            }
            return .json(.object([:]))
        }
        hub.get("/emulator/v1/projects/{project}/storage:securityRules") { [self] _, _ in
            guard let (ruleset, _) = rules.coverage() else {
                return Self.hubError(400, "FAILED_PRECONDITION", "no storage rules are loaded")
            }
            return .json(.object(["rules": .object(["files": .array([
                .object(["name": .string(ruleset.fileName), "content": .string(ruleset.source)]),
            ])])]))
        }
        hub.get("/emulator/v1/storage/coverage") { [self] request, _ in
            guard let (ruleset, coverage) = rules.coverage() else {
                return Self.hubError(400, "FAILED_PRECONDITION", "no storage rules are loaded")
            }
            if request.query("format") == "html" {
                return .text(coverage.html(for: ruleset), contentType: "text/html; charset=utf-8")
            }
            return .json(coverage.json(for: ruleset))
        }
    }

    static func hubError(_ status: Int, _ code: String, _ message: String) -> Response {
        .json(.object(["error": .object(["code": .int(Int64(status)), "status": .string(code), "message": .string(message)])]), status: status)
    }
}
