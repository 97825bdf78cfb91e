/// Evaluating a bucket policy for an anonymous request.
///
/// Related: "Policy evaluation logic" (an explicit Deny wins, else an Allow, else the implicit
/// deny) and "Policy elements: Principal" (`"*"` and `{"AWS": "*"}` reach anonymous callers).
extension BucketPolicy {
    /// What the policy says about a request.
    enum Decision: Sendable, Equatable {
        case allow, deny
        /// No statement applies: S3's default deny.
        case noMatch
    }

    /// Who is asking: an unsigned request, or a configured key's account.
    enum Caller: Sendable, Equatable {
        case anonymous
        case account(accountID: String, canonicalID: String)
    }

    /// The decision for a request of `action` (`s3:GetObject`) on `resource` (`bucket` or
    /// `bucket/key`) by `caller`, with condition context `context` (keys lower-cased).
    func evaluate(action: String, resource: String, context: [String: [String]], caller: Caller = .anonymous) -> Decision {
        var allowed = false
        for statement in statements where statement.applies(action: action, resource: resource, context: context,
                                                              variables: version == "2012-10-17", caller: caller) {
            if statement.effect == .deny { return .deny }
            allowed = true
        }
        return allowed ? .allow : .noMatch
    }
}

extension BucketPolicy.Statement {
    func applies(action: String, resource: String, context: [String: [String]], variables: Bool,
                 caller: BucketPolicy.Caller = .anonymous) -> Bool {
        if let principal, !principal.includes(caller) { return false }
        if let notPrincipal, notPrincipal.includes(caller) { return false }
        let lowerAction = action.lowercased()
        func actionMatches(_ patterns: [String]) -> Bool {
            patterns.contains { $0 == "*" || Wildcard.matches($0.lowercased(), lowerAction) }
        }
        if let actions, !actionMatches(actions) { return false }
        if let notActions, actionMatches(notActions) { return false }
        func resourceMatches(_ patterns: [String]) -> Bool {
            patterns.contains { pattern in
                guard let expanded = variables ? Self.expand(pattern, context) : pattern else { return false }
                return Wildcard.matches(expanded, resource)
            }
        }
        if let resources, !resourceMatches(resources) { return false }
        if let notResources, resourceMatches(notResources) { return false }
        return conditions.allSatisfy { $0.holds(context) }
    }

    /// A resource with its policy variables (`${aws:SourceIp}`) replaced by the request's values;
    /// nil when one has no single value (such a resource matches nothing).
    static func expand(_ pattern: String, _ context: [String: [String]]) -> String? {
        guard pattern.contains("${") else { return pattern }
        var out = ""
        var rest = Substring(pattern)
        while let open = rest.range(of: "${") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
                out += rest[open.lowerBound...]
                return out
            }
            let name = String(rest[open.upperBound..<close])
            switch name {
            case "*", "?", "$": out += name
            default:
                guard let values = context[name.lowercased()], values.count == 1 else { return nil }
                out += values[0]
            }
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }
}

extension BucketPolicy.Principal {
    /// Whether the principal names `caller`: `*` names everyone; an account's ARN
    /// (`arn:aws:iam::<id>:root`, or any of its users and roles) or its canonical id names a
    /// signed caller of that account.
    func includes(_ caller: BucketPolicy.Caller) -> Bool {
        if includesEveryone { return true }
        guard case .account(let accountID, let canonicalID) = caller, case .named(let types) = self else { return false }
        if types["CanonicalUser"]?.contains(canonicalID) ?? false { return true }
        return types["AWS"]?.contains { arn in
            let parts = arn.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
            return parts.count == 6 && parts[4] == accountID
        } ?? false
    }
}
