// Decisions remembered when nothing they read can change.
//
// A decision is a function of what its expressions read. When every allow condition that could
// decide a method (and every function and `let` they reach) reads only `request.auth`,
// `request.method`, `request.path`, the path's wildcards (`database` among them) and constants,
// the decision for one (method, path, `request.auth`) is the same every time, for as long as
// the ruleset lives. `DecisionMemo` keeps such decisions, with the coverage visits of the
// evaluation that made them, so a repeated read (a client's get of the same document, each
// document of a batchGet) is answered without evaluating. See docs/rules.md, *Remembered
// decisions*.

import Foundation
import HearthCore

/// Which methods' decisions depend only on the request's auth, method and path (`MemoAnalysis`).
enum MemoAnalysis {
    /// The methods whose every covering allow condition is `pure`.
    static func memoizable(_ program: Program) -> MethodSet {
        var purity: [Int: Bool] = [:]
        var out: MethodSet = []
        for m in RulesMethod.allCases {
            let bit = MethodSet(m)
            if allPure(program.matches, bit, program.functions, &purity) { out.insert(bit) }
        }
        return out
    }

    private static func allPure(_ blocks: [CheckedMatch], _ method: MethodSet, _ functions: [CheckedFunction],
                                _ purity: inout [Int: Bool]) -> Bool {
        for b in blocks {
            for a in b.allows where !a.methods.isDisjoint(with: method) {
                if let c = a.condition, !pure(c, functions, &purity) { return false }
            }
            if !allPure(b.children, method, functions, &purity) { return false }
        }
        return true
    }

    /// Whether `node` reads nothing but `request.auth`, `request.method`, `request.path`, path
    /// variables, locals (parameters and lets, themselves checked where they are bound) and
    /// constants. `request.time`, `request.resource`, `request.query`, the whole `request`,
    /// `resource`, and the document reads (`get`, `exists`, `getAfter`, `existsAfter`,
    /// `firestore.get`, `firestore.exists`) make it impure, as does calling a function whose lets
    /// or body do. purity: per function index, its verdict (a function is checked once; the
    /// checker refuses recursion, so the walk ends).
    static func pure(_ node: Node, _ functions: [CheckedFunction], _ purity: inout [Int: Bool]) -> Bool {
        switch node {
        case .constant, .local, .pathVariable, .unknownVariable:
            return true
        case .request(_, let field):
            switch field {
            case .auth?, .method?, .path?: return true
            case .time?, .resource?, .query?, nil: return false
            }
        case .resource:
            return false
        case .list(_, let items):
            return items.allSatisfy { pure($0, functions, &purity) }
        case .map(_, let entries):
            for (k, v) in entries where !pure(k, functions, &purity) || !pure(v, functions, &purity) { return false }
            return true
        case .path(_, let segments):
            for segment in segments {
                for part in segment {
                    if case .expr(let e) = part, !pure(e, functions, &purity) { return false }
                }
            }
            return true
        case .member(_, let base, _), .unknownMethod(_, let base, _), .failingCall(_, let base, _),
             .matchesConstant(_, let base, _), .not(_, let base), .negate(_, let base), .isType(_, let base, _):
            return pure(base, functions, &purity)
        case .index(_, let a, let b), .binary(_, _, let a, let b), .and(_, let a, let b), .or(_, let a, let b):
            return pure(a, functions, &purity) && pure(b, functions, &purity)
        case .slice(_, let base, let low, let high):
            return pure(base, functions, &purity) && (low.map { pure($0, functions, &purity) } ?? true)
                && (high.map { pure($0, functions, &purity) } ?? true)
        case .ternary(_, let c, let a, let b):
            return pure(c, functions, &purity) && pure(a, functions, &purity) && pure(b, functions, &purity)
        case .method(_, let base, _, let args):
            return pure(base, functions, &purity) && args.allSatisfy { pure($0, functions, &purity) }
        case .builtin(_, let b, let args):
            switch b {
            case .get, .exists, .getAfter, .existsAfter, .firestoreGet, .firestoreExists: return false
            default: return args.allSatisfy { pure($0, functions, &purity) }
            }
        case .call(_, let index, let args):
            guard args.allSatisfy({ pure($0, functions, &purity) }) else { return false }
            if let known = purity[index] { return known }
            guard functions.indices.contains(index) else { return false }
            purity[index] = false  // while it is walked (no recursion reaches here: the checker refuses it)
            let f = functions[index]
            let verdict = f.lets.allSatisfy { pure($0, functions, &purity) } && pure(f.body, functions, &purity)
            purity[index] = verdict
            return verdict
        }
    }
}

/// Remembered decisions of one ruleset, for the methods `MemoAnalysis` found pure. Bounded
/// (`capacity` entries, two per slot; a new key replaces the older of its slot's two) and
/// thread-safe. A decision is remembered only from a completed evaluation, allow or deny alike,
/// with the evaluation's every coverage visit, which a hit hands to the coverage collector as the
/// evaluation would have.
final class DecisionMemo: @unchecked Sendable {
    /// A remembered evaluation's visits as one `CoverageHints` splits them: the visits it
    /// offers an entry for, counted there (`hits`, as `Ruleset.replay` makes them), and the others,
    /// queued for the fold (`rest`). The split depends on the visits and the hints alone, and both
    /// are immutable, so it is made once per entry and hints (`serial`) instead of on every hit.
    final class Replay: Sendable {
        let serial: UInt64
        let rest: [Visit]
        let hits: [UInt64]

        init(serial: UInt64, rest: [Visit], hits: [UInt64]) {
            self.serial = serial
            self.rest = rest
            self.hits = hits
        }
    }

    /// One remembered decision. Immutable but for `replay`, which the memo's lock guards.
    final class Entry: @unchecked Sendable {
        let hash: UInt64
        let method: RulesMethod
        let path: [String]
        let auth: RulesValue?
        let listPlaceholder: String?
        let methodShaped: Bool
        let decision: RulesDecision
        /// Every visit of the evaluation, with its value (recorded without coverage's hints).
        let visits: [Visit]
        /// The visits split for the hints last seen with this entry (guarded by the memo's lock).
        @exclusivity(unchecked) fileprivate var replay: Replay?

        init(hash: UInt64, request: RulesRequest, decision: RulesDecision, visits: [Visit]) {
            self.hash = hash
            method = request.method
            path = request.path
            auth = request.auth
            listPlaceholder = request.listPlaceholder
            methodShaped = request.methodShaped
            self.decision = decision
            self.visits = visits
        }

        /// Whether `request` has this entry's key, byte for byte (`DecisionMemo.same`): Swift's
        /// `==` on strings is canonical equivalence, under which two uids or segments the rules
        /// tell apart would share an entry.
        @inline(__always)
        func matches(_ request: RulesRequest, hash: UInt64) -> Bool {
            guard self.hash == hash, method == request.method, methodShaped == request.methodShaped,
                  DecisionMemo.sameSegments(path, request.path) else { return false }
            // Each optional unwrapped on its own: a switch over a tuple of the two copied both
            // values into it (a retain and a release of each) on every hit.
            if let a = listPlaceholder {
                guard let b = request.listPlaceholder, ExactString.equal(a, b) else { return false }
            } else if request.listPlaceholder != nil {
                return false
            }
            if let a = auth {
                guard let b = request.auth else { return false }
                return DecisionMemo.same(a, b)
            }
            if case .some = request.auth { return false }
            return true
        }
    }

    /// The methods whose decisions are remembered.
    let methods: MethodSet
    /// Entries kept at most.
    static let capacity = 1024

    private let lock = NSLock()
    @exclusivity(unchecked) private var slots: [Entry?]
    @exclusivity(unchecked) private var counts = (hits: 0, misses: 0)

    init(methods: MethodSet) {
        self.methods = methods
        slots = Array(repeating: nil, count: Self.capacity)
    }

    /// Entries held now (tests).
    var kept: Int {
        lock.lock()
        defer { lock.unlock() }
        return slots.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
    }

    /// Hits and misses so far (tests, docs).
    var stats: (hits: Int, misses: Int) {
        lock.lock()
        defer { lock.unlock() }
        return counts
    }

    /// The remembered decision for `request`, or nil; with the entry's split of its visits
    /// last kept (`keep(_:for:)`), read under the same lock.
    @inline(__always)
    func find(_ request: RulesRequest, hash: UInt64) -> (entry: Entry, replay: Replay?)? {
        let i = Int(truncatingIfNeeded: hash) & (Self.capacity - 2)
        lock.lock()
        defer { lock.unlock() }
        if let a = slots[i], a.matches(request, hash: hash) {
            counts.hits += 1
            return (a, a.replay)
        }
        if let b = slots[i + 1], b.matches(request, hash: hash) {
            counts.hits += 1
            return (b, b.replay)
        }
        counts.misses += 1
        return nil
    }

    /// Keeps `replay` as `entry`'s split of its visits (replacing one made for other hints).
    func keep(_ replay: Replay, for entry: Entry) {
        lock.lock()
        entry.replay = replay
        lock.unlock()
    }

    /// Remembers `entry`: the slot's first place moves to the second, the second is dropped.
    func insert(_ entry: Entry) {
        let i = Int(truncatingIfNeeded: entry.hash) & (Self.capacity - 2)
        lock.lock()
        slots[i + 1] = slots[i]
        slots[i] = entry
        lock.unlock()
    }

    /// A hash of part of the request's key: the method, the number of path segments, the last
    /// three (the document, its collection, and its parent's id: the same first segments on every
    /// request of one database) and the uid of `request.auth`. The whole key is compared on a match;
    /// a hash that leaves something out only shares a slot. Hashing every segment's bytes cost
    /// ~1.4k instructions a get, more than the rest of a hit.
    static func hash(_ request: RulesRequest) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 &* (UInt64(MethodSet(request.method).rawValue) &+ UInt64(request.path.count) &<< 8)
        let path = request.path
        var i = max(0, path.count - 3)
        while i < path.count {
            h = mix(h, path[i])
            i += 1
        }
        if case .map(let m)? = request.auth, case .string(let uid)? = m["uid"] { h = mix(h, uid) }
        if let p = request.listPlaceholder { h = mix(h, p) }
        return h ^ (h >> 31)
    }

    /// `seed` mixed with `string`'s length and its first and last eight bytes (read in place).
    @inline(__always)
    private static func mix(_ seed: UInt64, _ string: String) -> UInt64 {
        let n = string.utf8.count
        let ends = string.utf8.withContiguousStorageIfAvailable { b -> UInt64 in
            guard let base = b.baseAddress else { return 0 }
            let raw = UnsafeRawPointer(base)
            if b.count >= 8 {
                return raw.loadUnaligned(as: UInt64.self) ^ (raw.loadUnaligned(fromByteOffset: b.count - 8, as: UInt64.self) &* 0x9E37_79B9_7F4A_7C15)
            }
            var w: UInt64 = 0
            for k in 0..<b.count { w |= UInt64(b[k]) << (UInt64(k) * 8) }
            return w
        } ?? UInt64(truncatingIfNeeded: string.hashValue)
        var h = (seed ^ ends ^ UInt64(n)) &* 0xBF58_476D_1CE4_E5B9
        h ^= h >> 29
        return h &* 0x94D0_49BB_1331_11EB
    }

    /// Whether two paths' segments are the same bytes. A request whose path is the very array
    /// the entry keeps (a get of a document the read cache holds hands the cache entry's rules path
    /// on every time) is the same without comparing its segments (~0.25k instructions a hit).
    @inline(__always)
    static func sameSegments(_ a: [String], _ b: [String]) -> Bool {
        let shared = a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in x.count == y.count && x.baseAddress == y.baseAddress }
        }
        return shared || ExactString.equal(a, b)
    }

    /// Whether two values are the same to every rule: the same bytes of every string (key or
    /// value), the same bits of every float (`-0.0` and `0.0` render apart in a message), the
    /// same case. A map holding the very storage of the other (a client's cached `request.auth`,
    /// handed over call after call) is the same without a look inside. Values a request's auth
    /// never holds (diffs, vectors, constraints) are never the same: a miss, never a wrong hit.
    static func same(_ a: RulesValue, _ b: RulesValue) -> Bool {
        switch (a, b) {
        case (.map(let x), .map(let y)):
            if x.sharesStorage(with: y) { return true }
            guard x.count == y.count else { return false }
            for (p, q) in zip(x, y) where !ExactString.equal(p.key, q.key) || !same(p.value, q.value) { return false }
            return true
        case (.string(let x), .string(let y)): return ExactString.equal(x, y)
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.timestamp(let s, let n), .timestamp(let t, let m)), (.duration(let s, let n), .duration(let t, let m)):
            return s == t && n == m
        case (.latlng(let x, let y), .latlng(let u, let v)): return x.bitPattern == u.bitPattern && y.bitPattern == v.bitPattern
        case (.path(let x, _), .path(let y, _)): return ExactString.equal(x, y)
        case (.list(let x), .list(let y)), (.set(let x), .set(let y)):
            guard x.count == y.count else { return false }
            for i in x.indices where !same(x[i], y[i]) { return false }
            return true
        default:
            return false
        }
    }
}
