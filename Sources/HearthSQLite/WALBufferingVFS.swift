internal import CSQLite
import Foundation

/// SQLite's default (unix) VFS with each WAL file's frame writes gathered by a `WALWriteBuffer`.
///
/// Every other file (the database, its `-shm` index, journals, temporary files) is the unix VFS's
/// own file object, opened in place: its calls go straight to the unix VFS. A WAL file is the unix
/// VFS's file behind a header of ours, and its calls come here first. Every connection Hearth
/// opens uses this VFS (`Connection.init`). Related: https://sqlite.org/vfs.html,
/// https://sqlite.org/c3ref/io_methods.html.
enum WALBufferingVFS {
    /// The registered VFS's name, registered on first use (SQLite's registry is process-wide).
    static let name: String = {
        guard let unix = sqlite3_vfs_find(nil) else { return "" }
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: unix.pointee)
        // The unix VFS's methods other than xOpen ignore the VFS they are given (UNUSED_PARAMETER
        // in os_unix.c), so they are kept as they are; xOpen finds the unix VFS in pAppData.
        vfs.pointee.pAppData = UnsafeMutableRawPointer(unix)
        vfs.pointee.szOsFile = Int32(headerSize) + unix.pointee.szOsFile
        vfs.pointee.zName = UnsafePointer(strdup("hearth-wal-buffering"))
        vfs.pointee.pNext = nil
        vfs.pointee.xOpen = walBufferingOpen
        guard sqlite3_vfs_register(vfs, 0) == SQLITE_OK else { return "" }
        return "hearth-wal-buffering"
    }()

    /// A WAL file object: `sqlite3_file` (its methods), our buffer, then the unix VFS's file.
    static let headerSize = 16

    /// Runs `body` with `file`'s buffer, which the file holds (retained at xOpen, released at
    /// xClose) for as long as SQLite may call it. Lent without a retain and release of its own:
    /// xWrite is called twice per WAL frame (header, page), on whichever thread leads the batch,
    /// and the pair was a visible share of the writer's `swift_release` samples.
    static func withBuffer<R>(_ file: UnsafeMutablePointer<sqlite3_file>, _ body: (WALWriteBuffer) -> R) -> R {
        let slot = UnsafeMutableRawPointer(file).load(fromByteOffset: 8, as: UnsafeMutableRawPointer.self)
        return Unmanaged<WALWriteBuffer>.fromOpaque(slot)._withUnsafeGuaranteedRef(body)
    }

    static func inner(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file> {
        (UnsafeMutableRawPointer(file!) + headerSize).assumingMemoryBound(to: sqlite3_file.self)
    }

    /// The unix file's own methods (set by its xOpen).
    static func methods(_ inner: UnsafeMutablePointer<sqlite3_file>) -> sqlite3_io_methods {
        inner.pointee.pMethods.pointee
    }

    /// Writes out what `file` has gathered; SQLite's result code.
    static func settle(_ file: UnsafeMutablePointer<sqlite3_file>?) -> Int32 {
        let real = inner(file)
        return withBuffer(file!) { $0.settle { bytes, n, offset in methods(real).xWrite!(real, bytes, Int32(n), offset) } }
    }

    /// Writes out what `file` has gathered, then makes `call` on the unix file; SQLite's result code.
    static func settled(_ file: UnsafeMutablePointer<sqlite3_file>?,
                        _ call: (UnsafeMutablePointer<sqlite3_file>, sqlite3_io_methods) -> Int32) -> Int32 {
        let rc = settle(file)
        guard rc == SQLITE_OK else { return rc }
        let real = inner(file)
        return call(real, methods(real))
    }

    /// Makes `call` on the unix file as it is (calls that neither read nor change the file's bytes).
    static func forwarded(_ file: UnsafeMutablePointer<sqlite3_file>?,
                          _ call: (UnsafeMutablePointer<sqlite3_file>, sqlite3_io_methods) -> Int32) -> Int32 {
        let real = inner(file)
        return call(real, methods(real))
    }

    /// The methods of a WAL file: each writes out what is gathered before it forwards, but xWrite.
    /// Filled once, never written after (SQLite only reads it), hence not isolated.
    nonisolated(unsafe) static let walMethods: UnsafeMutablePointer<sqlite3_io_methods> = {
        let m = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        m.initialize(to: sqlite3_io_methods(
            iVersion: 3,
            xClose: { file in
                let rc = settle(file)
                let real = inner(file)
                let closed = methods(real).xClose!(real)
                let slot = UnsafeMutableRawPointer(file!).load(fromByteOffset: 8, as: UnsafeMutableRawPointer.self)
                Unmanaged<WALWriteBuffer>.fromOpaque(slot).release()
                return rc != SQLITE_OK ? rc : closed
            },
            xRead: { file, data, amount, offset in settled(file) { $1.xRead!($0, data, amount, offset) } },
            xWrite: { file, data, amount, offset in
                let real = inner(file)
                return withBuffer(file!) { b in
                    b.write(data!, amount: Int(amount), offset: offset) { bytes, n, at in
                        methods(real).xWrite!(real, bytes, Int32(n), at)
                    }
                }
            },
            xTruncate: { file, size in settled(file) { $1.xTruncate!($0, size) } },
            xSync: { file, flags in settled(file) { $1.xSync!($0, flags) } },
            xFileSize: { file, size in settled(file) { $1.xFileSize!($0, size) } },
            xLock: { file, level in settled(file) { $1.xLock!($0, level) } },
            xUnlock: { file, level in settled(file) { $1.xUnlock!($0, level) } },
            xCheckReservedLock: { file, out in forwarded(file) { $1.xCheckReservedLock!($0, out) } },
            xFileControl: { file, op, arg in settled(file) { $1.xFileControl!($0, op, arg) } },
            xSectorSize: { file in forwarded(file) { $1.xSectorSize!($0) } },
            xDeviceCharacteristics: { file in forwarded(file) { $1.xDeviceCharacteristics!($0) } },
            // A WAL file has no shared memory of its own (the database file's serves it) and is not
            // memory-mapped: these are never called on it, and forward when they are.
            xShmMap: { file, page, size, extend, out in forwarded(file) { $1.xShmMap?($0, page, size, extend, out) ?? SQLITE_IOERR } },
            xShmLock: { file, offset, n, flags in forwarded(file) { $1.xShmLock?($0, offset, n, flags) ?? SQLITE_IOERR } },
            xShmBarrier: { file in _ = settled(file) { real, m in m.xShmBarrier?(real); return SQLITE_OK } },
            xShmUnmap: { file, delete in forwarded(file) { $1.xShmUnmap?($0, delete) ?? SQLITE_OK } },
            xFetch: { file, offset, amount, out in
                settled(file) { real, m in
                    guard let fetch = m.xFetch else {
                        out?.pointee = nil
                        return SQLITE_OK
                    }
                    return fetch(real, offset, amount, out)
                }
            },
            xUnfetch: { file, offset, p in forwarded(file) { $1.xUnfetch?($0, offset, p) ?? SQLITE_OK } }))
        return m
    }()
}

/// xOpen of `WALBufferingVFS`: a WAL file behind a buffer, any other file as the unix VFS opens it.
private func walBufferingOpen(_ vfs: UnsafeMutablePointer<sqlite3_vfs>?, _ name: sqlite3_filename?,
                              _ file: UnsafeMutablePointer<sqlite3_file>?, _ flags: Int32,
                              _ outFlags: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let vfs, let file, let unix = vfs.pointee.pAppData?.assumingMemoryBound(to: sqlite3_vfs.self) else {
        return SQLITE_MISUSE
    }
    guard flags & SQLITE_OPEN_WAL != 0 else { return unix.pointee.xOpen!(unix, name, file, flags, outFlags) }
    let real = WALBufferingVFS.inner(file)
    let rc = unix.pointee.xOpen!(unix, name, real, flags, outFlags)
    guard rc == SQLITE_OK else {
        // SQLite calls xClose only when pMethods is set; the unix file is closed here if it was opened.
        if real.pointee.pMethods != nil { _ = real.pointee.pMethods.pointee.xClose?(real) }
        file.pointee.pMethods = nil
        return rc
    }
    UnsafeMutableRawPointer(file).storeBytes(of: Unmanaged.passRetained(WALWriteBuffer()).toOpaque(), toByteOffset: 8,
                                              as: UnsafeMutableRawPointer.self)
    file.pointee.pMethods = UnsafePointer(WALBufferingVFS.walMethods)
    return SQLITE_OK
}
