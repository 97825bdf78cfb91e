import Foundation
import HearthCore
#if canImport(Glibc)
import Glibc
#endif

/// `hearth wait [--ready-file PATH] [--timeout S]`: returns once a started hearth's ready file exists
/// and every listener it names accepts connections, for CI scripts that start hearth in the background.
///
/// Exit status: 0 when all answer; 1 when no ready file appeared in time; otherwise 64 plus one bit
/// per listener that did not answer (hub 1, auth 2, firestore 4, s3 8, api 16, ui 32, storage 64), each also named on
/// stderr. A TCP connect is the probe: the listener is accepting, which is what a test needs
/// before its first request (and needs no HTTP client in the binary).
enum WaitCommand {
    static let usage = """
    Usage: hearth wait [--ready-file PATH] [--timeout SECONDS]
    Waits until the ready file (default emulator-data/hearth.ready.json) exists and every listener it
    names accepts connections (default timeout 30 s). Exit 0: all up; 1: no ready file; 64 + bits for
    the listeners that did not answer (hub 1, auth 2, firestore 4, s3 8, api 16, ui 32, storage 64).

    """

    /// The exit-status bit of each listener.
    static let bits: [(name: String, bit: Int32)] = [("hub", 1), ("auth", 2), ("firestore", 4), ("s3", 8), ("api", 16), ("ui", 32), ("storage", 64)]

    static func run(_ args: [String]) -> Int32 {
        var status: Int32 = 0
        guard let parsed = CommandArguments.parse(args, command: "wait", flags: ["--ready-file", "--timeout"], usage: usage,
                                                  exitStatus: &status) else { return status }
        guard parsed.words.isEmpty else { StartCommand.fail("hearth wait takes no argument '\(parsed.words[0])'"); return 2 }
        let readyFile = parsed.values["--ready-file"] ?? "emulator-data/hearth.ready.json"
        var timeout = 30.0
        if let text = parsed.values["--timeout"] {
            guard let t = Double(text), t >= 0 else { StartCommand.fail("--timeout must be a number of seconds, got '\(text)'"); return 2 }
            timeout = t
        }
        let deadline = Date().addingTimeInterval(timeout)
        var pending: [(name: String, host: String, port: Int)] = []
        var sawReadyFile = false
        repeat {
            if !sawReadyFile, let data = FileManager.default.contents(atPath: readyFile), let ready = try? JSON.parse(data),
               let services = ready["services"]?.objectValue {
                sawReadyFile = true
                pending = services.compactMap { name, s in
                    guard let host = s["host"]?.stringValue, let port = s["port"]?.intValue else { return nil }
                    return (name, host, Int(port))
                }
            }
            if sawReadyFile {
                pending.removeAll { answers(host: $0.host, port: $0.port) }
                if pending.isEmpty { return 0 }
            }
            usleep(100_000)
        } while Date() < deadline
        guard sawReadyFile else {
            StartCommand.fail("no ready file at \(readyFile) after \(timeout) s (is hearth starting? --ready-file names another path)")
            return 1
        }
        status = 64
        for p in pending {
            StartCommand.fail("\(p.name) (\(p.host):\(p.port)) did not answer within \(timeout) s")
            status |= bits.first { $0.name == p.name }?.bit ?? 0
        }
        return status
    }

    /// Whether a TCP connection to host:port is accepted.
    static func answers(host: String, port: Int) -> Bool {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return false }
        defer { freeaddrinfo(first) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let e = entry {
            let fd = socket(e.pointee.ai_family, e.pointee.ai_socktype, e.pointee.ai_protocol)
            if fd >= 0 {
                let ok = connect(fd, e.pointee.ai_addr, e.pointee.ai_addrlen) == 0
                close(fd)
                if ok { return true }
            }
            entry = e.pointee.ai_next
        }
        return false
    }
}
