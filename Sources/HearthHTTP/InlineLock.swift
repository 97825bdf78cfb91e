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
public struct InlineLock: ~Copyable, Sendable {
    @usableFromInline let mutex = Mutex(())

    public init() {}

    @inlinable @inline(__always)
    public func lock() { mutex._unsafeLock() }

    @inlinable @inline(__always)
    public func unlock() { mutex._unsafeUnlock() }

    @inlinable @inline(__always)
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        mutex._unsafeLock()
        defer { mutex._unsafeUnlock() }
        return try body()
    }
}
