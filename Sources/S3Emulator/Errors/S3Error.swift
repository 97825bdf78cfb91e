import HearthHTTP

/// Every error the S3 endpoint answers with, as S3 names and words it.
///
/// Related: the "List of error codes" table of the Amazon S3 API reference. `code`, `httpStatus`,
/// `message` and `details` are exhaustive switches, so a new case cannot be added without its
/// wire form; `S3ErrorRenderer` is the one place that turns an error into a response.
enum S3Error: Error, Sendable {
    /// The largest request header section S3 takes, in bytes (`RequestHeaderSectionTooLarge` beyond).
    static let maxHeaderSection = 8192

    case accessDenied(message: String)
    /// A refused CORS preflight (`AccessForbidden`, with the requested method and resource type).
    case accessForbidden(message: String, method: String, resourceType: String, diagnosis: String?)
    /// `BadRequest` (a preflight without Origin or a usable Access-Control-Request-Method).
    case badRequest(message: String)
    /// `Content-MD5` did not match the body (both digests in base64).
    case badDigest(expected: String, calculated: String)
    /// An `x-amz-checksum-*` value did not match the body.
    case checksumMismatch(ChecksumAlgorithm)
    case bucketAlreadyExists(bucket: String)
    case bucketAlreadyOwnedByYou(bucket: String)
    case bucketNotEmpty(bucket: String)
    /// RestoreObject of an object whose restore is still under way (`--s3-restore-time`).
    case restoreAlreadyInProgress
    case entityTooLarge(proposedSize: Int64, maxSize: Int64)
    case entityTooSmall(proposedSize: Int64, minSize: Int64, partNumber: Int, etag: String)
    case illegalLocationConstraint(constraint: String?)
    case incompleteBody
    case internalError
    case invalidArgument(message: String, name: String, value: String?)
    case invalidBucketName(bucket: String)
    /// A malformed `Content-MD5`.
    case invalidDigest(contentMD5: String)
    case invalidLocationConstraint(constraint: String)
    case invalidPart(uploadID: String, partNumber: Int, etag: String)
    case invalidPartNumber(partNumberRequested: Int, actualPartCount: Int)
    case invalidPartOrder(uploadID: String)
    case invalidRange(requested: String, actualSize: Int64)
    case invalidRequest(message: String)
    case invalidStorageClass(storageClass: String)
    case invalidURI
    /// An archived object (GLACIER, DEEP_ARCHIVE) read before it is restored (`storageClass` set:
    /// S3 names the class in the body), or a restore of an object that is not archived (nil).
    case invalidObjectState(message: String, storageClass: String?)
    case keyTooLong(size: Int)
    case malformedXML
    case metadataTooLarge(size: Int)
    /// A request header section over 8 KB (`HTTPHeaders.sectionSize`; docs/s3.md, *Limits*).
    case requestHeaderSectionTooLarge
    case methodNotAllowed(method: String, resourceType: String)
    case missingContentLength
    case noSuchBucket(bucket: String)
    case noSuchKey(key: String)
    case noSuchUpload(uploadID: String)
    case noSuchVersion(key: String, versionID: String)
    /// A bucket sub-resource that is not configured (`NoSuchCORSConfiguration`, `NoSuchTagSet`, …).
    case noSuchBucketConfiguration(code: String, message: String, bucket: String)
    case notImplemented(header: String?)
    /// A bucket policy document S3 refuses (`MalformedPolicy`, with S3's message for the fault).
    case malformedPolicy(message: String)
    /// PutBucketVersioning without a `Status`.
    case illegalVersioningConfiguration
    /// A tag set S3 refuses (`InvalidTag`).
    case invalidTag(message: String)
    /// A request without a version id found a delete marker as the key's current version: 404
    /// `NoSuchKey`, with `x-amz-delete-marker` and the marker's version id.
    case deletedKey(key: String, versionID: String)
    /// A request named a delete marker by its version id where an object was needed: 405
    /// `MethodNotAllowed` with `ResourceType` `DeleteMarker` and `Allow: DELETE`.
    case deleteMarkerNotAllowed(method: String, versionID: String, lastModified: String)
    /// A failed `If-Match`-style condition; `condition` names the header.
    case preconditionFailed(condition: String)
    /// An authentication failure decided by the SigV4/SigV2 verifier.
    case signature(SigV4Failure)
    /// A browser form upload refused for its form or policy.
    case postForm(PostPolicyFailure)
    /// One of S3's errors that carry only a code, a status and a message.
    case plain(PlainS3Error)

    /// The `<Code>`.
    var code: String {
        switch self {
        case .accessDenied: "AccessDenied"
        case .accessForbidden: "AccessForbidden"
        case .badRequest: "BadRequest"
        case .badDigest, .checksumMismatch: "BadDigest"
        case .bucketAlreadyExists: "BucketAlreadyExists"
        case .bucketAlreadyOwnedByYou: "BucketAlreadyOwnedByYou"
        case .bucketNotEmpty: "BucketNotEmpty"
        case .restoreAlreadyInProgress: "RestoreAlreadyInProgress"
        case .entityTooLarge: "EntityTooLarge"
        case .entityTooSmall: "EntityTooSmall"
        case .illegalLocationConstraint: "IllegalLocationConstraintException"
        case .incompleteBody: "IncompleteBody"
        case .internalError: "InternalError"
        case .invalidArgument: "InvalidArgument"
        case .invalidBucketName: "InvalidBucketName"
        case .invalidDigest: "InvalidDigest"
        case .invalidLocationConstraint: "InvalidLocationConstraint"
        case .invalidPart: "InvalidPart"
        case .invalidPartNumber: "InvalidPartNumber"
        case .invalidPartOrder: "InvalidPartOrder"
        case .invalidRange: "InvalidRange"
        case .invalidRequest: "InvalidRequest"
        case .invalidStorageClass: "InvalidStorageClass"
        case .invalidURI: "InvalidURI"
        case .invalidObjectState: "InvalidObjectState"
        case .keyTooLong: "KeyTooLongError"
        case .malformedXML: "MalformedXML"
        case .metadataTooLarge: "MetadataTooLarge"
        case .requestHeaderSectionTooLarge: "RequestHeaderSectionTooLarge"
        case .methodNotAllowed: "MethodNotAllowed"
        case .missingContentLength: "MissingContentLength"
        case .noSuchBucket: "NoSuchBucket"
        case .noSuchKey: "NoSuchKey"
        case .noSuchUpload: "NoSuchUpload"
        case .noSuchVersion: "NoSuchVersion"
        case .noSuchBucketConfiguration(let code, _, _): code
        case .notImplemented: "NotImplemented"
        case .malformedPolicy: "MalformedPolicy"
        case .illegalVersioningConfiguration: "IllegalVersioningConfigurationException"
        case .invalidTag: "InvalidTag"
        case .deletedKey: "NoSuchKey"
        case .deleteMarkerNotAllowed: "MethodNotAllowed"
        case .preconditionFailed: "PreconditionFailed"
        case .signature(let f): f.code
        case .postForm(let f): f.code
        case .plain(let p): p.code
        }
    }

    /// The HTTP status.
    var httpStatus: Int {
        switch self {
        case .accessDenied, .accessForbidden, .invalidObjectState: 403
        case .badRequest: 400
        case .badDigest, .checksumMismatch: 400
        case .bucketAlreadyExists, .bucketAlreadyOwnedByYou, .bucketNotEmpty, .restoreAlreadyInProgress: 409
        case .entityTooLarge, .entityTooSmall: 400
        case .illegalLocationConstraint, .incompleteBody: 400
        case .internalError: 500
        case .invalidArgument, .invalidBucketName, .invalidDigest, .invalidLocationConstraint: 400
        case .invalidPart, .invalidPartOrder: 400
        case .invalidPartNumber, .invalidRange: 416
        case .invalidRequest, .invalidStorageClass, .invalidURI, .keyTooLong, .malformedXML, .metadataTooLarge: 400
        case .requestHeaderSectionTooLarge: 400
        case .methodNotAllowed, .deleteMarkerNotAllowed: 405
        case .missingContentLength: 411
        case .noSuchBucket, .noSuchKey, .noSuchUpload, .noSuchVersion, .noSuchBucketConfiguration, .deletedKey: 404
        case .malformedPolicy, .illegalVersioningConfiguration, .invalidTag: 400
        case .notImplemented: 501
        case .preconditionFailed: 412
        case .signature(let f): f.httpStatus
        case .postForm(let f): f.httpStatus
        case .plain(let p): p.httpStatus
        }
    }

    /// The `<Message>`, worded as S3 words it.
    var message: String {
        switch self {
        case .accessDenied(let message), .accessForbidden(let message, _, _, _), .badRequest(let message): message
        case .badDigest: "The Content-MD5 you specified did not match what we received."
        case .checksumMismatch(let algorithm): "The \(algorithm.displayName) you specified did not match the calculated checksum."
        case .bucketAlreadyExists:
            "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again."
        case .bucketAlreadyOwnedByYou: "Your previous request to create the named bucket succeeded and you already own it."
        case .bucketNotEmpty: "The bucket you tried to delete is not empty"
        case .restoreAlreadyInProgress: "Object restore is already in progress"
        case .entityTooLarge: "Your proposed upload exceeds the maximum allowed size"
        case .entityTooSmall: "Your proposed upload is smaller than the minimum allowed size"
        case .illegalLocationConstraint(let c):
            "The \(c ?? "unspecified") location constraint is incompatible for the region specific endpoint this request was sent to."
        case .incompleteBody: "You did not provide the number of bytes specified by the Content-Length HTTP header"
        case .internalError: "We encountered an internal error. Please try again."
        case .invalidArgument(let message, _, _): message
        case .invalidBucketName: "The specified bucket is not valid."
        case .invalidDigest: "The Content-MD5 you specified was invalid."
        case .invalidLocationConstraint: "The specified location-constraint is not valid"
        case .invalidPart:
            "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."
        case .invalidPartNumber: "The requested partnumber is not satisfiable"
        case .invalidPartOrder: "The list of parts was not in ascending order. Parts must be ordered by part number."
        case .invalidRange: "The requested range is not satisfiable"
        case .invalidRequest(let message): message
        case .invalidStorageClass: "The storage class you specified is not valid"
        case .invalidURI: "Couldn't parse the specified URI."
        case .invalidObjectState(let message, _): message
        case .keyTooLong: "Your key is too long"
        case .malformedXML: "The XML you provided was not well-formed or did not validate against our published schema"
        case .metadataTooLarge: "Your metadata headers exceed the maximum allowed metadata size"
        case .requestHeaderSectionTooLarge: "Your request header section exceeds the maximum allowed size."
        case .methodNotAllowed: "The specified method is not allowed against this resource."
        case .missingContentLength: "You must provide the Content-Length HTTP header."
        case .noSuchBucket: "The specified bucket does not exist"
        case .noSuchKey: "The specified key does not exist."
        case .noSuchUpload: "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."
        case .noSuchVersion: "The specified version does not exist."
        case .noSuchBucketConfiguration(_, let message, _): message
        case .notImplemented: "A header you provided implies functionality that is not implemented"
        case .malformedPolicy(let message), .invalidTag(let message): message
        case .illegalVersioningConfiguration: "The Versioning element must be specified"
        case .deletedKey: "The specified key does not exist."
        case .deleteMarkerNotAllowed: "The specified method is not allowed against this resource."
        case .preconditionFailed: "At least one of the pre-conditions you specified did not hold"
        case .signature(let f): f.message
        case .postForm(let f): f.message
        case .plain(let p): p.message
        }
    }

    /// The elements S3 adds after `<Message>` (before `RequestId`/`HostId`), in S3's order.
    var details: [(String, String)] {
        switch self {
        case .accessDenied, .badRequest, .internalError, .incompleteBody, .invalidRequest, .invalidURI, .malformedXML,
             .missingContentLength, .malformedPolicy, .illegalVersioningConfiguration, .invalidTag, .restoreAlreadyInProgress:
            []
        case .accessForbidden(_, let method, let resourceType, _): [("Method", method), ("ResourceType", resourceType)]
        case .badDigest(let expected, let calculated): [("ExpectedDigest", expected), ("CalculatedDigest", calculated)]
        case .checksumMismatch: []
        case .bucketAlreadyExists(let b), .bucketAlreadyOwnedByYou(let b), .bucketNotEmpty(let b), .invalidBucketName(let b),
             .noSuchBucket(let b):
            [("BucketName", b)]
        case .entityTooLarge(let proposed, let max): [("ProposedSize", String(proposed)), ("MaxSizeAllowed", String(max))]
        case .entityTooSmall(let proposed, let min, let part, let etag):
            [("ProposedSize", String(proposed)), ("MinSizeAllowed", String(min)), ("PartNumber", String(part)), ("ETag", etag)]
        case .illegalLocationConstraint(let c): c.map { [("LocationConstraint", $0)] } ?? []
        case .invalidArgument(_, let name, let value):
            // S3 leaves out ArgumentValue where it has none to show (an encryption rule, a count).
            value.map { [("ArgumentName", name), ("ArgumentValue", $0)] } ?? [("ArgumentName", name)]
        case .invalidDigest(let md5): [("Content-MD5", md5)]
        case .invalidLocationConstraint(let c): [("LocationConstraint", c)]
        case .invalidPart(let upload, let part, let etag): [("UploadId", upload), ("PartNumber", String(part)), ("ETag", etag)]
        case .invalidPartNumber(let requested, let actual):
            [("PartNumberRequested", String(requested)), ("ActualPartCount", String(actual))]
        case .invalidPartOrder(let upload): [("UploadId", upload)]
        case .invalidRange(let requested, let size): [("RangeRequested", requested), ("ActualObjectSize", String(size))]
        case .invalidStorageClass(let sc): [("StorageClassRequested", sc)]
        case .invalidObjectState(_, let sc): sc.map { [("StorageClass", $0)] } ?? []
        case .keyTooLong(let size): [("Size", String(size)), ("MaxSizeAllowed", "1024")]
        case .metadataTooLarge(let size): [("Size", String(size)), ("MaxSizeAllowed", "2048")]
        case .requestHeaderSectionTooLarge: [("MaxSizeAllowed", String(S3Error.maxHeaderSection))]
        case .methodNotAllowed(let method, let type): [("Method", method), ("ResourceType", type)]
        case .noSuchKey(let key), .deletedKey(let key, _): [("Key", key)]
        case .deleteMarkerNotAllowed(let method, _, _): [("Method", method), ("ResourceType", "DeleteMarker")]
        case .noSuchUpload(let upload): [("UploadId", upload)]
        case .noSuchVersion(let key, let version): [("Key", key), ("VersionId", version)]
        case .noSuchBucketConfiguration(_, _, let bucket): [("BucketName", bucket)]
        case .notImplemented(let header): header.map { [("Header", $0)] } ?? []
        case .preconditionFailed(let condition): [("Condition", condition)]
        case .signature(let f): f.xmlFields
        case .postForm(let f): f.xmlFields
        case .plain: []
        }
    }

    /// Extra response headers (e.g. `x-amz-bucket-region` on a wrong-region signature).
    var responseHeaders: [(String, String)] {
        switch self {
        case .signature(let f): f.responseHeaders
        case .methodNotAllowed: [("Allow", "GET, HEAD, PUT, POST, DELETE")]
        case .deletedKey(_, let versionID): [("x-amz-delete-marker", "true"), ("x-amz-version-id", versionID)]
        case .deleteMarkerNotAllowed(_, let versionID, let lastModified):
            [("Allow", "DELETE"), ("Last-Modified", lastModified), ("x-amz-delete-marker", "true"), ("x-amz-version-id", versionID)]
        default: []
        }
    }

    /// Hearth's plain-words explanation, when it found one (signatures, forms, CORS refusals).
    var diagnosis: String? {
        switch self {
        case .signature(let f): f.diagnosis
        case .postForm(let f): f.diagnosis
        case .accessForbidden(_, _, _, let diagnosis): diagnosis
        default: nil
        }
    }
}
