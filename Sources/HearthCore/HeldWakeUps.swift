#if canImport(Glibc)
import Glibc
#endif

/// Wake-ups of other threads that a thread holds back until the end of a scope, so that a thread
/// handing many results to one consumer in a row wakes it once, after the last.
///
/// The single writer completes a batch of gRPC commits one by one; each answer asked the
/// connection's event loop to flush, and the first woke it (an eventfd write) while the writer was
/// still completing the rest: the loop then flushed and sent the batch's answers in two or three
/// waves, each a wake-up and a socket write, and clients answered in waves too (docs/benchmarks.md,
/// "gRPC Commit and the Write stream, round two"). Inside `batch`, a waker that finds a scope open on
/// its thread records its wake-up here (`hold`), once per target, and it runs when the scope ends.
public enum HeldWakeUps {
    /// The wake-ups held by the scope open on this thread (a `Held` box), or nil outside one.
    nonisolated(unsafe) private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    private final class Held {
        var targets: [ObjectIdentifier] = []
        var wakes: [() -> Void] = []
    }

    /// Runs `body`; wake-ups held during it (`hold`) run once each when it returns or throws. A
    /// nested scope joins the outer one.
    public static func batch<T>(_ body: () throws -> T) rethrows -> T {
        if pthread_getspecific(key) != nil { return try body() }
        let held = Held()
        pthread_setspecific(key, Unmanaged.passUnretained(held).toOpaque())
        defer {
            pthread_setspecific(key, nil)
            for wake in held.wakes { wake() }
        }
        return try body()
    }

    /// Inside a `batch` scope on this thread: records `wake` for the scope's end (once per `target`)
    /// and returns true. Outside one: false, and the caller wakes its target now.
    public static func hold(_ target: ObjectIdentifier, _ wake: @escaping () -> Void) -> Bool {
        guard let raw = pthread_getspecific(key) else { return false }
        let held = Unmanaged<Held>.fromOpaque(raw).takeUnretainedValue()
        if !held.targets.contains(target) {
            held.targets.append(target)
            held.wakes.append(wake)
        }
        return true
    }
}
