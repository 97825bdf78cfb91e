import Foundation

/// Values a service read from the database, each labelled with `Database.writeGeneration` as read
/// *before* the read that found it.
///
/// An entry answers only while the generation is still the one it was read under: any write at
/// all (a PUT, a Firestore commit) empties the cache, so a cache never needs to know which writes
/// touch what it holds, and nothing stale outlives an acknowledged write (the generation moves
/// after a write commits and before its caller is answered). It pays off where reads repeat
/// between writes, as GETs and downloads do. Values may be optionals (a known absence). Bounded by
/// entry count and by a cost (bytes held); when either would be exceeded the entry is simply not
/// remembered — the next write empties the cache anyway. Used for S3's bucket settings and small
/// objects and Storage's small objects.
public final class GenerationCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var generation = Int.min
    private var entries: [Key: Value] = [:]
    private var heldCost = 0
    private let capacity: Int
    private let maxCost: Int
    private let cost: @Sendable (Value) -> Int

    /// A cache of at most `capacity` entries whose `cost`s sum to at most `maxCost`.
    public init(capacity: Int = 1024, maxCost: Int = .max, cost: @escaping @Sendable (Value) -> Int = { _ in 0 }) {
        self.capacity = capacity
        self.maxCost = maxCost
        self.cost = cost
    }

    /// The value cached for `key` at `generation`, or nil when there is none.
    public func lookup(_ key: Key, generation: Int) -> Value? {
        lock.lock()
        defer { lock.unlock() }
        guard generation == self.generation else { return nil }
        return entries[key]
    }

    /// Remembers what a read under `generation` found for `key`.
    public func store(_ key: Key, _ value: Value, generation: Int) {
        let c = cost(value)
        lock.lock()
        defer { lock.unlock() }
        if generation > self.generation {
            entries.removeAll(keepingCapacity: true)
            heldCost = 0
            self.generation = generation
        }
        guard generation == self.generation, entries.count < capacity, entries[key] == nil, heldCost + c <= maxCost else { return }
        entries[key] = value
        heldCost += c
    }

    /// How many entries are held (tests).
    public var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}
