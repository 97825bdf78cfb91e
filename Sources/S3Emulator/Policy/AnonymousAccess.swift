/// What a bucket's policy grants an unsigned request.
///
/// S3 denies anonymous requests unless a bucket policy allows them ("All unauthenticated requests
/// are made by the anonymous user"; a statement for `"*"` reaches it). Block Public Access's
/// RestrictPublicBuckets turns that off for a bucket whose policy is public.
struct AnonymousAccess: Sendable {
    let bucket: String
    let policy: BucketPolicy?
    /// RestrictPublicBuckets is on and the policy is public: nothing is granted.
    let restricted: Bool
    /// The request's condition keys, lower-cased.
    let context: [String: [String]]

    /// Whether the policy allows `action` on the bucket (`key` nil) or on one of its objects;
    /// `extra` adds or replaces condition keys.
    func permits(_ action: String, key: String?, extra: [String: [String]] = [:]) -> Bool {
        guard let policy, !restricted else { return false }
        let context = extra.isEmpty ? self.context : self.context.merging(extra) { _, new in new }
        return policy.evaluate(action: action, resource: key.map { bucket + "/" + $0 } ?? bucket, context: context) == .allow
    }
}
