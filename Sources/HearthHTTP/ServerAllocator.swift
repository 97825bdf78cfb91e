internal import CLinuxIO

/// The process allocator's figures, for the hub's `GET /emulator/v1/stats` (the soak samples them).
///
/// Here because this module owns the Linux calls Glibc's Swift module leaves out (`CLinuxIO`).
public enum ServerAllocator {
    /// Bytes the allocator has handed out and not had back (`inUse`), and bytes it holds from the
    /// system for that (`held`: arenas plus mmapped blocks); their difference is memory freed but
    /// kept for reuse. Zero and zero where glibc's `mallinfo2` (2.33+) is missing.
    ///
    /// `mallinfo2` walks every arena under its lock: a figure to sample, not to call per request.
    public static func totals() -> (inUse: Int, held: Int) {
        var inUse = 0
        var held = 0
        hearth_malloc_totals(&inUse, &held)
        return (inUse, held)
    }
}
