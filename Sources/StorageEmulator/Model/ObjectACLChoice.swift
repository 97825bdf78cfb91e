import HearthCore

/// How a new object's ACL is chosen: the bucket's default object ACL, a predefined ACL, or the
/// list the request's resource names.
enum ObjectACLChoice: Sendable {
    case bucketDefault
    case predefined(PredefinedACL)
    case explicit([AccessControlEntry])

    /// From a request's `predefinedAcl` (or `destinationPredefinedAcl`) and a resource's `acl`.
    init(query: (String) -> String?, parameter: String = "predefinedAcl", acl: [AccessControlEntry]?) throws(StorageError) {
        if let p = try PredefinedACL(query: parameter, of: query, scope: .object) {
            self = .predefined(p)
        } else if let acl {
            self = .explicit(acl)
        } else {
            self = .bucketDefault
        }
    }

    /// Whether the request names an ACL (refused on a bucket with uniform bucket-level access).
    var isLegacyACL: Bool {
        if case .bucketDefault = self { return false }
        return true
    }

    /// The stored form, for a resumable session that applies it at finalize.
    var json: JSON {
        switch self {
        case .bucketDefault: return .null
        case .predefined(let p): return .string(p.rawValue)
        case .explicit(let list): return .array(list.map { .object(["entity": .string($0.entity), "role": .string($0.role)]) })
        }
    }

    init(json: JSON?) {
        switch json {
        case .string(let s)?: self = PredefinedACL(rawValue: s).map { .predefined($0) } ?? .bucketDefault
        case .array(let items)?:
            self = .explicit(items.compactMap { i in
                i["entity"]?.stringValue.flatMap { e in i["role"]?.stringValue.map { AccessControlEntry(trusted: e, $0) } }
            })
        default: self = .bucketDefault
        }
    }

    /// The entries a new object gets in a bucket whose default object ACL is `defaultObjectACL`,
    /// `owner` being the uploader's entity (an owner always holds OWNER, as in GCS).
    func entries(defaultObjectACL defaults: [AccessControlEntry], owner: String) -> [AccessControlEntry] {
        switch self {
        case .bucketDefault:
            return defaults.contains { $0.entity == owner } ? defaults : [AccessControlEntry(trusted: owner, "OWNER")] + defaults
        case .predefined(let p): return p.objectEntries(owner: owner)
        case .explicit(let list): return list
        }
    }
}
