import SecurityRules

/// A decision's document lookup that remembers whether a read failed: `authorize` denies the
/// request when one did, whatever the rules decided (security checks fail closed).
protocol RulesRequestLookup: RulesDocumentLookup {
    /// The first read failure of this request, if any.
    var failure: (any Error)? { get }
}
