import Foundation
import HearthCore

/// An S3 access control list: the grants of a bucket or object beyond its owner's.
///
/// Related: "Access control list (ACL) overview" (grantees: a canonical user, an email address,
/// the AllUsers / AuthenticatedUsers / LogDelivery groups; permissions READ, WRITE, READ_ACP,
/// WRITE_ACP, FULL_CONTROL; the canned ACLs) and "PutObjectAcl" (`x-amz-acl`, `x-amz-grant-*`, or
/// an `AccessControlPolicy` document). ACLs count only where Object Ownership allows them
/// (ObjectWriter, BucketOwnerPreferred); under BucketOwnerEnforced, S3's default, they are refused.
struct AccessControlList: Sendable, Equatable {
    /// Who a grant names.
    enum Grantee: Sendable, Hashable {
        case user(canonicalID: String)
        case group(String)
        case email(String)
    }

    /// One grant.
    struct Grant: Sendable, Equatable {
        var grantee: Grantee
        var permission: String
    }

    static let allUsers = "http://acs.amazonaws.com/groups/global/AllUsers"
    static let authenticatedUsers = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
    static let logDelivery = "http://acs.amazonaws.com/groups/s3/LogDelivery"
    static let permissions: Set<String> = ["READ", "WRITE", "READ_ACP", "WRITE_ACP", "FULL_CONTROL"]
    static let cannedNames: Set<String> = [
        "private", "public-read", "public-read-write", "authenticated-read", "aws-exec-read", "bucket-owner-read",
        "bucket-owner-full-control", "log-delivery-write",
    ]

    /// Every grant, the owner's FULL_CONTROL first.
    var grants: [Grant]

    /// A canned ACL for a resource owned by `owner` in a bucket owned by `bucketOwner`.
    static func canned(_ name: String, owner: String, bucketOwner: String) -> AccessControlList? {
        let full = Grant(grantee: .user(canonicalID: owner), permission: "FULL_CONTROL")
        func with(_ extra: [Grant]) -> AccessControlList { AccessControlList(grants: [full] + extra) }
        switch name {
        case "private": return with([])
        case "public-read": return with([Grant(grantee: .group(allUsers), permission: "READ")])
        case "public-read-write":
            return with([Grant(grantee: .group(allUsers), permission: "READ"), Grant(grantee: .group(allUsers), permission: "WRITE")])
        case "authenticated-read": return with([Grant(grantee: .group(authenticatedUsers), permission: "READ")])
        case "aws-exec-read": return with([])
        case "bucket-owner-read":
            return owner == bucketOwner ? with([]) : with([Grant(grantee: .user(canonicalID: bucketOwner), permission: "READ")])
        case "bucket-owner-full-control":
            return owner == bucketOwner ? with([]) : with([Grant(grantee: .user(canonicalID: bucketOwner), permission: "FULL_CONTROL")])
        case "log-delivery-write":
            return with([Grant(grantee: .group(logDelivery), permission: "WRITE"), Grant(grantee: .group(logDelivery), permission: "READ_ACP")])
        default: return nil
        }
    }

    /// The owner's FULL_CONTROL alone.
    static func ownerOnly(_ owner: String) -> AccessControlList {
        AccessControlList(grants: [Grant(grantee: .user(canonicalID: owner), permission: "FULL_CONTROL")])
    }

    /// The ACL a request's headers ask for: `x-amz-acl`, or the `x-amz-grant-*` headers (each a
    /// comma-separated list of `id="…"`, `uri="…"`, `emailAddress="…"`), or nil for neither.
    static func fromHeaders(_ header: (String) -> String?, owner: String, bucketOwner: String) -> Result<AccessControlList?, S3Error> {
        let grantHeaders = [("x-amz-grant-read", "READ"), ("x-amz-grant-write", "WRITE"), ("x-amz-grant-read-acp", "READ_ACP"),
                            ("x-amz-grant-write-acp", "WRITE_ACP"), ("x-amz-grant-full-control", "FULL_CONTROL")]
        let hasGrants = grantHeaders.contains { header($0.0) != nil }
        if let canned = header("x-amz-acl") {
            if hasGrants {
                return .failure(.invalidRequest(message: "Specifying both Canned ACLs and Header Grants is not allowed"))
            }
            guard let acl = AccessControlList.canned(canned.trimmingCharacters(in: .whitespaces), owner: owner, bucketOwner: bucketOwner) else {
                return .failure(.invalidArgument(message: "Invalid argument.", name: "x-amz-acl", value: canned))
            }
            return .success(acl)
        }
        guard hasGrants else { return .success(nil) }
        var grants: [Grant] = []
        for (name, permission) in grantHeaders {
            guard let value = header(name) else { continue }
            for item in value.split(separator: ",") {
                let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { return .failure(.invalidArgument(message: "Invalid argument.", name: name, value: value)) }
                let v = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                switch parts[0].lowercased() {
                case "id": grants.append(Grant(grantee: .user(canonicalID: v), permission: permission))
                case "uri": grants.append(Grant(grantee: .group(v), permission: permission))
                case "emailaddress": grants.append(Grant(grantee: .email(v), permission: permission))
                default: return .failure(.invalidArgument(message: "Invalid argument.", name: name, value: value))
                }
            }
        }
        return .success(AccessControlList(grants: grants))
    }

    /// An `AccessControlPolicy` document: its owner id and grants.
    static func parse(_ body: [UInt8]) -> Result<(owner: String?, acl: AccessControlList), S3Error> {
        guard let root = try? S3XMLParser.parse(body), root.name == "AccessControlPolicy",
              let list = root.child("AccessControlList") else { return .failure(.plain(.malformedACL)) }
        var grants: [Grant] = []
        for g in list.children(named: "Grant") {
            guard let grantee = g.child("Grantee"), let permission = g.childText("Permission"),
                  permissions.contains(permission) else { return .failure(.plain(.malformedACL)) }
            // The xsi:type attribute only repeats what the child element says.
            if let id = grantee.childText("ID") {
                grants.append(Grant(grantee: .user(canonicalID: id), permission: permission))
            } else if let uri = grantee.childText("URI") {
                grants.append(Grant(grantee: .group(uri), permission: permission))
            } else if let email = grantee.childText("EmailAddress") {
                grants.append(Grant(grantee: .email(email), permission: permission))
            } else {
                return .failure(.plain(.malformedACL))
            }
        }
        return .success((root.child("Owner")?.childText("ID"), AccessControlList(grants: grants)))
    }

    /// Whether `permission` is granted to a caller with canonical id `caller` (nil: anonymous).
    func allows(_ permission: String, caller: String?) -> Bool {
        grants.contains { g in
            guard g.permission == permission || g.permission == "FULL_CONTROL" else { return false }
            switch g.grantee {
            case .user(let id): return caller == id
            case .group(let uri): return uri == AccessControlList.allUsers || (uri == AccessControlList.authenticatedUsers && caller != nil)
            case .email: return false
            }
        }
    }

    /// Whether a grant reaches everyone or every AWS account (what BlockPublicAcls refuses).
    var isPublic: Bool {
        grants.contains {
            if case .group(let uri) = $0.grantee { return uri == AccessControlList.allUsers || uri == AccessControlList.authenticatedUsers }
            return false
        }
    }

    /// Whether only `owner` is granted, FULL_CONTROL (what BucketOwnerEnforced accepts).
    func isOwnerFullControlOnly(_ owner: String) -> Bool {
        grants.allSatisfy { $0.grantee == .user(canonicalID: owner) && $0.permission == "FULL_CONTROL" }
    }

    /// The stored form: one `type|value|permission` line per grant.
    var serialized: String {
        grants.map { g in
            switch g.grantee {
            case .user(let id): "id|\(id)|\(g.permission)"
            case .group(let uri): "uri|\(uri)|\(g.permission)"
            case .email(let e): "email|\(e)|\(g.permission)"
            }
        }.joined(separator: "\n")
    }

    /// Reads `serialized` back.
    init(serialized: String) {
        grants = serialized.split(separator: "\n").compactMap { line in
            let p = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard p.count == 3 else { return nil }
            switch p[0] {
            case "id": return Grant(grantee: .user(canonicalID: p[1]), permission: p[2])
            case "uri": return Grant(grantee: .group(p[1]), permission: p[2])
            default: return Grant(grantee: .email(p[1]), permission: p[2])
            }
        }
    }

    init(grants: [Grant]) { self.grants = grants }

    /// The `AccessControlPolicy` document, display names from `accounts`.
    func write(_ x: inout XMLWriter, owner: S3Accounts.Account, accounts: S3Accounts) {
        x.group("AccessControlPolicy", namespace: true) { x in
            x.group("Owner") { x in
                x.element("ID", owner.canonicalID)
                x.element("DisplayName", owner.displayName)
            }
            x.group("AccessControlList") { x in
                for g in grants {
                    x.group("Grant") { x in
                        switch g.grantee {
                        case .user(let id):
                            x.openRaw(#"Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser""#)
                            x.element("ID", id)
                            if let a = accounts.account(canonicalID: id) { x.element("DisplayName", a.displayName) }
                        case .group(let uri):
                            x.openRaw(#"Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group""#)
                            x.element("URI", uri)
                        case .email(let e):
                            x.openRaw(#"Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="AmazonCustomerByEmail""#)
                            x.element("EmailAddress", e)
                        }
                        x.close("Grantee")
                        x.element("Permission", g.permission)
                    }
                }
            }
        }
    }
}
