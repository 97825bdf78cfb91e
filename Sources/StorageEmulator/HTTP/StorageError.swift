import Foundation
import HearthCore
import HearthHTTP

/// Every error the Storage emulator answers with, and its wire form.
///
/// The Cloud Storage JSON API answers `{"error": {"code", "message", "errors": [{"message",
/// "domain": .string("global"), "reason"}]}}`; the Firebase Storage REST API (`/v0`) answers
/// `{"error": {"code", "message"}}`. One exhaustive switch gives each case its status and reason.
enum StorageError: Error, Sendable, Equatable {
    case noSuchObject(bucket: String, name: String)
    case noSuchBucket(String)
    case bucketExists(String)
    case bucketNotEmpty(String)
    case preconditionFailed
    /// A read's `ifGenerationNotMatch`/`ifMetagenerationNotMatch` failed: 304 with no body.
    case notModified
    case invalidObjectName(String)
    case invalidBucketName(String)
    case invalid(String)
    case required(String)
    case noSuchUpload(String)
    case uploadNotActive(String)
    case wrongOffset(expected: Int64, got: Int64)
    case sizeMismatch(declared: Int64, received: Int64)
    case rangeNotSatisfiable(size: Int64)
    case metadataTooLarge
    /// A legacy ACL call on a bucket with uniform bucket-level access (GCS's own message).
    case uniformAccess(String)
    /// An ACL entry that names an entity the list does not have.
    case noSuchACLEntry(String)
    /// A public URL read by a caller without credentials that `allUsers` may not make.
    case anonymousAccessDenied
    case payloadTooLarge(Int64)
    /// Rules denied (`message` adds the rules' reason and Hearth's trace after a newline).
    case permissionDenied(operation: String, message: String)
    case unauthenticated(String)
    case notFoundRoute(method: String, path: String)
    /// A stored setting (`what`: the bucket's settings, an ACL, the IAM policy) that no longer
    /// decodes, asked to be shown or merged into: answering its default instead would misstate
    /// who may read, and merging into the default would lose what the row says.
    case unreadableStoredState(bucket: String, what: String)
    /// A grant to `allUsers`/`allAuthenticatedUsers` on a bucket enforcing public access prevention.
    case publicAccessPrevented
    case internalError

    var status: Int {
        switch self {
        case .noSuchObject, .noSuchBucket, .noSuchUpload, .notFoundRoute, .noSuchACLEntry: 404
        case .bucketExists, .bucketNotEmpty: 409
        case .preconditionFailed, .publicAccessPrevented: 412
        case .notModified: 304
        case .invalidObjectName, .invalidBucketName, .invalid, .required, .uploadNotActive, .wrongOffset, .sizeMismatch,
             .metadataTooLarge, .uniformAccess: 400
        case .rangeNotSatisfiable: 416
        case .payloadTooLarge: 413
        case .permissionDenied, .anonymousAccessDenied: 403
        case .unauthenticated: 401
        case .internalError, .unreadableStoredState: 500
        }
    }

    /// GCS's `errors[].reason`.
    var reason: String {
        switch self {
        case .noSuchObject, .noSuchBucket, .noSuchUpload, .notFoundRoute, .noSuchACLEntry: "notFound"
        case .bucketExists, .bucketNotEmpty: "conflict"
        case .preconditionFailed, .publicAccessPrevented: "conditionNotMet"
        case .notModified: "notModified"
        case .invalidObjectName, .invalidBucketName, .invalid, .uploadNotActive, .wrongOffset, .sizeMismatch, .metadataTooLarge,
             .uniformAccess: "invalid"
        case .required: "required"
        case .rangeNotSatisfiable: "requestedRangeNotSatisfiable"
        case .payloadTooLarge: "uploadTooLarge"
        case .permissionDenied, .anonymousAccessDenied: "forbidden"
        case .unauthenticated: "authError"
        case .internalError, .unreadableStoredState: "backendError"
        }
    }

    var message: String {
        switch self {
        case .noSuchObject(let b, let n): "No such object: \(b)/\(n)"
        case .noSuchBucket: "The specified bucket does not exist."
        case .bucketExists: "Your previous request to create the named bucket succeeded and you already own it."
        case .bucketNotEmpty: "The bucket you tried to delete is not empty."
        case .preconditionFailed: "At least one of the pre-conditions you specified did not hold."
        case .publicAccessPrevented:
            "The member bindings allUsers and allAuthenticatedUsers are not allowed since public access prevention is enforced."
        case .notModified: "Not Modified"
        case .invalidObjectName(let why): "The specified object name is not valid: \(why)"
        case .invalidBucketName(let name): "Invalid bucket name: '\(name)'"
        case .invalid(let m), .required(let m), .uniformAccess(let m): m
        case .noSuchACLEntry(let entity): "Not Found: no access control entry for \(entity)"
        case .noSuchUpload(let id): "No such upload: \(id)"
        case .uploadNotActive(let id): "The upload \(id) is no longer active."
        case .wrongOffset(let expected, let got):
            "Invalid request. The upload offset is \(got) but \(expected) bytes have been persisted."
        case .sizeMismatch(let declared, let received):
            "Invalid request. The upload declared \(declared) bytes but \(received) were received."
        case .rangeNotSatisfiable: "Request range not satisfiable"
        case .metadataTooLarge: "Metadata part is too large."
        case .payloadTooLarge(let limit): "The request body is larger than \(limit) bytes."
        case .permissionDenied(_, let m): m
        case .anonymousAccessDenied:
            "Anonymous caller does not have storage.objects.get access to the Google Cloud Storage object. Permission 'storage.objects.get' denied on resource (or it may not exist)."
        case .unauthenticated(let m): m
        case .notFoundRoute(let method, let path): "Not Found: \(method) \(path)"
        case .unreadableStoredState(let bucket, let what):
            "The stored \(what) of bucket \(bucket) cannot be read (a damaged row). Replace it whole to repair it."
        case .internalError: "We encountered an internal error. Please try again."
        }
    }

    /// Headers both APIs send with the error: a 416 names the object's size (`bytes */size`, which
    /// google-resumable-media reads to tell an empty object from a range past the end).
    private var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        if case .rangeNotSatisfiable(let size) = self { headers.set("Content-Range", "bytes */\(size)") }
        return headers
    }

    /// The Cloud Storage JSON API error response.
    var gcsResponse: Response {
        // A 304 has no body (RFC 9110 §15.4.5).
        if self == .notModified { return Response(status: 304) }
        let detail: JSON = .object(["message": .string(message), "domain": .string("global"), "reason": .string(reason)])
        return .json(.object(["error": .object([
            "code": .int(Int64(status)), "message": .string(message), "errors": .array([detail]),
        ])]), status: status, headers: headers)
    }

    /// The XML API's error response (an object's public URL): `<Error><Code>…`, the codes GCS's
    /// XML API shares with S3.
    var xmlResponse: Response {
        if self == .notModified { return Response(status: 304) }
        let code = switch self {
        case .noSuchObject: "NoSuchKey"
        case .noSuchBucket: "NoSuchBucket"
        case .anonymousAccessDenied, .permissionDenied: "AccessDenied"
        case .preconditionFailed: "PreconditionFailed"
        case .rangeNotSatisfiable: "InvalidRange"
        case .notFoundRoute: "NotFound"
        case .internalError, .unreadableStoredState: "InternalError"
        default: "InvalidArgument"
        }
        let text = switch self {
        case .noSuchObject: "The specified key does not exist."
        case .anonymousAccessDenied: "Access denied."
        default: message
        }
        func escaped(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        }
        var body = "<?xml version='1.0' encoding='UTF-8'?><Error><Code>\(code)</Code><Message>\(escaped(text))</Message>"
        if text != message { body += "<Details>\(escaped(message))</Details>" }
        body += "</Error>"
        return Response(status: status, contentType: "application/xml; charset=UTF-8", body: Array(body.utf8), headers: headers)
    }

    /// The Firebase Storage REST API error response. A rules denial's message starts as
    /// production's (`Permission denied.`); the rules' reason and Hearth's trace follow on later lines.
    var firebaseResponse: Response {
        if self == .notModified { return Response(status: 304) }
        return .json(.object(["error": .object(["code": .int(Int64(status)), "message": .string(message)])]), status: status, headers: headers)
    }
}

extension StorageError {
    private static let uniformAccessDocs = "Read more at https://cloud.google.com/storage/docs/uniform-bucket-level-access."

    /// An object ACL call (`verb`: insert, get, update, delete) on a bucket with uniform access, in GCS's words.
    static func uniformObjectACL(_ verb: String) -> StorageError {
        .uniformAccess("Cannot \(verb) legacy ACL for an object when uniform bucket-level access is enabled. \(uniformAccessDocs)")
    }

    /// A bucket ACL call on a bucket with uniform access.
    static func uniformBucketACL(_ verb: String) -> StorageError {
        .uniformAccess("Cannot \(verb) legacy ACL for a bucket that has uniform bucket-level access. \(uniformAccessDocs)")
    }

    /// A default object ACL call on a bucket with uniform access.
    static func uniformDefaultObjectACL(_ verb: String) -> StorageError {
        .uniformAccess("Cannot use ACL API to \(verb) bucket policy when uniform bucket-level access is enabled. \(uniformAccessDocs)")
    }
}
