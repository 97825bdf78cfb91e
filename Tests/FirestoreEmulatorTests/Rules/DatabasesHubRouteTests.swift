import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import FirestoreEmulator

/// The hub's `GET /emulator/v1/firestore/projects/{p}/databases`, which the web UI's rules view and
/// data browser read: a project's databases and whose rules judge each.
@Suite struct DatabasesHubRouteTests {
    static func databases(_ h: TestHarness, _ project: String? = nil) -> (status: Int, list: [JSON]) {
        let hub = Router()
        h.service.registerHubRoutes(hub)
        let r = hub.respond(to: Request(method: "GET", target: "/emulator/v1/firestore/projects/\(project ?? h.project)/databases"))
        let json = (try? JSON.parse(r.bodyBytes ?? [])) ?? .null
        return (r.status, json["databases"]?.arrayValue ?? [])
    }

    static func entry(_ list: [JSON], _ id: String) -> JSON? { list.first { $0["database"]?.stringValue == id } }

    @Test func listsWrittenAndRuledDatabasesWithWhoseRulesJudgeThem() throws {
        let h = try TestHarness(rules: PerDatabaseRulesTests.denyAll)  // configured (shipped-like) base rules
        // Nothing written, no rules of its own: (default) alone, judged by the configured rules.
        var r = Self.databases(h)
        #expect(r.status == 200)
        #expect(r.list.map { $0["database"]?.stringValue } == ["(default)"])
        #expect(r.list.first?["rules"]?["from"]?.stringValue == "configured")
        #expect(r.list.first?["rules"]?["state"]?.stringValue == "loaded")
        #expect(r.list.first?["hasDocuments"] == .bool(false))

        // A document in `written`, rules of its own for `ruled`, and the project's rules.
        #expect(h.call("PATCH", PerDatabaseRulesTests.doc(h, "written", "/c/d"), PerDatabaseRulesTests.body).status == 200)
        #expect(PerDatabaseRulesTests.put(h, "\(h.project)/databases/ruled", PerDatabaseRulesTests.openPub).status == 200)
        #expect(PerDatabaseRulesTests.put(h, h.project, PerDatabaseRulesTests.openPub).status == 200)
        // Another project's database is not listed.
        #expect(h.call("PATCH", "/v1/projects/elsewhere/databases/theirs/documents/c/d", PerDatabaseRulesTests.body).status == 200)
        r = Self.databases(h)
        #expect(r.list.map { $0["database"]?.stringValue } == ["(default)", "ruled", "written"])
        let ruled = try #require(Self.entry(r.list, "ruled"))
        #expect(ruled["ownRules"] == .bool(true) && ruled["hasDocuments"] == .bool(false))
        #expect(ruled["rules"]?["from"]?.stringValue == "database" && ruled["rules"]?["fileName"]?.stringValue == "x.rules")
        let written = try #require(Self.entry(r.list, "written"))
        #expect(written["ownRules"] == .bool(false) && written["hasDocuments"] == .bool(true))
        #expect(written["rules"]?["from"]?.stringValue == "project")
        #expect(written["name"]?.stringValue == "projects/\(h.project)/databases/written")
        #expect(Self.entry(r.list, "(default)")?["rules"]?["from"]?.stringValue == "project")

        // Rules that do not compile are refused: nothing changes, `written` still has none of its own.
        #expect(PerDatabaseRulesTests.put(h, "\(h.project)/databases/written", "rules_version = '2'; nope").status == 400)
        #expect(Self.entry(Self.databases(h).list, "written")?["ownRules"] == .bool(false))

        // A cleared database is gone (unless it has rules); the admin reset drops the installed rules.
        #expect(h.call("DELETE", "/emulator/v1/projects/\(h.project)/databases/written/documents", as: .anonymous).status == 200)
        #expect(Self.databases(h).list.map { $0["database"]?.stringValue } == ["(default)", "ruled"])
        try h.service.reset()
        r = Self.databases(h)
        #expect(r.list.map { $0["database"]?.stringValue } == ["(default)"])
        #expect(r.list.first?["rules"]?["from"]?.stringValue == "configured")
        // The other project's list has its own database only.
        #expect(Self.databases(h, "elsewhere").list.map { $0["database"]?.stringValue } == ["(default)"])
    }

    @Test func saysWhenTheRulesComeFromTheFileOrNowhere() throws {
        let open = try TestHarness()
        let none = try #require(Self.databases(open).list.first?["rules"])
        #expect(none["from"]?.stringValue == "none" && none["state"]?.stringValue == "open")

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dbroute-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("firestore.rules").path
        // A file that is missing at start: every request is denied, and the UI says why.
        let missing = try TestHarness(rulesPath: file)
        let denied = try #require(Self.databases(missing).list.first?["rules"])
        #expect(denied["from"]?.stringValue == "file" && denied["state"]?.stringValue == "denied")
        #expect(denied["message"]?.stringValue?.contains("does not exist") == true)
        #expect(denied["path"]?.stringValue == file)

        try PerDatabaseRulesTests.denyAll.write(toFile: file, atomically: true, encoding: .utf8)
        let h = try TestHarness(rulesPath: file)
        let loaded = try #require(Self.databases(h).list.first?["rules"])
        #expect(loaded["from"]?.stringValue == "file" && loaded["state"]?.stringValue == "loaded")
        #expect(loaded["fileName"]?.stringValue == "firestore.rules" && loaded["path"]?.stringValue == file)
    }
}
