import Foundation
import HearthCore
import SecurityRules

/// Documents as last committed, with what a read of each needs besides the row (`resource` for
/// the rules, the protobuf and JSON answers), so a repeated get skips the SQLite read, the decode
/// and the encoding. Rules are still judged on every request: an entry holds data, never a decision.
///
/// **Coherence, per document.** The writer tells the cache of every document a write transaction
/// stores (`Write`: `ChangeRecorder` does, for each commit and batchWrite, the only writers of
/// single documents) and of every other write (`beginBulk`/`endBulk`, `invalidate`: clears, writes
/// without a list of documents), so a commit ends only the entries of the documents it wrote:
/// - **Pending.** A document a transaction is about to write is marked pending on the writer before
///   its COMMIT (`Write.writing`, or `record`), until the commit's outcome is applied (`Write.apply`,
///   after the COMMIT and before its caller is answered; or `abandon`). A pending document's entry is
///   never served and never replaced by a reader, and while a bulk write is under way no entry is
///   served at all. So an entry served is the document's latest committed state at the moment of
///   the lookup: every commit that wrote it before then has been applied (else it would be pending),
///   each apply replaced the entry with the version it stored, and a reader cannot put back an older
///   one (next point). Several entries looked up under one lock (`entries`) are therefore one state
///   of the database, and the writer's own read of a document (`FirestoreService.commit`'s) may take
///   a served entry instead of the row: a commit earlier in the same batch, not committed yet, has
///   marked what it wrote pending, so the entry is also what the writer's connection would read.
///   A document the cache does not hold when it is marked (no slot) gets no slot: the version
///   written is not kept (a run of creates fills the cache with nothing nobody read), and a count
///   (`unheldPending`, then `unheldTouched`) stands for its mark: while such a write is in flight, or
///   for a reader that began before it was applied, no name without a slot is inserted.
/// - **Readers.** A reader takes `current` *before* opening its read transaction and inserts what it
///   read with it. The insert is refused when a write to that document was applied since (`Slot.touched`
///   is later), when one is pending, during a bulk write, or when the bookkeeping that would tell was
///   forgotten since (`floor`). A read that began before a write to its document committed is thus
///   either refused or inserted before that write's apply, which then replaces it.
/// - **Order.** Applies run on the callers' threads, not necessarily in commit order, so each write
///   takes a sequence number on the writer (with its first document, in commit order) and a document's entry is
///   replaced only by a write later than the last one applied to it (`Slot.seq`); a write ordered
///   before a bulk write that ended already (`bulkFloor`: a clear) stores nothing, only unmarks.
///   Pending slots are never dropped, so the order of the writes in flight is never forgotten.
///
/// Every writer of `fs_documents` is one of these: commits and batchWrites (`FirestoreStorage.write`
/// with `recorded`, through `ChangeRecorder`; imports and server-side writes are commits), other
/// `FirestoreStorage.write`/`submit` bodies (bulk), clears (`clear`, `clearAll`: bulk). The garbage
/// collector deletes rows of spaces no database names any more (the clear that let them go ended
/// every entry, and a reader finds no space for them since), the collection-group build writes
/// index rows only, and the migrations and the file move run before the storage exists.
///
/// Keys are full document names (`projects/p/databases/d/documents/…`), which name one
/// (database, path) only while the project and database ids hold no `/` (`accepts`); others
/// are not cached (nor marked: their names may spell another database's document).
final class DocumentCache: @unchecked Sendable {
    /// One document (or its absence) in one committed state. Immutable but for the encodings, made on
    /// first use.
    final class Entry: @unchecked Sendable {
        let database: DatabaseID
        let path: ResourcePath
        /// The full name (the key): always `database.name(of: path)`, which the REST get's shortcut
        /// (`FirestoreHTTPService.knownDocument`) relies on.
        let name: String
        /// nil: no such document.
        let document: StoredDocument?
        // Guarded by `lock`.
        private let lock = NSLock()
        private var resourceValue: RulesValue??
        private var rulesPathValue: [String]?
        private var validation: FirestoreError??
        private var protoBytes: [UInt8]?
        private var jsonBytes: [UInt8]?

        /// The document's key (`path.key`) when the reader had it (a query's row): only such
        /// entries are kept by key too.
        fileprivate let key: [UInt8]?

        /// - Parameter resource: `resource` when the caller has it already (the writer's rules made
        ///   it as `request.resource`).
        init(database: DatabaseID, path: ResourcePath, name: String, document: StoredDocument?, key: [UInt8]? = nil,
             resource: RulesValue? = nil) {
            self.database = database
            self.path = path
            self.name = name
            self.document = document
            self.key = key
            if let resource { resourceValue = .some(resource) }
            assert(name == database.name(of: path), "a cache entry's name must be its database's name of its path")
        }

        /// `resource` as the rules see the document (nil when absent).
        var resource: RulesValue? {
            once({ resourceValue }, { resourceValue = $0 }) {
                document.map { RulesConversion.resource(database, path: $0.path, fields: $0.fields) }
            }
        }

        /// The path as the rules see it (`RulesRequest.path`), made once rather than for every decision.
        var rulesPath: [String] {
            once({ rulesPathValue }, { rulesPathValue = $0 }) { RulesConversion.path(database, path) }
        }

        /// What `path.validate(in: database)` throws (nil: a valid name). It depends on the name
        /// alone, so a get through a kept entry need not judge it again.
        func validate() throws(FirestoreError) {
            let error = once({ validation }, { validation = $0 }) { () -> FirestoreError? in
                do throws(FirestoreError) {
                    try path.validate(in: database)
                    return nil
                } catch {
                    return error
                }
            }
            if let error { throw error }
        }

        /// The `google.firestore.v1.Document` message (only for a present document).
        var proto: [UInt8] {
            once({ protoBytes }, { protoBytes = $0 }) { document.map { DocumentProto.document($0, in: database) } ?? [] }
        }

        /// The REST `Document` JSON without a mask (only for a present document).
        var json: [UInt8] {
            once({ jsonBytes }, { jsonBytes = $0 }) {
                var w = JSONWriter()
                if let document { w.document(document, in: database, mask: nil) }
                return w.bytes
            }
        }

        /// The value `get` reads under the lock, made by `make` (outside it) and stored by `set` when
        /// absent. Two racing readers make equal values, and either may be kept.
        private func once<T>(_ get: () -> T?, _ set: (T) -> Void, _ make: () -> T) -> T {
            lock.lock()
            let kept = get()
            lock.unlock()
            if let kept { return kept }
            let made = make()
            lock.lock()
            set(made)
            lock.unlock()
            return made
        }
    }

    /// Firestore's size (`StoredDocument.storageSize`) of the documents kept, at most; past it the
    /// cache starts over. With the encodings and `resource` an entry holds a few times its size.
    static let capacityBytes = 1 << 20
    /// Names tracked at most (kept entries, and written documents' bookkeeping); past it the cache
    /// starts over.
    static let capacityEntries = 1024
    /// Larger documents are not kept (one would crowd out hundreds of small ones).
    static let maxDocumentBytes = 16 << 10

    /// What the cache knows of one name.
    private struct Slot {
        /// The document's latest committed state, when kept.
        var entry: Entry?
        /// Writes recorded for it on the writer and not yet applied or abandoned.
        var pending: Int32 = 0
        /// `generation` when a write to it was last applied: readers that took `current` before
        /// then may not insert.
        var touched: UInt64 = 0
        /// The order (`Write.seq`) of the last write whose version was stored here.
        var seq: UInt64 = 0
        /// `entry`'s document's `storageSize` (counted in `bytes`).
        var size = 0
    }

    // Guarded by `lock`.
    private let lock = NSLock()
    /// Grows with every apply and every bulk end or reset: a reader's `current`.
    private var generation: UInt64 = 0
    /// Readers that took `current` below it may insert nothing: a reset or bulk write forgot which
    /// documents were written since.
    private var floor: UInt64 = 0
    /// By name's bytes: names differing only in Unicode normalisation are two documents, which as
    /// `String` keys handed one's data to the other's reader.
    private var slots: [ExactString: Slot] = [:]
    /// The entries made by queries (`version(in:key:…)`) again, by database and document key, which
    /// a query's row holds: a repeated query finds a kept version without building the name or the
    /// path first. Entries kept by other reads are not here (computing every entry's key would cost
    /// their misses): a query then reads that version once more and keeps its own entry. Only ever
    /// used for the very version a row holds (`version(in:key:…)` compares the times), so an entry
    /// here may outlive its slot's.
    private var byKey: [KeptKey: Entry] = [:]
    private var bytes = 0
    /// The next write's or bulk write's place in the writer's order.
    private var nextSeq: UInt64 = 1
    /// Bulk writes begun on the writer and not yet ended: no entry is served meanwhile.
    private var bulk = 0
    /// The latest bulk write's place (`nextSeq`) that has ended: a write ordered before it stores nothing.
    private var bulkFloor: UInt64 = 0
    /// Documents marked by writes in flight that the cache did not hold (no slot; see `mark`):
    /// while any is, no reader inserts a name without a slot.
    private var unheldPending = 0
    /// `generation` when such a write was last applied: readers that took `current` before may not
    /// insert a name without a slot.
    private var unheldTouched: UInt64 = 0

    /// Whether documents of `db` may be kept (see the type's note on keys).
    static func accepts(_ db: DatabaseID) -> Bool {
        !db.project.utf8.contains(0x2F) && !db.database.utf8.contains(0x2F)
    }

    /// The reader's token: take it before opening the read whose result `insert` will get.
    var current: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return generation
    }

    /// The entry for `name`: the document's latest committed state (see the type's note), if kept.
    func entry(_ name: String) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        return served(ExactString(name))
    }

    /// The entries for `names`, all of one committed state (looked up under one lock), when every
    /// one is kept; else nil.
    func entries(_ names: [String]) -> [Entry]? {
        var out: [Entry] = []
        out.reserveCapacity(names.count)
        lock.lock()
        defer { lock.unlock() }
        for name in names {
            guard let entry = served(ExactString(name)) else { return nil }
            out.append(entry)
        }
        return out
    }

    /// `name`'s entry when it may be served (`lock` held).
    private func served(_ name: ExactString) -> Entry? {
        guard bulk == 0, let slot = slots[name], slot.pending == 0 else { return nil }
        return slot.entry
    }

    /// Keeps `entry`, read in a transaction opened after `current` was `token`, unless a write to
    /// its document was applied since or is pending (then its state may already be old).
    func insert(_ entry: Entry, readAt token: UInt64) {
        let size = entry.document?.storageSize ?? 0
        guard size <= Self.maxDocumentBytes else { return }
        let name = ExactString(entry.name)
        lock.lock()
        guard bulk == 0, token >= floor else { return lock.unlock() }
        if let slot = slots[name] {
            if slot.pending > 0 || slot.touched > token { return lock.unlock() }
        } else if unheldPending > 0 || unheldTouched > token {
            return lock.unlock()
        }
        var dropped: Dropped?
        if bytes + size > Self.capacityBytes || slots.count >= Self.capacityEntries { dropped = reset() }
        let old = store(entry, size: size, in: &slots[name, default: Slot()])
        lock.unlock()
        withExtendedLifetime((dropped, old)) {}
    }

    /// Puts `entry` (nil: none) of `size` bytes in `slot` (`lock` held; the slot is reached once,
    /// in place: every further lookup hashed the ~90-byte name again). Returns the entry replaced,
    /// to be released after the lock.
    private func store(_ entry: Entry?, size: Int, in slot: inout Slot) -> Entry? {
        let old = slot.entry
        if let old, let key = old.key { byKey[KeptKey(database: old.database, key: key)] = nil }
        bytes += size - slot.size
        slot.entry = entry
        slot.size = entry == nil ? 0 : size
        if let entry, let key = entry.key {
            // A query keeps its page at once: room for one up front, not four regrowths from one.
            if byKey.isEmpty { byKey.reserveCapacity(16) }
            byKey[KeptKey(database: entry.database, key: key)] = entry
        }
        return old
    }

    /// What a reset let go, released after the lock.
    private typealias Dropped = ([ExactString: Slot], [KeptKey: Entry])

    /// Starts over (`lock` held): every entry goes, and with it what was known of the writes applied
    /// so far, so readers that began before now may insert nothing (`floor`). Slots with writes
    /// pending stay, without their entries: their count and order are still needed.
    private func reset() -> Dropped {
        generation &+= 1
        floor = generation
        let dropped = (slots, byKey)
        var kept: [ExactString: Slot] = [:]
        for (name, slot) in slots where slot.pending > 0 {
            kept[name] = Slot(entry: nil, pending: slot.pending, touched: slot.touched, seq: slot.seq, size: 0)
        }
        slots = kept
        byKey = [:]
        bytes = 0
        return dropped
    }

    /// The REST `Document` JSON (no mask) of `doc`, read by a query or listing in a read opened
    /// after `generation` (`current` taken before it): a kept entry's bytes when the entry holds this
    /// very version of the document (same name, create and update times), else encoded now and,
    /// when `keep`, kept for the next read. A page of 50 documents spent ~40% of its CPU encoding
    /// them (docs/benchmarks.md, listbench); a repeated page, like a repeated get, reuses the bytes.
    ///
    /// The version check, not whether the entry is current, decides a hit, so the answer is always the
    /// version the caller's own read returned: a commit between that read and this lookup can never
    /// mix states within one page. `keep` only for current reads (a past `readTime` or a
    /// transaction's snapshot is not the state a later get may be answered with).
    func json(of doc: StoredDocument, in db: DatabaseID, readAt generation: UInt64, keep: Bool) -> [UInt8] {
        version(of: doc, in: db, readAt: generation, keep: keep).json
    }

    /// The `google.firestore.v1.Document` protobuf (no mask) of `doc`, as `json(of:in:readAt:keep:)`
    /// gives its JSON: a kept entry's bytes for this very version, else encoded now (and kept when
    /// `keep`). What gRPC RunQuery and BatchGetDocuments answer a document with.
    func proto(of doc: StoredDocument, in db: DatabaseID, readAt generation: UInt64, keep: Bool) -> [UInt8] {
        version(of: doc, in: db, readAt: generation, keep: keep).proto
    }

    /// The kept entry holding this very version of `doc` (same name, create and update times), else a
    /// new one, kept when `keep` (and when `db`'s names can be keys at all).
    private func version(of doc: StoredDocument, in db: DatabaseID, readAt generation: UInt64, keep: Bool) -> Entry {
        let name = db.name(of: doc.path)
        let cacheable = Self.accepts(db)
        if cacheable, let kept = kept(name, createTime: doc.createTime, updateTime: doc.updateTime) { return kept }
        let made = Entry(database: db, path: doc.path, name: name, document: doc)
        if keep && cacheable { insert(made, readAt: generation) }
        return made
    }

    /// The kept entry named `name` when it holds the version with these times (a document's
    /// name and times identify one version of its fields), else nil: served or not (a write to it
    /// may be pending), as only its bytes for this version are wanted. Only for names of a database
    /// the cache `accepts`.
    private func kept(_ name: String, createTime: Instant, updateTime: Instant) -> Entry? {
        lock.lock()
        let entry = slots[ExactString(name)]?.entry
        lock.unlock()
        guard let kept = entry, let known = kept.document, known.updateTime == updateTime,
              known.createTime == createTime else { return nil }
        return kept
    }

    /// A version of a document a query read, named once: `entry` is the kept entry when the cache
    /// held this very version (whose fields then need no decoding), else a new entry not kept yet.
    struct Version {
        let entry: Entry
        let wasKept: Bool
        var document: StoredDocument { entry.document! }
    }

    /// A kept entry's place in `byKey`: a name is one (database, key) for the databases the cache
    /// `accepts`, so an entry there holds a version of the document its slot names (the slot's own,
    /// or one it held before: callers compare the times).
    private struct KeptKey: Hashable {
        let database: DatabaseID
        let key: [UInt8]

        /// The key's bytes hashed at once: the synthesized hash fed them one by one (~1.2k a lookup).
        func hash(into hasher: inout Hasher) {
            hasher.combine(database)
            key.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// The version of the document with key `key` in `db` with these times: the kept entry's when
    /// it holds it (neither the path, nor the name, nor the fields made), else one made from `path()`
    /// and the fields `decode` gives. A query streaming its answer reads each document this way, so
    /// a repeated query decodes none of the documents it returns, and its answer's encoding
    /// (`proto(of:readAt:keep:)`) looks nothing up again.
    func version(in db: DatabaseID, key: [UInt8], createTime: Instant, updateTime: Instant, path: () throws -> ResourcePath,
                 decode: () throws -> [ExactString: FirestoreValue]) rethrows -> Version {
        // No `accepts` check: a (database, key) pair names one document in any database (only names
        // are ambiguous), and entries of databases the cache does not accept are never kept.
        if let kept = kept(KeptKey(database: db, key: key)), let known = kept.document,
           known.updateTime == updateTime, known.createTime == createTime {
            return Version(entry: kept, wasKept: true)
        }
        let path = try path()
        let doc = StoredDocument(path: path, fields: try decode(), createTime: createTime, updateTime: updateTime)
        return Version(entry: Entry(database: db, path: path, name: db.name(of: path), document: doc, key: key), wasKept: false)
    }

    /// The entry kept under `key`, if any (its version may be old: the caller compares the times).
    private func kept(_ key: KeptKey) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        return byKey[key]
    }

    /// `proto(of:in:readAt:keep:)` of a version read by `version(in:key:…)` in a read opened after
    /// `generation`: its entry's encoding, the entry kept when `keep` and it was not kept already.
    func proto(of version: Version, readAt generation: UInt64, keep: Bool) -> [UInt8] {
        keepIfNew(version, readAt: generation, keep: keep).proto
    }

    /// `json(of:in:readAt:keep:)` of a version read by `version(in:key:…)`, as `proto(of:readAt:keep:)`.
    func json(of version: Version, readAt generation: UInt64, keep: Bool) -> [UInt8] {
        keepIfNew(version, readAt: generation, keep: keep).json
    }

    private func keepIfNew(_ version: Version, readAt generation: UInt64, keep: Bool) -> Entry {
        if keep && !version.wasKept && Self.accepts(version.entry.database) { insert(version.entry, readAt: generation) }
        return version.entry
    }

    /// Forgets every entry, for a write that did not say which documents it wrote, or failed (the
    /// caller's transaction rolled back: nothing changed, but the cost of forgetting is a few misses):
    /// call after it ended, before its caller is answered. Writes in flight keep their places.
    func invalidate() {
        lock.lock()
        let dropped = reset()
        lock.unlock()
        withExtendedLifetime(dropped) {}
    }

    // MARK: The writer's side

    /// One write transaction's documents, as the writer reports them (see the type's note): made
    /// for the transaction (`beginWrite`), told on the writer, before its COMMIT, of each document
    /// it is about to write (`writing`, which marks it) and of what it stored (`record`), and ended
    /// once: `apply` after the COMMIT succeeded and before the caller is answered, or `abandon` when
    /// the transaction failed. Used by one thread at a time (the writer's body, then its caller).
    final class Write: @unchecked Sendable {
        private let cache: DocumentCache
        private let database: DatabaseID
        /// Its place in the writer's order, taken with the first document marked (on the writer).
        private var seq: UInt64 = 0
        /// Whether documents of `database` are cached at all (`accepts`): if not, nothing is marked.
        private let cached: Bool
        private var marks: [Mark] = []
        private var ended = false
        /// The transaction may have stored something it did not record (`storedUnknown`): it is
        /// then a bulk write too, begun with this place.
        private var bulk: UInt64?

        /// A document marked pending, and what the transaction stored there, once recorded.
        fileprivate struct Mark {
            /// Nil when not held (the name was not needed).
            let name: ExactString?
            let path: ResourcePath
            var recorded = false
            var after: StoredDocument?
            var resource: RulesValue?
        }

        fileprivate init(cache: DocumentCache, database: DatabaseID) {
            self.cache = cache
            self.database = database
            cached = DocumentCache.accepts(database)
        }

        /// The transaction is about to write `path` (named `name`, when the caller has it): marks it
        /// pending, and returns its entry when one was served just before (the committed state the
        /// writer reads), with the mark's number for `record`. Nil mark: the database is not cached.
        func writing(_ path: ResourcePath, name: String?) -> (entry: Entry?, mark: Int?) {
            guard cached else { return (nil, nil) }
            let (entry, held) = cache.mark(name, of: path, in: database, for: &seq)
            marks.append(Mark(name: held, path: path))
            return (entry, marks.count - 1)
        }

        /// The transaction stored `after` at `path` (nil: deleted it); on the writer, before its COMMIT.
        /// - Parameters:
        ///   - mark: what `writing` returned for it (nil: not marked yet, marked now).
        ///   - name: `database.name(of: path)`, when the caller has it.
        ///   - resource: `after` as the rules see it, when the caller made it (`Entry.resource`).
        func record(_ path: ResourcePath, mark: Int? = nil, name: String? = nil, after: StoredDocument?, resource: RulesValue? = nil) {
            guard cached else { return }
            let i = mark ?? writing(path, name: name).mark!
            marks[i].recorded = true
            marks[i].after = after
            marks[i].resource = resource
        }

        /// A statement failed half-way and the transaction went on (batchWrite answers such a write
        /// on its own): what it left is not known, so this write becomes a bulk one (on the writer).
        func storedUnknown() {
            if bulk == nil { bulk = cache.beginBulk() }
        }

        /// The transaction committed: each held document's entry becomes the version it stored.
        func apply() {
            guard !ended else { return }
            ended = true
            if let bulk {
                cache.unmark(marks)
                return cache.endBulk(bulk)
            }
            guard !marks.isEmpty else { return }
            // Made before the lock (the callers' threads, not the writer's).
            var stored: [Stored] = []
            stored.reserveCapacity(marks.count)
            var unheld = 0
            for m in marks {
                guard let name = m.name else {
                    unheld += 1
                    continue
                }
                guard m.recorded else {
                    stored.append(Stored(name: name, recorded: false, entry: nil, size: 0))
                    continue
                }
                let size = m.after?.storageSize ?? 0
                let entry = size <= DocumentCache.maxDocumentBytes
                    ? Entry(database: database, path: m.path, name: name.string, document: m.after, resource: m.resource) : nil
                stored.append(Stored(name: name, recorded: true, entry: entry, size: entry == nil ? 0 : size))
            }
            cache.apply(stored, unheld: unheld, seq: seq)
        }

        /// The transaction failed: nothing it recorded was stored.
        func abandon() {
            guard !ended else { return }
            ended = true
            if !marks.isEmpty { cache.unmark(marks) }
            if let bulk { cache.endBulk(bulk) }
        }
    }

    /// A held document of an applied write: its new entry (nil: none kept) when it was recorded.
    private struct Stored {
        let name: ExactString
        let recorded: Bool
        let entry: Entry?
        let size: Int
    }

    /// A write transaction's report (see `Write`).
    func beginWrite(_ db: DatabaseID) -> Write {
        Write(cache: self, database: db)
    }

    /// Marks `path` of `db` (named `name`, made here when needed) about to be written (on the
    /// writer; the write's place `seq` is taken with its first document) and returns its entry
    /// when it was served just before, and its name when the cache holds it. A name the cache holds
    /// (a slot: an entry, or writes in flight) is marked in its slot; one it does not hold gets no
    /// slot, only a count (`unheldPending`) that keeps every reader from inserting a name without a
    /// slot meanwhile — the written version is then not kept, so a run of creates adds no entries
    /// nobody read, and into an empty cache costs no name at all.
    private func mark(_ name: String?, of path: ResourcePath, in db: DatabaseID, for seq: inout UInt64)
        -> (entry: Entry?, held: ExactString?) {
        lock.lock()
        defer { lock.unlock() }
        if seq == 0 {
            seq = nextSeq
            nextSeq &+= 1
        }
        if !slots.isEmpty {
            let name = ExactString(name ?? db.name(of: path))
            if let i = slots.index(forKey: name) {
                let entry = bulk == 0 && slots.values[i].pending == 0 ? slots.values[i].entry : nil
                slots.values[i].pending += 1
                return (entry, name)
            }
        }
        unheldPending += 1
        return (nil, nil)
    }

    /// Whether the cache holds no name at all (then a lookup cannot find one, and the writer need
    /// not make the name to ask).
    var isEmpty: Bool {
        lock.lock()
        defer { lock.unlock() }
        return slots.isEmpty
    }

    /// Unmarks the documents of an abandoned (or bulk) write.
    private func unmark(_ marks: [Write.Mark]) {
        lock.lock()
        for m in marks {
            if let name = m.name { slots[name]?.pending -= 1 } else { unheldPending -= 1 }
        }
        lock.unlock()
    }

    /// Applies a committed write (`seq` its place): each held document it recorded gets the version
    /// it stored (nil: too large to keep, none) unless a later write was applied to it already or a
    /// bulk write ordered after it has ended; `unheld` documents were not held and are not kept.
    private func apply(_ stored: [Stored], unheld: Int, seq: UInt64) {
        var replaced: [Entry] = []
        lock.lock()
        generation &+= 1
        if unheld > 0 {
            unheldPending -= unheld
            unheldTouched = generation
        }
        for s in stored {
            // Marked in its slot, so kept by every reset: the default is never used.
            update(&slots[s.name, default: Slot()], s, seq: seq, replaced: &replaced)
        }
        var dropped: Dropped?
        if bytes > Self.capacityBytes || slots.count > Self.capacityEntries { dropped = reset() }
        lock.unlock()
        withExtendedLifetime((dropped, replaced)) {}
    }

    /// One document of `apply` (`lock` held).
    private func update(_ slot: inout Slot, _ s: Stored, seq: UInt64, replaced: inout [Entry]) {
        slot.pending -= 1
        guard s.recorded else { return }  // written as it was (a no-op write): the entry holds
        slot.touched = generation
        guard seq > slot.seq && seq > bulkFloor else { return }
        slot.seq = seq
        if let old = store(s.entry, size: s.size, in: &slot) { replaced.append(old) }
    }

    /// A write that changes documents without naming them (a clear) begins, on the writer inside
    /// its transaction: no entry is served until `endBulk` with what this returns.
    func beginBulk() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        bulk += 1
        let seq = nextSeq
        nextSeq &+= 1
        return seq
    }

    /// The bulk write `seq` ended (committed or not; before its caller is answered): every entry
    /// goes, and writes ordered before it store nothing when they apply later.
    func endBulk(_ seq: UInt64) {
        lock.lock()
        bulk -= 1
        bulkFloor = max(bulkFloor, seq)
        let dropped = reset()
        lock.unlock()
        withExtendedLifetime(dropped) {}
    }
}
