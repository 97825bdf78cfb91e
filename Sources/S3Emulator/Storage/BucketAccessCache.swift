import Foundation

/// Buckets' access settings as last read, each labelled with the database's write generation
/// (`Database.writeGeneration`) read before the read that found it.
///
/// An entry answers only while the generation is still the one it was read under: any write at
/// all (a PUT included) empties the cache, so it never needs to know which writes touch bucket
/// settings — it pays off where reads repeat between writes, as GETs do. Absent buckets are cached
/// too (as nil).
final class BucketAccessCache: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var generation = Int.min
    private var entries: [String: S3Store.BucketAccess?] = [:]
    /// More buckets than this are read again rather than remembered.
    private let capacity: Int

    init(capacity: Int = 1024) { self.capacity = capacity }

    /// The cached settings of `name` (`.some(nil)`: known absent), or nil when not cached at `generation`.
    func lookup(_ name: String, generation: Int) -> S3Store.BucketAccess?? {
        lock.lock()
        defer { lock.unlock() }
        guard generation == self.generation else { return nil }
        return entries[name]
    }

    /// Remembers what a read under `generation` found for `name`.
    func store(_ name: String, _ access: S3Store.BucketAccess?, generation: Int) {
        lock.lock()
        defer { lock.unlock() }
        if generation > self.generation {
            entries.removeAll(keepingCapacity: true)
            self.generation = generation
        }
        guard generation == self.generation, entries.count < capacity else { return }
        entries[name] = .some(access)
    }
}
