import HearthCore
import HearthSQLite

/// What each target sends: its first result (fresh, resumed or reset) and its changes per commit.
extension ListenShard {
    // MARK: Adding a target

    func addNow(_ spec: ListenTarget, to stream: ListenStream) {
        guard let service else { return fail(stream, .internal("The Firestore service is gone.")) }
        guard let id = assignID(spec.id, on: stream) else { return }
        let readTime = deliveredTime
        let target = ListenStream.Target(id: id, database: spec.database, kind: spec.kind, readTime: readTime, stream: stream)
        var events: [ListenStream.Pending] = [.event(.targetChange(.add, targetIDs: [id], cause: nil, readTime: nil, resumeToken: nil))]

        // Resuming: only what changed since, while the versions of then are still kept.
        let asked = spec.readTime ?? spec.resumeToken.flatMap { $0.isEmpty ? nil : ResumeToken.decode($0) }
        let resumes = spec.readTime != nil || spec.resumeToken?.isEmpty == false
        var since: Instant?
        if let asked, asked <= readTime,
           asked.unixMicros >= service.latestTime().unixMicros - FirestoreStorage.historyMicros {
            since = asked
        }

        do {
            let body: [ListenStream.Pending] = try service.read { conn in
                let space = try service.storage.space(of: spec.database, conn)
                try authorize(target, service: service, space: space, conn)
                if since == nil, let page = firstPage(target, service: service, space: space, at: readTime) {
                    // A fresh plain query: paged out as the client reads, never read whole.
                    return (resumes ? [.event(.targetChange(.reset, targetIDs: [id], cause: nil, readTime: readTime,
                                                            resumeToken: nil))] : []) + [page]
                }
                let now = try fetch(target, service: service, space: space, at: readTime, conn)
                var out: [ListenStream.Pending] = []
                if let since {
                    var known: [ResourcePath: Instant] = [:]
                    for d in try fetch(target, service: service, space: space, at: since, conn).documents {
                        known[d.path] = d.updateTime
                    }
                    target.known = known
                    out += try diff(target, now: now.documents, at: readTime) { path in
                        try service.load(space, path, at: readTime, conn) == nil
                    }.map { .event($0) }
                    if spec.expectedCount != nil {
                        // What the client holds now, exactly (it may check it against its cache).
                        let names = target.known.keys.map { spec.database.name(of: $0) }
                        out.append(.event(.existenceFilter(targetID: id, count: names.count, unchangedNames: BloomFilter(names))))
                    }
                    // A plain query follows commits from their before and after alone.
                    if target.isPlainQuery { target.known = [:] }
                } else {
                    if resumes {
                        // Unknown or expired token: the client drops what it holds and gets everything.
                        out.append(.event(.targetChange(.reset, targetIDs: [id], cause: nil, readTime: readTime,
                                                        resumeToken: nil)))
                    }
                    out += fresh(target, now, space: space, at: readTime)
                }
                return out
            }
            events += body
        } catch .permissionDenied(let message) {
            events.append(.event(.targetChange(.remove, targetIDs: [id], cause: .permissionDenied(message), readTime: nil,
                                               resumeToken: nil)))
            enqueue(stream, events)
            return
        } catch {
            return fail(stream, error)
        }

        stream.targets[id] = target
        index(target)
        events.append(.event(.targetChange(.current, targetIDs: [id], cause: nil, readTime: readTime,
                                           resumeToken: ResumeToken.encode(readTime))))
        events.append(.event(snapshotEnd(stream, readTime)))
        // Handed over in chunks as the client reads (flow control), never all read or encoded at once.
        enqueue(stream, events)
    }

    /// The id a new target takes: its own, or for 0 the next free one the stream assigns; nil
    /// (and the stream ended) when the id is in use.
    func assignID(_ asked: Int32, on stream: ListenStream) -> Int32? {
        if asked == 0 {
            while stream.targets[stream.nextAssigned] != nil { stream.nextAssigned += 1 }
            defer { stream.nextAssigned += 1 }
            return stream.nextAssigned
        }
        if stream.targets[asked] != nil {
            // The official emulator ends the stream with an empty UNKNOWN here; say what is wrong.
            fail(stream, .invalidArgument("Target ID \(asked) is already in use on this stream; remove it before adding it again."))
            return nil
        }
        return asked
    }

    /// The global NO_CHANGE that closes a snapshot.
    ///
    /// Its read time never goes back on one stream (the iOS SDK fails hard on "Watch stream reverted
    /// to previous snapshot"): a clear is published at the time it ran, which can be after the
    /// commit time of a commit delivered just after it.
    func snapshotEnd(_ stream: ListenStream, _ readTime: Instant) -> ListenEvent {
        let t = max(readTime, stream.lastReadTime)
        stream.lastReadTime = t
        // One token per commit, shared by every stream it reaches.
        if lastToken?.time != t { lastToken = (t, ResumeToken.encode(t)) }
        return .targetChange(.noChange, targetIDs: [], cause: nil, readTime: t, resumeToken: lastToken?.token)
    }

    /// Rules for a client's target when added: `list` from a query's constraints (as runQuery),
    /// `get` for each named document.
    private func authorize(_ target: ListenStream.Target, service: FirestoreService, space: Int64?,
                           _ conn: Connection) throws(FirestoreError) {
        guard case .client(let auth) = target.stream.caller else { return }
        let lookup = service.readLookup(target.database, space: space, conn)
        switch target.kind {
        case .query(let q):
            try service.authorizeList(target.database, query: q, auth: auth, lookup: lookup)
        case .documents(let paths):
            for p in paths {
                let doc: StoredDocument?
                do { doc = try service.load(space, p, at: target.readTime, conn) } catch {
                    // A lookup that fails denies (rules fail closed).
                    throw .permissionDenied(FirestoreService.defaultDenial)
                }
                try service.authorizeGet(target.database, path: p, document: doc, auth: auth, lookup: lookup)
            }
        }
    }

    /// The target's documents at `time`, and for a documents target the names that do not exist.
    private func fetch(_ target: ListenStream.Target, service: FirestoreService, space: Int64?, at time: Instant,
                       _ conn: Connection) throws -> (documents: [StoredDocument], missing: [ResourcePath]) {
        switch target.kind {
        case .query(let q):
            return (try QueryExecutor(storage: service.storage, database: target.database).run(q, space: space, conn, at: time).documents, [])
        case .documents(let paths):
            var found: [StoredDocument] = []
            var missing: [ResourcePath] = []
            for p in paths {
                if let d = try service.load(space, p, at: time, conn) { found.append(d) } else { missing.append(p) }
            }
            return (found, missing)
        }
    }

    /// The first result of a plain query whose pages seek (see `QueryExecutor.pagesBySeeking`), as
    /// one outbox entry that reads it a page at a time as the client takes it; nil for other targets.
    private func firstPage(_ target: ListenStream.Target, service: FirestoreService, space: Int64?,
                           at readTime: Instant) -> ListenStream.Pending? {
        guard let q = target.plainQuery,
              QueryExecutor(storage: service.storage, database: target.database).pagesBySeeking(q) else { return nil }
        target.known = [:]
        target.readTime = readTime
        return .page(ListenStream.FirstResultPage(targetID: target.id, database: target.database, query: q, space: space,
                                                  at: readTime, after: nil, pageSize: Self.firstPageSize))
    }

    /// Documents in the first page of a first result (later pages are sized from what was read).
    static let firstPageSize = 8

    /// The whole result of a target the client holds nothing of; its documents are read again
    /// (at `readTime`) as they go out, so what waits for the client is only their names.
    private func fresh(_ target: ListenStream.Target, _ now: (documents: [StoredDocument], missing: [ResourcePath]),
                       space: Int64?, at readTime: Instant) -> [ListenStream.Pending] {
        var out: [ListenStream.Pending] = []
        out.reserveCapacity(now.documents.count + now.missing.count)
        target.known = [:]
        let plain = target.isPlainQuery
        for d in now.documents where !plain { target.known[d.path] = d.updateTime }
        if case .documents(let paths) = target.kind, !now.missing.isEmpty {
            // In the order the client named them, as the official emulator answers; a missing one
            // is reported deleted, as it does too.
            let missing = Set(now.missing)
            for p in paths {
                out.append(missing.contains(p) ? .event(.documentDelete(p, removedTargetIDs: [target.id], readTime: readTime))
                                               : .document(p, targetID: target.id, space: space, at: readTime))
            }
        } else {
            for d in now.documents { out.append(.document(d.path, targetID: target.id, space: space, at: readTime)) }
        }
        target.readTime = readTime
        return out
    }

    /// Events taking the client from `target.known` to `now`, in `now`'s order, then removals;
    /// `isDeleted` tells a document that is gone from one that stopped matching.
    private func diff(_ target: ListenStream.Target, now: [StoredDocument], at readTime: Instant,
                      isDeleted: (ResourcePath) throws -> Bool) rethrows -> [ListenEvent] {
        var out: [ListenEvent] = []
        var next: [ResourcePath: Instant] = [:]
        next.reserveCapacity(now.count)
        for d in now {
            next[d.path] = d.updateTime
            if target.known[d.path] != d.updateTime { out.append(.documentChange(d, targetIDs: target.ids)) }
        }
        let gone = target.known.keys.filter { next[$0] == nil }.sorted { OrderedEncoding.compare($0.key, $1.key) < 0 }
        for p in gone {
            out.append(try isDeleted(p)
                ? .documentDelete(p, removedTargetIDs: target.ids, readTime: readTime)
                : .documentRemove(p, removedTargetIDs: target.ids, readTime: readTime))
        }
        target.known = next
        target.readTime = max(target.readTime, readTime)
        return out
    }

    // MARK: Commits

    /// One document a commit touched: as it was before the commit, and as the commit left it.
    struct Versions {
        var before: StoredDocument?
        var after: StoredDocument?
    }

    /// A touched document with its versions, handed to each target it may concern (no lookup by
    /// path per target).
    struct Touch {
        var path: ResourcePath
        var versions: Versions
    }

    /// Matches one committed change against the targets it can touch and sends each affected
    /// stream its changes as one snapshot.
    ///
    /// Plain query targets and an admin's documents targets follow from the change alone; only
    /// other targets (limits and cursors, rules on documents targets, a clear) read storage, and
    /// then all in one read transaction for the whole change.
    func apply(_ change: CommittedChange) {
        deliveredTime = max(deliveredTime, change.commitTime)
        guard let service, !streams.isEmpty else { return }
        let readTime = change.commitTime
        // The targets touched, each with the touches that concern it. A commit of one document
        // (the usual case) shares its one touch among every target: no table or array per target.
        var hits: [(target: ListenStream.Target, paths: [Touch])] = []
        var finals: [ResourcePath: Versions] = [:]
        // The whole-collection snapshot a one-document commit's usual listeners got (see below).
        var direct: (key: ResourcePath, snapshot: ListenBatch.Shared)?
        switch change.kind {
        case .cleared:
            for t in allTargets(in: change.database) { hits.append((t, [])) }
        case .documents(let docs, let space):
            guard let db = change.database else { return }
            if service.storage.cachedSpace(of: db) != space {
                // Written into a space a later clear already replaced: listeners saw the clear.
                guard (try? service.read({ conn in try service.storage.space(of: db, conn) })) == space else { return }
            }
            var order: [ResourcePath] = []
            for d in docs {
                // Written twice in one commit: the first before and the last after.
                if finals[d.path] != nil {
                    finals[d.path]?.after = d.after
                    continue
                }
                finals[d.path] = Versions(before: d.before, after: d.after)
                order.append(d.path)
            }
            if order.count == 1, let only = order.first {
                // Force-unwrap safe: `only` went into `finals`.
                let one = [Touch(path: only, versions: finals[only]!)]
                var snapshot: ListenBatch.Shared?
                // Streams to free, and snapshots to queue (the client had no room), once the index
                // is no longer being walked (freeing a stream changes it).
                var gone: [ListenStream] = []
                var later: [(ListenStream, ListenBatch)] = []
                targets(touchedBy: only, in: db) { t in
                    // The usual fan-out: the only target of its stream, of the collection the
                    // commit wrote (see `run` below for why its snapshot is the collection's). Handed
                    // over as it is matched, with no per-listener entry in `hits`: the loop can frame
                    // the first listeners' snapshots while this goes on with the rest, and a stream
                    // with one target cannot be met again in this commit.
                    let stream = t.stream
                    guard t.matchesWholeCollection, stream.targets.count == 1, stream.lastReadTime <= readTime else {
                        hits.append((t, one))
                        return
                    }
                    let shared = snapshot ?? wholeCollection(one, at: readTime)
                    snapshot = shared
                    t.readTime = max(t.readTime, readTime)
                    guard !shared.changes.isEmpty else { return }
                    stream.lastReadTime = readTime
                    let batch = ListenBatch(shared, targetIDs: t.ids)
                    if stream.pending == 0, shared.changes.count < Self.chunk, shared.weight <= Self.chunkBytes {
                        switch stream.offer(batch, shared.weight) {
                        case .taken: return
                        case .gone:
                            gone.append(stream)
                            return
                        case .full: break
                        }
                    }
                    later.append((stream, batch))
                }
                for stream in gone { closeNow(stream) }
                for (stream, batch) in later { send(stream, batch) }
                if let snapshot { direct = (only, snapshot) }
            } else {
                var index: [ObjectIdentifier: Int] = [:]
                for p in order {
                    // Force-unwrap safe: every path of `order` went into `finals`.
                    let touch = Touch(path: p, versions: finals[p]!)
                    targets(touchedBy: p, in: db) { t in
                        if let i = index[ObjectIdentifier(t)] {
                            hits[i].paths.append(touch)
                        } else {
                            index[ObjectIdentifier(t)] = hits.count
                            hits.append((t, [touch]))
                        }
                    }
                }
            }
        }
        if hits.isEmpty { return }

        // Grouped per stream, its targets in id order, so a snapshot's events are deterministic.
        // Sorted only when some stream has several targets here: a thousand listeners with one
        // target each (the usual fan-out) are already one group each, and sorting them cost more
        // than everything else the engine does for them.
        applyPass &+= 1
        var repeated = false
        for h in hits {
            let s = h.target.stream
            if s.applyPass == applyPass {
                repeated = true
                break
            }
            s.applyPass = applyPass
        }
        if repeated {
            hits.sort { a, b in
                a.target.stream.id != b.target.stream.id ? a.target.stream.id < b.target.stream.id : a.target.id < b.target.id
            }
        }
        var reads = false
        for h in hits {
            if case .cleared = change.kind { reads = true } else if !followsFromChange(h.target) { reads = true }
            if reads { break }
        }
        var outgoing: [(ListenStream, ListenBatch)] = []
        outgoing.reserveCapacity(hits.count)
        var broken: [(ListenStream, FirestoreError)] = []
        // Streams whose snapshot carries a first result again (a clear): through the outbox.
        var enqueueLater: [(ListenStream, [ListenStream.Pending])] = []
        // What every whole-collection target of one collection gets from this commit, made once
        // (see `ListenBatch`), found by the first path the commit wrote there: the targets of one
        // collection share their touches' paths, so the check is a pointer comparison.
        var sharedLast = direct
        var sharedBy: [ResourcePath: ListenBatch.Shared] = [:]
        if let direct { sharedBy[direct.key] = direct.snapshot }
        func shared(_ paths: [Touch]) -> ListenBatch.Shared {
            let key = paths[0].path
            if let last = sharedLast, last.key == key { return last.snapshot }
            let snapshot = sharedBy[key] ?? wholeCollection(paths, at: readTime)
            sharedBy[key] = snapshot
            sharedLast = (key, snapshot)
            return snapshot
        }
        func run(_ conn: Connection?) {
            var spaces: [DatabaseID: Int64?] = [:]
            var i = 0
            while i < hits.count {
                let stream = hits[i].target.stream
                var end = i + 1
                while end < hits.count, hits[end].target.stream === stream { end += 1 }
                defer { i = end }
                let first = hits[i].target
                if end == i + 1, first.matchesWholeCollection, !hits[i].paths.isEmpty, stream.lastReadTime <= readTime {
                    // The usual fan-out: one listener of a collection the commit wrote. Its snapshot
                    // is the collection's, made once, closed at the commit's time (which this
                    // stream's last snapshot is not after).
                    let snapshot = shared(hits[i].paths)
                    first.readTime = max(first.readTime, readTime)
                    if !snapshot.changes.isEmpty {
                        stream.lastReadTime = readTime
                        outgoing.append((stream, ListenBatch(snapshot, targetIDs: first.ids)))
                    }
                    continue
                }
                do {
                    var events: [ListenEvent] = []
                    // A change per touch and the NO_CHANGE: one allocation, not a regrowth.
                    events.reserveCapacity(hits[i].paths.count * (end - i) + 1)
                    var pending: [ListenStream.Pending] = []
                    for (t, paths) in hits[i..<end] {
                        if t.matchesWholeCollection, !paths.isEmpty {
                            // No read, whatever else this stream's targets need.
                            append(shared(paths), for: t, at: readTime, into: &events)
                            continue
                        }
                        guard let conn else {
                            update(t, paths: paths, service: service, at: readTime, into: &events)
                            continue
                        }
                        let space: Int64?
                        if let known = spaces[t.database] { space = known } else {
                            space = try service.storage.space(of: t.database, conn)
                            spaces[t.database] = space
                        }
                        if case .cleared = change.kind {
                            // A first result again: it goes out through the outbox (read as the client takes it).
                            pending += events.map { .event($0) }
                            events = []
                            pending.append(.event(.targetChange(.reset, targetIDs: [t.id], cause: nil, readTime: readTime, resumeToken: nil)))
                            if let page = firstPage(t, service: service, space: space, at: readTime) {
                                pending.append(page)
                            } else {
                                pending += fresh(t, try fetch(t, service: service, space: space, at: readTime, conn),
                                                 space: space, at: readTime)
                            }
                            pending.append(.event(.targetChange(.current, targetIDs: [t.id], cause: nil, readTime: readTime,
                                                                resumeToken: ResumeToken.encode(readTime))))
                        } else if followsFromChange(t) {
                            update(t, paths: paths, service: service, at: readTime, into: &events)
                        } else {
                            events += try update(t, paths: paths, finals: finals, service: service, space: space,
                                                 at: readTime, conn)
                        }
                    }
                    if pending.isEmpty {
                        if !events.isEmpty {
                            events.append(snapshotEnd(stream, readTime))
                            outgoing.append((stream, ListenBatch(events)))
                        }
                    } else {
                        pending += events.map { .event($0) }
                        pending.append(.event(snapshotEnd(stream, readTime)))
                        enqueueLater.append((stream, pending))
                    }
                } catch {
                    broken.append((stream, (error as? FirestoreError) ?? .internal("\(error)")))
                }
            }
        }
        if reads {
            do { try service.read { conn in run(conn) } } catch {
                var seen = Set<UInt64>()
                for h in hits where seen.insert(h.target.stream.id).inserted { broken.append((h.target.stream, error)) }
            }
        } else {
            run(nil)
        }
        for (s, events) in outgoing { send(s, events) }
        for (s, items) in enqueueLater { enqueue(s, items) }
        for (s, error) in broken { fail(s, error) }
    }

    /// What a whole-collection target (`Target.matchesWholeCollection`) gets from a commit that
    /// wrote `paths` of its collection: every document the commit left is in it (changed unless its
    /// version is the one held), every one it deleted had been, in the collection's key order; the
    /// snapshot closes at the commit's time. The same for every such target of the collection.
    private func wholeCollection(_ paths: [Touch], at readTime: Instant) -> ListenBatch.Shared {
        let ordered = paths.count < 2 ? paths : paths.sorted(by: { OrderedEncoding.compare($0.path.key, $1.path.key) < 0 })
        var changes: [ListenBatch.Shared.Change] = []
        changes.reserveCapacity(ordered.count)
        for touch in ordered {
            let v = touch.versions
            if let after = v.after {
                if v.before?.updateTime != after.updateTime { changes.append(.changed(after)) }
            } else if v.before != nil {
                changes.append(.deleted(touch.path))
            }
        }
        if lastToken?.time != readTime { lastToken = (readTime, ResumeToken.encode(readTime)) }
        // Force-unwrap safe: set just above.
        return ListenBatch.Shared(changes: changes, readTime: readTime, resumeToken: lastToken!.token)
    }

    /// A whole-collection target's changes from `snapshot` (its NO_CHANGE left out: the stream's
    /// snapshot closes once, after all its targets).
    private func append(_ snapshot: ListenBatch.Shared, for t: ListenStream.Target, at readTime: Instant,
                        into out: inout [ListenEvent]) {
        snapshot.appendChanges(t.ids, into: &out)
        t.readTime = max(t.readTime, readTime)
    }

    /// Whether a target's changes follow from a commit's before and after alone (no read): a plain
    /// query, or a documents target no rules judge.
    private func followsFromChange(_ t: ListenStream.Target) -> Bool {
        switch t.kind {
        case .query: return t.isPlainQuery
        case .documents:
            if case .client = t.stream.caller { return false }
            return true
        }
    }

    /// One target's changes from a commit that wrote `paths`, from the versions alone (see
    /// `followsFromChange`), appended to `out`.
    private func update(_ t: ListenStream.Target, paths: [Touch], service: FirestoreService, at readTime: Instant,
                        into out: inout [ListenEvent]) {
        switch t.kind {
        case .documents:
            for touch in paths {
                let p = touch.path
                let after = touch.versions.after
                if let after {
                    if t.known[p] != after.updateTime { out.append(.documentChange(after, targetIDs: t.ids)) }
                    t.known[p] = after.updateTime
                } else if t.known.removeValue(forKey: p) != nil {
                    out.append(.documentDelete(p, removedTargetIDs: t.ids, readTime: readTime))
                }
            }
        case .query(let q):
            // The client holds exactly the result as of the previous commit (every commit reaches
            // the target in order), so what it holds of `p` is its version before this one.
            let executor = QueryExecutor(storage: service.storage, database: t.database)
            let ordered = paths.count < 2 ? paths : paths.sorted(by: { OrderedEncoding.compare($0.path.key, $1.path.key) < 0 })
            for touch in ordered {
                let p = touch.path
                let v = touch.versions
                let held = v.before.flatMap { executor.accepts($0, query: q) ? $0 : nil }
                if let after = v.after, executor.accepts(after, query: q) {
                    if held?.updateTime != after.updateTime { out.append(.documentChange(after, targetIDs: t.ids)) }
                } else if held != nil {
                    out.append(v.after == nil
                        ? .documentDelete(p, removedTargetIDs: t.ids, readTime: readTime)
                        : .documentRemove(p, removedTargetIDs: t.ids, readTime: readTime))
                }
            }
        }
        t.readTime = max(t.readTime, readTime)
    }

    /// One target's changes from one commit that wrote `paths`, reading storage: rules on a
    /// documents target, the window of a limited or cursored query.
    private func update(_ t: ListenStream.Target, paths: [Touch], finals: [ResourcePath: Versions],
                        service: FirestoreService, space: Int64?, at readTime: Instant,
                        _ conn: Connection) throws -> [ListenEvent] {
        var out: [ListenEvent] = []
        switch t.kind {
        case .documents:
            for touch in paths {
                let p = touch.path
                let after = touch.versions.after
                // Documents targets are judged again on every change (as the official emulator does).
                if case .client(let auth) = t.stream.caller {
                    do {
                        try service.authorizeGet(t.database, path: p, document: after, auth: auth,
                                                 lookup: service.readLookup(t.database, space: space, conn))
                    } catch {
                        let cause: FirestoreError = if case .permissionDenied = error { error } else {
                            .permissionDenied(FirestoreService.defaultDenial)
                        }
                        t.stream.targets[t.id] = nil
                        unindex(t)
                        return [.targetChange(.remove, targetIDs: [t.id], cause: cause, readTime: nil, resumeToken: nil)]
                    }
                }
            }
            update(t, paths: paths, service: service, at: readTime, into: &out)
            return out
        case .query:
            // Limits, offsets and cursors: a write elsewhere can move the window, so the
            // query runs again as of the commit (never before what the client already saw).
            let at = max(t.readTime, readTime)
            let now = try fetch(t, service: service, space: space, at: at, conn).documents
            out += try diff(t, now: now, at: at) { p in
                if let f = finals[p] { return f.after == nil }
                return try service.load(space, p, at: at, conn) == nil
            }
        }
        return out
    }
}
