import SecurityRules

/// One project's rules in force as one object: what `RulesManager` keeps per project and hands
/// each decision.
///
/// `RulesManager.Active` carries the ruleset and its coverage as two references, so every copy of
/// it (the manager's answer, each pass down to the decision) retained and released both, and the
/// coverage object is weakly referenced (its fold's `[weak self]`), which moves its reference
/// count to a side table: each of its retains and releases took the runtime's slow path (~48
/// instructions, 4–6 a cached get; bench/callgrind_get.py). Handed out as this object, a decision
/// retains one ordinary object and borrows the two.
final class RulesInForce: Sendable {
    /// The same rules as the enum the manager's other readers match on.
    let active: RulesManager.Active
    /// The rules that judge; nil when `open` or `broken`, or when the rules are another service's.
    let ruleset: Ruleset?
    let coverage: RulesCoverage?
    /// Why every request is denied (`broken`).
    let broken: String?

    init(_ active: RulesManager.Active) {
        self.active = active
        switch active {
        case .open:
            (ruleset, coverage, broken) = (nil, nil, nil)
        case .ruleset(let r, let c) where r.service != .firestore:
            // A file declaring only another service (`service firebase.storage`) loads, as the
            // official emulator loads it, and denies every request, as the emulator does with it.
            // Judging Firestore's paths with storage rules instead could allow what no Firestore
            // rule grants (a storage `match /{all=**}` matches them too): fail closed.
            (ruleset, coverage, broken) = (nil, nil, "The security rules in \(r.fileName) are for service \(r.service.rawValue), not cloud.firestore: every request is denied.")
        case .ruleset(let r, let c):
            (ruleset, coverage, broken) = (r, c, nil)
        case .broken(let why):
            (ruleset, coverage, broken) = (nil, nil, why)
        }
    }

    /// No rules configured: everything is allowed.
    var isOpen: Bool { ruleset == nil && broken == nil }
}
