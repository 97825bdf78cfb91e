/// The S3 actions a bucket policy may name, and what each applies to.
///
/// Related: "Actions, resources, and condition keys for Amazon S3" (Service Authorization
/// Reference). Action names are case-insensitive; `*` and `?` are wildcards. A name S3 does not
/// know is "Policy has invalid action"; an action whose resources the statement does not name is
/// "Action does not apply to any resource(s) in statement".
enum PolicyActions {
    /// What an action is about.
    enum Kind: Sendable, Hashable {
        case object, bucket
        /// Account-level actions (ListAllMyBuckets, …): no bucket policy resource reaches them.
        case account
    }

    static let objectActions = """
        AbortMultipartUpload BypassGovernanceRetention DeleteObject DeleteObjectTagging DeleteObjectVersion \
        DeleteObjectVersionTagging GetObject GetObjectAcl GetObjectAttributes GetObjectLegalHold GetObjectRetention \
        GetObjectTagging GetObjectTorrent GetObjectVersion GetObjectVersionAcl GetObjectVersionAttributes \
        GetObjectVersionForReplication GetObjectVersionTagging GetObjectVersionTorrent InitiateReplication \
        ListMultipartUploadParts ObjectOwnerOverrideToBucketOwner PutObject PutObjectAcl PutObjectLegalHold \
        PutObjectRetention PutObjectTagging PutObjectVersionAcl PutObjectVersionTagging RenameObject ReplicateDelete \
        ReplicateObject ReplicateTags RestoreObject
        """
    static let bucketActions = """
        CreateBucket DeleteBucket DeleteBucketPolicy DeleteBucketWebsite GetAccelerateConfiguration \
        GetAnalyticsConfiguration GetBucketAcl GetBucketCORS GetBucketLocation GetBucketLogging GetBucketNotification \
        GetBucketObjectLockConfiguration GetBucketOwnershipControls GetBucketPolicy GetBucketPolicyStatus \
        GetBucketPublicAccessBlock GetBucketRequestPayment GetBucketTagging GetBucketVersioning GetBucketWebsite \
        GetEncryptionConfiguration GetIntelligentTieringConfiguration GetInventoryConfiguration GetLifecycleConfiguration \
        GetMetricsConfiguration GetReplicationConfiguration ListBucket ListBucketMultipartUploads ListBucketVersions \
        PutAccelerateConfiguration PutAnalyticsConfiguration PutBucketAcl PutBucketCORS PutBucketLogging \
        PutBucketNotification PutBucketObjectLockConfiguration PutBucketOwnershipControls PutBucketPolicy \
        PutBucketPublicAccessBlock PutBucketRequestPayment PutBucketTagging PutBucketVersioning PutBucketWebsite \
        PutEncryptionConfiguration PutIntelligentTieringConfiguration PutInventoryConfiguration PutLifecycleConfiguration \
        PutMetricsConfiguration PutReplicationConfiguration
        """
    static let accountActions = """
        CreateAccessPoint CreateJob GetAccessPoint GetAccountPublicAccessBlock ListAccessPoints ListAllMyBuckets ListJobs \
        PutAccountPublicAccessBlock
        """

    /// Every known action, lower-cased with its `s3:` prefix, and its kind.
    static let known: [(name: String, kind: Kind)] = {
        func names(_ text: String, _ kind: Kind) -> [(String, Kind)] {
            text.split(separator: " ").map { ("s3:" + $0.lowercased(), kind) }
        }
        return names(objectActions, .object) + names(bucketActions, .bucket) + names(accountActions, .account)
    }()

    /// Whether a policy may name `action`: `*`, or `s3:` and a pattern matching a known action.
    static func isValid(_ action: String) -> Bool {
        if action == "*" { return true }
        let lower = action.lowercased()
        guard lower.hasPrefix("s3:") else { return false }
        return known.contains { Wildcard.matches(lower, $0.name) }
    }

    /// The kinds of the known actions `pattern` matches (empty for `*`, which reaches everything).
    static func kinds(matching pattern: String) -> Set<Kind> {
        if pattern == "*" { return [] }
        let lower = pattern.lowercased()
        var kinds = Set<Kind>()
        for (name, kind) in known where Wildcard.matches(lower, name) { kinds.insert(kind) }
        // A wildcard that also reaches object or bucket actions applies wherever those do.
        return kinds.count > 1 ? kinds.subtracting([.account]) : kinds
    }
}
