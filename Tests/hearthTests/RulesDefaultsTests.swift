import Foundation
import Testing
import HearthCore

/// Rules never fail open: a missing `--rules FILE` stops the start, no file means the shipped rules,
/// and allow-all needs `--rules open`, which every log line then repeats.
@Suite struct RulesDefaultsTests {
    /// An unauthenticated write the shipped rules deny (their catch-all denies unmatched paths).
    static func anonymousWrite(_ h: HearthProcess.Running) -> Int? {
        let url = "http://127.0.0.1:\(h.port("firestore"))/v1/projects/demo-hearth/databases/(default)/documents/anything/doc1"
        return HearthProcess.request("PATCH", url, body: #"{"fields": {"a": {"integerValue": "1"}}}"#,
                                     headers: ["Content-Type": "application/json"])?.0
    }

    @Test(arguments: ["/nonexistent/firestore.rules", "missing.rules", "."])
    func aMissingRulesFileExits2(_ path: String) throws {
        let dir = HearthProcess.temporaryDirectory()
        let r = try HearthProcess.run(["start", "--in-memory", "--rules", path] + ephemeralPorts, cwd: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("rules file \(path) does not exist"), "stderr: \(r.stderr)")
    }

    @Test func firebaseJSONNamingAMissingFileExits2() throws {
        let dir = HearthProcess.temporaryDirectory()
        try Data(#"{"firestore": {"rules": "gone.rules"}}"#.utf8).write(to: URL(fileURLWithPath: dir + "/firebase.json"))
        let r = try HearthProcess.run(["start", "--in-memory"] + ephemeralPorts, cwd: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("rules file gone.rules does not exist"), "stderr: \(r.stderr)")
    }

    @Test func withoutARulesFileTheShippedRulesAreEnforced() throws {
        let dir = HearthProcess.temporaryDirectory()
        let h = try HearthProcess.Running(args: ["--in-memory"] + ephemeralPorts, cwd: dir, readyPath: dir + "/ready.json")
        defer { _ = h.stop() }
        #expect(h.ready["rules"]?["mode"]?.stringValue == "shipped")
        #expect(Self.anonymousWrite(h) == 403)
        // The rules in force are the repository's file, byte for byte (ShippedRules.swift is a copy).
        let shipped = try String(contentsOf: HearthProcess.repoRoot.appendingPathComponent("rules/firestore.rules"), encoding: .utf8)
        let served = try #require(HearthProcess.get("http://127.0.0.1:\(h.port("firestore"))/emulator/v1/projects/demo-hearth:securityRules"))
        let content = try JSON.parse(served.1)["rules"]?["files"]?[0]?["content"]?.stringValue
        #expect(content == shipped, "Sources/hearth/ShippedRules.swift differs from rules/firestore.rules: copy the file into it")
        _ = h.stop()
        let banner = String(decoding: h.stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(banner.contains("hearth: rules     shipped rules built into hearth"), "stdout: \(banner)")
    }

    @Test func rulesFileInTheWorkingDirectoryIsUsed() throws {
        let dir = HearthProcess.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir + "/rules", withIntermediateDirectories: true)
        try Data("rules_version = '2';\nservice cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow write: if true; } } }\n".utf8)
            .write(to: URL(fileURLWithPath: dir + "/rules/firestore.rules"))
        let h = try HearthProcess.Running(args: ["--in-memory"] + ephemeralPorts, cwd: dir, readyPath: dir + "/ready.json")
        defer { _ = h.stop() }
        #expect(h.ready["rules"]?["mode"]?.stringValue == "file")
        #expect(h.ready["rules"]?["path"]?.stringValue?.hasSuffix("/rules/firestore.rules") == true)
        #expect(Self.anonymousWrite(h) == 200)
    }

    @Test func openIsExplicitAndOnEveryLogLine() throws {
        let dir = HearthProcess.temporaryDirectory()
        let h = try HearthProcess.Running(args: ["--in-memory", "--rules", "open"] + ephemeralPorts, cwd: dir,
                                          readyPath: dir + "/ready.json", stderrPath: dir + "/stderr.log")
        #expect(h.ready["rules"]?["mode"]?.stringValue == "open")
        #expect(Self.anonymousWrite(h) == 200)
        #expect(HearthProcess.get("http://127.0.0.1:\(h.port("hub"))/healthz")?.0 == 200)
        #expect(h.stop() == 0)
        let log = try String(contentsOfFile: dir + "/stderr.log", encoding: .utf8)
        #expect(log.contains("WARNING --rules open: Firestore security rules are OFF"), "stderr: \(log)")
        let lines = log.split(separator: "\n")
        #expect(lines.contains { $0.contains("firestore PATCH") })
        for line in lines { #expect(line.hasSuffix("rules=OPEN"), "log line without rules=OPEN: \(line)") }
        let banner = String(decoding: h.stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(banner.contains("OPEN: security rules are OFF"))
    }
}
