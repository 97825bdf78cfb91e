import Foundation
import Testing
import HearthCore

/// `hearth wait`: 0 once every listener of the ready file answers, 1 without a ready file, 64 + one bit
/// per silent listener otherwise.
@Suite struct WaitCommandTests {
    @Test func returns0OnceARunningHearthAnswers() throws {
        let dir = HearthProcess.temporaryDirectory()
        // Started in the background first, as a CI script does; wait polls for the ready file.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: HearthProcess.binary)
        p.arguments = ["start", "--in-memory", "--ready-file", dir + "/ready.json"] + ephemeralPorts
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { p.terminate(); p.waitUntilExit() }
        let r = try HearthProcess.run(["wait", "--ready-file", dir + "/ready.json", "--timeout", "20"], cwd: dir)
        #expect(r.status == 0, "stderr: \(r.stderr)")
    }

    @Test func noReadyFileExits1() throws {
        let dir = HearthProcess.temporaryDirectory()
        let r = try HearthProcess.run(["wait", "--timeout", "0.3"], cwd: dir)
        #expect(r.status == 1)
        #expect(r.stderr.contains("no ready file at emulator-data/hearth.ready.json"), "stderr: \(r.stderr)")
    }

    @Test func theStatusNamesTheListenersThatDoNotAnswer() throws {
        let dir = HearthProcess.temporaryDirectory()
        let h = try HearthProcess.Running(args: ["--in-memory"] + ephemeralPorts, cwd: dir, readyPath: dir + "/ready.json")
        defer { _ = h.stop() }
        // The live hub, and auth and s3 on ports nothing listens on.
        let dead1 = HearthProcess.freePort(), dead2 = HearthProcess.freePort()
        let fake = #"{"services": {"hub": {"host": "127.0.0.1", "port": \#(h.port("hub"))}, "auth": {"host": "127.0.0.1", "port": \#(dead1)}, "s3": {"host": "127.0.0.1", "port": \#(dead2)}}}"#
        try Data(fake.utf8).write(to: URL(fileURLWithPath: dir + "/fake.json"))
        let r = try HearthProcess.run(["wait", "--ready-file", "fake.json", "--timeout", "0.5"], cwd: dir)
        #expect(r.status == 64 + 2 + 8)
        #expect(r.stderr.contains("auth (127.0.0.1:\(dead1)) did not answer"), "stderr: \(r.stderr)")
        #expect(r.stderr.contains("s3 (127.0.0.1:\(dead2)) did not answer"))
        #expect(!r.stderr.contains("hub"))
    }

    @Test func badFlagsExit2() throws {
        #expect(try HearthProcess.run(["wait", "--timeout", "soon"]).status == 2)
        #expect(try HearthProcess.run(["wait", "--bogus"]).status == 2)
    }
}
