#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Writes to standard output and standard error that can never stop the process.
///
/// `FileHandle.write(_:)` traps when the write fails, so a full disk under a redirected log, a
/// closed pipe or a parent that went away would kill every client's server on the next log line.
/// Here a failed write is dropped and counted (`droppedWrites`), never fatal; with SIGPIPE ignored
/// (`ignoreBrokenPipes()`, done at start) a closed pipe is an `EPIPE` like any other failure.
public enum StandardStream {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var dropped = 0

    /// Standard output.
    public static let output: Int32 = 1
    /// Standard error.
    public static let error: Int32 = 2

    /// Writes all of `text` to `fd`, retrying after interruptions and short writes.
    /// - Returns: false when it could not (the rest of the text is dropped and counted).
    @discardableResult
    public static func write(_ text: String, to fd: Int32) -> Bool {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                #if canImport(Glibc)
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                #else
                let n = Darwin.write(fd, raw.baseAddress! + offset, raw.count - offset)
                #endif
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    lock.lock()
                    dropped += 1
                    lock.unlock()
                    return false
                }
            }
            return true
        }
    }

    /// How many writes failed and were dropped since start.
    public static var droppedWrites: Int {
        lock.lock()
        defer { lock.unlock() }
        return dropped
    }

    /// Ignores SIGPIPE for the whole process, so writing to a pipe whose reader is gone (stdout
    /// piped into a process that exited, a socket the peer closed) fails with EPIPE instead of
    /// killing the process.
    public static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }
}
