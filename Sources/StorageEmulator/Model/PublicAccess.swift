/// Whether a caller without credentials (`allUsers`) may read a bucket's objects: the decision
/// an object's public URL enforces.
///
/// GCS grants `allUsers` a read through a bucket IAM binding to a role with
/// `storage.objects.get`, or through an `allUsers` entry in the object's legacy ACL on a bucket
/// without uniform bucket-level access; public access prevention (`enforced`) refuses both.
/// Related: "Public access prevention" and "Uniform bucket-level access" in the Cloud Storage docs.
///
/// A stored setting that does not decode fails closed: the bucket's settings or IAM policy
/// unreadable refuse every object; the object's ACL (or, for an object that has none of its own,
/// the bucket's default object ACL) unreadable refuses that object, unless IAM grants the read
/// without it. Each such refusal names the column, for the warning the caller logs.
struct PublicAccess: Sendable {
    /// The outcome for one object.
    enum Decision: Sendable, Equatable {
        case allowed
        case denied
        /// Denied because this stored column does not decode (`bucket` or `object` and the column).
        case unreadable(String)
    }

    private let prevented: Bool
    private let iamGrants: Bool
    private let access: ObjectAccessView
    /// A bucket column whose damage refuses every object.
    private let unreadableBucketColumn: StoredBucket.Column?
    private let defaultObjectACLUnreadable: Bool

    init(bucket: StoredBucket, owner: String) {
        unreadableBucketColumn = [StoredBucket.Column.settings, .iamPolicy].first { bucket.unreadable[$0] != nil }
        prevented = bucket.enforcesPublicAccessPrevention
        iamGrants = bucket.iamGrantsPublicRead
        access = ObjectAccessView(bucket: bucket, owner: owner)
        defaultObjectACLUnreadable = bucket.unreadable[.defaultObjectAcl] != nil
    }

    /// Whether every object may be read, whatever its ACL (a missing one is then 404, not 403).
    var bucketIsPublic: Bool { unreadableBucketColumn == nil && !prevented && iamGrants }

    /// Refuses before any object is read when the bucket itself cannot be judged.
    var bucketDecision: Decision? {
        unreadableBucketColumn.map { .unreadable("bucket \($0.rawValue)") } ?? (prevented ? .denied : nil)
    }

    func decide(_ o: StoredObject) -> Decision {
        if let refusal = bucketDecision { return refusal }
        if iamGrants { return .allowed }
        if access.uniform { return .denied }
        if o.unreadableACL != nil { return .unreadable("object acl") }
        if o.acl == nil && defaultObjectACLUnreadable { return .unreadable("bucket \(StoredBucket.Column.defaultObjectAcl.rawValue)") }
        return o.objectACL(access).contains { $0.entity == "allUsers" && ($0.role == "READER" || $0.role == "OWNER") } ? .allowed : .denied
    }
}
