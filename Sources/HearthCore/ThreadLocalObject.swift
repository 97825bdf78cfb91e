#if canImport(Glibc)
import Glibc
#endif

/// One object per thread, made on the thread's first use and released when the thread ends
/// (a `pthread_key_t` whose destructor releases it). For state a thread keeps for its life
/// without a lock: a libmicrohttpd worker's polling (`WorkerPoll`), the semaphore a group-commit
/// caller sleeps on (`GroupCommit`). Make it once (a `static let`): every instance is a key of
/// its own, and the keys a process can have are limited (`PTHREAD_KEYS_MAX`).
public struct ThreadLocalObject<Object: AnyObject>: @unchecked Sendable {
    private let key: pthread_key_t

    public init() {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key) { p in
            if let p { Unmanaged<AnyObject>.fromOpaque(p).release() }
        } == 0, "pthread_key_create failed")
        self.key = key
    }

    /// This thread's object, made by `make` on its first use here.
    public func current(_ make: () -> Object) -> Object {
        if let p = pthread_getspecific(key) { return Unmanaged<Object>.fromOpaque(p).takeUnretainedValue() }
        let made = make()
        pthread_setspecific(key, Unmanaged.passRetained(made).toOpaque())
        return made
    }
}
