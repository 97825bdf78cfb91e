#if canImport(Glibc)
import Glibc
#endif

/// The kernel's name of the calling thread (`/proc/<pid>/task/<tid>/comm`, what `top -H`, `ps -L`,
/// perf and gdb show).
///
/// Foundation's `Thread.name` on Linux stays inside Foundation: every thread showed as the process's
/// own name, so per-thread CPU (`bench/get_rows.py`) could not tell an HTTP/2 loop from a gRPC
/// worker. Glibc's `pthread_setname_np` is not visible to Swift and `prctl` is variadic, so the name
/// is written where the kernel keeps it.
public enum ThreadName {
    /// Names the calling thread (the kernel keeps the first 15 bytes). Best effort: a failure
    /// leaves the old name, and nothing depends on the name.
    public static func setCurrent(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
