import Testing
@testable import HearthHTTP

@Suite struct RouterTests {
    static let router: Router = {
        let r = Router()
        r.post("/v1/projects/{project}/accounts:lookup") { _, p in .text("lookup \(p["project"]!)") }
        r.put("/emulator/v1/projects/{project}:securityRules") { _, p in .text("rules \(p["project"]!)") }
        r.get("/files/{rest...}") { _, p in .text("rest \(p["rest"]!)") }
        r.get("/healthz") { _, _ in .text("ok") }
        return r
    }()

    @Test(arguments: [
        ("POST", "/v1/projects/p1/accounts:lookup", 200, "lookup p1"),
        ("PUT", "/emulator/v1/projects/demo:securityRules", 200, "rules demo"),
        ("GET", "/files/a/b%20c/d", 200, "rest a/b c/d"),
        ("GET", "/files/", 200, "rest "),
        ("HEAD", "/healthz", 200, "ok"),
        ("POST", "/healthz", 405, "Method Not Allowed"),
        ("GET", "/nope", 404, "Not Found"),
        ("PUT", "/emulator/v1/projects/:securityRules", 404, "Not Found"),
    ])
    func routes(method: String, target: String, status: Int, body: String) {
        let r = Self.router.respond(to: Request(method: method, target: target))
        #expect(r.status == status)
        #expect(String(decoding: r.bodyBytes ?? [], as: UTF8.self) == body)
    }
}
