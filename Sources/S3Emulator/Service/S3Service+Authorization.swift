import HearthCore
import HearthHTTP

/// Which account may do what: S3's evaluation for a signed request.
///
/// Related: "How Amazon S3 authorizes a request" — an explicit Deny in the bucket policy wins;
/// the bucket owner's account may do anything else on its bucket; another account needs an Allow
/// of the bucket policy or, where Object Ownership leaves ACLs on, a grant of the bucket's or the
/// object's ACL. Hearth has no IAM: every key of an account acts with the account's full rights.
extension S3Service {
    /// nil when the signed request may go ahead; else `AccessDenied`. A lookup error is a deny.
    func authorize(_ ctx: S3Context, _ operation: S3Operation) -> S3Error? {
        guard let bucket = ctx.target.bucket else { return nil }
        switch operation {
        // CreateBucket answers for itself (BucketAlreadyExists); preflights and forms never come here.
        case .createBucket, .listBuckets, .preflight, .postObject: return nil
        default: break
        }
        let denied = S3Error.accessDenied(message: "Access Denied")
        guard let account = ctx.account else { return denied }
        let access: S3Store.BucketAccess
        do {
            // A missing bucket is the operation's own NoSuchBucket.
            guard let found = try store.bucketAccess(bucket) else { return nil }
            access = found
        } catch {
            return .internalError
        }
        ctx.bucketAccess = access
        let isOwner = access.bucket.owner == account.key
        // A stored policy that no longer parses (written by an older Hearth whose checks have since
        // tightened, or a damaged row) may hold a Deny: reading it as "no policy" would fail open.
        // Every request is denied but the owner's own to read, replace or delete the policy.
        let stored = S3Service.storedPolicy(access)
        if case .unreadable = stored {
            return isOwner && S3Service.ownerOnlyAction(operation) != nil ? nil : denied
        }
        // The query is searched for `versionId` only when a policy is there to read it.
        if case .readable(let policy) = stored,
           let action = S3Service.policyAction(operation, versioned: ctx.query("versionId") != nil) ?? S3Service.ownerOnlyAction(operation) {
            let caller = BucketPolicy.Caller.account(accountID: account.accountID, canonicalID: account.canonicalID)
            let resource = ctx.target.key.map { bucket + "/" + $0 } ?? (operation == .deleteObjects ? bucket + "/" : bucket)
            var context = S3Service.policyContext(ctx)
            context["aws:principaltype"] = ["Account"]
            context["aws:userid"] = [account.accountID]
            context["aws:principalaccount"] = [account.accountID]
            switch policy.evaluate(action: action, resource: resource, context: context, caller: caller) {
            case .deny: return denied
            case .allow where !isOwner:
                // The policy itself is the owner's alone to read and change.
                if S3Service.ownerOnlyAction(operation) != nil { return denied }
                return copySourceDenied(ctx, operation, account: account)
            default: break
            }
        }
        if isOwner { return copySourceDenied(ctx, operation, account: account) }
        guard access.aclsEnabled, let permission = S3Service.aclPermission(operation) else { return denied }
        let ignorePublic = PublicAccessBlock.effective(access.publicAccessBlock).ignorePublicAcls
        if permission.onObject {
            let found: S3Store.VersionEntry?
            do {
                found = try store.entry(bucket: bucket, key: ctx.key, versionID: ctx.query("versionId")).entry
            } catch is S3Error {
                found = nil  // no such version: the operation's own answer, as for a missing key
            } catch {
                // A read that failed is no missing object: the bucket's READ must not decide for an
                // object whose own ACL was never read (a lookup error is a deny).
                logger.error("s3: an object's ACL could not be read; denying", [("requestId", .string(ctx.request.id)),
                                                                                ("bucket", .string(bucket)), ("error", .string("\(error)"))])
                return .internalError
            }
            guard let object = found, !object.isDeleteMarker else {
                // A missing object: the bucket's READ decides between 404 and 403, as S3 does.
                return bucketACL(access, ignorePublic).allows("READ", caller: account.canonicalID) ? nil : denied
            }
            let record = object.record
            if accounts.owner(record.owner).key == account.key { return nil }
            let acl = record.metadata.extra.acl.map { AccessControlList(serialized: $0) } ?? .ownerOnly(accounts.owner(record.owner).canonicalID)
            return S3Service.publicFiltered(acl, ignorePublic).allows(permission.name, caller: account.canonicalID) ? nil : denied
        }
        guard bucketACL(access, ignorePublic).allows(permission.name, caller: account.canonicalID) else { return denied }
        return copySourceDenied(ctx, operation, account: account)
    }

    /// Whether an ACL grant (to AllUsers) lets an unsigned request do `operation`.
    func anonymousACLAllows(_ ctx: S3Context, _ operation: S3Operation) -> Bool {
        guard let bucket = ctx.target.bucket, let access = try? store.bucketAccess(bucket), access.aclsEnabled,
              let permission = S3Service.aclPermission(operation) else { return false }
        ctx.bucketAccess = access
        let ignorePublic = PublicAccessBlock.effective(access.publicAccessBlock).ignorePublicAcls
        guard permission.onObject else { return bucketACL(access, ignorePublic).allows(permission.name, caller: nil) }
        guard let entry = try? store.entry(bucket: bucket, key: ctx.key, versionID: ctx.query("versionId")).entry, !entry.isDeleteMarker,
              let text = entry.record.metadata.extra.acl else { return false }
        return S3Service.publicFiltered(AccessControlList(serialized: text), ignorePublic).allows(permission.name, caller: nil)
    }

    /// The bucket ACL in force (public grants dropped under IgnorePublicAcls).
    func bucketACL(_ access: S3Store.BucketAccess, _ ignorePublic: Bool) -> AccessControlList {
        let acl = access.acl.map { AccessControlList(serialized: $0) } ?? .ownerOnly(accounts.owner(access.bucket.owner).canonicalID)
        return S3Service.publicFiltered(acl, ignorePublic)
    }

    static func publicFiltered(_ acl: AccessControlList, _ ignorePublic: Bool) -> AccessControlList {
        guard ignorePublic else { return acl }
        return AccessControlList(grants: acl.grants.filter {
            if case .group(let uri) = $0.grantee { return uri != AccessControlList.allUsers && uri != AccessControlList.authenticatedUsers }
            return true
        })
    }

    /// A copy also reads its source, which its own bucket's owner, policy or ACLs must allow.
    private func copySourceDenied(_ ctx: S3Context, _ operation: S3Operation, account: S3Accounts.Account) -> S3Error? {
        guard operation == .copyObject || operation == .uploadPartCopy,
              case .success(let source) = S3Service.copySource(ctx, forPart: operation == .uploadPartCopy) else { return nil }
        // A key limited to some buckets acts for the first key's account, which owns the others
        // too: their objects must not reach it as a copy's source (the authenticator checked only
        // the bucket the request names).
        if let accessKey = ctx.accessKey, !authenticator.credentials.allows(accessKey: accessKey, bucket: source.bucket) {
            return .accessDenied(message: "Access Denied")
        }
        let found: S3Store.BucketAccess?
        do { found = try store.bucketAccess(source.bucket) } catch { return .internalError }
        // A missing source bucket is the copy's own NoSuchBucket.
        guard let access = found else { return nil }
        let stored = S3Service.storedPolicy(access)
        if case .unreadable = stored { return .accessDenied(message: "Access Denied") }
        if access.bucket.owner == account.key { return nil }
        let caller = BucketPolicy.Caller.account(accountID: account.accountID, canonicalID: account.canonicalID)
        if case .readable(let policy) = stored {
            let action = source.versionID == nil ? "s3:GetObject" : "s3:GetObjectVersion"
            switch policy.evaluate(action: action, resource: source.bucket + "/" + source.key, context: S3Service.policyContext(ctx), caller: caller) {
            case .allow: return nil
            case .deny: return .accessDenied(message: "Access Denied")
            case .noMatch: break
            }
        }
        if access.aclsEnabled, let entry = try? store.entry(bucket: source.bucket, key: source.key, versionID: source.versionID).entry {
            let record = entry.record
            if accounts.owner(record.owner).key == account.key { return nil }
            let acl = record.metadata.extra.acl.map { AccessControlList(serialized: $0) } ?? .ownerOnly(accounts.owner(record.owner).canonicalID)
            let ignorePublic = PublicAccessBlock.effective(access.publicAccessBlock).ignorePublicAcls
            if S3Service.publicFiltered(acl, ignorePublic).allows("READ", caller: account.canonicalID) { return nil }
        }
        return .accessDenied(message: "Access Denied")
    }

    /// A bucket's stored policy, parsed once a request.
    enum StoredPolicy {
        case none
        case readable(BucketPolicy)
        /// A stored document that does not parse: it denies (it may hold a Deny).
        case unreadable
    }

    static func storedPolicy(_ access: S3Store.BucketAccess) -> StoredPolicy {
        guard case .document(let text) = access.policy else { return .none }
        switch BucketPolicy.parse(Array(text.utf8), bucket: access.bucket.name) {
        case .success(let policy): return .readable(policy)
        case .failure: return .unreadable
        }
    }

    /// The actions only the bucket owner's account may ever perform, whatever a policy says.
    static func ownerOnlyAction(_ operation: S3Operation) -> String? {
        switch operation {
        case .getBucketConfig(.policy): "s3:GetBucketPolicy"
        case .putBucketConfig(.policy): "s3:PutBucketPolicy"
        case .deleteBucketConfig(.policy): "s3:DeleteBucketPolicy"
        default: nil
        }
    }

    /// The ACL permission an operation needs, and whether the object's ACL (else the bucket's) decides.
    static func aclPermission(_ operation: S3Operation) -> (name: String, onObject: Bool)? {
        switch operation {
        case .getObject, .headObject: ("READ", true)
        case .getObjectACL: ("READ_ACP", true)
        case .putObjectACL: ("WRITE_ACP", true)
        case .listObjectsV1, .listObjectsV2, .listObjectVersions, .listMultipartUploads, .headBucket, .getBucketLocation: ("READ", false)
        case .putObject, .copyObject, .deleteObject, .deleteObjects, .createMultipartUpload, .uploadPart, .uploadPartCopy,
             .completeMultipartUpload, .abortMultipartUpload, .listParts:
            ("WRITE", false)
        case .getBucketACL: ("READ_ACP", false)
        case .putBucketACL: ("WRITE_ACP", false)
        default: nil
        }
    }
}
