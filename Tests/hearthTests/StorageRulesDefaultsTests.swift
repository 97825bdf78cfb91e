import Foundation
import Testing
import HearthCore

/// Storage rules never fail open either: a missing `--storage-rules FILE` stops the start, and
/// without one the rules in force are the repository's `rules/storage.rules`, compiled in.
@Suite struct StorageRulesDefaultsTests {
    @Test func aMissingStorageRulesFileExits2() throws {
        let dir = HearthProcess.temporaryDirectory()
        let r = try HearthProcess.run(["start", "--in-memory", "--storage-rules", "gone.rules"] + ephemeralPorts, cwd: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("storage rules file gone.rules does not exist"), "stderr: \(r.stderr)")
    }

    @Test func shippedStorageRulesAreTheRepositoryFile() throws {
        let dir = HearthProcess.temporaryDirectory()
        let h = try HearthProcess.Running(args: ["--in-memory"] + ephemeralPorts, cwd: dir, readyPath: dir + "/ready.json")
        defer { _ = h.stop() }
        #expect(h.ready["storageRules"]?["mode"]?.stringValue == "shipped")
        #expect(h.ready["env"]?["STORAGE_EMULATOR_HOST"]?.stringValue == "http://127.0.0.1:\(h.port("storage"))")
        #expect(h.ready["env"]?["FIREBASE_STORAGE_EMULATOR_HOST"]?.stringValue == "127.0.0.1:\(h.port("storage"))")
        let shipped = try String(contentsOf: HearthProcess.repoRoot.appendingPathComponent("rules/storage.rules"), encoding: .utf8)
        let served = try #require(HearthProcess.get("http://127.0.0.1:\(h.port("hub"))/emulator/v1/projects/demo-hearth/storage:securityRules"))
        let content = try JSON.parse(served.1)["rules"]?["files"]?[0]?["content"]?.stringValue
        #expect(content == shipped, "Sources/hearth/ShippedStorageRules.swift differs from rules/storage.rules: copy the file into it")
        // Signed out, the shipped rules deny an upload.
        let upload = HearthProcess.request("POST", "http://127.0.0.1:\(h.port("storage"))/v0/b/demo-hearth.appspot.com/o?name=users%2Fu1%2Fa.png",
                                           body: "x", headers: ["Content-Type": "image/png"])
        #expect(upload?.0 == 403)
    }
}

@Suite struct StorageFirebaseJSONTests {
    @Test func firebaseJSONNamesTheStorageRules() throws {
        let dir = HearthProcess.temporaryDirectory()
        try Data(#"{"storage": {"rules": "gone.rules"}}"#.utf8)
            .write(to: URL(fileURLWithPath: dir + "/firebase.json"))
        let r = try HearthProcess.run(["start", "--in-memory"] + ephemeralPorts, cwd: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("storage rules file gone.rules does not exist"), "stderr: \(r.stderr)")
        try Data(#"{"storage": [{"target": "main", "rules": "also-gone.rules"}]}"#.utf8).write(to: URL(fileURLWithPath: dir + "/firebase.json"))
        let r2 = try HearthProcess.run(["start", "--in-memory"] + ephemeralPorts, cwd: dir)
        #expect(r2.stderr.contains("storage rules file also-gone.rules does not exist"), "stderr: \(r2.stderr)")
    }
}
