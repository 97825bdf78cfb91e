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
/// - A file is written completely (and, with `Durability.full`, synced with its directory) inside
///   the transaction that inserts its row, before the COMMIT; files are only created, and only
///   removed, under the database's write lock, so nothing is in flight while another write runs.
/// - A file number is never reused while the process runs (`next` only grows, and starts above
///   every number in the directory and the table), so a reader holding an older snapshot finds its
///   file gone (a truncated download, as when chunk rows disappear) — never another chunk's bytes.
/// - When a transaction that wrote or deleted file rows ends, committed or not, each file whose row
///   is no longer there is removed (`reconcile`); start-up removes every file no row names (`sweep`).
/// - `Durability.normal`: a background thread `fdatasync`s written files a moment later (`Syncer`),
///   so they reach the disk well before the kernel's writeback would push out the WAL frames of
///   their rows; docs/reliability.md (*Chunk files*) says what a power loss can still do.
final class ChunkFiles: @unchecked Sendable {
    /// Smallest chunk (as stored) kept in a file: a full chunk. The tail of a body and small bodies
    /// stay in rows, where a file per object would cost more system calls than it saves.
    static let threshold = blobChunkSize

    let directory: String
    private let chunksTable: String
    private let syncEach: Bool
    private let lock = NSLock()
    /// The next file number (nil until the first file is written).
    private var next: Int64?
    private let syncer: Syncer

    private init(directory: String, chunksTable: String, syncEach: Bool) {
        self.directory = directory
        self.chunksTable = chunksTable
        self.syncEach = syncEach
        syncer = Syncer(directory: directory)
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
        let number = try allocate(c)
        let path = path(number)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ChunkFileError(operation: "create", path: path, code: errno) }
        var failure: Int32 = 0
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            done += n
        }
        if failure == 0, syncEach, fdatasync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0, syncEach { failure = Syncer.syncDirectory(directory) }
        guard failure == 0 else {
            unlink(path)
            throw ChunkFileError(operation: "write", path: path, code: failure)
        }
        if !syncEach { syncer.add(path) }
        return number
    }

    private func allocate(_ c: Connection) throws -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        if let n = next {
            next = n + 1
            return n
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let inTable = try c.scalarInt("SELECT max(file) FROM \(chunksTable)") ?? 0
        let first = max(inTable, numbersOnDisk().max() ?? 0) + 1
        next = first + 1
        return first
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
    /// writer, holding the write lock: no file is being written) has ended.
    func sweep(after c: Connection) {
        c.atTransactionEnd { [self] c in
            let onDisk = numbersOnDisk()
            guard !onDisk.isEmpty,
                  let named = try? Set(c.rows("SELECT file FROM \(chunksTable) WHERE file IS NOT NULL") { $0.int64(0) })
            else { return }
            for n in onDisk where !named.contains(n) { unlink(path(n)) }
        }
    }

    /// `fdatasync`s written chunk files on a thread of its own, shortly after they are written.
    ///
    /// Off the request thread: an upload writes a file per MiB, and a sync each on the thread that
    /// receives the body would stop it for every one. Files already removed are skipped.
    final class Syncer: @unchecked Sendable {
        private let directory: String
        private let condition = NSCondition()
        private var pending: [String] = []
        private var started = false

        init(directory: String) { self.directory = directory }

        func add(_ path: String) {
            condition.lock()
            pending.append(path)
            if !started {
                started = true
                Thread { [self] in run() }.start()
            }
            condition.signal()
            condition.unlock()
        }

        /// Waits until every file added so far is synced (tests, and a caller that must know).
        func drain() {
            condition.lock()
            while !pending.isEmpty || busy { condition.wait() }
            condition.unlock()
        }

        private var busy = false

        private func run() {
            while true {
                condition.lock()
                while pending.isEmpty { condition.wait() }
                let batch = pending
                pending = []
                busy = true
                condition.unlock()
                for path in batch {
                    let fd = open(path, O_RDONLY | O_CLOEXEC)
                    guard fd >= 0 else { continue }
                    _ = fdatasync(fd)
                    close(fd)
                }
                // The new names too: a file's directory entry reaches the disk with its directory.
                _ = Syncer.syncDirectory(directory)
                condition.lock()
                busy = false
                condition.broadcast()
                condition.unlock()
            }
        }

        /// `fsync` of a directory; 0 or the errno.
        static func syncDirectory(_ directory: String) -> Int32 {
            let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { return errno }
            defer { close(fd) }
            return fsync(fd) == 0 ? 0 : errno
        }
    }

    /// Waits until the files written so far are synced.
    func drainSyncs() { syncer.drain() }
}

/// A chunk file that could not be written (disk full, permissions): the write fails and its
/// transaction rolls back, as a failed row insert would.
public struct ChunkFileError: Error, CustomStringConvertible {
    public let operation: String
    public let path: String
    public let code: Int32
    public var description: String { "cannot \(operation) chunk file \(path): \(String(cString: strerror(code)))" }
}
