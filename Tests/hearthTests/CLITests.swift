import Foundation
import Testing
import HearthCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every listener on an ephemeral port, so tests run in parallel.
let ephemeralPorts = ["--hub-port", "0", "--auth-port", "0", "--firestore-port", "0", "--s3-port", "0", "--api-port", "0", "--ui-port", "0", "--storage-port", "0"]

@Suite struct CLITests {
    @Test func helpAndVersion() throws {
        let v = try HearthProcess.run(["--version"])
        #expect(v.status == 0 && v.stdout.hasPrefix("hearth "))
        let h = try HearthProcess.run(["--help"])
        #expect(h.status == 0 && h.stdout.contains("hearth start"))
        for command in ["hearth start", "hearth rules check", "hearth rules test", "hearth rules bench", "hearth wait", "hearth cert"] {
            #expect(h.stdout.contains(command), "--help does not list \(command)")
        }
        let s = try HearthProcess.run(["start", "--help"])
        #expect(s.status == 0)
        for flag in ["--host", "--public-host", "--project", "--data-dir", "--in-memory", "--rules", "--auth-port", "--firestore-port", "--s3-port",
                     "--api-port", "--hub-port", "--s3-access-key", "--s3-secret-key", "--s3-region", "--seed", "--clock",
                     "--log-format", "--quiet", "--ready-file", "--config", "--storage-port", "--storage-rules"] {
            #expect(s.stdout.contains(flag), "start --help does not list \(flag)")
        }
    }

    @Test(arguments: [
        (["start", "--bogus"], "unknown flag '--bogus'"),
        (["start", "--hub-port", "seventy"], "--hub-port must be a port number"),
        (["start", "--clock", "yesterday"], "--clock must be an RFC 3339 instant"),
        (["start", "--log-format", "xml"], "--log-format must be text or json"),
        (["start", "--seed"], "--seed needs a value"),
        (["start", "--public-host", "http://x/"], "--public-host must be a host name or IP address"),
        (["start", "--request-log", "0"], "--request-log must be a number of entries 1-1000000"),
        (["start", "--config", "/nonexistent/hearth.json"], "cannot read config file"),
        (["frobnicate"], "unknown command 'frobnicate'"),
    ])
    func badArgumentsExit2WithOneClearLine(args: [String], message: String) throws {
        let r = try HearthProcess.run(args)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "stderr was: \(r.stderr)")
    }

    @Test func startsPrintsEnvironmentAndStopsCleanly() throws {
        let dir = HearthProcess.temporaryDirectory()
        let h = try HearthProcess.Running(args: ["--data-dir", dir + "/data", "--seed", "3"] + ephemeralPorts,
                                          cwd: dir, readyPath: dir + "/ready.json")
        let hub = h.port("hub")
        #expect(hub > 0)
        #expect(HearthProcess.get("http://127.0.0.1:\(hub)/healthz")?.0 == 200)
        #expect(h.ready["env"]?["GCLOUD_PROJECT"]?.stringValue == "demo-hearth")
        #expect(h.ready["env"]?["AWS_ACCESS_KEY_ID"]?.stringValue == "test")
        #expect(h.stop() == 0)
        let printed = String(decoding: h.stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(printed.contains("export GCLOUD_PROJECT=demo-hearth"))
        #expect(printed.contains("hearth: hub"))
        #expect(FileManager.default.fileExists(atPath: dir + "/data/hearth.sqlite"))
        #expect(FileManager.default.fileExists(atPath: dir + "/data/firestore.sqlite"))
    }

    @Test func portInUseExits2() throws {
        let dir = HearthProcess.temporaryDirectory()
        let first = try HearthProcess.Running(args: ["--in-memory"] + ephemeralPorts, cwd: dir, readyPath: dir + "/a.json")
        defer { _ = first.stop() }
        let hub = first.port("hub")
        let r = try HearthProcess.run(["start", "--in-memory", "--hub-port", "\(hub)", "--auth-port", "0", "--firestore-port", "0",
                                       "--s3-port", "0", "--api-port", "0", "--ui-port", "0", "--storage-port", "0"], cwd: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("port \(hub) on 127.0.0.1 is already in use"), "stderr: \(r.stderr)")
    }

    @Test func secondInstanceOnOneDataDirectoryExits2NamingThePid() throws {
        let dir = HearthProcess.temporaryDirectory()
        let first = try HearthProcess.Running(args: ["--data-dir", dir + "/data"] + ephemeralPorts, cwd: dir, readyPath: dir + "/data/hearth.ready.json")
        let ready = try #require(FileManager.default.contents(atPath: dir + "/data/hearth.ready.json"))
        let second = try HearthProcess.run(["start", "--data-dir", dir + "/data"] + ephemeralPorts, cwd: dir)
        #expect(second.status == 2)
        #expect(second.stderr.contains("data directory \(dir)/data is in use by hearth pid \(first.process.processIdentifier)"), "stderr: \(second.stderr)")
        // The first one's ready file is untouched, and the directory is free again once it stops.
        #expect(FileManager.default.contents(atPath: dir + "/data/hearth.ready.json") == ready)
        #expect(first.stop() == 0)
        let third = try HearthProcess.Running(args: ["--data-dir", dir + "/data"] + ephemeralPorts, cwd: dir, readyPath: dir + "/r3.json")
        #expect(third.stop() == 0)
    }

    @Test func aKilledInstanceLeavesNoStaleLock() throws {
        let dir = HearthProcess.temporaryDirectory()
        let first = try HearthProcess.Running(args: ["--data-dir", dir + "/data"] + ephemeralPorts, cwd: dir, readyPath: dir + "/r1.json")
        _ = first.stop(signal: SIGKILL)
        let second = try HearthProcess.Running(args: ["--data-dir", dir + "/data"] + ephemeralPorts, cwd: dir, readyPath: dir + "/r2.json")
        #expect(second.stop() == 0)
    }

    @Test func foreignDatabaseExits2AndIsNotTouched() throws {
        let dir = HearthProcess.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir + "/data", withIntermediateDirectories: true)
        let junk = Data(repeating: 0x5A, count: 8192)
        try junk.write(to: URL(fileURLWithPath: dir + "/data/hearth.sqlite"))
        let r = try HearthProcess.run(["start", "--data-dir", dir + "/data"] + ephemeralPorts, cwd: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("not a Hearth database"), "stderr: \(r.stderr)")
        #expect(FileManager.default.contents(atPath: dir + "/data/hearth.sqlite") == junk)
    }

    @Test func unwritableDataDirectoryExits2() throws {
        let dir = HearthProcess.temporaryDirectory()
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/file"))
        let r = try HearthProcess.run(["start", "--data-dir", dir + "/file"] + ephemeralPorts, cwd: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("is a file, not a directory"), "stderr: \(r.stderr)")
    }

    @Test func configFileAndFlagsAndFirebaseJSONCombine() throws {
        let dir = HearthProcess.temporaryDirectory()
        let authPort = HearthProcess.freePort()
        let hubPort = HearthProcess.freePort()
        try Data(#"{"emulators": {"auth": {"port": \#(authPort)}, "firestore": {"port": 0}}, "firestore": {"rules": "custom.rules"}}"#.utf8)
            .write(to: URL(fileURLWithPath: dir + "/firebase.json"))
        try Data(#"{"project": "from-config", "hubPort": 1, "s3Port": 0, "apiPort": 0, "inMemory": true}"#.utf8)
            .write(to: URL(fileURLWithPath: dir + "/hearth.json"))
        try Data("rules_version = '2';\nservice cloud.firestore { match /databases/{db}/documents { } }\n".utf8)
            .write(to: URL(fileURLWithPath: dir + "/custom.rules"))
        // The flag beats the config file's hubPort; the config beats the default project.
        let h = try HearthProcess.Running(args: ["--config", "hearth.json", "--hub-port", "\(hubPort)", "--ui-port", "0"], cwd: dir, readyPath: dir + "/ready.json")
        defer { _ = h.stop() }
        #expect(h.port("hub") == hubPort)
        #expect(h.ready["project"]?.stringValue == "from-config")
        if h.ready["services"]?["auth"] != nil {
            #expect(h.port("auth") == authPort)
        }
        #expect(h.ready["dataDir"] == .null)
    }

    @Test func jsonLogLinesCarryTheRequestAndNoSecrets() throws {
        let dir = HearthProcess.temporaryDirectory()
        let h = try HearthProcess.Running(args: ["--in-memory", "--log-format", "json"] + ephemeralPorts, cwd: dir,
                                          readyPath: dir + "/ready.json", stderrPath: dir + "/stderr.log")
        let hub = h.port("hub")
        #expect(HearthProcess.get("http://127.0.0.1:\(hub)/healthz?X-Amz-Signature=topsecret")?.0 == 200)
        #expect(HearthProcess.get("http://127.0.0.1:\(hub)/nowhere")?.0 == 404)
        #expect(h.stop() == 0)
        let text = try String(contentsOfFile: dir + "/stderr.log", encoding: .utf8)
        #expect(!text.contains("topsecret"))
        let lines = try text.split(separator: "\n").map { try JSON.parse(String($0)) }
        let health = try #require(lines.first { $0["path"]?.stringValue == "/healthz" })
        #expect(health["service"]?.stringValue == "hub")
        #expect(health["method"]?.stringValue == "GET")
        #expect(health["status"]?.intValue == 200)
        #expect(health["ms"]?.doubleValue != nil)
        #expect(health["requestId"]?.stringValue?.count == 16)
        #expect(lines.contains { $0["path"]?.stringValue == "/nowhere" && $0["status"]?.intValue == 404 })
    }

    /// iOS refuses server certificates without extendedKeyUsage serverAuth: the DER must carry the
    /// extension (OID 2.5.29.37) holding id-kp-serverAuth (1.3.6.1.5.5.7.3.1).
    @Test func certHasServerAuthExtendedKeyUsage() throws {
        let dir = HearthProcess.temporaryDirectory()
        let r = try HearthProcess.run(["cert", "--out-dir", dir, "--name", "192.168.1.20"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let pem = try String(contentsOfFile: dir + "/hearth-cert.pem", encoding: .utf8)
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: base64))
        let extKeyUsage = Data([0x06, 0x03, 0x55, 0x1D, 0x25])
        let serverAuth = Data([0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01])
        #expect(der.range(of: extKeyUsage) != nil)
        #expect(der.range(of: serverAuth) != nil)
        #expect(der.range(of: Data([192, 168, 1, 20])) != nil)   // the IP SAN
    }

    @Test func unknownConfigKeyIsAnError() throws {
        let dir = HearthProcess.temporaryDirectory()
        try Data(#"{"hubPrt": 1}"#.utf8).write(to: URL(fileURLWithPath: dir + "/c.json"))
        let r = try HearthProcess.run(["start", "--config", "c.json"], cwd: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("unknown setting 'hubPrt'"))
    }
}
