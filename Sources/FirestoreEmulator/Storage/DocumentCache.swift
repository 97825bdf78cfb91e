import Foundation
import HearthCore
import SecurityRules
import Synchronization

/// Documents as last committed, with what a read of each needs besides the row (`resource` for
/// the rules, the protobuf and JSON answers), so a repeated get skips the SQLite read, the decode
/// and the encoding. Rules are still judged on every request: an entry holds data, never a decision.
///
/// Coherence is one counter. Every write transaction of `FirestoreStorage` bumps `generation` once
/// it has committed (or failed) and before its caller hears of it; an entry is served only at the
/// generation it was read at. A reader takes the generation *before* opening its read transaction
/// and inserts only if it is still current, so an entry always holds a state at least as new as
/// the last acknowledged write: a read that raced a commit is simply not kept. Any write empties
/// the cache (no per-document bookkeeping that could miss a path); a read-mostly workload, the one
/// this serves, keeps it.
///
/// A current gRPC RunQuery answered on the HTTP/2 loop also keeps its answer (`Answer`: the
/// entries of the documents it returned, under the request's bytes) at the same generation, so the
/// same query asked again before any write is answered without a read; the rules judge each call.
///
/// Keys are full document names (`projects/p/databases/d/documents/…`), which name one
/// (database, path) only while the project and database ids hold no `/` (`accepts`); others
/// are not cached.
final class DocumentCache: @unchecked Sendable {
    /// One document (or its absence) at one generation. Immutable but for the encodings, made on
    /// first use.
    final class Entry: @unchecked Sendable {
        let database: DatabaseID
        let path: ResourcePath
        /// The full name (the key): always `database.name(of: path)`, which the REST get's shortcut
        /// (`FirestoreHTTPService.knownDocument`) relies on.
        let name: String
        /// nil: no such document.
        let document: StoredDocument?
        // Written once each, under `lock`, before its bit in `made` is set; read without the lock
        // once the bit is seen set (`once`). Unchecked: the lock and the bits keep accesses apart.
        private let lock = NSLock()
        private let made = Atomic<UInt8>(0)
        @exclusivity(unchecked) private var resourceValue: RulesValue??
        @exclusivity(unchecked) private var rulesPathValue: [String]?
        @exclusivity(unchecked) private var validation: FirestoreError??
        @exclusivity(unchecked) private var protoBytes: [UInt8]?
        @exclusivity(unchecked) private var jsonBytes: [UInt8]?

        /// The document's key (`path.key`) when the reader had it (a query's row): only such
        /// entries are kept by key too.
        fileprivate let key: [UInt8]?

        init(database: DatabaseID, path: ResourcePath, name: String, document: StoredDocument?, key: [UInt8]? = nil) {
            self.database = database
            self.path = path
            self.name = name
            self.document = document
            self.key = key
            assert(name == database.name(of: path), "a cache entry's name must be its database's name of its path")
        }

        /// `resource` as the rules see the document (nil when absent).
        var resource: RulesValue? {
            once(1, { resourceValue }, { resourceValue = $0 }) {
                document.map { RulesConversion.resource(database, path: $0.path, fields: $0.fields) }
            }
        }

        /// The path as the rules see it (`RulesRequest.path`), made once rather than for every decision.
        var rulesPath: [String] {
            once(2, { rulesPathValue }, { rulesPathValue = $0 }) { RulesConversion.path(database, path) }
        }

        /// What `path.validate(in: database)` throws (nil: a valid name). It depends on the name
        /// alone, so a get through a kept entry need not judge it again.
        func validate() throws(FirestoreError) {
            let error = once(4, { validation }, { validation = $0 }) { () -> FirestoreError? in
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
            once(8, { protoBytes }, { protoBytes = $0 }) { document.map { DocumentProto.document($0, in: database) } ?? [] }
        }

        /// The REST `Document` JSON without a mask (only for a present document).
        var json: [UInt8] {
            once(16, { jsonBytes }, { jsonBytes = $0 }) {
                var w = JSONWriter()
                if let document { w.document(document, in: database, mask: nil) }
                return w.bytes
            }
        }

        /// The value `get` reads, made by `make` (outside the lock) and stored by `set` when absent.
        /// Two racing readers make equal values; the first stored is kept, and never written again:
        /// once `bit` is seen set it is read without the lock. Every get reads four of these, and
        /// taken for each, the lock cost ~75 instructions a read (and was shared by every thread
        /// reading the document).
        private func once<T>(_ bit: UInt8, _ get: () -> T?, _ set: (T) -> Void, _ make: () -> T) -> T {
            // Acquiring: the value was stored before the bit was set (releasing, below).
            if made.load(ordering: .acquiring) & bit != 0, let kept = get() { return kept }
            let value = make()
            lock.lock()
            defer { lock.unlock() }
            if made.load(ordering: .relaxed) & bit == 0 {
                set(value)
                made.bitwiseOr(bit, ordering: .releasing)
            }
            return get() ?? value
        }
    }

    /// Firestore's size (`StoredDocument.storageSize`) of the documents kept, at most; past it the
    /// cache starts over. With the encodings and `resource` an entry holds a few times its size.
    static let capacityBytes = 1 << 20
    static let capacityEntries = 1024
    /// Larger documents are not kept (one would crowd out hundreds of small ones).
    static let maxDocumentBytes = 16 << 10

    // Guarded by `lock`.
    private let lock = NSLock()
    private var generation: UInt64 = 0
    /// Every entry in `entries` was read at this generation.
    private var entriesGeneration: UInt64 = 0
    /// By name's bytes: names differing only in Unicode normalisation are two documents, which as
    /// `String` keys handed one's data to the other's reader.
    private var entries: [ExactString: Entry] = [:]
    /// The entries made by queries (`version(in:key:…)`) again, by database and document key, which
    /// a query's row holds: a repeated query finds a kept version without building the name or the
    /// path first. Entries kept by other reads are not here (computing every entry's key would cost
    /// their misses): a query then reads that version once more and keeps its own entry.
    private var byKey: [KeptKey: Entry] = [:]
    private var bytes = 0
    /// Current queries' answers (`answer(_:)`), all read at `answersGeneration`.
    private var answers: [RequestBytesKey: Answer] = [:]
    private var answersGeneration: UInt64 = 0
    private var answerBytes = 0
    /// The entry a lookup by name found last (always one of `entries`, nil when they are dropped):
    /// a client reads one document again and again, and comparing the requested name's bytes with
    /// this entry's (a `memcmp`) spares making the name a string, hashing it and probing `entries`
    /// (~1.6k instructions a gRPC get). Data, not a decision: served only while `entries` are current.
    private var lastFound: Entry?

    /// Whether documents of `db` may be kept (see the type's note on keys).
    static func accepts(_ db: DatabaseID) -> Bool {
        !db.project.utf8.contains(0x2F) && !db.database.utf8.contains(0x2F)
    }

    /// The current generation: take it before opening the read whose result `insert` will get.
    var current: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return generation
    }

    /// The entry for `name` at the current generation, if kept.
    func entry(_ name: String) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        guard entriesGeneration == generation else { return nil }
        let found = entries[ExactString(name)]
        if let found { lastFound = found }
        return found
    }

    /// `entry(_:)` of the name whose UTF-8 bytes are `name` (a request's, where it arrived): the
    /// entry found last when its name is these bytes, without a string made or hashed.
    func entry(utf8 name: UnsafeBufferPointer<UInt8>) -> Entry? {
        lock.lock()
        if entriesGeneration == generation, let last = lastFound, Self.same(last.name, name) {
            lock.unlock()
            return last
        }
        lock.unlock()
        return entry(String(decoding: name, as: UTF8.self))
    }

    /// Whether `name`'s UTF-8 is exactly `bytes` (as `ExactString` compares keys).
    private static func same(_ name: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        name.utf8.withContiguousStorageIfAvailable { utf8 in
            utf8.count == bytes.count && (bytes.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
        } ?? false
    }

    /// Keeps `entry`, read in a transaction opened at `generation`, unless a write has
    /// committed since (then its state may already be old).
    func insert(_ entry: Entry, readAt generation: UInt64) {
        let size = entry.document?.storageSize ?? 0
        guard size <= Self.maxDocumentBytes else { return }
        lock.lock()
        defer { lock.unlock() }
        guard generation == self.generation else { return }
        if entriesGeneration != generation || bytes + size > Self.capacityBytes || entries.count >= Self.capacityEntries {
            entries.removeAll(keepingCapacity: entriesGeneration == generation)
            byKey.removeAll(keepingCapacity: entriesGeneration == generation)
            lastFound = nil
            bytes = 0
            entriesGeneration = generation
        }
        if let old = entries.updateValue(entry, forKey: ExactString(entry.name)) {
            bytes -= old.document?.storageSize ?? 0
            if old === lastFound { lastFound = entry }
        }
        if let key = entry.key {
            // A query keeps its page at once: room for one up front, not four regrowths from one.
            if byKey.isEmpty { byKey.reserveCapacity(16) }
            byKey[KeptKey(database: entry.database, key: key)] = entry
        }
        bytes += size
    }

    /// The REST `Document` JSON (no mask) of `doc`, read by a query or listing in a read opened
    /// after `generation` (`current` taken before it): a kept entry's bytes when the entry holds this
    /// very version of the document (same name, create and update times), else encoded now and,
    /// when `keep`, kept for the next read. A page of 50 documents spent ~40% of its CPU encoding
    /// them (docs/benchmarks.md, listbench); a repeated page, like a repeated get, reuses the bytes.
    ///
    /// The version check, not the generation alone, decides a hit, so the answer is always the
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
    /// name and times identify one version of its fields), else nil. Only for names of a database
    /// the cache `accepts`.
    private func kept(_ name: String, createTime: Instant, updateTime: Instant) -> Entry? {
        guard let kept = entry(name), let known = kept.document, known.updateTime == updateTime,
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
    /// `accepts`, so an entry there is the one `entries` holds under its name, or one of the same
    /// version (both read at the current generation).
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

    /// The entry kept under `key` at the current generation, if any.
    private func kept(_ key: KeptKey) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        guard entriesGeneration == generation else { return nil }
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

    // MARK: Query answers

    /// A current query's answer as read at one generation: its documents' entries in the answer's
    /// order (each the version its read returned) and the count its offset skipped. Data, never a
    /// decision: the rules judge every call that is answered with it.
    struct Answer {
        let entries: [Entry]
        let skipped: Int
    }

    /// Answers kept, at most; past it (or past `capacityBytes` of their documents) they start over.
    static let answerCapacity = 64
    /// Keys longer than this are not kept (`ParsedQueryCache.maxRequestBytes`: a query's request
    /// is a few hundred bytes).
    static let maxAnswerKeyBytes = 4096

    /// The answer kept for `key` at the current generation, if any: the documents a read of the
    /// same query would return now, since no write has ended since that read began.
    func answer(_ key: RequestBytesKey) -> Answer? {
        lock.lock()
        defer { lock.unlock() }
        guard answersGeneration == generation else { return nil }
        return answers[key]
    }

    /// Keeps `answer`, read in a transaction opened at `generation` (`current` taken before it),
    /// unless a write has ended since. Its documents count against the same byte bound as the
    /// entries (`capacityBytes`), separately.
    func keep(_ answer: Answer, for key: RequestBytesKey, readAt generation: UInt64) {
        guard key.bytes.count <= Self.maxAnswerKeyBytes else { return }
        var size = 0
        for e in answer.entries {
            let s = e.document?.storageSize ?? 0
            guard s <= Self.maxDocumentBytes else { return }
            size += s
        }
        guard size <= Self.capacityBytes else { return }
        lock.lock()
        defer { lock.unlock() }
        guard generation == self.generation else { return }
        if answersGeneration != generation || answerBytes + size > Self.capacityBytes || answers.count >= Self.answerCapacity {
            answers.removeAll(keepingCapacity: answersGeneration == generation)
            answerBytes = 0
            answersGeneration = generation
        }
        if let old = answers.updateValue(answer, forKey: key) {
            answerBytes -= old.entries.reduce(0) { $0 + ($1.document?.storageSize ?? 0) }
        }
        answerBytes += size
    }

    /// Answers kept at the current generation (tests).
    var answerCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return answersGeneration == generation ? answers.count : 0
    }

    /// Forgets every entry: a write transaction has ended (call after it commits or rolls back,
    /// before its caller is answered).
    func invalidate() {
        lock.lock()
        generation &+= 1
        // The entries go now rather than at the next insert (a write-heavy phase keeps no
        // memory), released after the lock.
        let dropped = (entries, byKey, lastFound, answers)
        lastFound = nil
        if !entries.isEmpty {
            entries = [:]
            byKey = [:]
            bytes = 0
        }
        if !answers.isEmpty {
            answers = [:]
            answerBytes = 0
        }
        lock.unlock()
        withExtendedLifetime(dropped) {}
    }
}
