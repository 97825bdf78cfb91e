/// GCS's predefined ACLs (`predefinedAcl`, `predefinedDefaultObjectAcl`, `destinationPredefinedAcl`).
enum PredefinedACL: String, Sendable, CaseIterable {
    case authenticatedRead, bucketOwnerFullControl, bucketOwnerRead, `private`, projectPrivate, publicRead, publicReadWrite

    /// The value of query parameter `name`, if given; an unknown value is 400 `invalid`.
    init?(query name: String, of request: (String) -> String?, scope: AccessControlEntry.Scope) throws(StorageError) {
        guard let raw = request(name), !raw.isEmpty else { return nil }
        let allowed: [PredefinedACL] = scope == .bucket
            ? [.authenticatedRead, .private, .projectPrivate, .publicRead, .publicReadWrite]
            : [.authenticatedRead, .bucketOwnerFullControl, .bucketOwnerRead, .private, .projectPrivate, .publicRead]
        guard let p = PredefinedACL(rawValue: raw), allowed.contains(p) else {
            throw .invalid("Invalid argument: '\(raw)' is not a valid value for \(name).")
        }
        self = p
    }

    /// The entries of an object ACL of this kind, `owner` being the object's owner entity.
    func objectEntries(owner: String) -> [AccessControlEntry] {
        let me = AccessControlEntry(trusted: owner, "OWNER")
        typealias E = AccessControlEntry
        switch self {
        case .authenticatedRead: return [me, E(trusted: "allAuthenticatedUsers", "READER")]
        case .bucketOwnerFullControl: return [me, E(trusted: E.projectOwners, "OWNER")]
        case .bucketOwnerRead: return [me, E(trusted: E.projectOwners, "READER")]
        case .private: return [me]
        case .projectPrivate: return [me] + E.defaultObjectACL
        case .publicRead, .publicReadWrite: return [me, E(trusted: "allUsers", "READER")]
        }
    }

    /// The entries of a bucket ACL of this kind.
    var bucketEntries: [AccessControlEntry] {
        typealias E = AccessControlEntry
        let owners = E(trusted: E.projectOwners, "OWNER")
        switch self {
        case .authenticatedRead: return [owners, E(trusted: "allAuthenticatedUsers", "READER")]
        case .private, .bucketOwnerFullControl, .bucketOwnerRead: return [owners]
        case .projectPrivate: return E.defaultBucketACL
        case .publicRead: return [owners, E(trusted: "allUsers", "READER")]
        case .publicReadWrite: return [owners, E(trusted: "allUsers", "WRITER")]
        }
    }

    /// The entries of a bucket's default object ACL of this kind (no owner yet: the uploader
    /// becomes each new object's owner).
    var defaultObjectEntries: [AccessControlEntry] {
        typealias E = AccessControlEntry
        switch self {
        case .authenticatedRead: return [E(trusted: "allAuthenticatedUsers", "READER")]
        case .bucketOwnerFullControl: return [E(trusted: E.projectOwners, "OWNER")]
        case .bucketOwnerRead: return [E(trusted: E.projectOwners, "READER")]
        case .private: return []
        case .projectPrivate: return E.defaultObjectACL
        case .publicRead, .publicReadWrite: return [E(trusted: "allUsers", "READER")]
        }
    }
}
