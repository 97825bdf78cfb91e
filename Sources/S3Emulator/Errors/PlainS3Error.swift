/// S3's errors that carry nothing but a code, an HTTP status and a message (the wire form of each
/// in one exhaustive switch, as `S3Error`'s own).
enum PlainS3Error: Sendable, Equatable {
    /// An ACL on a bucket whose Object Ownership is BucketOwnerEnforced.
    case accessControlListNotSupported
    /// CreateBucket with BucketOwnerEnforced and an ACL that grants someone else.
    case invalidBucketAclWithObjectOwnership
    /// An `AccessControlPolicy` document S3 cannot read.
    case malformedACL
    /// A canned ACL or grant that makes the resource public while BlockPublicAcls is on.
    case publicACLBlocked
    /// A grant to an email address (S3 resolves them only in a few old regions).
    case unresolvableGrantByEmail
    /// A grant naming a canonical id no account has.
    case invalidGrantee
    /// CompleteMultipartUpload's whole-object checksum did not match.
    case invalidChecksumForComplete(algorithm: String)
    /// The object is not in the state a request needs (Object Lock on a bucket without versioning…).
    case invalidBucketState(message: String)
    /// A protected object version (retention, legal hold).
    case objectLocked
    /// No Object Lock configuration, or the object has no retention / legal hold.
    case objectLockConfigurationNotFound
    case noSuchObjectLockConfiguration(message: String)
    /// A retention date in the past or a bad Object Lock request.
    case invalidRetentionPeriod(message: String)
    /// SSE-C: the key's MD5 or length is wrong, or the object needs the key.
    case sseCustomerKey(message: String)
    /// SSE-KMS: the key is not in the key ring (S3 passes on KMS's message).
    case kmsNotFound(message: String)
    /// A body where the headers already said everything (PutObjectAcl with `x-amz-acl` and a document).
    case unexpectedContent
    /// A conditional write lost a race with another write of the same key.
    case conditionalRequestConflict

    var code: String {
        switch self {
        case .accessControlListNotSupported: "AccessControlListNotSupported"
        case .invalidBucketAclWithObjectOwnership: "InvalidBucketAclWithObjectOwnership"
        case .malformedACL: "MalformedACLError"
        case .publicACLBlocked: "AccessDenied"
        case .unresolvableGrantByEmail: "UnresolvableGrantByEmailAddress"
        case .invalidGrantee: "InvalidArgument"
        case .invalidChecksumForComplete: "BadDigest"
        case .invalidBucketState: "InvalidBucketState"
        case .objectLocked: "AccessDenied"
        case .objectLockConfigurationNotFound: "ObjectLockConfigurationNotFoundError"
        case .noSuchObjectLockConfiguration: "NoSuchObjectLockConfiguration"
        case .invalidRetentionPeriod: "InvalidRetentionPeriod"
        case .sseCustomerKey: "InvalidArgument"
        case .kmsNotFound: "KMS.NotFoundException"
        case .conditionalRequestConflict: "ConditionalRequestConflict"
        case .unexpectedContent: "UnexpectedContent"
        }
    }

    var httpStatus: Int {
        switch self {
        case .accessControlListNotSupported, .invalidBucketAclWithObjectOwnership, .malformedACL, .unresolvableGrantByEmail,
             .invalidGrantee, .invalidChecksumForComplete, .invalidRetentionPeriod, .sseCustomerKey, .kmsNotFound, .unexpectedContent:
            400
        case .publicACLBlocked, .objectLocked: 403
        case .objectLockConfigurationNotFound, .noSuchObjectLockConfiguration: 404
        case .invalidBucketState, .conditionalRequestConflict: 409
        }
    }

    var message: String {
        switch self {
        case .accessControlListNotSupported: "The bucket does not allow ACLs"
        case .invalidBucketAclWithObjectOwnership: "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"
        case .malformedACL: "The XML you provided was not well-formed or did not validate against our published schema"
        case .publicACLBlocked: "Access Denied"
        case .unresolvableGrantByEmail: "The e-mail address you provided does not match any account on record."
        case .invalidGrantee: "Invalid id"
        case .invalidChecksumForComplete(let a): "The \(a) you specified did not match the calculated checksum."
        case .invalidBucketState(let m), .noSuchObjectLockConfiguration(let m), .invalidRetentionPeriod(let m), .sseCustomerKey(let m): m
        case .objectLocked: "Access Denied because object protected by object lock."
        case .objectLockConfigurationNotFound: "Object Lock configuration does not exist for this bucket"
        case .kmsNotFound(let message): message
        case .unexpectedContent: "This request does not support content"
        case .conditionalRequestConflict: "A conflicting operation occurred. If using PutObject you can retry the request. If using multipart upload you should initiate another CreateMultipartUpload request and re-upload each part."
        }
    }
}
