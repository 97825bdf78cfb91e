import Foundation
import HearthCore
import HearthSQLite
import SecurityRules

extension FirestoreService {
    /// What one write reports (`WriteResult`), and the document it left.
    struct WriteOutcome {
        /// Nil after a delete.
        var updateTime: Instant?
        var transformResults: [FirestoreValue]
        var document: StoredDocument?
    }

    /// A document a commit read (nil: none there), and the key its row was read by (nil when it
    /// was not read from the store). A struct, not a tuple: `PathTable` holds it generically, and a
    /// tuple's copies went through the runtime's generic tuple witnesses.
    private struct LoadedDocument {
        var document: StoredDocument?
        var key: [UInt8]?
    }

    /// One write's effect, worked out before anything is stored.
    private struct Step {
        var write: Write
        var before: StoredDocument?
        var outcome: WriteApplier.Outcome
        /// `before` as the rules' `resource`, when a held version brought it (`TransactionWrites.Held`).
        var beforeResource: RulesValue? = nil
    }

    /// `commit` (and every single-document write): all writes or none, one commit time, rules
    /// judged per write with `getAfter()` seeing the whole batch, transaction reads re-checked.
    func commit(_ requested: DatabaseID, writes: [Write], transaction: String?, caller: Caller) throws(FirestoreError)
        -> (commitTime: Instant, results: [WriteOutcome]) {
        let prepared = try prepareCommit(requested, writes: writes, transaction: transaction, caller: caller)
        defer { prepared.end() }
        let committed = try write(savepoint: prepared.savepoint, prepared.body)
        prepared.committed()
        return committed
    }

    /// `commit` that holds no thread while its batch waits for the writer (gRPC Commit and the Write
    /// stream): `completion` gets what `commit` returns or throws, after the COMMIT, on the thread
    /// that committed the batch (or on this one, for a request refused before it is queued).
    /// `lead: false` (called on a connection's event loop): this thread never runs the batch.
    func commit(_ requested: DatabaseID, writes: [Write], transaction: String?, caller: Caller, lead: Bool = true,
                completion: @escaping (Result<(commitTime: Instant, results: [WriteOutcome]), FirestoreError>) -> Void) {
        let prepared: PreparedCommit
        do { prepared = try prepareCommit(requested, writes: writes, transaction: transaction, caller: caller) } catch {
            return completion(.failure(error))
        }
        submitWrite(savepoint: prepared.savepoint, lead: lead, prepared.body) { result in
            if case .success = result { prepared.committed() }
            prepared.end()
            completion(result)
        }
    }

    /// A commit ready for the writer: its transaction body, and what follows it.
    private struct PreparedCommit {
        let savepoint: Bool
        let body: (Connection) throws -> (commitTime: Instant, results: [WriteOutcome])
        let recorder: ChangeRecorder
        /// A read-write transaction's writes, as its body left them (nil for other commits).
        let written: TransactionWritten?
        let end: () -> Void

        /// After the COMMIT, before `end`: listeners hear of the writes, and the versions a
        /// transaction wrote are kept for the next transaction's reads (`TransactionWrites`).
        func committed() {
            recorder.publish()
            written?.keep()
        }
    }

    /// What a read-write transaction's commit body wrote, for `TransactionWrites.committed` once it
    /// has committed. Set on the writer, read after the COMMIT (the batch's completion or the
    /// caller woken after it).
    private final class TransactionWritten: @unchecked Sendable {
        let slots: TransactionWrites
        var space: Int64 = 0
        var time: Int64 = 0
        var documents: [TransactionWrites.Version] = []

        init(_ slots: TransactionWrites) { self.slots = slots }

        func keep() {
            if !documents.isEmpty { slots.committed(space: space, at: time, documents) }
        }
    }

    /// The documents one commit body has read and the versions its writes leave, in one object.
    /// As local variables of the body, captured by its local functions and by the rules lookup's
    /// escaping closures, each table and each closure context was a heap box of its own: eight
    /// allocations a commit (docs/benchmarks.md, commit38). Made and used on the writer only.
    private final class CommitReads {
        let storage: FirestoreStorage
        let space: Int64
        /// A read-write transaction's commit: documents the previous one committed are held.
        let holding: Bool
        let conn: Connection
        /// Each document read, with the key its row was read by (nil when it was not read from
        /// the store): `put` stores the write under the same key instead of encoding it again.
        var originals = PathTable<LoadedDocument>()
        /// The held originals' rules `resource`s and stored forms, made by the commits that wrote them.
        var heldResources = PathTable<RulesValue>()
        var heldEncoded = PathTable<[UInt8]>()
        /// Each written path's version after the writes so far (nil inside: deleted).
        var overlay = PathTable<StoredDocument?>()

        init(storage: FirestoreStorage, space: Int64, holding: Bool, _ conn: Connection) {
            self.storage = storage
            self.space = space
            self.holding = holding
            self.conn = conn
        }

        func loadKeyed(_ p: ResourcePath) throws -> LoadedDocument {
            if let known = originals[p] { return known }
            // A read-write transaction's documents are most often the versions the previous one
            // committed: a held one is exactly what this connection reads (`TransactionWrites`:
            // an earlier body of this batch that wrote it made it pending), without the row's
            // read and decoding on the writer.
            let held = holding ? storage.transactionWrites.document(space: space, path: p) : nil
            if let r = held?.resource { heldResources[p] = r }
            if let e = held?.encoded { heldEncoded[p] = e }
            let loaded: LoadedDocument
            if let held {
                loaded = LoadedDocument(document: held.document, key: nil)
            } else {
                let key = p.key
                loaded = LoadedDocument(document: try storage.document(space: space, key: key, conn), key: key)
            }
            originals[p] = loaded
            return loaded
        }

        /// `getAfter()`'s read: the batch's version of `p`, else the stored one.
        func after(_ p: ResourcePath) throws -> StoredDocument? {
            if let o = overlay[p] { return o }
            return try loadKeyed(p).document
        }
    }

    /// The checks before a commit is queued, and its body (see `commit`).
    private func prepareCommit(_ requested: DatabaseID, writes: [Write], transaction: String?, caller: Caller) throws(FirestoreError)
        -> PreparedCommit {
        let db = try Self.target(requested, writes)
        try WriteCollapse.check(writes)
        var txnState: TransactionRegistry.State?
        if let transaction {
            let state = try transactions.use(transaction, database: db)
            // The refused commit leaves the transaction open, as Firestore does.
            if state.readOnly && !writes.isEmpty {
                throw .invalidArgument("Cannot modify entities in a read-only transaction.")
            }
            txnState = state
        }
        let recorder = ChangeRecorder(feed: listeners.feed, database: db)
        let written = txnState?.readOnly == false ? TransactionWritten(storage.transactionWrites) : nil
        // Every check below comes before the first write (the commit time is taken with the
        // documents), so in a batch the body needs no savepoint — unless the database's space is
        // not known yet and finding it may create it (a write before the checks).
        let savepoint = storage.cachedSpace(of: db) == nil
        let body = { [self] (conn: Connection) throws -> (commitTime: Instant, results: [WriteOutcome]) in
            let space = try storage.writableSpace(of: db, conn)
            let reads = CommitReads(storage: storage, space: space, holding: written != nil, conn)
            func loadKeyed(_ p: ResourcePath) throws -> LoadedDocument { try reads.loadKeyed(p) }
            func load(_ p: ResourcePath) throws -> StoredDocument? { try reads.loadKeyed(p).document }

            // Optimistic transactions: every document read must be unchanged, and every query must
            // still return the same documents at the same versions (no phantoms).
            if let state = txnState, !state.readOnly {
                for (path, version) in state.reads {
                    let current = try load(path)?.updateTime.unixMicros ?? -1
                    if current != version { throw FirestoreError.aborted(Self.contention) }
                }
                let executor = QueryExecutor(storage: storage, database: db)
                for recorded in state.queries {
                    let now = try executor.run(recorded.query, space: space, conn).documents
                    if TransactionRegistry.RecordedQuery.versions(now, depth: recorded.depth) != recorded.results {
                        throw FirestoreError.aborted(Self.contention)
                    }
                }
            }

            let commitTime = try stampedCommitTime(storage.commitTime(now: clock.now(), conn), for: writes) { try load($0)?.updateTime }
            recorder.begin(at: commitTime, space: space)
            var steps: [Step] = []
            steps.reserveCapacity(writes.count)
            for w in writes {
                var first = false
                if case .none = reads.overlay[w.path] { first = true }
                let before: StoredDocument? = try reads.overlay[w.path] ?? load(w.path)
                let outcome = WriteApplier.apply(w, to: before, at: commitTime)
                if let after = outcome.document {
                    try Self.checkSize(after, db)
                }
                steps.append(Step(write: w, before: before, outcome: outcome, beforeResource: first ? reads.heldResources[w.path] : nil))
                reads.overlay[w.path] = .some(outcome.document)
            }

            // A create over an existing document is ALREADY_EXISTS whatever the rules would say
            // of it, as Firestore judges it; the other preconditions come after the rules.
            for step in steps {
                try Self.checkCreate(step.write.precondition, against: step.before, name: db.name(of: step.write.path))
            }

            var finalResources = PathTable<RulesValue>()
            if case .client(let auth) = caller {
                let lookup = RulesLookup(
                    database: db,
                    current: { [reads] p in try reads.loadKeyed(p).document },
                    after: { [reads] p in try reads.after(p) })
                for step in steps {
                    let limit = steps.count > 1 ? max(0, min(10, 20 - lookup.accessCount)) : 10
                    let made = try authorizeWrite(db, step: step, auth: auth, time: WriteApplier.requestTime(commitTime), lookup: lookup, accessLimit: limit)
                    // The last write of a path made its final version's `resource`: kept with it.
                    if written != nil, let made { finalResources[step.write.path] = made }
                }
            }

            for step in steps {
                try Self.check(step.write.precondition, against: step.before, name: db.name(of: step.write.path))
            }

            // Nothing below throws but SQLite (the commit time is stored before the COMMIT).
            storage.record(commitTime: commitTime)
            var finalEncoded = PathTable<[UInt8]>()
            for (path, final) in reads.overlay.entries {
                let loaded = try loadKeyed(path), original = loaded.document
                if let final {
                    if final != original {
                        // `final` is the write's document at `path` (`WriteApplier`), so `loaded.key` is its key.
                        let encoded = try storage.put(space: space, final, replacing: original, oldEncoded: reads.heldEncoded[path],
                                                      key: loaded.key, conn)
                        if written != nil { finalEncoded[path] = encoded }
                        recorder.record(path, before: original, after: final)
                    }
                } else if let original {
                    try storage.delete(space: space, original, at: commitTime, conn)
                    recorder.record(path, before: original, after: nil)
                }
            }
            if let written {
                // After the writes (whose `put` marks replaced documents): these slots await this commit.
                let time = commitTime.unixMicros
                written.space = space
                written.time = time
                written.documents = reads.overlay.entries.map { e in
                    e.value == nil ? TransactionWrites.Version(path: e.path, document: nil)
                        : TransactionWrites.Version(path: e.path, document: e.value, resource: finalResources[e.path],
                                                    encoded: finalEncoded[e.path])
                }
                for (path, _) in reads.overlay.entries { storage.transactionWrites.writing(space: space, path: path, at: time) }
            }
            let results = steps.map { s in
                WriteOutcome(updateTime: s.outcome.document?.updateTime, transformResults: s.outcome.transformResults,
                             document: s.outcome.document)
            }
            return (commitTime, results)
        }
        return PreparedCommit(savepoint: savepoint, body: body, recorder: recorder, written: written, end: { [self] in
            recorder.finish()
            if let transaction { transactions.finish(transaction) }
        })
    }

    /// The database a batch acts on: the one its writes' document names name, as Firestore
    /// follows the names (the request's database when they name none other), refused when a write
    /// other than a delete would put a document where none can be (`DatabaseID.validateForWrite`).
    static func target(_ requested: DatabaseID, _ writes: [Write]) throws(FirestoreError) -> DatabaseID {
        var named: DatabaseID?
        for w in writes {
            let d = w.database ?? requested
            if let n = named, n != d {
                throw .invalidArgument("The writes of one request must all name documents of one database.")
            }
            named = d
        }
        guard let named else { return requested }
        // The default database (nearly every commit) is written to without a look at the writes.
        if named.database != "(default)" {
            // Deletes alone write nothing there (the emulator answers them as for any missing
            // document), but `.` and `..` are refused in any name.
            let writing = writes.firstIndex { !$0.isDelete }
            try named.validateForWrite(name: named.name(of: writes[writing ?? 0].path), dotsOnly: writing == nil)
        }
        return named
    }

    /// `t`, or the later commit time `writes` need when they set a server timestamp on a document
    /// last written (`lastWritten`) in `t`'s millisecond — after waiting (on the writer, at most a
    /// millisecond) for the running clock to near it (`WriteApplier.commitTime(_:afterStampedAt:now:)`).
    /// A frozen clock keeps `t`.
    private func stampedCommitTime(_ t: Instant, for writes: [Write],
                                   lastWritten: (ResourcePath) throws -> Instant?) rethrows -> Instant {
        guard writes.contains(where: WriteApplier.setsServerTime), case .system = clock.mode else { return t }
        var t = t
        for w in writes where WriteApplier.setsServerTime(w) {
            guard let previous = try lastWritten(w.path) else { continue }
            let (time, wait) = WriteApplier.commitTime(t, afterStampedAt: previous, now: clock.now())
            if wait > 0 { usleep(UInt32(wait)) }
            t = time
        }
        return t
    }

    /// What Firestore answers when a transaction lost a race (ABORTED; the SDKs retry on it).
    static let contention = "Too much contention on these documents. Please try again."

    /// `batchWrite`: each write on its own (rules, preconditions), one status per write.
    func batchWrite(_ requested: DatabaseID, writes: [Write], caller: Caller) throws(FirestoreError)
        -> [Result<WriteOutcome, FirestoreError>] {
        let db = try Self.target(requested, writes)
        // Like listCollectionIds, batchWrite is for server credentials: end users are refused
        // whatever the rules say (unless no rules are configured at all), as the Firestore emulator does.
        if !caller.isAdmin {
            if case .open = rules.active(for: db.project, database: db.database) {} else {
                throw .permissionDenied("Batch writes require admin authentication.")
            }
        }
        let recorder = ChangeRecorder(feed: listeners.feed, database: db)
        defer { recorder.finish() }
        let committed = try write { conn in
            let space = try storage.writableSpace(of: db, conn)
            let commitTime = try stampedCommitTime(storage.commitTime(now: clock.now(), conn), for: writes) {
                try storage.document(space: space, path: $0, conn)?.updateTime
            }
            storage.record(commitTime: commitTime)
            recorder.begin(at: commitTime, space: space)
            var results: [Result<WriteOutcome, FirestoreError>] = []
            for w in writes {
                do throws(FirestoreError) {
                    let before: StoredDocument?
                    do { before = try storage.document(space: space, path: w.path, conn) } catch {
                        throw FirestoreError.internal("Internal error: \(error)")
                    }
                    let outcome = WriteApplier.apply(w, to: before, at: commitTime)
                    if let after = outcome.document { try Self.checkSize(after, db) }
                    try Self.checkCreate(w.precondition, against: before, name: db.name(of: w.path))
                    if case .client(let auth) = caller {
                        let lookup = RulesLookup(
                            database: db,
                            current: { p in try self.storage.document(space: space, path: p, conn) },
                            after: { p in
                                if p == w.path { return outcome.document }
                                return try self.storage.document(space: space, path: p, conn)
                            })
                        try authorizeWrite(db, step: Step(write: w, before: before, outcome: outcome), auth: auth,
                                           time: WriteApplier.requestTime(commitTime), lookup: lookup, accessLimit: 10)
                    }
                    try Self.check(w.precondition, against: before, name: db.name(of: w.path))
                    do {
                        if let after = outcome.document {
                            if after != before {
                                try storage.put(space: space, after, replacing: before, conn)
                                recorder.record(w.path, before: before, after: after)
                            }
                        } else if let before {
                            try storage.delete(space: space, before, at: commitTime, conn)
                            recorder.record(w.path, before: before, after: nil)
                        }
                    } catch {
                        throw FirestoreError.internal("Internal error: \(error)")
                    }
                    results.append(.success(WriteOutcome(updateTime: outcome.document?.updateTime,
                                                         transformResults: outcome.transformResults, document: outcome.document)))
                } catch {
                    results.append(.failure(error))
                }
            }
            return results
        }
        recorder.publish()
        return committed
    }

    /// Judges one write; returns its `request.resource` (nil for a delete).
    @discardableResult
    private func authorizeWrite(_ db: DatabaseID, step: Step, auth: RulesValue?, time: Instant, lookup: RulesLookup,
                                accessLimit: Int) throws(FirestoreError) -> RulesValue? {
        let path = step.write.path
        // A write that requires the document to exist is an update even when it is missing (the
        // rules judge it before the precondition fails), as the Firestore emulator decides.
        let creates = step.before == nil && step.write.precondition?.exists != true
        let method: RulesMethod = step.write.isDelete ? .delete : (creates ? .create : .update)
        let requestResource = step.outcome.document.map { RulesConversion.resource(db, path: path, fields: $0.fields) }
        var request = RulesRequest(
            method: method, path: RulesConversion.path(db, path), auth: auth, time: RulesConversion.time(time),
            requestResource: requestResource,
            resource: step.beforeResource ?? step.before.map { RulesConversion.resource(db, path: path, fields: $0.fields) },
            accessLimit: accessLimit)
        request.methodShaped = true
        try authorize(request, project: db.project, database: db.database, lookup: lookup)
        return requestResource
    }

    /// The `exists: false` precondition alone (judged before rules).
    static func checkCreate(_ precondition: Precondition?, against before: StoredDocument?,
                            name: @autoclosure () -> String) throws(FirestoreError) {
        if precondition?.exists == false && before != nil { throw .alreadyExists("Document already exists: \(name())") }
    }

    /// `currentDocument`: exists / updateTime, with Firestore's messages (`name` is built only for one).
    static func check(_ precondition: Precondition?, against before: StoredDocument?,
                      name: @autoclosure () -> String) throws(FirestoreError) {
        guard let precondition else { return }
        if let exists = precondition.exists {
            if exists && before == nil { throw .notFound("No document to update: \(name())") }
            if !exists && before != nil { throw .alreadyExists("Document already exists: \(name())") }
        }
        if let t = precondition.updateTime {
            // A missing document's stored version is 0, which no base version matches: the official
            // emulator answers so for every write kind (production's answer is undocumented; the
            // emulator's version checks agree with production's where the python suite shows them).
            guard let before else {
                throw .failedPrecondition("the stored version (0) does not match the required base version (\(t.unixMicros))")
            }
            // A time after the stored version's can never have been that version's: production
            // calls it a bad argument (python-firestore's system tests, run against it, expect
            // INVALID_ARGUMENT an hour ahead), as the official emulator does for any later time; an
            // earlier one is a stale version. The emulator's message goes on with its internal key.
            if t > before.updateTime {
                throw .invalidArgument("Invalid base version, it is greater than the stored version: \(name())")
            }
            if before.updateTime != t {
                throw .failedPrecondition("the stored version (\(before.updateTime.unixMicros)) does not match the required base version (\(t.unixMicros))")
            }
        }
    }

    /// Rejects documents over 1 MiB as Firestore does.
    static func checkSize(_ doc: StoredDocument, _ db: DatabaseID) throws(FirestoreError) {
        let size = doc.storageSize
        if size > StoredDocument.maxSize {
            throw .invalidArgument("Document '\(db.name(of: doc.path))' cannot be written because its size (\(grouped(size)) bytes) exceeds the maximum allowed size of \(grouped(StoredDocument.maxSize)) bytes.")
        }
    }

    static func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }
}
