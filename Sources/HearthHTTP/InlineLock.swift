import Synchronization

/// A mutual-exclusion lock stored inside the object it guards, with `NSLock`'s `lock`/`unlock`/
/// `withLock`, for the locks a unary gRPC call takes on the HTTP/2 loop.
///
/// Every call makes an `HTTP2Stream` and a `GRPCCall`, each with its own lock, and takes ~20
/// locks between its request and its answer. Foundation's `NSLock` is an object of its own around
/// a separately allocated `pthread_mutex_t`: two allocations and two frees per lock made, and ~75
/// instructions per lock and unlock through its class methods and glibc (~3k a gRPC get; callgrind,
/// bench/callgrind_get.py). The standard library's `Mutex` lives in its owner's storage and takes
/// an uncontended lock with one atomic compare-and-exchange. Contended, it waits on a
/// priority-inheritance futex, which hands the lock to the waiters in turns through the kernel (no
/// overtaking, as a glibc mutex allows): keep it to locks few threads take at once (a stream's, a
/// call's); a lock every server thread takes per request stays an `NSLock` (a batchGet's ten rules
/// lookups under one fell from 30,000 to 2,900 a second: docs/benchmarks.md, *Run of 5 December*).
/// Not recursive, as `NSLock` is not. Its lock and unlock
/// without a closure are `Mutex<Void>`'s `_unsafeLock`/`_unsafeUnlock` (public, for exactly this).
///
/// ThreadSanitizer does not see `Mutex` order anything: a contended unlock hands the lock over
/// through the kernel (`FUTEX_UNLOCK_PI` writes the next owner's id into the word), and the new
/// owner returns from `FUTEX_LOCK_PI` without an atomic of its own that could pair with the
/// previous owner's. Two threads adding to a counter under a `Mutex` get the exact total and a
/// data-race report (docs/reliability.md, *Sanitizers on the thirty-fifth session's code*), and
/// `make test-tsan` reported accesses under one stream's lock as races. So in debug builds (every
/// sanitizer build: `make test-tsan`, `make test-asan`, `make fuzz`) the lock also stores to an
/// atomic with release order before each unlock and loads it with acquire order after each lock,
/// which ThreadSanitizer does see; release builds, which no sanitizer builds, leave it out.
public struct InlineLock: ~Copyable, Sendable {
    @usableFromInline let mutex = Mutex(())
    #if DEBUG
    /// The order ThreadSanitizer is shown (see the type's note); its value means nothing.
    @usableFromInline let order = Atomic<Int>(0)
    #endif

    public init() {}

    @inlinable @inline(__always)
    public func lock() {
        mutex._unsafeLock()
        #if DEBUG
        _ = order.load(ordering: .acquiring)
        #endif
    }

    @inlinable @inline(__always)
    public func unlock() {
        #if DEBUG
        order.store(0, ordering: .releasing)
        #endif
        mutex._unsafeUnlock()
    }

    @inlinable @inline(__always)
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
