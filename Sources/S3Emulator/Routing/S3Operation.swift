import HearthHTTP

/// The S3 API operation a request invokes.
enum S3Operation: Equatable, Sendable {
    case listBuckets
    case createBucket, deleteBucket, headBucket, getBucketLocation
    case listObjectsV1, listObjectsV2, listObjectVersions, listMultipartUploads, deleteObjects
    /// A bucket configuration read answered with S3's "not configured" or default document.
    case getBucketConfiguration(String)
    case putObject, copyObject, getObject, headObject, deleteObject
    case getObjectACL, getBucketACL, putObjectACL, putBucketACL
    case getObjectAttributes
    /// Object Lock: the bucket's configuration, an object version's retention and legal hold.
    case getObjectLockConfiguration, putObjectLockConfiguration
    case getObjectRetention, putObjectRetention, getObjectLegalHold, putObjectLegalHold
    case getObjectTagging, putObjectTagging, deleteObjectTagging
    /// `POST /bucket/key?restore`: a temporary copy of an archived object.
    case restoreObject
    case createMultipartUpload, uploadPart, uploadPartCopy, completeMultipartUpload, abortMultipartUpload, listParts
    /// A browser form upload (`POST /bucket` with multipart/form-data).
    case postObject
    case getBucketCors, putBucketCors, deleteBucketCors
    /// Get/Put/Delete of a stored bucket configuration (policy, lifecycle, encryption, …).
    case getBucketConfig(BucketConfigKind), putBucketConfig(BucketConfigKind), deleteBucketConfig(BucketConfigKind)
    case getBucketPolicyStatus, getBucketVersioning, putBucketVersioning
    /// A CORS preflight (`OPTIONS`), answered before and without authentication.
    case preflight

    /// Query parameters that name a bucket or object sub-resource (anything else — `prefix`,
    /// `X-Amz-Signature`, `response-content-type` — is a plain parameter).
    static let subresources: Set<String> = [
        "accelerate", "acl", "analytics", "attributes", "cors", "delete", "encryption", "intelligent-tiering", "inventory",
        "legal-hold", "lifecycle", "location", "logging", "metadataConfiguration", "metadataTable", "metrics", "notification",
        "object-lock", "ownershipControls", "policy", "policyStatus", "publicAccessBlock", "renameObject", "replication",
        "requestPayment", "restore", "retention", "select", "session", "tagging", "torrent", "uploads", "versioning",
        "versions", "website",
    ]

    /// Bucket configuration reads that always have a fixed answer (Hearth cannot set them).
    static let bucketConfigurationReads: Set<String> = [
        "accelerate", "logging", "notification", "replication", "requestPayment", "website",
    ]

    /// The configuration kind a bucket sub-resource names.
    static func configKind(_ sub: Set<String>) -> BucketConfigKind? {
        guard sub.count == 1, let name = sub.first else { return nil }
        return BucketConfigKind(rawValue: name)
    }

    /// False for a name no sub-resource can be, from its first byte and length alone: every
    /// sub-resource starts with a lower-case letter and is 3–21 bytes long, so the six `X-Amz-*`
    /// parameters of a presigned URL are not hashed into the set (~500 instructions each).
    static func mayBeSubresource(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard let first = utf8.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z") else { return false }
        return subresourceLengths.contains(utf8.count)
    }

    /// The shortest and longest sub-resource name, in bytes.
    static let subresourceLengths: ClosedRange<Int> = {
        let counts = subresources.map(\.utf8.count)
        return counts.min()!...counts.max()!
    }()

    /// The parameter names of a query, for membership tests.
    private struct QueryNames {
        let items: [(name: String, value: String?)]
        func contains(_ name: String) -> Bool { items.contains { $0.name == name } }
    }

    /// Picks the operation from method, target and query, or the error S3 gives for the combination.
    static func resolve(_ request: Request, target: S3Target) -> Result<S3Operation, S3Error> {
        let items = request.queryItems
        // Only the sub-resource names go into a set: a presigned URL's six X-Amz-* parameters
        // are looked up, never hashed into one (this runs for every request).
        var sub = Set<String>()
        for item in items where mayBeSubresource(item.name) && subresources.contains(item.name) { sub.insert(item.name) }
        let names = QueryNames(items: items)
        let method = request.method
        guard target.bucket != nil else {
            switch method {
            case "GET", "HEAD": return .success(.listBuckets)
            default: return .failure(.methodNotAllowed(method: method, resourceType: "SERVICE"))
            }
        }
        guard target.key != nil else {
            switch method {
            case "GET", "HEAD":
                if method == "HEAD" && sub.isEmpty { return .success(.headBucket) }
                if sub.isEmpty { return .success(names.contains("list-type") && request.query("list-type") == "2" ? .listObjectsV2 : .listObjectsV1) }
                if sub == ["location"] { return .success(.getBucketLocation) }
                if sub == ["uploads"] { return .success(.listMultipartUploads) }
                if sub == ["versions"] { return .success(.listObjectVersions) }
                if sub == ["acl"] { return .success(.getBucketACL) }
                if sub == ["object-lock"] { return .success(.getObjectLockConfiguration) }
                if sub == ["cors"] { return .success(.getBucketCors) }
                if sub == ["versioning"] { return .success(.getBucketVersioning) }
                if sub == ["policyStatus"] { return .success(.getBucketPolicyStatus) }
                if let kind = configKind(sub) { return .success(.getBucketConfig(kind)) }
                if sub.count == 1, let s = sub.first, bucketConfigurationReads.contains(s) { return .success(.getBucketConfiguration(s)) }
                return .failure(.notImplemented(header: nil))
            case "PUT":
                if sub.isEmpty { return .success(.createBucket) }
                if sub == ["acl"] { return .success(.putBucketACL) }
                if sub == ["object-lock"] { return .success(.putObjectLockConfiguration) }
                if sub == ["cors"] { return .success(.putBucketCors) }
                if sub == ["versioning"] { return .success(.putBucketVersioning) }
                if let kind = configKind(sub) { return .success(.putBucketConfig(kind)) }
                return .failure(.notImplemented(header: nil))
            case "DELETE":
                if sub.isEmpty { return .success(.deleteBucket) }
                if sub == ["cors"] { return .success(.deleteBucketCors) }
                if let kind = configKind(sub) { return .success(.deleteBucketConfig(kind)) }
                return .failure(.notImplemented(header: nil))
            case "POST":
                if sub == ["delete"] { return .success(.deleteObjects) }
                if sub.isEmpty { return .success(.postObject) }
                return .failure(.notImplemented(header: nil))
            default:
                return .failure(.methodNotAllowed(method: method, resourceType: "BUCKET"))
            }
        }
        let hasCopySource = request.headers["x-amz-copy-source"] != nil
        switch method {
        case "GET":
            if sub.isEmpty { return .success(names.contains("uploadId") ? .listParts : .getObject) }
            if sub == ["acl"] { return .success(.getObjectACL) }
            if sub == ["tagging"] { return .success(.getObjectTagging) }
            if sub == ["attributes"] { return .success(.getObjectAttributes) }
            if sub == ["retention"] { return .success(.getObjectRetention) }
            if sub == ["legal-hold"] { return .success(.getObjectLegalHold) }
            return .failure(.notImplemented(header: nil))
        case "HEAD":
            return .success(.headObject)
        case "PUT":
            if sub == ["tagging"] { return .success(.putObjectTagging) }
            if sub == ["acl"] { return .success(.putObjectACL) }
            if sub == ["retention"] { return .success(.putObjectRetention) }
            if sub == ["legal-hold"] { return .success(.putObjectLegalHold) }
            if !sub.isEmpty { return .failure(.notImplemented(header: nil)) }
            if names.contains("uploadId") || names.contains("partNumber") {
                return .success(hasCopySource ? .uploadPartCopy : .uploadPart)
            }
            return .success(hasCopySource ? .copyObject : .putObject)
        case "POST":
            if sub == ["uploads"] { return .success(.createMultipartUpload) }
            if sub == ["restore"] { return .success(.restoreObject) }
            if sub.isEmpty && names.contains("uploadId") { return .success(.completeMultipartUpload) }
            if sub.isEmpty { return .failure(.methodNotAllowed(method: method, resourceType: "OBJECT")) }
            return .failure(.notImplemented(header: nil))
        case "DELETE":
            if sub.isEmpty { return .success(names.contains("uploadId") ? .abortMultipartUpload : .deleteObject) }
            if sub == ["tagging"] { return .success(.deleteObjectTagging) }
            return .failure(.notImplemented(header: nil))
        default:
            return .failure(.methodNotAllowed(method: method, resourceType: "OBJECT"))
        }
    }

    /// The operation's name as the AWS API calls it (for the request log).
    var name: String {
        switch self {
        case .listBuckets: "ListBuckets"
        case .createBucket: "CreateBucket"
        case .deleteBucket: "DeleteBucket"
        case .headBucket: "HeadBucket"
        case .getBucketLocation: "GetBucketLocation"
        case .listObjectsV1: "ListObjects"
        case .listObjectsV2: "ListObjectsV2"
        case .listObjectVersions: "ListObjectVersions"
        case .listMultipartUploads: "ListMultipartUploads"
        case .deleteObjects: "DeleteObjects"
        case .getBucketConfiguration(let s): "GetBucket(\(s))"
        case .putObject: "PutObject"
        case .copyObject: "CopyObject"
        case .getObject: "GetObject"
        case .headObject: "HeadObject"
        case .deleteObject: "DeleteObject"
        case .getObjectACL: "GetObjectAcl"
        case .getBucketACL: "GetBucketAcl"
        case .putObjectACL: "PutObjectAcl"
        case .putBucketACL: "PutBucketAcl"
        case .getObjectAttributes: "GetObjectAttributes"
        case .getObjectLockConfiguration: "GetObjectLockConfiguration"
        case .putObjectLockConfiguration: "PutObjectLockConfiguration"
        case .getObjectRetention: "GetObjectRetention"
        case .putObjectRetention: "PutObjectRetention"
        case .getObjectLegalHold: "GetObjectLegalHold"
        case .putObjectLegalHold: "PutObjectLegalHold"
        case .getObjectTagging: "GetObjectTagging"
        case .putObjectTagging: "PutObjectTagging"
        case .deleteObjectTagging: "DeleteObjectTagging"
        case .restoreObject: "RestoreObject"
        case .createMultipartUpload: "CreateMultipartUpload"
        case .uploadPart: "UploadPart"
        case .uploadPartCopy: "UploadPartCopy"
        case .completeMultipartUpload: "CompleteMultipartUpload"
        case .abortMultipartUpload: "AbortMultipartUpload"
        case .listParts: "ListParts"
        case .postObject: "PostObject"
        case .getBucketCors: "GetBucketCors"
        case .putBucketCors: "PutBucketCors"
        case .deleteBucketCors: "DeleteBucketCors"
        case .preflight: "PreflightRequest"
        case .getBucketPolicyStatus: "GetBucketPolicyStatus"
        case .getBucketVersioning: "GetBucketVersioning"
        case .putBucketVersioning: "PutBucketVersioning"
        case .getBucketConfig(let kind):
            switch kind {
            case .policy: "GetBucketPolicy"
            case .lifecycle: "GetBucketLifecycleConfiguration"
            case .encryption: "GetBucketEncryption"
            case .publicAccessBlock: "GetPublicAccessBlock"
            case .ownershipControls: "GetBucketOwnershipControls"
            case .tagging: "GetBucketTagging"
            }
        case .putBucketConfig(let kind):
            switch kind {
            case .policy: "PutBucketPolicy"
            case .lifecycle: "PutBucketLifecycleConfiguration"
            case .encryption: "PutBucketEncryption"
            case .publicAccessBlock: "PutPublicAccessBlock"
            case .ownershipControls: "PutBucketOwnershipControls"
            case .tagging: "PutBucketTagging"
            }
        case .deleteBucketConfig(let kind):
            switch kind {
            case .policy: "DeleteBucketPolicy"
            case .lifecycle: "DeleteBucketLifecycle"
            case .encryption: "DeleteBucketEncryption"
            case .publicAccessBlock: "DeletePublicAccessBlock"
            case .ownershipControls: "DeleteBucketOwnershipControls"
            case .tagging: "DeleteBucketTagging"
            }
        }
    }
}
