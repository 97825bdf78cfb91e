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

    /// Runs `body`; wake-ups held during it (`hold`) run once each when it returns or throws. A
    /// nested scope joins the outer one.
    public static func batch<T>(_ body: () throws -> T) rethrows -> T {
        if pthread_getspecific(key) != nil { return try body() }
        let held = HeldWork()
        pthread_setspecific(key, Unmanaged.passUnretained(held).toOpaque())
        defer {
            pthread_setspecific(key, nil)
            for wake in held.work { wake() }
        }
        return try body()
    }

    /// Inside a `batch` scope on this thread: records `wake` for the scope's end (once per `target`)
    /// and returns true. Outside one: false, and the caller wakes its target now.
    public static func hold(_ target: ObjectIdentifier, _ wake: @escaping () -> Void) -> Bool {
        HeldWork.hold(key, target, wake)
    }
}

/// Work one thread holds, once per target, in the order held (`HeldWakeUps`' scopes, `PassEndWork`).
private final class HeldWork {
    // One thread's (see the users): unchecked, no runtime exclusivity check — `PassEndWork.run`
    // reads `work` at the end of every pass of an event loop (~60 instructions a gRPC get).
    @exclusivity(unchecked) var targets: [ObjectIdentifier] = []
    @exclusivity(unchecked) var work: [() -> Void] = []

    /// The holder installed under `key` on this thread records `w` unless `target` has work held
    /// already: true; none installed: false.
    static func hold(_ key: pthread_key_t, _ target: ObjectIdentifier, _ w: @escaping () -> Void) -> Bool {
        guard let raw = pthread_getspecific(key) else { return false }
        let held = Unmanaged<HeldWork>.fromOpaque(raw).takeUnretainedValue()
        if !held.targets.contains(target) {
            held.targets.append(target)
            held.work.append(w)
        }
        return true
    }
}

/// Work an event loop's thread does at the end of its pass: after the handlers and the tasks that
/// write the pass's answers, before the loop polls or sleeps again.
///
/// The rules coverage fold's thread was woken from inside a gRPC GetDocument's rules evaluation on
/// the HTTP/2 loop, once every 64 calls, and ran 24–43 µs each time (the fold's ~80k instructions,
/// cold caches, a thread switch each way) on a CPU the round trip was using: ~0.4–1.0 µs a call on
/// two busy cores, where the fold's own instructions are ~0.16 µs (docs/benchmarks.md, grpctail29).
/// On the loop's own thread, at the end of the pass, the batch is folded after the answer left,
/// with warm caches and no thread woken. A loop's thread installs one for its life (`install`) and
/// runs what it holds at the end of each pass (`run`); code that may run on it asks `schedule`
/// first. Not thread-safe: its thread only.
public final class PassEndWork {
    private let held = HeldWork()

    /// The holder installed on this thread, or nil.
    nonisolated(unsafe) private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    public init() {}

    /// Makes this holder the calling thread's until `uninstall` (the caller keeps it alive meanwhile).
    public func install() {
        pthread_setspecific(Self.key, Unmanaged.passUnretained(held).toOpaque())
    }

    /// The calling thread holds nothing any more (what it held runs now).
    public func uninstall() {
        run()
        pthread_setspecific(Self.key, nil)
    }

    /// On a thread with a holder installed: records `work` for the end of the pass (once per
    /// `target`) and returns true. Elsewhere: false, and the caller does it its own way now.
    public static func schedule(_ target: ObjectIdentifier, _ work: @escaping () -> Void) -> Bool {
        HeldWork.hold(key, target, work)
    }

    /// Runs the work held so far, in the order scheduled (the end of a pass).
    @inline(__always)
    public func run() {
        if !held.work.isEmpty { runAll() }
    }

    private func runAll() {
        // Work may schedule more (it runs on this thread): that runs in the next round.
        while !held.work.isEmpty {
            let now = held.work
            held.work.removeAll(keepingCapacity: true)
            held.targets.removeAll(keepingCapacity: true)
            for w in now { w() }
        }
    }
}
