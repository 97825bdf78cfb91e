// Rule coverage, like the Firebase emulator's `:ruleCoverage` report: how often each expression
// evaluated to each value, across every request judged with this collector.

import Foundation
import HearthCore

/// Collects expression outcomes across evaluations. Thread-safe.
public final class RulesCoverage: @unchecked Sendable {
    /// One expression's outcomes, kept as values and rendered only when a report is asked for.
    /// Parallel arrays, so a visit scans plain integers and touches a value only to compare it.
    private struct NodeOutcomes {
        /// Pairwise distinct values (each the newest visit equal to it), with their counts.
        var values: [TracedRaw] = []
        var counts: [Int] = []
        /// `Fingerprints.of(values[k])`.
        var prints: [UInt64] = []
        /// `Fingerprints.full(values[k])` once a visit's print matched `prints[k]` (0: not yet
        /// computed); only containers have one apart from their print.
        var fullPrints: [UInt64] = []
        /// The entries' prints, as a filter: a visit it does not hold has no equal entry, which
        /// spares the scan for values unique to each request once the entries are full.
        var printBits = PrintFilter()
        /// The entry the last visit matched: most expressions evaluate to the same value request
        /// after request, often the very same storage, and an identical value needs no fingerprint.
        var lastHit = -1
        /// `values[lastHit]`'s scalar key when it is a scalar: a scalar visit (most are) equal to
        /// it counts without touching the entries.
        var lastKey: ScalarKey?
        /// Whether the last visit went to `others`: a value unique to each request (`request.time`,
        /// the request's data map) is not compared with `values[lastHit]` first.
        var missed = false
        var others = 0
        /// The entries holding `true` and `false` (offered to the evaluator: `CoverageHints`).
        var trueEntry: Int8 = -1
        var falseEntry: Int8 = -1
    }

    /// A scalar outcome's identity: visits with equal keys are equal values that render alike.
    struct ScalarKey: Equatable {
        var tag: UInt8
        var bits: UInt64
        var nanos: Int32 = 0

        init(tag: UInt8, bits: UInt64, nanos: Int32 = 0) {
            self.tag = tag
            self.bits = bits
            self.nanos = nanos
        }

        /// nil for strings, containers and errors.
        init?(_ raw: borrowing TracedRaw) {
            switch raw {
            case .value(.bool(let b)): self.init(tag: 1, bits: b ? 1 : 0)
            case .value(.null): self.init(tag: 0, bits: 0)
            case .value(.int(let i)): self.init(tag: 3, bits: UInt64(bitPattern: i))
            case .value(.float(let d)): self.init(tag: 4, bits: d.bitPattern)
            case .value(.timestamp(let s, let n)): self.init(tag: 7, bits: UInt64(bitPattern: s), nanos: n)
            default: return nil
            }
        }
    }

    /// Bit `print % 256` of each entry's print. A value unique to each request (the request's
    /// data map at ~20 expressions, `request.time`) is checked against an expression's 32 entries
    /// at every visit; with 64 bits (one word, before) ~40% of those visits found their bit set
    /// by some other entry and scanned all 32 prints, with 256 ~12% do.
    struct PrintFilter {
        private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        /// False when no print inserted has `print`'s bit (so none equals it).
        @inline(__always)
        func mayHold(_ print: UInt64) -> Bool {
            let bit = UInt64(1) << (print & 63)
            switch (print >> 6) & 3 {
            case 0: return words.0 & bit != 0
            case 1: return words.1 & bit != 0
            case 2: return words.2 & bit != 0
            default: return words.3 & bit != 0
            }
        }

        @inline(__always)
        mutating func insert(_ print: UInt64) {
            let bit = UInt64(1) << (print & 63)
            switch (print >> 6) & 3 {
            case 0: words.0 |= bit
            case 1: words.1 |= bit
            case 2: words.2 |= bit
            default: words.3 |= bit
            }
        }
    }

    /// The outcomes of one ruleset's expressions, indexed by node id.
    private struct Table {
        var nodes: [NodeOutcomes]
        /// Visits the evaluator counted at this table's entries (`CoverageHints`).
        let counted: CountedVisits
        /// What the hints last published for this table were built from, per node (empty: none
        /// published yet).
        var offered: [Offered] = []
        init(count: Int) {
            nodes = Array(repeating: NodeOutcomes(), count: count)
            counted = CountedVisits(nodes: count)
        }

        /// The parts of a node its hints are built from (`RulesCoverage.hints`). An entry's value
        /// never changes in a way a hint shows: it is replaced only by an equal value, and the
        /// values offered (null, ints, timestamps, ASCII strings) render alike when equal, or, for
        /// an ASCII string with another spelling, are put back by the markers of their counted
        /// visits (`marked`); the hint keeps its own copy of the bytes.
        struct Offered: Equatable {
            var lastHit: Int32
            var missed: Bool
            var trueEntry: Int8
            var falseEntry: Int8
        }

        /// Whether the hints would differ from those last published (and notes them as published):
        /// once every expression's outcomes settle, a fold of 64 evaluations rebuilt identical
        /// hints for each of a ruleset's ~160 nodes (~58k instructions, ~0.9k per evaluation).
        mutating func offersChanged() -> Bool {
            var changed = offered.count != nodes.count
            if changed { offered = Array(repeating: Offered(lastHit: -1, missed: false, trueEntry: -1, falseEntry: -1), count: nodes.count) }
            for i in nodes.indices {
                let n = Offered(lastHit: Int32(nodes[i].lastHit), missed: nodes[i].missed,
                                trueEntry: nodes[i].trueEntry, falseEntry: nodes[i].falseEntry)
                if n != offered[i] {
                    offered[i] = n
                    changed = true
                }
            }
            return changed
        }
    }

    // `tables` is guarded by `lock`; `pending`, `folding`, `generation`, `published` and the
    // tables' `CountedVisits` by `pendingLock`. Whoever holds both takes `lock` first.
    // Those four are `@exclusivity(unchecked)`: the locks order every access, and the runtime's
    // check of each access (`swift_beginAccess`, ~0.2k instructions a decision) found nothing
    // the locks do not already rule out.
    private let lock = NSLock()
    /// Per ruleset (rules may be reloaded).
    private var tables: [ObjectIdentifier: Table] = [:]
    private let pendingLock = NSLock()
    /// An evaluation recorded but not yet folded (a struct, so a folded batch is destroyed by
    /// specialised code rather than the runtime's generic tuple destruction).
    private struct Pending {
        let ruleset: Ruleset
        let visits: [Visit]
    }

    /// Evaluations recorded but not yet folded into `tables`, oldest first.
    @exclusivity(unchecked) private var pending: [Pending] = []
    /// Whether a background fold is queued.
    @exclusivity(unchecked) private var folding = false
    /// Counts resets: hints read before one name a table that is gone.
    @exclusivity(unchecked) private var generation = 0
    /// Whether an evaluation recorded a string with a non-ASCII byte (`holdsNonASCII`): until
    /// one does, no entry can hold another spelling of an ASCII string, so counted visits of one
    /// need no marker (`marked`). Never cleared (a reset keeps it: only more markers).
    @exclusivity(unchecked) private var spellingsSeen = false
    /// The hints of each table, as of its last fold (a ruleset or two: rules are rarely reloaded).
    @exclusivity(unchecked) private var published: [CoverageHints] = []
    /// Where batches are folded (except those judged on an event loop's thread, folded there at the
    /// end of its pass: `PassEndWork`): a thread of its own at the process's nice value, started by the
    /// first batch (a process that judges no rules has none). On libdispatch's utility pool it ran
    /// at nice 0 under `make bench`'s `nice -n -15`, fell behind on two busy cores, and the writer
    /// folded the backlog itself, inside its write transaction (docs/benchmarks.md, *The rules
    /// coverage fold*).
    private static let folder = ThreadQueue(name: "rules-coverage")

    /// Whether evaluators count offered values themselves (`CoverageHints`); off, every visit
    /// is folded (the reference the tests compare reports with).
    let countsRepeats: Bool

    /// An empty collector.
    public init() { countsRepeats = true }

    init(countsRepeats: Bool) { self.countsRepeats = countsRepeats }

    /// Forgets everything recorded.
    public func reset() {
        lock.lock()
        pendingLock.lock()
        pending.removeAll()
        published.removeAll()
        generation += 1
        pendingLock.unlock()
        tables.removeAll()
        lock.unlock()
    }

    /// What the evaluator may count itself when judging a request against `ruleset` (nil until
    /// a fold has seen it).
    func hints(for ruleset: Ruleset) -> CoverageHints? {
        guard countsRepeats else { return nil }
        pendingLock.lock()
        defer { pendingLock.unlock() }
        for h in published where h.ruleset === ruleset { return h }
        return nil
    }

    /// Distinct values kept per expression; beyond it further values are counted together, so a
    /// value that changes on every request (`request.time`) cannot grow the table without bound.
    static let distinctValuesPerExpression = 32
    static let otherValuesKey = "…"

    /// Evaluations are folded in the background once this many wait (waking a thread per request
    /// cost more than a small fold), and by the caller itself beyond `pendingLimit` (the
    /// background fold fell behind), so the backlog stays bounded.
    static let foldBatch = 64
    static let pendingLimit = 256

    /// Keeps `e`'s outcomes. They are folded into the tables later, in order, mostly in the
    /// background: a request judged inside Firestore's single write transaction (every write is)
    /// would otherwise hold it for the fold too. Reports fold what is still waiting first, so they
    /// are always complete.
    /// Visits the evaluator counted (`e.hits`) are added to their entries here, in the same
    /// critical section that queues the rest, so a report always covers whole evaluations.
    func record(_ e: borrowing Evaluation, ruleset: Ruleset) {
        record(visited: e.visited, hits: e.hits, hints: e.hints, ruleset: ruleset)
    }

    func record(visited: [Visit], hits: [UInt64], hints: CoverageHints?, ruleset: Ruleset) {
        pendingLock.lock()
        if !spellingsSeen, Self.holdsNonASCII(visited) { spellingsSeen = true }
        if let hints, !hits.isEmpty {
            if hints.generation == generation {
                hints.counts.add(hits)
                let visits = spellingsSeen && hints.spelled ? Self.marked(hits, into: visited, hints) : visited
                if !visits.isEmpty { pending.append(Pending(ruleset: ruleset, visits: visits)) }
            } else {
                // The table the hints were read from was reset: its entries are gone, so the
                // counted visits are folded as the values they were, in their places.
                pending.append(Pending(ruleset: ruleset, visits: Self.restore(hits, into: visited, hints)))
            }
        } else {
            pending.append(Pending(ruleset: ruleset, visits: visited))
        }
        let backlog = pending.count
        let schedule = backlog >= Self.foldBatch && !folding
        if schedule { folding = true }
        pendingLock.unlock()
        if backlog > Self.pendingLimit {
            foldPending()
        } else if schedule {
            // On an event loop's thread (a gRPC get judged on its HTTP/2 loop) the batch is folded
            // there, at the end of the loop's pass, after the answer left: the fold's thread, woken
            // once every `foldBatch` calls, ran on the round trip's CPU anyway, several times as
            // long (`PassEndWork`; docs/benchmarks.md, grpctail29).
            if !PassEndWork.schedule(ObjectIdentifier(self), { [weak self] in self?.foldPendingOnLoop() }) {
                Self.folder.async { [weak self] in self?.foldPending() }
            }
        }
    }

    /// `visits` with the counted visits `hits` put back where they were made, as values.
    private static func restore(_ hits: [UInt64], into visits: [Visit], _ hints: CoverageHints) -> [Visit] {
        var out: [Visit] = []
        out.reserveCapacity(visits.count + hits.count)
        var v = 0
        for h in hits {
            // A hit made when `visited` held `at` visits comes after those.
            let at = Int(h >> 32)
            while v < at, v < visits.count {
                out.append(visits[v])
                v += 1
            }
            let slot = Int(UInt32(truncatingIfNeeded: h))
            let node = slot / distinctValuesPerExpression, entry = slot % distinctValuesPerExpression
            out.append(Visit(Int32(node), .value(hints.value(node, entry))))
        }
        while v < visits.count {
            out.append(visits[v])
            v += 1
        }
        return out
    }

    /// `visits` with a marker (`Visit(_:marking:_:)`) where each counted visit of a string with another
    /// spelling (`CoverageHints.Node.spelled`) was made (once any evaluation recorded a non-ASCII
    /// string, `spellingsSeen`): the fold then makes the counted bytes the
    /// entry's representative if an equal visit spelled otherwise replaced them, as folding that
    /// visit would have (the newest equal value represents the entry). `visits` itself when no
    /// hit is of such a string.
    static func marked(_ hits: [UInt64], into visits: [Visit], _ hints: CoverageHints) -> [Visit] {
        guard hits.contains(where: { hints.isSpelled(Int(UInt32(truncatingIfNeeded: $0)) / distinctValuesPerExpression) }) else {
            return visits
        }
        var out: [Visit] = []
        out.reserveCapacity(visits.count + hits.count)
        var v = 0
        for h in hits {
            let slot = Int(UInt32(truncatingIfNeeded: h))
            let node = slot / distinctValuesPerExpression, entry = slot % distinctValuesPerExpression
            guard hints.isSpelled(node) else { continue }
            let at = Int(h >> 32)
            while v < at, v < visits.count {
                out.append(visits[v])
                v += 1
            }
            out.append(Visit(Int32(node), marking: entry, .value(hints.value(node, entry))))
        }
        while v < visits.count {
            out.append(visits[v])
            v += 1
        }
        return out
    }

    /// Whether a visit's value is a string with a non-ASCII byte (the only way to spell an ASCII
    /// string otherwise: ASCII text is its own normal form). A `+` chain's steps share one string,
    /// looked at once. A string flagged ASCII by its representation (`CoverageHints.flaggedASCII`,
    /// every string of a create on the shipped rules) is not scanned: the scan of the joined
    /// fields, their `lower()` and the key was ~1.4k instructions a K-free commit (covfold30).
    static func holdsNonASCII(_ visits: [Visit]) -> Bool {
        var last: (UInt, UInt) = (0, 0)
        for v in visits {
            guard case .value(.string(let s)) = v.raw else { continue }
            if CoverageHints.flaggedASCII(s) { continue }
            let words = unsafeBitCast(s, to: (UInt, UInt).self)
            if words == last { continue }
            last = words
            if !CoverageHints.offerableBytes(s) { return true }
        }
        return false
    }

    /// Returns once every fold already queued for the background thread has run. A fold queued
    /// before a report may otherwise run after it, folding the start of the evaluations recorded
    /// since and publishing hints in their midst (tests that compare hints use it).
    func awaitQueuedFolds() { Self.folder.sync {} }

    /// Folds every waiting evaluation into the tables.
    private func foldPending() {
        lock.lock()
        defer { lock.unlock() }
        foldPendingLocked()
    }

    /// `foldPending` on an event loop's thread, which never waits for `lock` (a report may hold
    /// it): then the fold's thread takes the batch, as it did before.
    private func foldPendingOnLoop() {
        guard lock.try() else {
            Self.folder.async { [weak self] in self?.foldPending() }
            return
        }
        defer { lock.unlock() }
        foldPendingLocked()
    }

    /// Folds every waiting evaluation into the tables; the caller holds `lock`.
    private func foldPendingLocked() {
        pendingLock.lock()
        let batch = pending
        pending.removeAll()
        folding = false
        pendingLock.unlock()
        fold(batch)
    }

    /// Folds `batch` into the tables and publishes their hints; the caller holds `lock`.
    private func fold(_ batch: [Pending]) {
        guard !batch.isEmpty else { return }
        var folder = Folder()
        var hints: [CoverageHints] = []
        var k = 0
        while k < batch.count {
            // One table per run of evaluations of one ruleset (rules are rarely reloaded), taken
            // out of `tables` so it is mutated in place, without a lookup per evaluation.
            let ruleset = batch[k].ruleset
            let key = ObjectIdentifier(ruleset)
            var table = tables.removeValue(forKey: key) ?? Table(count: ruleset.program.nodes.count)
            while k < batch.count, batch[k].ruleset === ruleset {
                folder.fold(batch[k].visits, into: &table)
                k += 1
            }
            if table.nodes.count == ruleset.program.nodes.count, !hints.contains(where: { $0.ruleset === ruleset }),
               table.offersChanged() {
                // `generation` changes only under both locks, so holding `lock` reads it safely.
                // Unchanged offers keep the hints published (a reset empties both them and the
                // tables, so a table's first fold after one always publishes).
                hints.append(Self.hints(table, ruleset, generation: generation))
            }
            tables[key] = table
        }
        pendingLock.lock()
        for h in hints {
            if let i = published.firstIndex(where: { $0.ruleset === h.ruleset }) { published[i] = h } else { published.append(h) }
        }
        pendingLock.unlock()
    }

    /// What the evaluator may count itself from now on: each expression's bool entries, and the
    /// entry it matched last when that value is one `CoverageHints` may offer.
    private static func hints(_ table: Table, _ ruleset: Ruleset, generation: Int) -> CoverageHints {
        var nodes: [CoverageHints.Node] = []
        var values: [RulesValue] = []
        nodes.reserveCapacity(table.nodes.count)
        values.reserveCapacity(table.nodes.count)
        for n in table.nodes {
            var h = CoverageHints.Node()
            h.trueEntry = n.trueEntry
            h.falseEntry = n.falseEntry
            var value = RulesValue.null
            if !n.missed, n.lastHit >= 0 {
                let last = n.values[n.lastHit]
                switch last {
                case .value(.null), .value(.int), .value(.timestamp):
                    if let key = ScalarKey(last), case .value(let v) = last {
                        h.kind = 1
                        h.key = key
                        h.entry = Int8(n.lastHit)
                        value = v
                    }
                case .value(.string(let s)) where CoverageHints.offerableBytes(s):
                    h.kind = 2
                    h.spelled = CoverageHints.hasSpellings(s)
                    h.entry = Int8(n.lastHit)
                    value = .string(s)
                case .value(.map(let m)) where CoverageHints.offerable(container: .map(m)):
                    h.kind = 3
                    h.key = ScalarKey(tag: 12, bits: UInt64(m.storageIdentity))
                    h.entry = Int8(n.lastHit)
                    value = .map(m)
                case .value(.list(let items)) where CoverageHints.offerable(container: .list(items)):
                    h.kind = 4
                    h.key = ScalarKey(tag: 11, bits: UInt64(unsafeBitCast(items, to: UInt.self)))
                    h.entry = Int8(n.lastHit)
                    value = .list(items)
                case .value(.list(let items)) where !items.isEmpty && items.allSatisfy({ if case .string = $0 { true } else { false } }):
                    // Not offered, but a `keys()` node's evaluator reuses it (`CoverageHints.keyList`).
                    value = .list(items)
                default:
                    break
                }
            }
            nodes.append(h)
            values.append(value)
        }
        return CoverageHints(ruleset: ruleset, generation: generation, counts: table.counted, nodes: nodes, values: values)
    }

    /// Adds evaluations' outcomes to tables. Values are compared, not rendered: rendering every
    /// visited value (the whole request data map, many times) cost more than the evaluation.
    /// Equal values keep one entry; rendering and JSON happen in `snapshot`, when a report is
    /// requested. A visit identical to the entry its expression matched last (same storage, or an
    /// equal scalar) counts there at once; any other is fingerprinted, and compared only with the
    /// entries of the same fingerprint (equal values have equal fingerprints).
    private struct Folder {
        // Both remember storages of the evaluation being folded; emptied between evaluations
        // (keeping their capacity), so their scans stay short.
        var proven = EqualityMemo()
        var prints = Fingerprints()
        /// Prefixes built during this evaluation's fold: `prints` and `proven` remember storages
        /// by address, so a string they saw must not be freed (and its address reused) before
        /// they are emptied.
        var built: [String] = []

        private static let rawOffset = MemoryLayout<Visit>.offset(of: \Visit.raw)!

        mutating func fold(_ visits: [Visit], into table: inout Table) {
            proven.removeAll()
            prints.removeAll()
            built.removeAll(keepingCapacity: true)
            let rawOffset = Self.rawOffset
            table.nodes.withUnsafeMutableBufferPointer { nodes in
                visits.withUnsafeBufferPointer { visits in
                    for v in visits.indices {
                        let i = Int(visits[v].node)
                        guard i >= 0, i < nodes.count else { continue }
                        if visits[v].prefix >= 0 {
                            visitPrefix(&nodes[i], visits[v])
                            continue
                        }
                        if visits[v].prefix == Visit.lowering {
                            visitLowered(&nodes[i], visits[v])
                            continue
                        }
                        if let entry = visits[v].markedEntry {
                            mark(&nodes[i], entry, visits[v])
                            continue
                        }
                        // The outcome is read in place: passed from the array beside the inout
                        // node, it was copied (a retain and a release) for every visit.
                        let raw = UnsafeRawPointer(visits.baseAddress! + v)
                            .advanced(by: rawOffset).assumingMemoryBound(to: TracedRaw.self)
                        if let last = nodes[i].lastKey, let key = ScalarKey(raw.pointee), key == last {
                            nodes[i].counts[nodes[i].lastHit] += 1
                            nodes[i].missed = false
                            continue
                        }
                        visit(&nodes[i], raw)
                    }
                }
            }
        }

        /// A `+` chain's step, recorded as a prefix of the chain's string: counted at the entry
        /// its node matched last when that entry has the same bytes (the common case: the same
        /// chain over the same fields request after request), and otherwise built and visited as
        /// any string is.
        private mutating func visitPrefix(_ node: inout NodeOutcomes, _ visit: borrowing Visit) {
            guard case .value(.string(let whole)) = visit.raw else {
                self.visit(&node, visit.raw)
                return
            }
            let length = Int(visit.prefix)
            let hint = node.lastHit
            if hint >= 0, case .value(.string(let entry)) = node.values[hint], Self.sameBytes(entry, whole, length) {
                node.counts[hint] += 1
                return
            }
            let s = Visit.prefix(whole, length)
            built.append(s)
            self.visit(&node, .value(.string(s)))
        }

        /// `lower()` of a string, recorded as the string (`Visit(_:lowering:)`): lowered here and
        /// visited as any string is.
        private mutating func visitLowered(_ node: inout NodeOutcomes, _ visit: borrowing Visit) {
            guard case .value(.string(let receiver)) = visit.raw else {
                self.visit(&node, visit.raw)
                return
            }
            let s = StringFunctions.lowered(receiver)
            built.append(s)
            self.visit(&node, .value(.string(s)))
        }

        /// A visit the evaluator counted at `entry` (already in the counts), of the marker's
        /// string: the entry's representative is those bytes from here on, as if it were folded.
        private func mark(_ node: inout NodeOutcomes, _ entry: Int, _ marker: borrowing Visit) {
            guard entry < node.values.count, case .value(.string(let offered)) = marker.raw,
                  case .value(.string(let current)) = node.values[entry] else { return }
            if !Self.sameBytes(current, offered, offered.utf8.count) { node.values[entry] = marker.raw }
        }

        /// Whether `a` is byte for byte the first `length` bytes of `b`. Equal bytes are equal
        /// strings that render alike, so either may stand for the other in an entry.
        static func sameBytes(_ a: String, _ b: String, _ length: Int) -> Bool {
            guard a.utf8.count == length, b.utf8.count >= length else { return false }
            let same = a.utf8.withContiguousStorageIfAvailable { x in
                b.utf8.withContiguousStorageIfAvailable { y in
                    length == 0 || memcmp(x.baseAddress!, y.baseAddress!, length) == 0
                }
            }
            if case let same?? = same { return same }
            return a.utf8.elementsEqual(b.utf8.prefix(length))
        }

        private mutating func visit(_ node: inout NodeOutcomes, _ value: borrowing TracedRaw) {
            withUnsafePointer(to: value) { visit(&node, $0) }
        }

        private mutating func visit(_ node: inout NodeOutcomes, _ at: UnsafePointer<TracedRaw>) {
            let hint = node.missed ? -1 : node.lastHit
            node.missed = false
            if hint >= 0 {
                switch Self.quickly(node.values[hint], at.pointee) {
                case true?:
                    node.counts[hint] += 1
                    return
                case nil where Self.sameString(node.values[hint], at.pointee):
                    // Equal bytes render alike: the entry stands for this visit as it is.
                    node.counts[hint] += 1
                    return
                case nil where proven.same(node.values[hint], at.pointee):
                    node.counts[hint] += 1
                    // The newest equal value becomes the representative, so the next visits of
                    // this request (same storage) compare by identity.
                    node.values[hint] = at.pointee
                    node.lastKey = ScalarKey(at.pointee)
                    return
                default:
                    break
                }
            }
            let print = prints.of(at.pointee)
            // A container's print leaves its strings out (cheap, and values unique to each
            // request, the request's data, differ in a timestamp or a number): where it matches
            // an entry's, the full prints are compared before the values themselves.
            var full: UInt64 = 0
            if node.printBits.mayHold(print) {
                // Entries are pairwise distinct, so the first equal one is the only one.
                let n = node.prints.count
                var k = 0
                while k < n {
                    if k != hint, node.prints[k] == print, sameFullPrint(&node, k, at.pointee, &full), proven.same(node.values[k], at.pointee) {
                        node.counts[k] += 1
                        // The newest equal value becomes the representative, so the next visits of
                        // this request (same storage) compare by identity.
                        node.values[k] = at.pointee
                        node.lastHit = k
                        node.lastKey = ScalarKey(at.pointee)
                        return
                    }
                    k += 1
                }
            }
            if node.values.count < RulesCoverage.distinctValuesPerExpression {
                node.values.append(at.pointee)
                node.counts.append(1)
                node.prints.append(print)
                node.fullPrints.append(full)
                node.printBits.insert(print)
                node.lastHit = node.values.count - 1
                node.lastKey = ScalarKey(at.pointee)
                if case .value(.bool(let b)) = at.pointee {
                    if b { node.trueEntry = Int8(node.lastHit) } else { node.falseEntry = Int8(node.lastHit) }
                }
            } else {
                node.others += 1
                node.missed = true
            }
        }

        /// Whether entry k's full print equals `value`'s (`full`: the latter, 0 until computed).
        /// Always true for values whose print is already full (everything but containers).
        private mutating func sameFullPrint(_ node: inout NodeOutcomes, _ k: Int, _ value: borrowing TracedRaw, _ full: inout UInt64) -> Bool {
            guard Fingerprints.isContainer(value) else { return true }
            if full == 0 { full = prints.full(value) }
            if node.fullPrints[k] == 0 { node.fullPrints[k] = prints.full(node.values[k]) }
            return node.fullPrints[k] == full
        }

        /// Whether a and b are strings with the same bytes.
        private static func sameString(_ a: TracedRaw, _ b: TracedRaw) -> Bool {
            guard case .value(.string(let x)) = a, case .value(.string(let y)) = b, x.utf8.count == y.utf8.count else { return false }
            return sameBytes(x, y, x.utf8.count)
        }

        /// Whether a and b are equal, when that shows without looking inside them: scalars, or
        /// the same storage (true). nil: they have to be compared.
        private static func quickly(_ a: TracedRaw, _ b: TracedRaw) -> Bool? {
            // One enum at a time: matching the pair as a tuple copied both values.
            guard case .value(let x) = a, case .value(let y) = b else { return nil }
            switch x {
            case .bool(let p):
                if case .bool(let q) = y { return p == q }
            case .null:
                if case .null = y { return true }
            case .int(let p):
                if case .int(let q) = y { return p == q }
            case .timestamp(let s1, let n1):
                if case .timestamp(let s2, let n2) = y { return s1 == s2 && n1 == n2 }
            case .string(let p):
                // The same two words: one storage, or one small string's bytes.
                if case .string(let q) = y {
                    return unsafeBitCast(p, to: (UInt, UInt).self) == unsafeBitCast(q, to: (UInt, UInt).self) ? true : nil
                }
            case .map(let p):
                if case .map(let q) = y { return p.storageIdentity == q.storageIdentity ? true : nil }
            case .list(let p):
                if case .list(let q) = y { return unsafeBitCast(p, to: UInt.self) == unsafeBitCast(q, to: UInt.self) ? true : nil }
            default:
                break
            }
            return nil
        }
    }

    /// Equality of recorded outcomes, remembering which map/list storages were already compared
    /// during one evaluation's fold (one request visits the same data map at many expressions,
    /// and their entries hold the same earlier requests' maps).
    private struct EqualityMemo {
        private var pairs: [(UInt, UInt, Bool)] = []

        mutating func removeAll() { pairs.removeAll(keepingCapacity: true) }

        mutating func same(_ a: TracedRaw, _ b: TracedRaw) -> Bool {
            switch (a, b) {
            case (.error(let x), .error(let y)): return x.message == y.message
            case (.value(let x), .value(let y)): return same(x, y)
            default: return false
            }
        }

        mutating func same(_ a: RulesValue, _ b: RulesValue) -> Bool {
            switch (a, b) {
            case (.bool(let x), .bool(let y)): return x == y
            case (.string(let x), .string(let y)): return x == y
            case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern || x == y
            case (.map(let x), .map(let y)): return storage(x, y, x.storageIdentity, y.storageIdentity)
            case (.list(let x), .list(let y)):
                return storage(x, y, unsafeBitCast(x, to: UInt.self), unsafeBitCast(y, to: UInt.self))
            default: return a == b
            }
        }

        /// Same storage (a RulesMap or Array is one reference), or compared before, or compared now.
        private mutating func storage<T: Equatable>(_ x: T, _ y: T, _ ix: UInt, _ iy: UInt) -> Bool {
            if ix == iy { return true }
            for (p, q, equal) in pairs where (p == ix && q == iy) || (p == iy && q == ix) { return equal }
            let equal = x == y
            pairs.append((ix, iy, equal))
            return equal
        }
    }

    /// Hashes of recorded outcomes that agree with `EqualityMemo.same`: values it finds equal hash
    /// equally (floats by value, so 0.0 and -0.0 agree; strings by `String`'s own hashing, which
    /// follows its canonical equality). A map or list is hashed once per storage during one
    /// fold, however many expressions visit it.
    private struct Fingerprints {
        private var memo: [(storage: UInt, print: UInt64)] = []
        private var shapes: [(storage: UInt, print: UInt64)] = []
        /// The container `shape` gave last (0: none): the request's data map is visited at ~20
        /// expressions one after another, and each looked it up in `shapes` again.
        private var lastShape: (storage: UInt, print: UInt64) = (0, 0)
        private var strings: [(words: (UInt, UInt), print: Int)] = []

        mutating func removeAll() {
            memo.removeAll(keepingCapacity: true)
            shapes.removeAll(keepingCapacity: true)
            lastShape = (0, 0)
            strings.removeAll(keepingCapacity: true)
        }

        mutating func of(_ raw: TracedRaw) -> UInt64 {
            // Scalars (most visits: every condition's bool) are mixed without a Hasher, which
            // costs more to set up and finish than they take to compare.
            if case .value(let v) = raw {
                switch v {
                case .null: return Self.mix(0, 0)
                case .bool(let b): return Self.mix(1, b ? 1 : 0)
                case .int(let i): return Self.mix(3, UInt64(bitPattern: i))
                case .timestamp(let s, let n): return Self.mix(7, UInt64(bitPattern: s) &* 1_000_000_007 &+ UInt64(UInt32(bitPattern: n)))
                // Strings by their own fingerprints, memoized per storage.
                case .string(let s): return Self.mix(5, UInt64(UInt(bitPattern: print(s))))
                // Lists and maps by their shape and scalars (`shape`), memoized per storage.
                case .list(let items): return Self.mix(11, shape(items))
                case .map(let m): return Self.mix(12, shape(m))
                // `diff()`'s two maps alike: an update's diff of its data and the stored data is
                // unique to each request, and hashing both in full (strings too) cost ~7k
                // instructions per REST transaction only to count it under "other values".
                case .mapDiff(let left, let right): return Self.mix(Self.mix(14, shape(left)), shape(right))
                default: break
                }
            }
            return hashed(raw)
        }

        /// Whether `raw` is a list, a map or a map diff: the values whose `of` is not their full print.
        static func isContainer(_ raw: borrowing TracedRaw) -> Bool {
            switch raw {
            case .value(.list), .value(.map), .value(.mapDiff): return true
            default: return false
            }
        }

        /// A print of `raw` that strings count in too (never 0): what `of` is for everything but
        /// lists, maps and map diffs, which it gives by their shape only.
        mutating func full(_ raw: borrowing TracedRaw) -> UInt64 {
            let print: UInt64
            switch raw {
            case .value(.list(let items)): print = Self.mix(11, self.print(items))
            case .value(.map(let m)): print = Self.mix(12, self.print(m))
            case .value(.mapDiff): print = hashed(raw)
            default: print = of(raw)
            }
            return print == 0 ? 1 : print
        }

        private mutating func hashed(_ raw: borrowing TracedRaw) -> UInt64 {
            var h = Hasher()
            switch raw {
            case .error(let e):
                h.combine(0 as UInt8)
                h.combine(e.message)
            case .value(let v):
                h.combine(1 as UInt8)
                combine(v, into: &h)
            }
            return UInt64(UInt(bitPattern: h.finalize()))
        }

        private mutating func combine(_ v: RulesValue, into h: inout Hasher) {
            switch v {
            case .null: h.combine(0 as UInt8)
            case .bool(let b): h.combine(b ? 2 as UInt8 : 1)
            case .int(let i):
                h.combine(3 as UInt8)
                h.combine(i)
            case .float(let d):
                h.combine(4 as UInt8)
                Self.combine(d, into: &h)
            case .string(let s):
                h.combine(5 as UInt8)
                combine(s, into: &h)
            case .bytes(let b):
                h.combine(6 as UInt8)
                h.combine(b)
            case .timestamp(let s, let n):
                h.combine(7 as UInt8)
                h.combine(s)
                h.combine(n)
            case .duration(let s, let n):
                h.combine(8 as UInt8)
                h.combine(s)
                h.combine(n)
            case .latlng(let lat, let lng):
                h.combine(9 as UInt8)
                Self.combine(lat, into: &h)
                Self.combine(lng, into: &h)
            case .path(let segments, _):
                h.combine(10 as UInt8)
                h.combine(segments)
            case .list(let items):
                h.combine(11 as UInt8)
                h.combine(print(items))
            case .map(let m):
                h.combine(12 as UInt8)
                h.combine(print(m))
            case .set(let items):
                h.combine(13 as UInt8)
                combine(items, into: &h)
            case .mapDiff(let left, let right):
                h.combine(14 as UInt8)
                combine(left, into: &h)
                combine(right, into: &h)
            case .vector(let elements):
                h.combine(16 as UInt8)
                for d in elements { Self.combine(d, into: &h) }
            default:
                // Values of kinds added later hash alike: coarser, still consistent with equality.
                h.combine(15 as UInt8)
            }
        }

        /// A string inside a list or map: hashed into the container's hasher directly (one
        /// hasher per container, not one per string; `String`'s hashing follows its equality).
        private mutating func combine(_ s: String, into h: inout Hasher) {
            h.combine(s)
        }

        /// A string's own hash. Long strings (the request's data fields, visited at many
        /// expressions) are hashed once per storage: a string's two words name its storage, which
        /// the evaluation keeps alive. Every string goes through its own hasher, memoized or not,
        /// so equal strings of different lengths (canonically equivalent spellings) still agree.
        private mutating func print(_ s: String) -> Int {
            let long = s.utf8.count > 15
            let words = unsafeBitCast(s, to: (UInt, UInt).self)
            if long {
                for entry in strings where entry.words == words { return entry.print }
            }
            var inner = Hasher()
            inner.combine(s)
            let print = inner.finalize()
            if long { strings.append((words, print)) }
            return print
        }

        /// A list's fingerprint, once per storage during one fold.
        private mutating func print(_ items: [RulesValue]) -> UInt64 {
            let storage = unsafeBitCast(items, to: UInt.self)
            if let known = known(storage) { return known }
            var inner = Hasher()
            combine(items, into: &inner)
            return remember(storage, inner)
        }

        /// A map's fingerprint, once per storage during one fold.
        private mutating func print(_ m: RulesMap) -> UInt64 {
            let storage = m.storageIdentity
            if let known = known(storage) { return known }
            var inner = Hasher()
            combine(m, into: &inner)
            return remember(storage, inner)
        }

        /// A list's print from its shape and scalars, once per storage during one fold.
        private mutating func shape(_ items: [RulesValue]) -> UInt64 {
            // Empty lists and maps share one storage (the standard library's empty array), so
            // theirs are not remembered by it: an empty map would be given an empty list's print.
            if items.isEmpty { return Self.shape(items) }
            let storage = unsafeBitCast(items, to: UInt.self)
            if let known = knownShape(storage) { return known }
            let print = Self.shape(items)
            shapes.append((storage, print))
            lastShape = (storage, print)
            return print
        }

        /// A map's print from its shape and scalars, once per storage during one fold.
        private mutating func shape(_ m: RulesMap) -> UInt64 {
            if m.count == 0 { return Self.shape(m) }
            let storage = m.storageIdentity
            if let known = knownShape(storage) { return known }
            let print = Self.shape(m)
            shapes.append((storage, print))
            lastShape = (storage, print)
            return print
        }

        private mutating func knownShape(_ storage: UInt) -> UInt64? {
            if lastShape.storage == storage { return lastShape.print }
            for entry in shapes where entry.storage == storage {
                lastShape = entry
                return entry.print
            }
            return nil
        }

        /// A print that agrees with `EqualityMemo.same` without hashing a single string: a
        /// string counts as its kind only (equal strings may differ in length: canonically
        /// equivalent spellings), a list or map as its count and its members in order (equal
        /// maps hold equal keys in the same order: `RulesMap` sorts them), numbers, times and
        /// flags by value. Values unique to each request are told apart by their scalars
        /// cheaply; values differing only in strings share a print, and `full` separates them.
        private static func shape(_ items: [RulesValue]) -> UInt64 {
            var z = mix(11, UInt64(items.count))
            for item in items { z = mix(z, shape(item)) }
            return z
        }

        private static func shape(_ m: RulesMap) -> UInt64 {
            var z = mix(12, UInt64(m.count))
            for (_, value) in m { z = mix(z, shape(value)) }
            return z
        }

        private static func shape(_ v: RulesValue) -> UInt64 {
            switch v {
            case .null: return 0
            case .bool(let b): return b ? 2 : 1
            case .int(let i): return mix(3, UInt64(bitPattern: i))
            // -0.0 and 0.0 are equal values.
            case .float(let d): return mix(4, d == 0 ? 0 : d.bitPattern)
            case .timestamp(let s, let n): return mix(7, UInt64(bitPattern: s) &* 1_000_000_007 &+ UInt64(UInt32(bitPattern: n)))
            case .duration(let s, let n): return mix(8, UInt64(bitPattern: s) &* 1_000_000_007 &+ UInt64(UInt32(bitPattern: n)))
            case .list(let items): return shape(items)
            case .map(let m): return shape(m)
            case .path(let segments, _): return mix(10, UInt64(segments.count))
            case .string: return 5
            case .bytes: return 6
            case .latlng: return 9
            case .set: return 13
            case .mapDiff: return 14
            case .vector: return 16
            case .constraint: return 15
            }
        }

        /// splitmix64's finalizer over a kind tag and a payload.
        private static func mix(_ tag: UInt64, _ payload: UInt64) -> UInt64 {
            var z = payload &+ (tag &+ 1) &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        /// -0.0 and 0.0 are equal values.
        private static func combine(_ d: Double, into h: inout Hasher) {
            h.combine(d == 0 ? 0 : d.bitPattern)
        }

        private mutating func combine(_ items: [RulesValue], into h: inout Hasher) {
            h.combine(items.count)
            for item in items { combine(item, into: &h) }
        }

        private mutating func combine(_ m: RulesMap, into h: inout Hasher) {
            h.combine(m.count)
            for (key, value) in m {
                h.combine(key)
                combine(value, into: &h)
            }
        }

        /// The fingerprint of a map or list storage already hashed in this fold.
        private func known(_ storage: UInt) -> UInt64? {
            for entry in memo where entry.storage == storage { return entry.print }
            return nil
        }

        private mutating func remember(_ storage: UInt, _ h: Hasher) -> UInt64 {
            let print = UInt64(UInt(bitPattern: h.finalize()))
            memo.append((storage, print))
            return print
        }
    }

    private struct Outcome {
        var json: JSON?
        var error: String?
        var count: Int
    }

    /// node id → rendered outcome key → outcome, as the reports read it.
    private func snapshot(_ ruleset: Ruleset) -> [Int32: [String: Outcome]] {
        lock.lock()
        // The waiting evaluations and the visits counted so far are taken in one critical
        // section, so the report covers exactly the evaluations recorded before it.
        pendingLock.lock()
        let batch = pending
        pending.removeAll()
        folding = false
        let key = ObjectIdentifier(ruleset)
        let counted = tables[key]?.counted.copy() ?? []
        pendingLock.unlock()
        fold(batch)
        let nodes = tables[key]?.nodes ?? []
        lock.unlock()
        let stride = Self.distinctValuesPerExpression
        var out: [Int32: [String: Outcome]] = [:]
        for (i, n) in nodes.enumerated() where !n.values.isEmpty || n.others > 0 {
            var m: [String: Outcome] = [:]
            for (k, (raw, folded)) in zip(n.values, n.counts).enumerated() {
                let slot = i * stride + k
                let count = folded + (slot < counted.count ? counted[slot] : 0)
                switch raw {
                case .value(let v): m[v.rendered, default: Outcome(json: v.json, error: nil, count: 0)].count += count
                case .error(let e): m["error:" + e.message, default: Outcome(json: nil, error: e.message, count: 0)].count += count
                }
            }
            if n.others > 0 { m[Self.otherValuesKey] = Outcome(json: .string("(other values)"), error: nil, count: n.others) }
            out[Int32(i)] = m
        }
        return out
    }

    /// `{"rules": {"files": [{name, content}]}, "report": [ExpressionReport]}`: every non-literal
    /// expression with its source position and a count per outcome value, nested as the AST is.
    public func json(for ruleset: Ruleset) -> JSON {
        let table = snapshot(ruleset)
        let report = ExpressionReports.build(ruleset, visitedOnly: false) { id in
            (table[id] ?? [:]).sorted { $0.key < $1.key }.map { _, o in
                var members: [(String, JSON)] = []
                if let json = o.json { members.append(("value", json)) }
                if let error = o.error { members.append(("error", .string(error))) }
                members.append(("count", .int(Int64(o.count))))
                return .object(JSONObject(members))
            }
        }
        return .object(JSONObject([
            ("rules", .object(JSONObject([("files", .array([.object(JSONObject([
                ("name", .string(ruleset.fileName)), ("content", .string(ruleset.source)),
            ]))]))]))),
            ("report", .array(report)),
        ]))
    }

    /// The rules source as an HTML page, each expression marked with how it evaluated.
    public func html(for ruleset: Ruleset) -> String {
        let table = snapshot(ruleset)
        let program = ruleset.program
        // Open and close tags at byte offsets; AST ranges nest, so the markup is well formed.
        var opens: [Int: [(Int, String)]] = [:]
        var closes: [Int: Int] = [:]
        for (i, info) in program.nodes.enumerated() where !info.isLiteral {
            let outcomes = table[Int32(i)] ?? [:]
            let cls: String
            let trues = outcomes["true"]?.count ?? 0, falses = outcomes["false"]?.count ?? 0
            let errors = outcomes.filter { $0.key.hasPrefix("error:") }.values.reduce(0) { $0 + $1.count }
            if outcomes.isEmpty { cls = "unvisited" } else if errors > 0 { cls = "error" }
            else if trues > 0, falses > 0 { cls = "both" } else if trues > 0 { cls = "true" }
            else if falses > 0 { cls = "false" } else { cls = "value" }
            let title = outcomes.isEmpty ? "never evaluated"
                : outcomes.sorted { $0.key < $1.key }.map { "\($0.value.error.map { "error: \($0)" } ?? $0.key) × \($0.value.count)" }
                    .joined(separator: "\n")
            let len = info.range.end.offset - info.range.start.offset
            opens[info.range.start.offset, default: []].append((len, "<span class=\"\(cls)\" title=\"\(escape(title))\">"))
            closes[info.range.end.offset, default: 0] += 1
        }
        let bytes = program.text.bytes
        var body = ""
        var line = 1
        body += "<span class=\"ln\">1</span>"
        var i = 0
        while i <= bytes.count {
            if let n = closes[i] { body += String(repeating: "</span>", count: n) }
            if let o = opens[i] { for (_, tag) in o.sorted(by: { $0.0 > $1.0 }) { body += tag } }
            guard i < bytes.count else { break }
            var j = i
            // Copy one UTF-8 character.
            j += 1
            while j < bytes.count, bytes[j] & 0xC0 == 0x80 { j += 1 }
            let ch = String(decoding: bytes[i..<j], as: UTF8.self)
            body += escape(ch)
            if ch == "\n" {
                line += 1
                body += "<span class=\"ln\">\(line)</span>"
            }
            i = j
        }
        return """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>Rule coverage: \(escape(ruleset.fileName))</title>
        <style>
        body { font-family: -apple-system, sans-serif; margin: 2em; }
        pre { font-family: Menlo, Consolas, monospace; font-size: 13px; line-height: 1.5; }
        .ln { display: inline-block; width: 3em; color: #999; user-select: none; }
        .true { background: rgba(0, 160, 0, 0.12); } .false { background: rgba(220, 0, 0, 0.12); }
        .both { background: rgba(230, 180, 0, 0.15); } .error { background: rgba(220, 0, 0, 0.25); text-decoration: underline wavy red; }
        .value { background: rgba(0, 90, 200, 0.08); } .unvisited { color: #777; }
        </style></head><body>
        <h1>Rule coverage: \(escape(ruleset.fileName))</h1>
        <p>Hover an expression for its outcomes. Green: only true; red: only false; yellow: both; underlined: errors; grey: never evaluated.</p>
        <pre>\(body)</pre>
        </body></html>
        """
    }

    private func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}

/// Rules API `ExpressionReport` trees.
enum ExpressionReports {
    /// Reports rooted at each allow condition, let and function body, in source order; literals omitted
    /// (their non-literal descendants are lifted to the nearest reported ancestor).
    static func build(_ ruleset: Ruleset, visitedOnly: Bool, values: (Int32) -> [JSON]) -> [JSON] {
        let program = ruleset.program
        func reports(_ id: Int32) -> [JSON] {
            let info = program.nodes[Int(id)]
            let kids = info.children.flatMap { reports($0) }
            if info.isLiteral { return kids }
            let v = values(id)
            if visitedOnly, v.isEmpty { return [] }
            var members: [(String, JSON)] = [("sourcePosition", position(ruleset, info.range))]
            members.append(("values", .array(v)))
            if !kids.isEmpty { members.append(("children", .array(kids))) }
            return [.object(JSONObject(members))]
        }
        return program.roots.flatMap { reports($0) }
    }

    static func position(_ ruleset: Ruleset, _ r: SourceRange) -> JSON {
        .object(JSONObject([
            ("fileName", .string(ruleset.fileName)), ("line", .int(Int64(r.start.line))),
            ("column", .int(Int64(r.start.column))), ("currentOffset", .int(Int64(r.start.offset))),
            ("endOffset", .int(Int64(r.end.offset))),
        ]))
    }
}
