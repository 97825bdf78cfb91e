import Foundation
import HearthCore
import HearthHTTP

/// Get/Put Bucket and Object ACL, and the ACL a write asks for in its headers.
///
/// Related: "Controlling ownership of objects and disabling ACLs" — under BucketOwnerEnforced (a
/// new bucket's default) ACLs are off: reads show the owner's FULL_CONTROL, writes that set any
/// other ACL are `400 AccessControlListNotSupported`. Under ObjectWriter / BucketOwnerPreferred
/// they are stored and decide other accounts' (and anonymous callers') access; BlockPublicAcls
/// refuses a public one, IgnorePublicAcls makes public grants count for nothing.
extension S3Service {
    /// The bucket's access settings: what authorization read, else read now.
    func bucketAccess(_ ctx: S3Context) -> Result<S3Store.BucketAccess, S3Error> {
        if let a = ctx.bucketAccess { return .success(a) }
        return attempt(ctx) { try store.bucketAccess(ctx.bucket) }.flatMap { a in
            guard let a else { return .failure(.noSuchBucket(bucket: ctx.bucket)) }
            ctx.bucketAccess = a
            return .success(a)
        }
    }

    /// What a write's `x-amz-acl` / `x-amz-grant-*` headers ask for, checked against the bucket:
    /// the ACL to store (nil: private), and the account that owns the new object.
    func requestedObjectACL(_ ctx: S3Context) -> Result<(acl: String?, owner: String), S3Error> {
        bucketAccess(ctx).flatMap { access in
            let writer = ctx.ownerKey ?? access.bucket.owner
            let writerID = accounts.owner(writer).canonicalID
            let bucketOwnerID = accounts.owner(access.bucket.owner).canonicalID
            switch AccessControlList.fromHeaders({ ctx.header($0) }, owner: writerID, bucketOwner: bucketOwnerID) {
            case .failure(let e): return .failure(e)
            case .success(nil):
                return .success((nil, access.aclsEnabled ? writer : access.bucket.owner))
            case .success(let acl?):
                if !access.aclsEnabled {
                    // Only "the bucket owner has full control" passes, and the bucket owner owns the object.
                    let canned = ctx.header("x-amz-acl")
                    guard canned == "bucket-owner-full-control" || acl.isOwnerFullControlOnly(bucketOwnerID) else {
                        return .failure(.plain(.accessControlListNotSupported))
                    }
                    return .success((nil, access.bucket.owner))
                }
                if let e = checkGrantees(acl) { return .failure(e) }
                if acl.isPublic && PublicAccessBlock.effective(access.publicAccessBlock).blockPublicAcls {
                    return .failure(.accessDenied(message: "Access Denied"))
                }
                var owner = writer
                if access.objectOwnership == "BucketOwnerPreferred" && ctx.header("x-amz-acl") == "bucket-owner-full-control" {
                    owner = access.bucket.owner
                }
                let ownerID = accounts.owner(owner).canonicalID
                return .success((acl.isOwnerFullControlOnly(ownerID) ? nil : acl.serialized, owner))
            }
        }
    }

    /// Grantees S3 cannot resolve: an unknown canonical id, an email address.
    func checkGrantees(_ acl: AccessControlList) -> S3Error? {
        for g in acl.grants {
            switch g.grantee {
            case .user(let id): if accounts.account(canonicalID: id) == nil { return .plain(.invalidGrantee) }
            case .email: return .plain(.unresolvableGrantByEmail)
            case .group: break
            }
        }
        return nil
    }

    // MARK: GetBucketAcl / GetObjectAcl

    func getACL(_ ctx: S3Context) -> Result<Response, S3Error> {
        bucketAccess(ctx).flatMap { access -> Result<Response, S3Error> in
            var owner = accounts.owner(access.bucket.owner)
            var acl = access.acl.map { AccessControlList(serialized: $0) } ?? .ownerOnly(owner.canonicalID)
            var headers = HTTPHeaders()
            if ctx.target.key != nil {
                switch requireObject(ctx) {
                case .failure(let e): return .failure(e)
                case .success(let found):
                    owner = accounts.owner(access.aclsEnabled ? found.record.owner : access.bucket.owner)
                    acl = found.record.metadata.extra.acl.map { AccessControlList(serialized: $0) } ?? .ownerOnly(owner.canonicalID)
                    headers = S3Service.versionHeader(found.record, versioned: found.versioned)
                }
            }
            // Under BucketOwnerEnforced reads show the bucket owner's FULL_CONTROL alone.
            if !access.aclsEnabled { acl = .ownerOnly(owner.canonicalID) }
            var x = XMLWriter()
            acl.write(&x, owner: owner, accounts: accounts)
            return .success(S3Service.xmlResponse(x, headers: headers))
        }
    }

    // MARK: PutBucketAcl / PutObjectAcl

    /// Replaces the ACL from `x-amz-acl`, `x-amz-grant-*` or an `AccessControlPolicy` body.
    func putACL(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        let access: S3Store.BucketAccess
        switch bucketAccess(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let a): access = a
        }
        var objectOwner = access.bucket.owner
        var found: (record: ObjectRecord, versioned: Bool)?
        if ctx.target.key != nil {
            switch requireObject(ctx) {
            case .failure(let e): return .failure(e)
            case .success(let f):
                found = f
                objectOwner = access.aclsEnabled ? f.record.owner : access.bucket.owner
            }
        }
        let ownerID = accounts.owner(objectOwner).canonicalID
        let bucketOwnerID = accounts.owner(access.bucket.owner).canonicalID
        var acl: AccessControlList
        switch AccessControlList.fromHeaders({ ctx.header($0) }, owner: ownerID, bucketOwner: bucketOwnerID) {
        case .failure(let e): return .failure(e)
        case .success(let fromHeaders?):
            if !body.isEmpty { return .failure(.plain(.unexpectedContent)) }
            acl = fromHeaders
        case .success(nil):
            guard !body.isEmpty else {
                return .failure(.invalidRequest(message: "Missing required header for this request: x-amz-acl"))
            }
            switch AccessControlList.parse(body) {
            case .failure(let e): return .failure(e)
            case .success(let parsed):
                if let id = parsed.owner, id != ownerID { return .failure(.accessDenied(message: "Access Denied")) }
                acl = parsed.acl
            }
        }
        if !access.aclsEnabled {
            guard acl.isOwnerFullControlOnly(bucketOwnerID) || ctx.header("x-amz-acl") == "bucket-owner-full-control" else {
                return .failure(.plain(.accessControlListNotSupported))
            }
            return .success(Response(status: 200))
        }
        if let e = checkGrantees(acl) { return .failure(e) }
        if acl.isPublic && PublicAccessBlock.effective(access.publicAccessBlock).blockPublicAcls {
            return .failure(.accessDenied(message: "Access Denied"))
        }
        let stored = acl.isOwnerFullControlOnly(ownerID) ? nil : acl.serialized
        return attempt(ctx) {
            if let found {
                try store.setObjectACL(bucket: ctx.bucket, key: ctx.key, versionID: found.record.versionName, acl: stored)
                return Response(status: 200, headers: S3Service.versionHeader(found.record, versioned: found.versioned))
            }
            try store.setBucketACL(ctx.bucket, stored, now: ctx.now)
            return Response(status: 200)
        }
    }
}
