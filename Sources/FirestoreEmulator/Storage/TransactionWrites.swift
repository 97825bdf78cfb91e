import Foundation
import HearthCore
import SecurityRules

/// The versions read-write transactions last committed, so that the next transaction's read of the
/// same document (a client's read-modify-write loop: begin, read, commit, begin again) comes from
/// memory instead of a reader's snapshot. A reader connection re-reads the WAL pages every commit
/// changed (2–4 `pread64` and a read transaction's locks per transaction, docs/benchmarks.md,
/// restcpu); the writer already had the version in hand.
///
/// Unlike the read cache's per-document coherence (txnread, measured and not taken: every create paid
/// a mark and an apply), nothing here costs a create or a commit outside a transaction anything but
/// one lookup per *replaced or deleted* document. The argument, with one slot per (space, path):
/// - Slots are made only by `writing`, which a read-write transaction's commit calls on the single
///   writer, inside its write transaction (before its COMMIT), for every document it writes: the slot
///   becomes *pending* at that commit's time. Nothing else makes a slot; dropping slots (`removeAll`,
///   the capacity) is always safe.
/// - `committed`, after that COMMIT, fills the slot with the version written — only while the slot
///   is still pending at the same commit time. Any later write of the document made the slot pending
///   again first (next point), so a late fill never hides a newer version; it never makes a slot.
/// - Every update and delete of a document (`FirestoreStorage.put` replacing a version, `delete`) on
///   the writer, inside its transaction, makes the document's slot pending — if it has one — with a
///   time no fill carries (`never`). A create needs nothing: a filled slot holds a present document,
///   so a document being created either has no slot or one a delete has already made pending.
/// - A filled slot is therefore the latest committed version of its document: the writer that made
///   it stale would have made it pending before its COMMIT. Several slots read under one lock hold are
///   one state of the database. Failed writes leave slots pending (never filled): their readers read
///   the store as before.
/// - Space ids are never reused, and a clear points the database at a new space (and drops every
///   slot inside its transaction), so a slot never outlives the data it describes.
final class TransactionWrites: @unchecked Sendable {
    struct Key: Hashable {
        let space: Int64
        let path: ResourcePath

        /// Hashed by the space and the document's id only (equality still compares every segment):
        /// the id spreads the keys, and a transaction makes five lookups, each of which hashed every
        /// segment's bytes (the saving was inside the count's spread: docs/benchmarks.md, txn25).
        func hash(into hasher: inout Hasher) {
            hasher.combine(space)
            hasher.combine(path.segments.count)
            ExactString(path.lastSegment).hash(into: &hasher)
        }
    }

    private struct Slot {
        /// The commit time of the transaction whose fill is awaited (or was made), or `never`.
        var time: Int64
        /// The committed version; nil while pending.
        var document: StoredDocument?
        /// Its `storageSize` (0 while pending).
        var size = 0
        /// The version as the rules' `resource` (`RulesConversion.resource`), when the commit that
        /// wrote it had made it (its `request.resource`).
        var resource: RulesValue?
        /// Its fields' stored form (`StoredValueCodec.encodeFields`), when the commit that wrote it stored them.
        var encoded: [UInt8]?
    }

    /// A held version: the document, its rules `resource` when the commit that wrote it made it (the
    /// next transaction's read and commit judge that version: made once, not three times), and its
    /// fields' stored form when that commit stored them (the next commit keeps the version in the
    /// history rows: encoded once, not twice).
    struct Held {
        let document: StoredDocument
        let resource: RulesValue?
        let encoded: [UInt8]?
    }

    /// What a commit wrote to one document: the version (nil: deleted), and what `Held` carries.
    struct Version {
        let path: ResourcePath
        let document: StoredDocument?
        var resource: RulesValue? = nil
        var encoded: [UInt8]? = nil
    }

    /// The time of a pending mark made by a write that fills nothing.
    private static let never = Int64.max
    /// Slots kept at most (pending ones included); past it they all go. A client's loop needs one.
    static let capacity = 1024
    /// Firestore's size of the versions held, at most, and of one version (as `DocumentCache`'s):
    /// a fill past either leaves its slot pending.
    static let capacityBytes = DocumentCache.capacityBytes
    static let maxDocumentBytes = DocumentCache.maxDocumentBytes

    // Guarded by `lock`: request threads read, the writer and commit completions write.
    private let lock = NSLock()
    private var slots: [Key: Slot] = [:]
    private var bytes = 0

    /// A read-write transaction's commit will write `path` at `time` (on the writer, inside its write
    /// transaction, after every check: only SQLite can fail it now).
    func writing(space: Int64, path: ResourcePath, at time: Int64) {
        lock.lock()
        if slots.count >= Self.capacity {
            slots.removeAll(keepingCapacity: true)
            bytes = 0
        }
        if let old = slots.updateValue(Slot(time: time, document: nil), forKey: Key(space: space, path: path)) { bytes -= old.size }
        lock.unlock()
    }

    /// An existing document is replaced or deleted (on the writer, inside its write transaction).
    func replacing(space: Int64, path: ResourcePath) {
        lock.lock()
        // Found once and changed in place; no slot is made here.
        if !slots.isEmpty, let i = slots.index(forKey: Key(space: space, path: path)) {
            bytes -= slots.values[i].size
            slots.values[i] = Slot(time: Self.never, document: nil)
        }
        lock.unlock()
    }

    /// The commit at `time` that called `writing` for these documents has committed: each one's
    /// version (nil: deleted, which stays pending) fills its slot, with what the commit made of it
    /// (`Version`), if nothing wrote it since.
    func committed(space: Int64, at time: Int64, _ versions: [Version]) {
        // Sized before the lock is taken.
        let sizes = versions.map { $0.document?.storageSize ?? 0 }
        lock.lock()
        for (v, size) in zip(versions, sizes) {
            guard let document = v.document, size <= Self.maxDocumentBytes else { continue }
            guard let i = slots.index(forKey: Key(space: space, path: v.path)) else { continue }
            let slot = slots.values[i]
            guard slot.time == time, bytes - slot.size + size <= Self.capacityBytes else { continue }
            bytes += size - slot.size
            slots.values[i] = Slot(time: time, document: document, size: size, resource: v.resource, encoded: v.encoded)
        }
        lock.unlock()
    }

    /// The latest committed versions of `paths` in `space` (each with what `Held` carries), when
    /// every one of them is held (one state of the database); nil otherwise.
    func held(space: Int64, paths: [ResourcePath]) -> [Held]? {
        var out: [Held] = []
        out.reserveCapacity(paths.count)
        lock.lock()
        defer { lock.unlock() }
        if slots.isEmpty { return nil }
        for path in paths {
            guard let slot = slots[Key(space: space, path: path)], let document = slot.document else { return nil }
            out.append(Held(document: document, resource: slot.resource, encoded: slot.encoded))
        }
        return out
    }

    /// The latest committed version of `path` in `space` when held, else nil (not held, or absent).
    /// On the writer, inside a write transaction, that is the version its connection reads: an earlier
    /// body of the same batch that wrote the document made its slot pending.
    func document(space: Int64, path: ResourcePath) -> Held? {
        lock.lock()
        defer { lock.unlock() }
        if slots.isEmpty { return nil }
        guard let slot = slots[Key(space: space, path: path)], let document = slot.document else { return nil }
        return Held(document: document, resource: slot.resource, encoded: slot.encoded)
    }

    /// Forgets every slot (a clear or reset, inside its write transaction).
    func removeAll() {
        lock.lock()
        slots.removeAll()
        bytes = 0
        lock.unlock()
    }
}
