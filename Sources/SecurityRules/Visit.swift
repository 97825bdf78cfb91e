// One visited expression as the evaluator records it, for traces, test reports and coverage.

/// An expression's outcome, recorded compactly. A struct (not a tuple) so that an array of them
/// is destroyed by the type's own specialised code: coverage frees thousands per fold, and a
/// tuple's destruction went through the runtime's generic `tuple_destroy`.
struct Visit: Sendable {
    /// The node's id.
    let node: Int32
    /// ≥ 0: the node evaluated to the first `prefix` UTF-8 bytes of `raw`'s string, a step of a
    /// `+` chain recorded without building its intermediate strings (`a + '/' + b` records
    /// `a + '/'` as a prefix of the whole). −1: `raw` itself. `Visit.lowering`: `raw`'s string
    /// lowered (`lower()` of a `lower().matches(…)` judged for coverage, whose matcher reads the
    /// receiver lowered: the lowered string is built only where the visit is read). −33…−2 (only
    /// in coverage's queue, `RulesCoverage.marked`): a visit the evaluator counted at entry
    /// −2 − `prefix` of the node's coverage table, whose string was `raw`.
    let prefix: Int32
    var raw: TracedRaw

    init(_ node: Int32, _ raw: TracedRaw) {
        self.node = node
        prefix = -1
        self.raw = raw
    }

    init(_ node: Int32, prefix: Int32, of raw: TracedRaw) {
        self.node = node
        self.prefix = prefix
        self.raw = raw
    }

    /// `prefix` of a visit whose value is `raw`'s string lowered.
    static let lowering = Int32.min

    /// Node `node` evaluated to `receiver.lower()`.
    init(_ node: Int32, lowering receiver: String) {
        self.node = node
        prefix = Visit.lowering
        raw = .value(.string(receiver))
    }

    init(_ node: Int32, marking entry: Int, _ raw: TracedRaw) {
        self.node = node
        prefix = -2 - Int32(entry)
        self.raw = raw
    }

    /// The coverage entry a marker names; nil for a visit.
    var markedEntry: Int? { prefix <= -2 && prefix != Visit.lowering ? Int(-2 - prefix) : nil }

    /// The outcome as a value of its own (a prefix is copied out, a lowering made).
    var traced: TracedRaw {
        guard prefix >= 0 || prefix == Visit.lowering, case .value(.string(let whole)) = raw else { return raw }
        if prefix == Visit.lowering { return .value(.string(StringFunctions.lowered(whole))) }
        return .value(.string(Visit.prefix(whole, Int(prefix))))
    }

    /// The first `length` UTF-8 bytes of `s` (a `+` chain's prefixes end between its operands,
    /// so on scalar boundaries).
    static func prefix(_ s: String, _ length: Int) -> String {
        if length == s.utf8.count { return s }
        var s = s
        return s.withUTF8 { String(decoding: UnsafeBufferPointer(rebasing: $0[..<length]), as: UTF8.self) }
    }
}
