import Foundation

/// Running MD5 and CRC32C of resumable uploads, so finalizing does not read the bytes back.
///
/// A digest state cannot be copied or persisted, so an entry is only trusted while every byte
/// the session persisted went through it in order: a chunk that fails or is cut off (its bytes
/// were fed but not kept), two chunks at once, or a restart drops the entry, and finalize then
/// reads the pieces back (`StorageService.digests(of:)`).
final class UploadDigests: @unchecked Sendable {
    final class Entry {
        var offset: Int64 = 0
        /// Fed by the chunk's `BlobUploadConsumer` (on the chunk's request thread) while `busy`.
        let digest = ObjectDigest()
        var busy = false
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]

    /// The entry to feed a chunk starting at `offset` through, or nil when none can be trusted.
    func begin(_ id: String, at offset: Int64) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        if offset == 0, entries[id] == nil {
            let e = Entry()
            e.busy = true
            entries[id] = e
            return e
        }
        guard let e = entries[id], !e.busy, e.offset == offset else {
            entries[id] = nil
            return nil
        }
        e.busy = true
        return e
    }

    /// The chunk fed through `entry` ended: persisted up to `persisted` bytes, or failed (nil).
    func end(_ id: String, _ entry: Entry, persisted: Int64?) {
        lock.lock()
        defer { lock.unlock() }
        guard entries[id] === entry else { return }
        if let persisted {
            entry.offset = persisted
            entry.busy = false
        } else {
            entries[id] = nil
        }
    }

    /// The digests of the first `received` bytes, when the entry saw exactly those; removes it.
    func take(_ id: String, received: Int64) -> (md5: [UInt8], crc32c: UInt32)? {
        lock.lock()
        defer { lock.unlock() }
        guard let e = entries.removeValue(forKey: id), !e.busy, e.offset == received else { return nil }
        return e.digest.finalize()
    }

    func drop(_ id: String) {
        lock.lock()
        entries[id] = nil
        lock.unlock()
    }

    func removeAll() {
        lock.lock()
        entries.removeAll()
        lock.unlock()
    }
}
