import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// Rules per database, as production deploys them: `PUT …/projects/{p}/databases/{d}:securityRules`
/// installs rules for that database; a database without rules of its own is judged by the project's
/// (fail closed), a project without rules of its own by the base rules.
@Suite struct PerDatabaseRulesTests {
    static let denyAll = RulesEnforcementTests.rules("match /{document=**} { allow read, write: if false; }")
    static let openPub = RulesEnforcementTests.rules("match /pub/{id} { allow read, write: if true; }")

    static func put(_ h: TestHarness, _ path: String, _ source: String) -> (status: Int, json: JSON) {
        let body: JSON = .object(["rules": .object(["files": .array([.object(["name": .string("x.rules"), "content": .string(source)])])])])
        let r = h.call("PUT", "/emulator/v1/projects/\(path):securityRules", body, as: .anonymous)
        return (r.status, r.json)
    }

    static func source(_ a: RulesManager.Active) -> String? {
        if case .ruleset(let r, _) = a { return r.source }
        return nil
    }

    static func isOpen(_ a: RulesManager.Active) -> Bool {
        if case .open = a { return true }
        return false
    }

    static func doc(_ h: TestHarness, _ database: String, _ path: String) -> String {
        "/v1/projects/\(h.project)/databases/\(database)/documents\(path)"
    }

    static let body: JSON = .object(["fields": .object(["a": str("b")])])

    @Test func lookupIsDatabaseThenProjectThenBase() throws {
        let h = try TestHarness()  // no base rules: open
        let rules = h.service.rules
        #expect(rules.install(project: "p", database: nil, source: Self.denyAll, fileName: "p.rules").isEmpty)
        #expect(rules.install(project: "p", database: "other", source: Self.openPub, fileName: "o.rules").isEmpty)
        #expect(Self.source(rules.active(for: "p", database: "other")) == Self.openPub)
        #expect(Self.source(rules.active(for: "p", database: "(default)")) == Self.denyAll)
        #expect(Self.source(rules.active(for: "p", database: "third")) == Self.denyAll)
        #expect(Self.source(rules.active(for: "p", database: nil)) == Self.denyAll)
        // Another project's database of the same name keeps the base rules.
        #expect(Self.isOpen(rules.active(for: "q", database: "other")))
        // Rules that do not compile install nothing.
        #expect(!rules.install(project: "p", database: "other", source: "rules_version = '2'; nope", fileName: "bad").isEmpty)
        #expect(Self.source(rules.active(for: "p", database: "other")) == Self.openPub)
        rules.resetInstalled()
        #expect(Self.isOpen(rules.active(for: "p", database: "other")))
        #expect(Self.isOpen(rules.active(for: "p", database: nil)))
    }

    @Test func requestsOnTwoDatabasesAreJudgedByTheirOwnRules() throws {
        let h = try TestHarness()
        #expect(Self.put(h, h.project, Self.denyAll).status == 200)
        let put = Self.put(h, "\(h.project)/databases/other", Self.openPub)
        #expect(put.status == 200 && put.json == .object([:]), "\(put.json)")

        #expect(h.call("PATCH", Self.doc(h, "other", "/pub/a"), Self.body, as: .user("u1")).status == 200)
        #expect(h.call("GET", Self.doc(h, "other", "/pub/a"), as: .anonymous).status == 200)
        // Outside what the database's rules allow: denied by them, not let through by the project's.
        #expect(h.call("PATCH", Self.doc(h, "other", "/priv/a"), Self.body, as: .user("u1")).status == 403)
        // The default database and a named one without rules of its own: the project's rules.
        #expect(h.call("PATCH", Self.doc(h, "(default)", "/pub/a"), Self.body, as: .user("u1")).status == 403)
        let third = h.call("PATCH", Self.doc(h, "third", "/pub/a"), Self.body, as: .user("u1"))
        #expect(third.status == 403 && third.json["error"]?["status"]?.stringValue == "PERMISSION_DENIED")

        // GET of each path answers its own rules.
        let own = h.call("GET", "/emulator/v1/projects/\(h.project)/databases/other:securityRules", as: .anonymous)
        #expect(own.json["rules"]?["files"]?.arrayValue?.first?["content"]?.stringValue == Self.openPub)
        let project = h.call("GET", "/emulator/v1/projects/\(h.project):securityRules", as: .anonymous)
        #expect(project.json["rules"]?["files"]?.arrayValue?.first?["content"]?.stringValue == Self.denyAll)
        // Coverage is kept per installed rules: the named database's report counts its decisions.
        let coverage = h.call("GET", "/emulator/v1/projects/\(h.project)/databases/other:ruleCoverage", as: .anonymous)
        #expect(coverage.status == 200 && coverage.json["report"] != nil, "\(coverage.json)")

        // Rules that do not compile: the project-wide PUT's 400, the previous rules stay.
        let bad = Self.put(h, "\(h.project)/databases/other", "rules_version = '2'; service cloud.firestore { nope }")
        #expect(bad.status == 400 && bad.json["error"]?["status"]?.stringValue == "INVALID_ARGUMENT", "\(bad.json)")
        #expect(h.call("GET", Self.doc(h, "other", "/pub/a"), as: .anonymous).status == 200)

        // The admin reset drops the database's rules with the project's: back to the base (open).
        try h.service.reset()
        #expect(h.call("PATCH", Self.doc(h, "third", "/pub/a"), Self.body, as: .user("u1")).status == 200)
        let after = h.call("GET", "/emulator/v1/projects/\(h.project)/databases/other:securityRules", as: .anonymous)
        #expect(after.json["rules"]?["files"]?.arrayValue?.isEmpty == true)
    }

    @Test func aMalformedPerDatabasePathIsNotFound() throws {
        let h = try TestHarness()
        #expect(h.call("PUT", "/emulator/v1/projects/\(h.project)/databases/other", .object([:]), as: .anonymous).status == 404)
        #expect(h.call("PUT", "/emulator/v1/projects/\(h.project):x/databases/other:securityRules", .object([:]), as: .anonymous).status == 404)
    }

    @Test func aNewRulesFileDropsTheDefaultProjectsDatabaseRules() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("perdb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("firestore.rules").path
        try Self.denyAll.write(toFile: file, atomically: true, encoding: .utf8)
        let h = try TestHarness(rulesPath: file)
        let rules = h.service.rules
        _ = rules.install(project: h.project, database: "other", source: Self.openPub, fileName: "o.rules")
        _ = rules.install(project: "elsewhere", database: "other", source: Self.openPub, fileName: "o.rules")
        #expect(Self.source(rules.active(for: h.project, database: "other")) == Self.openPub)
        let replacement = Self.openPub + "\n// edited\n"
        try replacement.write(toFile: file, atomically: true, encoding: .utf8)
        rules.poll()
        #expect(Self.source(rules.active(for: h.project, database: "other")) == replacement)
        // Another project's database rules are not the file's to replace.
        #expect(Self.source(rules.active(for: "elsewhere", database: "other")) == Self.openPub)
    }
}
