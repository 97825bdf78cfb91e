import Synchronization

/// A mutual-exclusion lock stored inside the object it guards, with `NSLock`'s `lock`/`unlock`/
/// `withLock`, for the locks a unary gRPC call takes on the HTTP/2 loop.
///
/// Every call makes an `HTTP2Stream` and a `GRPCCall`, each with its own lock, and takes ~20
/// locks between its request and its answer. Foundation's `NSLock` is an object of its own around
/// a separately allocated `pthread_mutex_t`: two allocations and two frees per lock made, and ~75
/// instructions per lock and unlock through its class methods and glibc (~3k a gRPC get; callgrind,
/// bench/callgrind_get.py). The standard library's `Mutex` lives in its owner's storage and takes
/// an uncontended lock with one atomic compare-and-exchange (futex-based on Linux, so a contended
/// one sleeps as a pthread mutex does). Not recursive, as `NSLock` is not. Its lock and unlock
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
