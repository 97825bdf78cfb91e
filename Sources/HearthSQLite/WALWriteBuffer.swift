internal import CSQLite
import Foundation

/// One WAL file's frame writes, gathered into one `pwrite` per commit instead of two per frame.
///
/// Why: SQLite writes each WAL frame as two system calls, its 24-byte header and then its page
/// (`walWriteOneFrame`), so a Firestore commit of ~20 pages cost ~40 `pwrite`s — measured at one
/// connection, about a third of the commit's kernel time (docs/benchmarks.md, *The commit at one
/// connection: where the other half goes*). The kernel's work per byte stays; its work per call goes.
///
/// Safety rests on when the bytes reach the file. Other connections (readers, the checkpoint
/// thread) read the WAL through their own descriptors, and a frame becomes theirs to read only once
/// the writer has published the commit in the WAL index, after `sqlite3WalFrames` returns. So every
/// byte gathered here is written out before control can get there:
/// - at a commit frame's page: a commit frame's header (a 24-byte write whose "database size after
///   commit" field is not zero) that continues the frames gathered before it is gathered too, and
///   its page — the next write, at the next offset (`walWriteOneFrame` writes the header, then the
///   page, nothing between) — completes the commit: everything is written at once, in one call.
///   A commit header that does not continue gathered bytes is written at once, and its page as
///   soon as it arrives: that is also the header `walRewriteChecksums` rewrites alone (the headers
///   of frames written twice in one transaction, the commit frame's last), which nothing follows
///   before SQLite publishes the commit — each of its header writes comes right after a read of
///   that frame, which wrote out whatever was gathered, so it never continues gathered bytes;
/// - before every other call on the file (read, sync, truncate, size, close, …) and before any
///   write that does not continue the gathered bytes.
/// A write that fails here fails SQLite's write, as the direct `pwrite` would have, and the
/// transaction rolls back. What a `kill -9` can lose is only what SQLite had not yet handed back
/// from a commit, as before: an acknowledged commit is in the file (the kernel's page cache), so it
/// survives exactly as it did.
final class WALWriteBuffer {
    /// Bytes gathered before they are written anyway (a batch of many commits, a large transaction).
    /// Under 128 KiB: the unix VFS's write masks its length with 0x1ffff (`seekAndWriteFd`), so a
    /// longer write would be cut short (and 128 KiB itself, masked to 0, reported as a full disk).
    static let capacity = 120 * 1024

    private var bytes: UnsafeMutableRawPointer?
    private var count = 0
    private var start: Int64 = 0
    /// The last write was a commit frame's header: the page after it is written at once.
    private var commitPending = false

    deinit { bytes?.deallocate() }

    /// Gathers (or writes through `write`) `amount` bytes at `offset`; returns SQLite's result code.
    func write(_ data: UnsafeRawPointer, amount: Int, offset: Int64,
               through write: (UnsafeRawPointer, Int, Int64) -> Int32) -> Int32 {
        if count > 0 && offset != start + Int64(count) {
            let rc = flush(through: write)
            if rc != SQLITE_OK { return rc }
        }
        if count + amount > Self.capacity {
            let rc = flush(through: write)
            if rc != SQLITE_OK { return rc }
            if amount > Self.capacity {
                commitPending = false
                return write(data, amount, offset)
            }
        }
        let buffer: UnsafeMutableRawPointer
        if let bytes { buffer = bytes } else {
            buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.capacity, alignment: 16)
            bytes = buffer
        }
        let continues = count > 0
        if count == 0 { start = offset }
        (buffer + count).copyMemory(from: data, byteCount: amount)
        count += amount
        if commitPending {
            // The commit frame's page: the frame is complete.
            commitPending = false
            return flush(through: write)
        }
        if Self.isCommitHeader(data, amount: amount) {
            commitPending = true
            // A transaction's last frame after its others: its page follows at once and is written
            // with them. Alone (a rewritten header, or the only frame), it is written now.
            return continues ? SQLITE_OK : flush(through: write)
        }
        return SQLITE_OK
    }

    /// Writes out what is gathered: before any call on the file other than a write.
    func settle(through write: (UnsafeRawPointer, Int, Int64) -> Int32) -> Int32 {
        commitPending = false
        return flush(through: write)
    }

    private func flush(through write: (UnsafeRawPointer, Int, Int64) -> Int32) -> Int32 {
        guard count > 0, let bytes else { return SQLITE_OK }
        let n = count
        // Dropped whatever the outcome: after a failed write SQLite rolls the transaction back, and
        // bytes beyond the last commit in the WAL index are never read.
        count = 0
        return write(bytes, n, start)
    }

    /// A WAL frame header (24 bytes: page number, then the database size in pages after the commit,
    /// non-zero only in a transaction's last frame; https://sqlite.org/fileformat.html#wal_file_format).
    static func isCommitHeader(_ data: UnsafeRawPointer, amount: Int) -> Bool {
        guard amount == 24 else { return false }
        let b = data.assumingMemoryBound(to: UInt8.self)
        return b[4] | b[5] | b[6] | b[7] != 0
    }
}
