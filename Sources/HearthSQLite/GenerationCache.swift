import Foundation

/// Values a service read from the database, each labelled with `Database.writeGeneration` as read
/// *before* the read that found it.
///
/// An entry answers only while the generation is still the one it was read under: any write at
/// all empties the cache, so a cache never needs to know which writes touch what it holds — it pays
/// off where reads repeat between writes, as downloads do. Values may be optionals (a known
/// absence). Used for S3's bucket settings and Storage's small objects.
public final class GenerationCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var generation = Int.min
    private var entries: [Key: Value] = [:]
    /// More keys than this are read again rather than remembered.
    private let capacity: Int

    /// A cache of at most `capacity` entries.
    public init(capacity: Int = 1024) { self.capacity = capacity }

    /// The value cached for `key` at `generation`, or nil when there is none.
    public func lookup(_ key: Key, generation: Int) -> Value? {
        lock.lock()
        defer { lock.unlock() }
        guard generation == self.generation else { return nil }
        return entries[key]
    }

    /// Remembers what a read under `generation` found for `key`.
    public func store(_ key: Key, _ value: Value, generation: Int) {
        lock.lock()
        defer { lock.unlock() }
        if generation > self.generation {
            entries.removeAll(keepingCapacity: true)
            self.generation = generation
        }
        guard generation == self.generation, entries.count < capacity else { return }
        entries[key] = value
    }
}
