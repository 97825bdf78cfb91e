import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on a data directory for the life of the process: a second hearth on the same
/// directory would otherwise share the database, overwrite the first one's ready file and delete it on exit.
///
/// `flock(2)` on `<dir>/hearth.lock`, which holds the owner's pid for the error message. The kernel
/// drops the lock when the process dies however it dies (even `kill -9`), so a stale file never blocks.
final class DataDirectoryLock {
    static let fileName = "hearth.lock"
    private let fd: Int32

    /// Takes the lock or throws, naming the pid that holds it.
    init(directory: String) throws {
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw StartCommand.StartupError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.readPID(fd)
            close(fd)
            let who = holder.map { "hearth pid \($0)" } ?? "another hearth"
            throw StartCommand.StartupError(description: "data directory \(directory) is in use by \(who) (\(path)); stop it or use another --data-dir")
        }
        // Ours now: record our pid for the next one that tries.
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    deinit { close(fd) }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
