import SecurityRules
import Synchronization

/// The lookup of a decision made without the store at hand (a get answered from the read cache),
/// for rules that read no documents (`Ruleset.readsDocuments` false).
///
/// Such rules never ask; should one ask anyway, the request must be denied, not judged as if the
/// document were absent (that could turn `!exists(…)` into an allow). A `RulesLookup` with
/// throwing reads did that at the price of an object per decision (its allocation, its closures
/// and its release, ~0.5k instructions a cached get); this one is a value small enough for the
/// evaluator's existential without a box. A read counts in a process-wide counter and `failure`
/// is set when the counter moved since the lookup was made: its own reads always show, and a
/// read by another decision in between can only turn an allow into a denial (fail closed), in a
/// case that does not happen.
struct NoStoreLookup: RulesRequestLookup {
    private static let reads = Atomic<Int>(0)
    private let readsBefore: Int

    init() { readsBefore = Self.reads.load(ordering: .relaxed) }

    func get(_ path: [String]) -> RulesValue? { refuse() }

    func getAfter(_ path: [String]) -> RulesValue? { refuse() }

    var failure: (any Error)? {
        Self.reads.load(ordering: .relaxed) == readsBefore ? nil : NoStoreAtHand()
    }

    private func refuse() -> RulesValue? {
        Self.reads.wrappingAdd(1, ordering: .relaxed)
        return nil
    }

    /// What a refused read reports (logged by `authorize`).
    struct NoStoreAtHand: Error {}
}
