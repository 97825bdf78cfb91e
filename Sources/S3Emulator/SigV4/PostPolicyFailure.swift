import HearthCore

/// Every way a browser form upload (POST Object) can be refused besides its signature, with S3's
/// code, status, message and extra elements, plus Hearth's plain-words diagnosis.
///
/// Related: "Browser-Based Uploads Using POST (AWS Signature Version 4)", "POST Policy" and the
/// POST Object error codes of the S3 API reference. Signature and credential failures of a form
/// are `SigV4Failure`s (the same codes as a presigned URL's).
enum PostPolicyFailure: Error, Sendable, Equatable {
    /// The request's Content-Type is not `multipart/form-data`.
    case notMultipart(contentType: String?)
    /// The body does not parse as multipart/form-data (or has no boundary parameter).
    case malformedBody(reason: String)
    /// The fields before the file take more than 20 KB.
    case preDataTooLarge
    /// A required field is missing (before the file field, where S3 reads fields).
    case missingField(name: String)
    /// No part named `file` before the form ended.
    case noFile
    /// `key` is present but empty (after `${filename}` was replaced).
    case emptyKey
    /// No signature fields and no header or query signature: S3 buckets are private.
    case anonymous
    /// A `policy` field without any signature field.
    case policyWithoutSignature
    /// Signature Version 2 form fields (`AWSAccessKeyId`, `signature`) while SigV2 is refused.
    case sigV2NotSupported
    /// The policy document is not base64 JSON of S3's shape; `detail` follows "Invalid Policy: ".
    case invalidPolicy(detail: String)
    /// The policy's `expiration` has passed.
    case expired(expiration: String, serverTime: Instant)
    /// A condition does not hold; `condition` is rendered as S3 prints it.
    case conditionFailed(condition: String, diagnosis: String)
    /// Form fields that no condition names (lower-cased, form order).
    case extraFields([String])
    /// The file is larger than `content-length-range` allows.
    case fileTooLarge(size: Int64, max: Int64)
    /// The file is smaller than `content-length-range` allows.
    case fileTooSmall(size: Int64, min: Int64)

    /// S3's limit on the form bytes before the file part (boundaries and part headers included).
    static let maxPreDataBytes = 20 * 1024

    /// The `<Condition>` S3 names when the body is not a form.
    static let multipartCondition = "Bucket POST must be of the enclosure-type multipart/form-data"

    /// S3's error code.
    var code: String {
        switch self {
        case .notMultipart: "PreconditionFailed"
        case .malformedBody: "MalformedPOSTRequest"
        case .preDataTooLarge: "MaxPostPreDataLengthExceededError"
        case .missingField, .noFile, .emptyKey: "InvalidArgument"
        case .anonymous, .policyWithoutSignature, .expired, .conditionFailed, .extraFields: "AccessDenied"
        case .sigV2NotSupported: "InvalidRequest"
        case .invalidPolicy: "InvalidPolicyDocument"
        case .fileTooLarge: "EntityTooLarge"
        case .fileTooSmall: "EntityTooSmall"
        }
    }

    /// The HTTP status.
    var httpStatus: Int {
        switch self {
        case .notMultipart: 412
        case .anonymous, .policyWithoutSignature, .expired, .conditionFailed, .extraFields: 403
        case .malformedBody, .preDataTooLarge, .missingField, .noFile, .emptyKey, .sigV2NotSupported, .invalidPolicy,
             .fileTooLarge, .fileTooSmall:
            400
        }
    }

    /// The `<Message>`, worded as S3 words it.
    var message: String {
        switch self {
        case .notMultipart: "At least one of the pre-conditions you specified did not hold"
        case .malformedBody: "The body of your POST request is not well-formed multipart/form-data."
        case .preDataTooLarge: "Your POST request fields preceding the upload file were too large."
        case .missingField(let name): "Bucket POST must contain a field named '\(name)'.  If it is specified, please check the order of the fields."
        case .noFile: "POST requires exactly one file upload per request."
        case .emptyKey: "User key must have a length greater than 0."
        case .anonymous, .policyWithoutSignature: "Access Denied"
        case .sigV2NotSupported: "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."
        case .invalidPolicy(let detail): "Invalid Policy: \(detail)"
        case .expired: "Invalid according to Policy: Policy expired."
        case .conditionFailed(let condition, _): "Invalid according to Policy: Policy Condition failed: \(condition)"
        case .extraFields(let names): "Invalid according to Policy: Extra input fields: \(names.joined(separator: ", "))"
        case .fileTooLarge: "Your proposed upload exceeds the maximum allowed size"
        case .fileTooSmall: "Your proposed upload is smaller than the minimum allowed size"
        }
    }

    /// The elements S3 adds after `<Message>`, in S3's order.
    var xmlFields: [(String, String)] {
        switch self {
        case .notMultipart: [("Condition", Self.multipartCondition)]
        case .preDataTooLarge: [("MaxPostPreDataLengthBytes", String(Self.maxPreDataBytes))]
        case .missingField(let name): [("ArgumentName", name), ("ArgumentValue", "")]
        case .noFile: [("ArgumentName", "file"), ("ArgumentValue", "0")]
        case .emptyKey: [("ArgumentName", "key"), ("ArgumentValue", "")]
        case .fileTooLarge(let size, let max): [("ProposedSize", String(size)), ("MaxSizeAllowed", String(max))]
        case .fileTooSmall(let size, let min): [("ProposedSize", String(size)), ("MinSizeAllowed", String(min))]
        case .malformedBody, .anonymous, .policyWithoutSignature, .sigV2NotSupported, .invalidPolicy, .expired,
             .conditionFailed, .extraFields:
            []
        }
    }

    /// Hearth's explanation in plain words (`<Diagnosis>` and `x-hearth-diagnosis`).
    var diagnosis: String? {
        switch self {
        case .notMultipart(let contentType):
            "POST to a bucket is S3's browser form upload, which needs a multipart/form-data body; this request's Content-Type is "
                + (contentType.map { "'\($0)'" } ?? "missing") + ". Send the fields of generate_presigned_post/createPresignedPost as a form (requests: files={'file': …}), or use PUT /bucket/key to upload a raw body."
        case .malformedBody(let reason):
            "The form body cannot be read: \(reason)."
        case .preDataTooLarge:
            "The fields before the file field take more than \(Self.maxPreDataBytes) bytes (boundaries and part headers count). Move large values out of the form or shorten them."
        case .missingField(let name):
            "The form has no '\(name)' field before the file field. S3 reads fields only up to the file and ignores everything after it, so the file must be the last field."
        case .noFile:
            "The form has no part named 'file' (S3 takes the upload only from a field named exactly file, and it must be the last field)."
        case .emptyKey:
            "The key field is empty (after ${filename} was replaced by the uploaded file's name)."
        case .anonymous:
            "The form carries no policy and signature fields and the request is not signed; Hearth's buckets are private as S3's are. Use the fields of generate_presigned_post (policy, x-amz-algorithm, x-amz-credential, x-amz-date, x-amz-signature)."
        case .policyWithoutSignature:
            "The form has a policy field but no x-amz-signature, x-amz-algorithm, x-amz-credential and x-amz-date fields, so S3 treats it as anonymous."
        case .sigV2NotSupported:
            "The form is signed with Signature Version 2 (AWSAccessKeyId and signature fields). Create the form with SigV4 (boto3: Config(signature_version='s3v4'); it adds x-amz-algorithm, x-amz-credential, x-amz-date and x-amz-signature), or start Hearth with --s3-allow-sigv2."
        case .invalidPolicy(let detail):
            "The policy field must be the base64 of a JSON object with an 'expiration' (like 2030-01-01T00:00:00Z) and a 'conditions' list: \(detail)"
        case .expired(let expiration, let serverTime):
            "The policy expired at \(expiration); the emulator clock reads \(SigV4Time.iso8601(serverTime)). Create a new policy (or check whether the emulator clock was advanced)."
        case .conditionFailed(_, let diagnosis):
            diagnosis
        case .extraFields(let names):
            "Every form field except x-amz-signature, file, policy and x-ignore-* must be named by a policy condition. Add a condition for "
                + names.map { "'\($0)'" }.joined(separator: ", ") + " (for example [\"starts-with\", \"$\(names.first ?? "field")\", \"\"]), or leave the field out of the form."
        case .fileTooLarge(let size, let max):
            "The file has \(size) bytes; the policy's content-length-range allows at most \(max)."
        case .fileTooSmall(let size, let min):
            "The file has \(size) bytes; the policy's content-length-range requires at least \(min)."
        }
    }
}
