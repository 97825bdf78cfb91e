import Foundation
import HearthSQLite

/// The files holding the bytes of a namespace's large chunk rows: `<data-dir>/blobs/<prefix>/<n>`,
/// one per chunk, named by the row's `file` number.
///
/// Why: a chunk row's bytes in SQLite are written twice (WAL frames, then the database file at the
/// checkpoint) and the WAL work is CPU on the request thread; a 1 GiB upload was bound by it
/// (docs/benchmarks.md, *bodies outside the WAL*). A file is written once.
///
/// The rules that keep a row and its file together:
/// - A file is written completely (and, with `Durability.full`, synced with its directory) before
///   the COMMIT of the transaction that inserts its row: `appendChunk` writes it inside that
///   transaction; `BlobWriter` has the writer thread write it (`writeLater`) and inserts the row
///   once `PendingWrite.wait` returns. Until then its number is in flight (`reserve`), and sweeps
///   leave it alone; rows are inserted, and files of deleted rows removed, under the write lock.
/// - A file number is never reused while the process runs (`next` only grows, and starts above
///   every number in the directory and the table), so a reader holding an older snapshot finds its
///   file gone (a truncated download, as when chunk rows disappear) — never another chunk's bytes.
/// - When a transaction that wrote or deleted file rows ends, committed or not, each file whose row
///   is no longer there is removed (`reconcile`); start-up removes every file no row names (`sweep`).
/// - `Durability.normal`: a background thread `fdatasync`s written files a moment later (`sync`),
///   so they reach the disk well before the kernel's writeback would push out the WAL frames of
///   their rows; docs/reliability.md (*Chunk files*) says what a power loss can still do.
final class ChunkFiles: @unchecked Sendable {
    /// Smallest chunk (as stored) kept in a file: a full chunk. The tail of a body and small bodies
    /// stay in rows, where a file per object would cost more system calls than it saves.
    static let threshold = blobChunkSize

    /// Bytes per `pwrite`. Not the whole chunk at once: ext4 (6.x) backs a write with page-cache
    /// folios as large as the write, and on the bench VM copying into new large folios cost 2–3×
    /// the system time of 16 KiB writes (1,024 new one-MiB files: 1.1–1.3 s per GiB in 16 KiB
    /// writes, 2.0–4.0 s in 64 KiB, 2.5–3.1 s in 256 KiB, mostly 2.8–4.3 s in 1 MiB; in Hearth, the
    /// writer thread's time fell by a sixth to a third) — the size SQLite's 16 KiB pages wrote at.
    static let writeStep = 16 << 10

    let directory: String
    private let chunksTable: String
    private let syncEach: Bool
    private let lock = NSLock()
    /// The next file number (nil until the first file is written).
    private var next: Int64?
    /// Numbers reserved in flight (`reserve`) and not yet settled.
    private var writing: Set<Int64> = []
    /// Syncs written files (`Durability.normal`): one thread for every namespace and data
    /// directory, as `writer`, so a process gains two threads at most however many use files.
    private static let syncer = ChunkFileThread<(path: String, directory: String)> { files in ChunkFiles.sync(files) }
    /// Writes the files of `writeLater`, in order. Why a thread: copying a MiB into new page-cache
    /// pages is the costliest system time of a large upload on the bench VM (docs/benchmarks.md,
    /// *bodies outside the WAL*) — the checkpoint thread used to carry its share of it (the database
    /// file's new pages) — and on the request thread it would stop the body's reception meanwhile.
    private static let writer = ChunkFileThread<PendingWrite> { jobs in for job in jobs { job.run() } }

    private init(directory: String, chunksTable: String, syncEach: Bool) {
        self.directory = directory
        self.chunksTable = chunksTable
        self.syncEach = syncEach
    }

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [String: ChunkFiles] = [:]

    /// The files of `tables` for the database `c` belongs to; nil for an in-memory database, whose
    /// chunks all stay in rows.
    static func of(_ c: Connection, _ tables: BlobTables) -> ChunkFiles? {
        guard let file = c.filename else { return nil }
        let directory = (file as NSString).deletingLastPathComponent + "/blobs/" + tables.prefix
        registryLock.lock()
        defer { registryLock.unlock() }
        if let known = registry[directory] { return known }
        let made = ChunkFiles(directory: directory, chunksTable: tables.chunks, syncEach: c.syncsEachCommit)
        registry[directory] = made
        return made
    }

    func path(_ number: Int64) -> String { "\(directory)/\(number)" }

    /// Removes file `number` (its row never made it into the table).
    func remove(_ number: Int64) { unlink(path(number)) }

    /// Writes `bytes` to a new file, inside the transaction on `c` (the writer) that will insert its row.
    /// - Returns: the file's number.
    func write(_ bytes: UnsafeRawBufferPointer, _ c: Connection) throws -> Int64 {
        let number = try reserve(inFlight: false) { try maxInTable(c) }
        try write(number, bytes)
        return number
    }

    /// Starts writing `bytes` to file `number` (reserved `inFlight`) on the writer thread: the
    /// request thread goes on receiving the next chunk meanwhile, and inserts this one's row once
    /// `PendingWrite.wait` says the file is complete.
    func writeLater(_ number: Int64, _ bytes: [UInt8]) -> PendingWrite {
        let job = PendingWrite(number: number, bytes: bytes, files: self)
        ChunkFiles.writer.add(job)
        return job
    }

    /// Writes file `number` whole; on failure removes it and throws.
    fileprivate func write(_ number: Int64, _ bytes: UnsafeRawBufferPointer) throws {
        let path = path(number)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ChunkFileError(operation: "create", path: path, code: errno) }
        var failure: Int32 = 0
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, min(ChunkFiles.writeStep, bytes.count - done), off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            done += n
        }
        if failure == 0, syncEach, fdatasync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0, syncEach { failure = ChunkFiles.syncDirectory(directory) }
        guard failure == 0 else {
            unlink(path)
            throw ChunkFileError(operation: "write", path: path, code: failure)
        }
        if !syncEach { ChunkFiles.syncer.add((path, directory)) }
    }

    /// The largest file number the table names (0 for none), for `reserve`.
    func maxInTable(_ c: Connection) throws -> Int64 {
        try c.scalarInt("SELECT max(file) FROM \(chunksTable)") ?? 0
    }

    /// A new file number. `inFlight`: its file is written outside the write lock, before its row
    /// exists, so `sweep` leaves it alone until `settle`. `maxInTable` is asked on first use only.
    func reserve(inFlight: Bool, maxInTable: () throws -> Int64) throws -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        let number: Int64
        if let n = next {
            number = n
        } else {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            number = max(try maxInTable(), numbersOnDisk().max() ?? 0) + 1
        }
        next = number + 1
        if inFlight { writing.insert(number) }
        return number
    }

    /// File `number`'s row is now in the writer's transaction (or never will be): `reconcile` and
    /// `sweep` decide its fate from here.
    func settle(_ number: Int64) {
        lock.lock()
        writing.remove(number)
        lock.unlock()
    }

    private func numbersOnDisk() -> [Int64] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).compactMap { Int64($0) }
    }

    /// Bytes `range` of file `number`, or nil when the file is gone or shorter (its row was deleted
    /// after the reader's snapshot began, or the file was lost).
    func read(_ number: Int64, range: Range<Int>?) -> [UInt8]? {
        let fd = open(path(number), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let lo: Int, count: Int
        if let range {
            (lo, count) = (range.lowerBound, range.count)
        } else {
            var info = stat()
            guard fstat(fd, &info) == 0 else { return nil }
            (lo, count) = (0, Int(info.st_size))
        }
        var out = [UInt8](repeating: 0, count: count)
        let complete = out.withUnsafeMutableBytes { buffer -> Bool in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(lo + done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }
        return complete ? out : nil
    }

    /// After the transaction on `c` that wrote or deleted the rows of `files` (chunk id, file
    /// number) ends: removes each file whose row is gone. A row that is still there (a delete rolled
    /// back, or a write committed) keeps its file; if the check itself fails the file stays, for
    /// the next start-up's sweep.
    func reconcile(after c: Connection, _ files: [(chunk: Int64, file: Int64)]) {
        guard !files.isEmpty else { return }
        c.atTransactionEnd { [self] c in
            for (chunk, file) in files {
                let current: Int64?
                do {
                    current = try c.first("SELECT file FROM \(chunksTable) WHERE id = ?", [chunk]) { $0.isNull(0) ? -1 : $0.int64(0) }
                } catch { continue }
                if current != file { unlink(path(file)) }
            }
        }
    }

    /// Removes every file no row names: files of uploads cut short by a crash, and of rows whose
    /// deleting transaction committed just before one. Runs once the transaction on `c` (the
    /// writer, holding the write lock, so no row of a file is being inserted) has ended, and leaves
    /// alone the files still in flight for uploads in progress (`reserve`).
    func sweep(after c: Connection) {
        c.atTransactionEnd { [self] c in
            let onDisk = numbersOnDisk()
            guard !onDisk.isEmpty,
                  let named = try? Set(c.rows("SELECT file FROM \(chunksTable) WHERE file IS NOT NULL") { $0.int64(0) })
            else { return }
            lock.lock()
            let inFlight = writing
            lock.unlock()
            for n in onDisk where !named.contains(n) && !inFlight.contains(n) { unlink(path(n)) }
        }
    }

    /// `fdatasync`s written chunk files on a thread of its own, shortly after they are written.
    ///
    /// Off the request thread: an upload writes a file per MiB, and a sync each on the thread that
    /// receives the body would stop it for every one. Files already removed are skipped.
    private static func sync(_ files: [(path: String, directory: String)]) {
        for file in files {
            let fd = open(file.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            _ = fdatasync(fd)
            close(fd)
        }
        // The new names too: a file's directory entry reaches the disk with its directory.
        for directory in Set(files.map(\.directory)) { _ = syncDirectory(directory) }
    }

    /// `fsync` of a directory; 0 or the errno.
    static func syncDirectory(_ directory: String) -> Int32 {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return fsync(fd) == 0 ? 0 : errno
    }

    /// A chunk file being written on the writer thread.
    final class PendingWrite: @unchecked Sendable {
        let number: Int64
        let files: ChunkFiles
        private let condition = NSCondition()
        private var bytes: [UInt8]
        private var done = false
        private var failure: (any Error)?

        fileprivate init(number: Int64, bytes: [UInt8], files: ChunkFiles) {
            self.number = number
            self.bytes = bytes
            self.files = files
        }

        fileprivate func run() {
            var failure: (any Error)?
            do { try bytes.withUnsafeBytes { try files.write(number, $0) } } catch { failure = error }
            condition.lock()
            self.failure = failure
            done = true
            condition.broadcast()
            condition.unlock()
        }

        /// Waits until the file is complete, and hands back the buffer it was written from.
        /// - Throws: why the file could not be written (it is removed, and its number settled).
        func wait() throws -> [UInt8] {
            condition.lock()
            while !done { condition.wait() }
            let (failure, bytes) = (self.failure, self.bytes)
            self.bytes = []
            condition.unlock()
            if let failure {
                files.settle(number)
                throw failure
            }
            return bytes
        }

        /// Waits for the write and removes the file: its row will never be written.
        func abandon() {
            _ = try? wait()
            files.remove(number)
            files.settle(number)
        }
    }
}

/// A chunk file that could not be written (disk full, permissions): the write fails and its
/// transaction rolls back, as a failed row insert would.
public struct ChunkFileError: Error, CustomStringConvertible {
    public let operation: String
    public let path: String
    public let code: Int32
    public var description: String { "cannot \(operation) chunk file \(path): \(String(cString: strerror(code)))" }
}
