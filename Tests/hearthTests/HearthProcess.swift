import Foundation
import HearthCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs the built `hearth` binary as a child process, as a user would.
enum HearthProcess {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var binary: String {
        if let env = ProcessInfo.processInfo.environment["HEARTH_BIN"] { return env }
        return repoRoot.appendingPathComponent(".build/debug/hearth").path
    }

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `hearth args…` to completion (for commands that exit by themselves).
    static func run(_ args: [String], cwd: String? = nil, timeout: TimeInterval = 30) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = args
        if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let deadline = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        return Result(status: p.terminationStatus,
                      stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
                      stderr: String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    /// A running `hearth start`, stopped with SIGTERM (or SIGKILL) by the caller.
    final class Running {
        let process: Process
        let ready: JSON
        let readyPath: String
        let stdout: Pipe

        init(args: [String], cwd: String, readyPath: String, stderrPath: String? = nil, timeout: TimeInterval = 30) throws {
            process = Process()
            process.executableURL = URL(fileURLWithPath: HearthProcess.binary)
            process.arguments = ["start", "--ready-file", readyPath] + args
            process.currentDirectoryURL = URL(fileURLWithPath: cwd)
            stdout = Pipe()
            process.standardOutput = stdout
            if let stderrPath {
                FileManager.default.createFile(atPath: stderrPath, contents: nil)
                process.standardError = FileHandle(forWritingAtPath: stderrPath)
            } else {
                process.standardError = FileHandle.nullDevice
            }
            self.readyPath = readyPath
            try process.run()
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                if let data = FileManager.default.contents(atPath: readyPath), let json = try? JSON.parse(data) {
                    ready = json
                    return
                }
                guard process.isRunning, Date() < deadline else {
                    process.terminate()
                    throw CocoaError(.fileReadNoSuchFile)
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }

        func port(_ service: String) -> Int { Int(ready["services"]?[service]?["port"]?.intValue ?? 0) }

        func stop(signal: Int32 = SIGTERM) -> Int32 {
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    static func temporaryDirectory() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-cli-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A free TCP port on 127.0.0.1 (bound then released).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func get(_ url: String) -> (Int, String)? { request("GET", url) }

    /// One HTTP exchange; nil when nothing answered.
    static func request(_ method: String, _ url: String, body: String? = nil, headers: [String: String] = [:]) -> (Int, String)? {
        var req = URLRequest(url: URL(string: url)!)
        req.httpMethod = method
        req.httpBody = body.map { Data($0.utf8) }
        for (k, v) in headers { req.setValue(v, forHTTPHeaderField: k) }
        let sem = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Int, String)?
        URLSession.shared.dataTask(with: req) { data, response, _ in
            if let http = response as? HTTPURLResponse { result = (http.statusCode, String(decoding: data ?? Data(), as: UTF8.self)) }
            sem.signal()
        }.resume()
        sem.wait()
        return result
    }
}
