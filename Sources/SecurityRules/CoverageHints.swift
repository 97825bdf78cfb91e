// What the coverage recorder knows of each expression's outcomes, handed to the evaluator so that
// it counts a repeated outcome itself instead of keeping the value for the fold. Most visits
// repeat: a create on the shipped rules visits 111 expressions, ~80 of them with a value the
// expression had before, and queuing, folding and freeing those was most of coverage's cost.

import Foundation
import Synchronization

/// A published, immutable view of one coverage table: per expression, the entries a visit may be
/// counted at without being folded. Only outcomes whose class of equal values holds nothing that
/// renders differently are offered — bools, null, ints, timestamps, and strings no other spelling
/// equals — so a counted visit has the effect a folded one would have wherever it falls in the
/// order: it counts at an entry that exists from then on (entries are never removed from a table),
/// and the entry's representative renders the same whichever equal visit was newest. The one
/// exception, ASCII strings with `K`, `;` or `` ` `` (another spelling exists), are offered by
/// their bytes too, and each counted visit of one leaves a marker in the fold's queue, where it
/// was made, that puts those bytes back as the representative (`RulesCoverage.marked`).
final class CoverageHints: @unchecked Sendable {
    /// One expression's offer; entries are indexes into its table's values, −1 for none.
    struct Node {
        /// The entries holding `true` and `false`.
        var trueEntry: Int8 = -1
        var falseEntry: Int8 = -1
        /// The entry the expression matched last, when its value is offered.
        var entry: Int8 = -1
        /// 0: nothing besides the bools; 1: `key` (null, int, timestamp); 2: the string whose
        /// UTF-8 bytes are `bytes[offset..<offset + length]`; 3 and 4: the map (3) or list (4)
        /// whose storage's address is `key.bits` (the very value the table's entry holds, kept
        /// alive by `values`, so no other container takes that address while these hints live).
        var kind: UInt8 = 0
        /// A `kind` 2 string with another spelling (`CoverageHints.hasSpellings`): its counted
        /// visits are also queued as markers (`RulesCoverage.marked`), so that the fold puts these
        /// bytes back as the entry's representative wherever an equal visit spelled otherwise was
        /// newer.
        var spelled = false
        var key = RulesCoverage.ScalarKey(tag: 0, bits: 0)
        var offset: Int32 = 0
        var length: Int32 = 0
    }

    /// The ruleset the table is for (held, so no other ruleset takes its identity).
    let ruleset: Ruleset
    /// The recorder's generation when the table was read: a reset starts a new one, and a visit
    /// counted under an older one is folded as a value instead.
    let generation: Int
    /// Where counted visits go (shared with the table, guarded by the recorder's pending lock).
    let counts: CountedVisits
    /// Whether some offered string has another spelling (`Node.spelled`).
    let spelled: Bool
    /// A number no other hints object of this process has had: what a remembered decision's split
    /// of its visits (`DecisionMemo.Replay`) was made against. The object's address would do
    /// only while it lives, and an entry holding the object itself would keep its ruleset alive
    /// (ruleset → memo → entry → hints → ruleset).
    let serial: UInt64 = CoverageHints.serials.add(1, ordering: .relaxed).newValue
    private static let serials = Atomic<UInt64>(0)
    /// Per node, the value of a `kind` 1 to 4 offer, or a list of strings its last entry holds
    /// (`keyList`); .null otherwise. For `value(_:_:)` and `keyList(_:of:)`.
    private let values: [RulesValue]
    // Immutable once built; owned here and read by evaluations through `offers`, which holds no
    // reference (a retain and a release per visited expression cost more than the check).
    private let nodes: UnsafeMutableBufferPointer<Node>
    private let bytes: UnsafeMutableBufferPointer<UInt8>

    init(ruleset: Ruleset, generation: Int, counts: CountedVisits, nodes: [Node], values: [RulesValue]) {
        self.ruleset = ruleset
        self.generation = generation
        self.counts = counts
        self.values = values
        var nodes = nodes
        var bytes: [UInt8] = []
        for i in nodes.indices where nodes[i].kind == 2 {
            guard case .string(var s) = values[i] else { continue }
            nodes[i].offset = Int32(bytes.count)
            nodes[i].length = Int32(s.utf8.count)
            s.withUTF8 { bytes.append(contentsOf: $0) }
        }
        self.nodes = .allocate(capacity: max(1, nodes.count))
        _ = self.nodes.initialize(from: nodes)
        self.bytes = .allocate(capacity: max(1, bytes.count))
        _ = self.bytes.initialize(from: bytes)
        spelled = nodes.contains { $0.spelled }
        offers = Offers(nodes: UnsafeBufferPointer(rebasing: self.nodes[0..<nodes.count]), bytes: UnsafePointer(self.bytes.baseAddress!))
    }

    deinit {
        nodes.deallocate()
        bytes.deallocate()
    }

    /// The view evaluations read; valid while this object lives (the evaluation holds it).
    let offers: Offers

    /// The offers, as plain pointers: trivially copyable, so reading them retains nothing.
    struct Offers {
        let nodes: UnsafeBufferPointer<Node>
        let bytes: UnsafePointer<UInt8>?

        static var none: Offers { Offers(nodes: UnsafeBufferPointer(start: nil, count: 0), bytes: nil) }

        /// The entry `value`, node `id`'s outcome, counts at when it is offered; −1 otherwise.
        @inline(__always)
        func entry(_ id: Int32, _ value: borrowing RulesValue) -> Int {
            let i = Int(id)
            guard i < nodes.count else { return -1 }
            let n = nodes[i]
            switch value {
            case .bool(let b): return Int(b ? n.trueEntry : n.falseEntry)
            case .int(let x):
                return n.kind == 1 && n.key.tag == 3 && n.key.bits == UInt64(bitPattern: x) ? Int(n.entry) : -1
            case .null:
                return n.kind == 1 && n.key.tag == 0 ? Int(n.entry) : -1
            case .timestamp(let s, let ns):
                return n.kind == 1 && n.key.tag == 7 && n.key.bits == UInt64(bitPattern: s) && n.key.nanos == ns ? Int(n.entry) : -1
            case .string(let s):
                guard n.kind == 2, s.utf8.count == Int(n.length) else { return -1 }
                return same(s, n) ? Int(n.entry) : -1
            case .map(let m):
                // The same storage is the same map: the fold counts it at that entry at once too.
                return n.kind == 3 && n.key.bits == UInt64(m.storageIdentity) ? Int(n.entry) : -1
            case .list(let items):
                return n.kind == 4 && n.key.bits == UInt64(unsafeBitCast(items, to: UInt.self)) ? Int(n.entry) : -1
            default:
                return -1
            }
        }

        /// The entry a `+` chain's step, node `id`, counts at when its string (`bytes`, gathered
        /// so far) is offered; −1 otherwise.
        func entry(_ id: Int32, prefix gathered: [UInt8]) -> Int {
            let i = Int(id)
            guard i < nodes.count, nodes[i].kind == 2, gathered.count == Int(nodes[i].length), let bytes else { return -1 }
            let n = nodes[i]
            let same = gathered.withUnsafeBufferPointer { g in g.isEmpty || memcmp(g.baseAddress!, bytes + Int(n.offset), g.count) == 0 }
            return same ? Int(n.entry) : -1
        }

        /// The entry node `id`'s outcome `receiver.lower()` counts at when it is offered; −1
        /// otherwise. The receiver's bytes are lowered as they are compared (A–Z to a–z, as
        /// `lower()` maps them, every other byte as it is), so the lowered string is not built.
        func entry(_ id: Int32, lowering receiver: String) -> Int {
            let i = Int(id)
            guard i < nodes.count, nodes[i].kind == 2, receiver.utf8.count == Int(nodes[i].length), let bytes else { return -1 }
            let n = nodes[i]
            let offered = UnsafeRawPointer(bytes + Int(n.offset))
            var receiver = receiver
            let same = receiver.withUTF8 { s in
                guard let source = s.baseAddress.map(UnsafeRawPointer.init) else { return true }
                // Eight bytes at a time (a byte loop cost ~10 instructions a byte over the 135 of
                // a create's joined fields, against `memcmp`'s fraction of one for plain strings).
                var k = 0
                while k + 8 <= s.count {
                    let x = source.loadUnaligned(fromByteOffset: k, as: UInt64.self)
                    if Offers.lowered(x) != offered.loadUnaligned(fromByteOffset: k, as: UInt64.self) { return false }
                    k += 8
                }
                while k < s.count {
                    let b = s[k]
                    if (b &- 0x41 < 26 ? b | 0x20 : b) != offered.load(fromByteOffset: k, as: UInt8.self) { return false }
                    k += 1
                }
                return true
            }
            return same ? Int(n.entry) : -1
        }

        /// Eight bytes with A–Z made a–z, every other byte as it is (`lower()`'s mapping, per byte
        /// lane: a lane's top bit says whether its low seven bits reach `A` (+0x3F) and pass `Z`
        /// (+0x25); neither sum carries into the next lane, and a byte ≥ 0x80 is left alone).
        @inline(__always)
        static func lowered(_ x: UInt64) -> UInt64 {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let low = x & (0x7F &* ones)
            let fromA = low &+ 0x3F &* ones
            let pastZ = low &+ 0x25 &* ones
            let upper = fromA & ~pastZ & ~x & (0x80 &* ones)
            return x | upper >> 2
        }

        /// Whether `s` (of the offer's length) has the offer's bytes.
        private func same(_ s: String, _ n: Node) -> Bool {
            guard let bytes else { return false }
            let length = Int(n.length)
            if length == 0 { return true }
            if let same = s.utf8.withContiguousStorageIfAvailable({ memcmp($0.baseAddress!, bytes + Int(n.offset), length) == 0 }) {
                return same
            }
            return s.utf8.elementsEqual(UnsafeBufferPointer(start: bytes + Int(n.offset), count: length))
        }
    }

    /// Whether a string may be offered: only pure ASCII without `K`, `;` and `` ` ``. Its bytes
    /// are then its only spelling — no other string is canonically equivalent to it, so equal
    /// strings have equal bytes and render alike. (A non-ASCII character whose canonical
    /// decomposition is ASCII is one of U+212A KELVIN SIGN, U+037E GREEK QUESTION MARK and
    /// U+1FEF GREEK VARIA, which decompose to those three; decompositions are frozen by
    /// Unicode's normalization stability policy.)
    static func offerable(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { bytes in
            for b in bytes where b >= 0x80 || b == 0x4B || b == 0x3B || b == 0x60 { return false }
            return true
        }
    }

    /// Whether a string may be offered by its bytes: pure ASCII. One with `K`, `;` or `` ` `` has
    /// another spelling (`hasSpellings`); the evaluator still counts only these bytes, and the
    /// fold is told where it did (`RulesCoverage.marked`), so an equal visit spelled otherwise
    /// never stays the representative past a newer counted one.
    static func offerableBytes(_ s: String) -> Bool {
        if flaggedASCII(s) { return true }
        var s = s
        return s.withUTF8 { bytes in
            for b in bytes where b >= 0x80 { return false }
            return true
        }
    }

    /// True when the string's own representation says it is ASCII, read without touching its
    /// bytes: the standard library computes that flag whenever it builds a native string (from
    /// bytes it validates, from a literal, by appending), in bit 62 of the second word for a
    /// small string (up to 15 bytes in the two words) and in bit 63 of the first word, the count
    /// and flags, for one stored apart. False means only "not known": a string of another kind
    /// (bit 60 set: foreign, bridged) or one whose flag is clear is looked at byte by byte. This is
    /// the standard library's string ABI (stable on Apple's platforms, the same layout here);
    /// `CoverageCountedTests.asciiFlag` checks it against the bytes, and that native ASCII
    /// strings of every shape carry it, so a changed layout fails there, not silently.
    @inline(__always)
    static func flaggedASCII(_ s: String) -> Bool {
        let (countAndFlags, object) = unsafeBitCast(s, to: (UInt64, UInt64).self)
        if object & 0x2000_0000_0000_0000 != 0 { return object & 0x4000_0000_0000_0000 != 0 }
        return object & 0x1000_0000_0000_0000 == 0 && countAndFlags & 0x8000_0000_0000_0000 != 0
    }

    /// Whether an ASCII string has another spelling: a `K`, `;` or `` ` `` (`offerable(_:)`).
    static func hasSpellings(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { bytes in bytes.contains { $0 == 0x4B || $0 == 0x3B || $0 == 0x60 } }
    }

    /// Whether a counted visit of node `node` must also be queued as a marker.
    func isSpelled(_ node: Int) -> Bool { node < offers.nodes.count && offers.nodes[node].spelled }

    /// Whether a map or list may be offered by its storage: not empty (every empty container
    /// shares one storage, whatever its type), and holding only values that equal values render
    /// alike — null, bools, ints, timestamps, durations, bytes, `offerable` strings (keys too), and
    /// lists and maps of them; no floats (0.0 equals -0.0). At most `budget` values are looked at:
    /// a larger container is not offered. A visit of the same storage is then counted where the
    /// fold would count it, and the entry renders the same whichever equal value represents it.
    static func offerable(container: RulesValue, budget: Int = 64) -> Bool {
        var budget = budget
        switch container {
        case .map(let m): return !m.isEmpty && offerable(m, &budget)
        case .list(let items): return !items.isEmpty && offerable(items, &budget)
        default: return false
        }
    }

    private static func offerable(_ m: RulesMap, _ budget: inout Int) -> Bool {
        for (k, v) in m {
            guard offerable(k), offerable(value: v, &budget) else { return false }
        }
        return true
    }

    private static func offerable(_ items: [RulesValue], _ budget: inout Int) -> Bool {
        for v in items {
            guard offerable(value: v, &budget) else { return false }
        }
        return true
    }

    private static func offerable(value v: RulesValue, _ budget: inout Int) -> Bool {
        budget -= 1
        guard budget >= 0 else { return false }
        switch v {
        case .null, .bool, .int, .timestamp, .duration, .bytes: return true
        case .string(let s): return offerable(s)
        case .map(let m): return offerable(m, &budget)
        case .list(let items): return offerable(items, &budget)
        default: return false
        }
    }

    /// The list node `node`'s last entry held when these hints were published, if that is `map`'s
    /// key list byte for byte (`RulesMap.hasKeyList`): a `keys()` node's value for a request
    /// whose document has the same field names as the last one. The evaluator records this list
    /// instead of building an equal one, so the fold finds the entry's own storage and counts the
    /// visit at once (the list holds `s3Key`, whose `K` keeps it from being offered), without
    /// comparing the lists and replacing the representative. What the visit records is the same
    /// bytes a list built from the map would hold, so the report cannot tell.
    func keyList(_ node: Int32, of map: RulesMap) -> RulesValue? {
        let i = Int(node)
        guard i < values.count, case .list(let items) = values[i], map.hasKeyList(items) else { return nil }
        return values[i]
    }

    /// The value a counted visit of node `node` at entry `entry` had (for a visit that has to be
    /// folded after all).
    func value(_ node: Int, _ entry: Int) -> RulesValue {
        let n = nodes[node]
        if entry == Int(n.trueEntry) { return .bool(true) }
        if entry == Int(n.falseEntry) { return .bool(false) }
        return values[node]
    }
}

/// Visits counted by the evaluator, per table entry (node × `distinctValuesPerExpression` +
/// entry), added to the folded counts when a report is read. Guarded by the recorder's pending
/// lock; a class so the table and every hints published from it share one store.
final class CountedVisits: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<Int>

    init(nodes: Int) {
        slots = .allocate(capacity: max(1, nodes * RulesCoverage.distinctValuesPerExpression))
        slots.initialize(repeating: 0)
    }

    deinit { slots.deallocate() }

    /// Adds one evaluation's counted visits (`Evaluation.hits`: the slot in the low 32 bits).
    func add(_ hits: [UInt64]) {
        // Through plain pointers, the count read once: ~80 hits a create, under the pending lock
        // (the array's iterator and the buffer's count re-read per hit cost ~12 instructions each).
        guard let counts = slots.baseAddress else { return }
        let limit = UInt64(slots.count)
        hits.withUnsafeBufferPointer { hits in
            for h in hits {
                let slot = h & 0xFFFF_FFFF
                if slot < limit { counts[Int(slot)] &+= 1 }
            }
        }
    }

    /// Every slot's count, for a report.
    func copy() -> [Int] { Array(slots) }
}
