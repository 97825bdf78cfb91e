#if os(macOS) || os(Linux)
import Foundation
import Testing
@testable import HearthClient

/// A stopped `HearthTestServer` lets go of its child's `Process`. Before, every stopped server left
/// its Process (and the run-loop source, log handle and arguments it holds) behind: found by
/// LeakSanitizer in `make test-asan` (docs/reliability.md). A shell script stands in for hearth
/// here, so the test runs without a built binary.
@Suite struct HearthTestServerLifetimeTests {
    /// Writes the ready file it is given (renamed into place, as hearth does), then waits until
    /// SIGTERM ends it or the test process is gone (a fixed sleep can run out first: a test's task
    /// may wait a minute for a thread when the whole suite runs under a sanitizer).
    static let fakeHearth = """
    #!/bin/sh
    while [ $# -gt 0 ]; do
      if [ "$1" = --ready-file ]; then ready=$2; fi
      shift
    done
    printf '%s' '{"services": {"hub": {"host": "127.0.0.1", "port": 9, "url": "http://127.0.0.1:9"}}}' > "$ready.tmp"
    mv "$ready.tmp" "$ready"
    while kill -0 "$PPID" 2>/dev/null; do sleep 1; done
    """

    @Test func stopFreesTheChildProcess() async throws {
        let dir = (NSTemporaryDirectory() as NSString).appendingPathComponent("fake-hearth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = (dir as NSString).appendingPathComponent("hearth")
        #expect(FileManager.default.createFile(atPath: script, contents: Data(Self.fakeHearth.utf8), attributes: [.posixPermissions: 0o755]))

        let server = try await HearthTestServer.start(HearthTestServer.Options(binary: script))
        weak var process = server.runningProcess
        #expect(process?.isRunning == true)
        server.stop()
        #expect(server.runningProcess == nil)
        // Foundation's manager thread lets go of its own reference once it has reaped the child;
        // give it a moment.
        let deadline = Date().addingTimeInterval(30)
        while process != nil && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        #expect(process == nil, "the stopped server's Process is still alive")
    }
}
#endif
