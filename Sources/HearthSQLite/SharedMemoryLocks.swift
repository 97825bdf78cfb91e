internal import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One database file's WAL-index locks (the eight lock slots of its `-shm` file), kept in this
/// process's memory while the process holds all eight against every other process.
///
/// Why: the unix VFS takes each slot with `fcntl(F_SETLK)` on the `-shm` file whenever the first of
/// the process's connections takes it and releases it when the last lets go, so a commit on an
/// otherwise idle database made six system calls for them (a read mark moved, shared, the write
/// lock, both released; docs/benchmarks.md, commitc1). Between one process's own connections those
/// calls decide nothing — the unix VFS decides between them from its per-connection masks first,
/// and the kernel only ever refuses a lock another *process* holds. So while no other process can
/// hold a slot, the masks alone decide exactly as before.
///
/// Why that is safe: when the first of the process's connections maps the file's WAL index, the
/// process takes a write lock on all eight slots' bytes (`fcntl`, a descriptor of its own on the
/// `-shm` file) and keeps it until the last connection unmaps it. Another process's SQLite then
/// finds every slot taken and gets SQLITE_BUSY for every read, write and checkpoint (it is kept out,
/// as if a transaction never ended), and can never hold a slot while one of ours decides from
/// memory. If another process holds any slot when the first connection maps (or the lock cannot be
/// taken), this file's connections use the unix VFS's own locks, exactly as before, until the last
/// unmaps. The kernel drops the lock with the process, `kill -9` included; what the next process
/// finds then is what it found before (it rebuilds the WAL index from the WAL). Hearth is one
/// process per data directory (`DataDirectoryLock`), so its files are normally decided from memory.
///
/// The `-shm` descriptor is the process's own second one on that file: POSIX record locks belong
/// to the process, so closing it would drop SQLite's lock on the file too — it is closed only after
/// the last connection unmapped (SQLite closed its own then), and opened again at the next first
/// map (SQLite may have deleted the file in between). Each later map takes the lock again (one
/// `fcntl`, a few per connection's life) and refuses the map (SQLITE_BUSY) if it cannot: the lock
/// can only have gone if SQLite closed its descriptor in between, and then the file is not used
/// from memory until it is ours again.
final class SharedMemoryLocks: @unchecked Sendable {
    // Everything below but `id` and `shmPath` is guarded by `mutex`; `openFiles` by `registryLock`.

    /// One open main-database file (one connection): which slots it holds, and whether it mapped
    /// the WAL index. Only its file's `SharedMemoryLocks` reads or writes it, under its mutex.
    final class Holder {
        let locks: SharedMemoryLocks?
        fileprivate var shared: UInt16 = 0
        fileprivate var exclusive: UInt16 = 0
        fileprivate var mapped = false

        fileprivate init(_ locks: SharedMemoryLocks?) { self.locks = locks }
    }

    private struct FileID: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    private enum Mode {
        /// No connection has the WAL index mapped.
        case undecided
        /// The process holds every slot: connections decide between themselves here.
        case inProcess
        /// The unix VFS's own locks (another process held a slot at the first map).
        case passthrough
    }

    /// The eight slots' bytes in the `-shm` file (os_unix.c: UNIX_SHM_BASE, SQLITE_SHM_NLOCK).
    static let slotsOffset = 120
    static let slotCount = 8

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [FileID: SharedMemoryLocks] = [:]

    private let id: FileID
    private let shmPath: String
    private var openFiles = 0
    private let mutex = NSLock()
    private var mode = Mode.undecided
    private var mapped = 0
    /// Connections holding each slot shared.
    private let sharedCounts = UnsafeMutablePointer<Int32>.allocate(capacity: slotCount)
    /// Slots one connection holds exclusively.
    private var exclusiveMask: UInt16 = 0
    /// This process's own descriptor on the `-shm` file while it holds the slots.
    private var descriptor: Int32 = -1

    private init(id: FileID, shmPath: String) {
        self.id = id
        self.shmPath = shmPath
        sharedCounts.initialize(repeating: 0, count: Self.slotCount)
    }

    deinit { sharedCounts.deallocate() }

    /// The holder of a main-database file just opened at `path` (its file's locks shared with every
    /// other connection of the process to the same file; none when the file cannot be identified:
    /// then its calls go to the unix VFS as they are).
    static func open(path: String) -> Holder {
        var st = stat()
        guard stat(path, &st) == 0 else { return Holder(nil) }
        let id = FileID(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
        registryLock.lock()
        defer { registryLock.unlock() }
        let locks = registry[id] ?? SharedMemoryLocks(id: id, shmPath: path + "-shm")
        registry[id] = locks
        locks.openFiles += 1
        return Holder(locks)
    }

    /// The file of `holder` was closed (after the unix VFS closed it).
    static func close(_ holder: Holder) {
        guard let locks = holder.locks else { return }
        locks.mutex.lock()
        locks.forget(holder)
        locks.mutex.unlock()
        registryLock.lock()
        defer { registryLock.unlock() }
        locks.openFiles -= 1
        if locks.openFiles == 0 { registry[locks.id] = nil }
    }

    /// xShmMap: `real` maps through the unix VFS; the first connection to map decides the mode.
    func map(_ holder: Holder, _ real: () -> Int32) -> Int32 {
        mutex.lock()
        defer { mutex.unlock() }
        let first = !holder.mapped
        if first {
            holder.mapped = true
            mapped += 1
        }
        if mode == .inProcess && !setSlots(F_WRLCK) { return SQLITE_BUSY }
        let rc = real()
        if first && mapped == 1 && mode == .undecided {
            mode = rc == SQLITE_OK && takeSlots() ? .inProcess : .passthrough
        }
        return rc
    }

    /// xShmUnmap: after the unix VFS's (which closes its `-shm` descriptor with the last connection).
    func unmap(_ holder: Holder, _ real: () -> Int32) -> Int32 {
        mutex.lock()
        defer { mutex.unlock() }
        let rc = real()
        forget(holder)
        return rc
    }

    /// xShmLock of `count` slots from `offset`: decided here while the process holds every slot,
    /// by the unix VFS's own rules between connections (os_unix.c, unixShmLock); else `real`.
    func lock(_ holder: Holder, offset: Int32, count: Int32, flags: Int32, _ real: () -> Int32) -> Int32 {
        mutex.lock()
        defer { mutex.unlock() }
        guard mode == .inProcess, holder.mapped, offset >= 0, count > 0, offset + count <= Int32(Self.slotCount) else {
            return real()
        }
        let mask = UInt16(truncatingIfNeeded: (1 << (offset + count)) - (1 << offset))
        if flags & SQLITE_SHM_UNLOCK != 0 {
            release(holder, mask)
            return SQLITE_OK
        }
        if flags & SQLITE_SHM_SHARED != 0 {
            // Refused while any connection (this one too) holds it exclusively.
            if exclusiveMask & mask != 0 { return SQLITE_BUSY }
            Self.forEachSlot(mask & ~holder.shared) { sharedCounts[$0] += 1 }
            holder.shared |= mask
            return SQLITE_OK
        }
        // Exclusive: refused while any connection (this one too) holds one of the slots at all.
        if exclusiveMask & mask != 0 { return SQLITE_BUSY }
        var slots = mask
        while slots != 0 {
            if sharedCounts[slots.trailingZeroBitCount] > 0 { return SQLITE_BUSY }
            slots &= slots - 1
        }
        exclusiveMask |= mask
        holder.exclusive |= mask
        return SQLITE_OK
    }

    /// Releases `holder`'s slots in `mask` (`mutex` held).
    private func release(_ holder: Holder, _ mask: UInt16) {
        Self.forEachSlot(holder.shared & mask) { sharedCounts[$0] -= 1 }
        exclusiveMask &= ~(holder.exclusive & mask)
        holder.shared &= ~mask
        holder.exclusive &= ~mask
    }

    /// `holder` no longer maps the WAL index (`mutex` held): its slots go, and with the last
    /// connection the process's hold on the file.
    private func forget(_ holder: Holder) {
        guard holder.mapped else { return }
        release(holder, 0xFF)
        holder.mapped = false
        mapped -= 1
        guard mapped == 0 else { return }
        if descriptor >= 0 {
            // SQLite's own descriptor is closed by now (its last connection unmapped).
            Glibc.close(descriptor)
            descriptor = -1
        }
        mode = .undecided
    }

    /// Opens the process's own descriptor on the `-shm` file and takes every slot (`mutex` held).
    private func takeSlots() -> Bool {
        if descriptor < 0 { descriptor = Glibc.open(shmPath, O_RDWR | O_CLOEXEC) }
        // Kept open even when the slots are refused: closing it would drop SQLite's own lock on the
        // file (POSIX locks are the process's); `forget` closes it after SQLite closed its own.
        return setSlots(F_WRLCK)
    }

    /// `fcntl(F_SETLK)` of every slot's byte, never waiting (`mutex` held).
    private func setSlots(_ type: Int32) -> Bool {
        guard descriptor >= 0 else { return false }
        var region = flock()
        region.l_type = Int16(type)
        region.l_whence = Int16(SEEK_SET)
        region.l_start = .init(Self.slotsOffset)
        region.l_len = .init(Self.slotCount)
        return fcntl(descriptor, F_SETLK, &region) == 0
    }

    /// Calls `body` with each slot number set in `mask`.
    @inline(__always)
    private static func forEachSlot(_ mask: UInt16, _ body: (Int) -> Void) {
        var slots = mask
        while slots != 0 {
            body(slots.trailingZeroBitCount)
            slots &= slots - 1
        }
    }
}
