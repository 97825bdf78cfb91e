import Foundation
import HearthCore
import HearthHTTP

extension S3Service {
    /// For an unsigned request: the access its bucket's policy grants for `operation`, or nil when
    /// the request stays denied (no policy, a policy that does not allow it, RestrictPublicBuckets).
    /// Signed requests never come here: a configured key has full access.
    func anonymousAccess(_ ctx: S3Context, operation: S3Operation) -> AnonymousAccess? {
        guard let bucket = ctx.target.bucket, let access = anonymousAccess(ctx, bucket: bucket) else { return nil }
        switch operation {
        // DeleteObjects decides key by key (a refused key is an `AccessDenied` entry of a 200).
        case .deleteObjects: return access.policy != nil && !access.restricted ? access : nil
        case .copyObject, .uploadPartCopy:
            // A copy writes its destination and reads its source, each under its own bucket's policy.
            guard access.permits("s3:PutObject", key: ctx.target.key),
                  case .success(let source) = S3Service.copySource(ctx, forPart: operation == .uploadPartCopy),
                  let sourceAccess = source.bucket == bucket ? access : anonymousAccess(ctx, bucket: source.bucket),
                  sourceAccess.permits(source.versionID == nil ? "s3:GetObject" : "s3:GetObjectVersion", key: source.key) else { return nil }
            return access
        default:
            guard let action = S3Service.policyAction(operation, versioned: ctx.query("versionId") != nil) else { return nil }
            if access.permits(action, key: ctx.target.key) { return access }
            // An explicit Deny stays a deny; otherwise an ACL grant to AllUsers may let it through.
            if let policy = access.policy,
               policy.evaluate(action: action, resource: ctx.target.key.map { bucket + "/" + $0 } ?? bucket, context: access.context) == .deny {
                return nil
            }
            return anonymousACLAllows(ctx, operation) ? access : nil
        }
    }

    /// The policy of `bucket` as it applies to this unsigned request (nil, denied: no such bucket, a
    /// lookup error, or a stored policy that does not parse).
    func anonymousAccess(_ ctx: S3Context, bucket: String) -> AnonymousAccess? {
        guard let config = try? store.accessConfig(bucket) else { return nil }
        var policy: BucketPolicy?
        if case .document(let text) = config.policy {
            // A stored policy that does not parse may hold a Deny: the request stays denied.
            guard case .success(let parsed) = BucketPolicy.parse(Array(text.utf8), bucket: bucket) else { return nil }
            policy = parsed
        }
        let block = PublicAccessBlock.effective(config.publicAccessBlock)
        return AnonymousAccess(bucket: bucket, policy: policy, restricted: block.restrictPublicBuckets && (policy?.isPublic ?? false),
                               context: S3Service.policyContext(ctx))
    }

    /// A missing object is 404 only to a caller allowed to list the bucket; an anonymous caller
    /// without `s3:ListBucket` gets 403, as S3 answers. The listing is judged as one of the key's
    /// own prefix (`s3:prefix` is the key), so a grant limited to `public/*` reveals only those.
    func anonymousMissingObjectError(_ ctx: S3Context) -> S3Error? {
        guard let access = ctx.anonymousAccess,
              !access.permits("s3:ListBucket", key: nil, extra: ["s3:prefix": [ctx.key]]) else { return nil }
        return .accessDenied(message: "Access Denied")
    }

    /// The IAM action an operation needs (the `…Version` action when the request names a version),
    /// or nil for those Hearth never grants an anonymous caller (bucket creation, the policy itself).
    static func policyAction(_ operation: S3Operation, versioned: Bool) -> String? {
        func v(_ plain: String, _ version: String) -> String { versioned ? version : plain }
        switch operation {
        case .getObject, .headObject: return v("s3:GetObject", "s3:GetObjectVersion")
        case .putObject, .createMultipartUpload, .uploadPart, .completeMultipartUpload, .copyObject, .uploadPartCopy: return "s3:PutObject"
        case .deleteObject, .deleteObjects: return v("s3:DeleteObject", "s3:DeleteObjectVersion")
        case .abortMultipartUpload: return "s3:AbortMultipartUpload"
        case .listParts: return "s3:ListMultipartUploadParts"
        case .listObjectsV1, .listObjectsV2, .headBucket: return "s3:ListBucket"
        case .listObjectVersions: return "s3:ListBucketVersions"
        case .listMultipartUploads: return "s3:ListBucketMultipartUploads"
        case .getBucketLocation: return "s3:GetBucketLocation"
        case .getObjectTagging: return v("s3:GetObjectTagging", "s3:GetObjectVersionTagging")
        case .putObjectTagging: return v("s3:PutObjectTagging", "s3:PutObjectVersionTagging")
        case .deleteObjectTagging: return v("s3:DeleteObjectTagging", "s3:DeleteObjectVersionTagging")
        case .getObjectACL: return v("s3:GetObjectAcl", "s3:GetObjectVersionAcl")
        case .getBucketACL: return "s3:GetBucketAcl"
        case .putObjectACL: return v("s3:PutObjectAcl", "s3:PutObjectVersionAcl")
        case .putBucketACL: return "s3:PutBucketAcl"
        case .getObjectAttributes: return v("s3:GetObjectAttributes", "s3:GetObjectVersionAttributes")
        case .getObjectLockConfiguration: return "s3:GetBucketObjectLockConfiguration"
        case .putObjectLockConfiguration: return "s3:PutBucketObjectLockConfiguration"
        case .getObjectRetention: return "s3:GetObjectRetention"
        case .putObjectRetention: return "s3:PutObjectRetention"
        case .getObjectLegalHold: return "s3:GetObjectLegalHold"
        case .putObjectLegalHold: return "s3:PutObjectLegalHold"
        case .restoreObject: return "s3:RestoreObject"
        case .getBucketCors: return "s3:GetBucketCORS"
        case .putBucketCors, .deleteBucketCors: return "s3:PutBucketCORS"
        case .deleteBucket: return "s3:DeleteBucket"
        case .getBucketPolicyStatus: return "s3:GetBucketPolicyStatus"
        case .getBucketVersioning: return "s3:GetBucketVersioning"
        case .putBucketVersioning: return "s3:PutBucketVersioning"
        case .getBucketConfig(let kind):
            switch kind {
            // Only the bucket owner's account may read or change the policy itself.
            case .policy: return nil
            case .lifecycle: return "s3:GetLifecycleConfiguration"
            case .encryption: return "s3:GetEncryptionConfiguration"
            case .publicAccessBlock: return "s3:GetBucketPublicAccessBlock"
            case .ownershipControls: return "s3:GetBucketOwnershipControls"
            case .tagging: return "s3:GetBucketTagging"
            }
        case .putBucketConfig(let kind), .deleteBucketConfig(let kind):
            switch kind {
            case .policy: return nil
            case .lifecycle: return "s3:PutLifecycleConfiguration"
            case .encryption: return "s3:PutEncryptionConfiguration"
            case .publicAccessBlock: return "s3:PutBucketPublicAccessBlock"
            case .ownershipControls: return "s3:PutBucketOwnershipControls"
            case .tagging: return "s3:PutBucketTagging"
            }
        case .getBucketConfiguration(let name):
            return switch name {
            case "accelerate": "s3:GetAccelerateConfiguration"
            case "logging": "s3:GetBucketLogging"
            case "notification": "s3:GetBucketNotification"
            case "object-lock": "s3:GetBucketObjectLockConfiguration"
            case "replication": "s3:GetReplicationConfiguration"
            case "requestPayment": "s3:GetBucketRequestPayment"
            case "website": "s3:GetBucketWebsite"
            default: nil
            }
        case .listBuckets, .createBucket, .postObject, .preflight: return nil
        }
    }

    /// The condition keys of an unsigned request (lower-cased names): the global keys S3 sets for
    /// anonymous callers and the S3 keys the request's parameters and headers carry.
    static func policyContext(_ ctx: S3Context) -> [String: [String]] {
        var c: [String: [String]] = [
            "aws:securetransport": [ctx.request.isTLS ? "true" : "false"],
            "aws:currenttime": [ctx.now.rfc3339(fractionDigits: 0)],
            "aws:epochtime": [String(ctx.now.unixSeconds)],
            "aws:principaltype": ["Anonymous"],
            "aws:userid": ["anonymous"],
        ]
        if !ctx.request.remoteAddress.isEmpty { c["aws:sourceip"] = [ctx.request.remoteAddress] }
        if let v = ctx.header("User-Agent") { c["aws:useragent"] = [v] }
        if let v = ctx.header("Referer") { c["aws:referer"] = [v] }
        for name in ["prefix", "delimiter", "max-keys"] {
            if let v = ctx.query(name) { c["s3:" + name] = [v] }
        }
        if let v = ctx.query("versionId") { c["s3:versionid"] = [v] }
        for header in ["x-amz-acl", "x-amz-copy-source", "x-amz-metadata-directive", "x-amz-storage-class", "x-amz-server-side-encryption",
                       "x-amz-server-side-encryption-aws-kms-key-id", "x-amz-website-redirect-location", "x-amz-content-sha256",
                       "x-amz-grant-read", "x-amz-grant-write", "x-amz-grant-read-acp", "x-amz-grant-write-acp",
                       "x-amz-grant-full-control", "x-amz-object-ownership"] {
            if let v = ctx.header(header) { c["s3:" + header] = [v] }
        }
        if let v = ctx.header("If-Match") { c["s3:if-match"] = [v] }
        if let v = ctx.header("If-None-Match") { c["s3:if-none-match"] = [v] }
        let tags = tags(ctx.header("x-amz-tagging"))
        if !tags.isEmpty {
            c["s3:requestobjecttagkeys"] = tags.map(\.0)
            for (key, value) in tags { c["s3:requestobjecttag/" + key.lowercased(), default: []].append(value) }
        }
        return c
    }
}
