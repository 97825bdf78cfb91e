import Dispatch
internal import CLinuxIO

/// Hands memory the process freed back to the system, once a minute.
///
/// glibc keeps what `free` returns inside its arenas for reuse, and gives it back to the system
/// only from the top of the main heap past `M_TRIM_THRESHOLD`. A server with many threads (one
/// arena each, up to 8 per core) therefore keeps every burst's peak resident long after its live
/// heap shrank again: the 30-minute soak saw ~0.9 MiB steps of freed-but-held memory that never
/// came back (docs/reliability.md). `malloc_trim(0)` releases the free pages of every arena
/// (`madvise(MADV_DONTNEED)` inside the heaps, not only the top), so RSS follows the live heap.
/// Once a minute costs a walk of the arenas' free lists, microseconds to a few milliseconds,
/// off every request path. Here, beside `ServerAllocator`, because `malloc_trim` is one of the calls
/// Glibc's Swift module leaves out (`CLinuxIO`).
public final class HeapTrimmer: @unchecked Sendable {
    // `timer` is set once in `init`; DispatchSource is thread-safe.

    private let timer: any DispatchSourceTimer

    /// Starts trimming every `interval` seconds until `stop()`.
    public init(interval: Int = 60) {
        timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + .seconds(interval), repeating: .seconds(interval), leeway: .seconds(1))
        timer.setEventHandler { _ = malloc_trim(0) }
        timer.resume()
    }

    public func stop() {
        timer.cancel()
    }
}
