import HearthCore
import HearthHTTP

/// Every way an uploads API request fails, with its HTTP status, Google canonical status, a stable
/// machine-readable reason, the request field at fault, and one rendering.
///
/// Wire shape (documented in docs/uploads.md):
/// `{"error": {"code": 400, "status": "INVALID_ARGUMENT", "reason": "CONTENT_TYPE_NOT_ALLOWED",
///   "message": "…", "field": "contentType", "details": [google.rpc.BadRequest]}}`
public enum UploadsError: Error, Sendable, Equatable {
    /// The body is not a JSON object.
    case invalidJSON(String)
    /// A required member is absent or null.
    case missingField(String)
    /// A member has the wrong JSON type.
    case wrongType(field: String, expected: String, got: String)
    /// `contentType` is not in the allowlist (or not a media type at all).
    case contentTypeNotAllowed(String, allowed: [String])
    /// `fileExt` has a dot, a slash, another disallowed character, or is too long.
    case invalidFileExt(String, reason: String)
    /// `expiresSeconds` outside 1…max.
    case expiresOutOfRange(field: String, value: String, max: Int)
    /// The `{fileId}` path segment cannot name a Firestore document.
    case invalidFileID(String, reason: String)
    /// A key that is the caller's but not shaped as the API mints them.
    case invalidKey(field: String, key: String, reason: String)
    /// Another member with a bad value.
    case invalidValue(field: String, reason: String)
    /// The caller's uid cannot appear in a storage path.
    case unusableUID(String)
    /// No `Authorization: Bearer …` header.
    case missingIDToken
    /// An `Authorization` header that is not `Bearer <token>`.
    case malformedAuthorization
    /// The ID token did not verify.
    case idToken(IDTokenError)
    /// App Check is required and the header is absent.
    case appCheckMissing
    /// App Check is required and the token did not verify.
    case appCheckInvalid
    /// The key is not under `users/<caller uid>/`.
    case notOwner(field: String, key: String, uid: String)
    /// No object was uploaded under the key.
    case objectNotFound(key: String, bucket: String)
    /// The object is archived (S3 GLACIER, DEEP_ARCHIVE) and not restored: S3 refuses to read it.
    case objectArchived(field: String, key: String, storageClass: String)
    /// No route for the path.
    case noRoute(method: String, path: String)
    /// The path exists but not for this method.
    case methodNotAllowed(method: String, path: String)
    /// The body exceeds the limit.
    case bodyTooLarge(limit: Int)
    /// A dependency (object store, document store) failed.
    case backend(String)

    /// The HTTP status code.
    public var httpStatus: Int {
        switch self {
        case .invalidJSON, .missingField, .wrongType, .contentTypeNotAllowed, .invalidFileExt, .expiresOutOfRange,
             .invalidFileID, .invalidKey, .invalidValue, .unusableUID:
            400
        case .missingIDToken, .malformedAuthorization, .idToken, .appCheckMissing, .appCheckInvalid:
            401
        // 403 as S3's InvalidObjectState for a GET of the object, so a client meets one status
        // for an unreadable archived object whether it asks here or fetches a URL.
        case .notOwner, .objectArchived: 403
        case .objectNotFound, .noRoute: 404
        case .methodNotAllowed: 405
        case .bodyTooLarge: 413
        case .backend: 500
        }
    }

    /// The Google canonical error status (`google.rpc.Code` name).
    public var status: String {
        switch httpStatus {
        case 400: "INVALID_ARGUMENT"
        case 401: "UNAUTHENTICATED"
        case 403: "PERMISSION_DENIED"
        case 404: "NOT_FOUND"
        // Not a google.rpc.Code: no canonical code fits a wrong HTTP method.
        case 405: "METHOD_NOT_ALLOWED"
        case 413: "RESOURCE_EXHAUSTED"
        default: "INTERNAL"
        }
    }

    /// A stable code clients can switch on.
    public var reason: String {
        switch self {
        case .invalidJSON: "INVALID_JSON"
        case .missingField: "MISSING_FIELD"
        case .wrongType: "WRONG_TYPE"
        case .contentTypeNotAllowed: "CONTENT_TYPE_NOT_ALLOWED"
        case .invalidFileExt: "INVALID_FILE_EXT"
        case .expiresOutOfRange: "EXPIRES_OUT_OF_RANGE"
        case .invalidFileID: "INVALID_FILE_ID"
        case .invalidKey: "INVALID_KEY"
        case .invalidValue: "INVALID_VALUE"
        case .unusableUID: "UNUSABLE_UID"
        case .missingIDToken: "MISSING_ID_TOKEN"
        case .malformedAuthorization: "MALFORMED_AUTHORIZATION"
        case .idToken(let e):
            switch e {
            case .malformed, .issuedInFuture: "INVALID_ID_TOKEN"
            case .wrongProject: "INVALID_ID_TOKEN_AUDIENCE"
            case .expired: "ID_TOKEN_EXPIRED"
            case .revoked: "ID_TOKEN_REVOKED"
            case .disabled: "USER_DISABLED"
            case .userNotFound: "USER_NOT_FOUND"
            }
        case .appCheckMissing: "APP_CHECK_TOKEN_MISSING"
        case .appCheckInvalid: "APP_CHECK_TOKEN_INVALID"
        case .notOwner: "NOT_OWNER"
        case .objectNotFound: "OBJECT_NOT_FOUND"
        case .objectArchived: "OBJECT_ARCHIVED"
        case .noRoute: "NO_ROUTE"
        case .methodNotAllowed: "METHOD_NOT_ALLOWED"
        case .bodyTooLarge: "BODY_TOO_LARGE"
        case .backend: "BACKEND_FAILURE"
        }
    }

    /// The request member at fault, when there is one.
    public var field: String? {
        switch self {
        case .missingField(let f), .wrongType(let f, _, _), .expiresOutOfRange(let f, _, _), .invalidKey(let f, _, _),
             .invalidValue(let f, _), .notOwner(let f, _, _), .objectArchived(let f, _, _):
            f
        case .contentTypeNotAllowed: "contentType"
        case .invalidFileExt: "fileExt"
        case .invalidFileID: "fileId"
        default: nil
        }
    }

    /// One sentence for people.
    public var message: String {
        switch self {
        case .invalidJSON(let why): "Invalid JSON payload: \(why)"
        case .missingField(let f): "Missing required field '\(f)'"
        case .wrongType(let f, let expected, let got): "Field '\(f)' must be \(expected), got \(got)"
        case .contentTypeNotAllowed(let ct, let allowed):
            "contentType '\(ct)' is not allowed; allowed: \(allowed.joined(separator: ", "))"
        case .invalidFileExt(let ext, let why): "fileExt '\(ext)' is invalid: \(why)"
        case .expiresOutOfRange(let f, let v, let max): "\(f) must be an integer from 1 to \(max), got \(v)"
        case .invalidFileID(let id, let why): "fileId '\(id)' is invalid: \(why)"
        case .invalidKey(let f, let key, let why): "\(f) '\(key)' is invalid: \(why)"
        case .invalidValue(let f, let why): "Field '\(f)' is invalid: \(why)"
        case .unusableUID(let uid): "The user id '\(uid)' contains '/' and cannot name a storage path"
        case .missingIDToken: "Missing 'Authorization: Bearer <Firebase ID token>' header"
        case .malformedAuthorization: "The Authorization header must be 'Bearer <Firebase ID token>'"
        case .idToken(let e): e.message
        case .appCheckMissing: "Missing X-Firebase-AppCheck header: this API requires an App Check token"
        case .appCheckInvalid: "The X-Firebase-AppCheck token is invalid or expired"
        case .notOwner(let f, let key, let uid):
            "\(f) '\(key)' does not belong to the caller: the caller's keys start with users/\(uid)/"
        case .objectNotFound(let key, let bucket):
            "No object '\(key)' in bucket '\(bucket)': it was never uploaded, or its upload did not complete"
        case .objectArchived(_, let key, let storageClass):
            "Object '\(key)' is archived in storage class \(storageClass): restore it (S3 RestoreObject) before downloading"
        case .noRoute(let m, let p): "No route for \(m) \(p)"
        case .methodNotAllowed(let m, let p): "\(m) is not allowed on \(p); use POST"
        case .bodyTooLarge(let limit): "Request body larger than \(limit) bytes"
        case .backend(let why): "Internal error: \(why)"
        }
    }

    /// The JSON error document.
    public var body: JSON {
        var error: JSONObject = [
            "code": .int(Int64(httpStatus)),
            "status": .string(status),
            "reason": .string(reason),
            "message": .string(message),
        ]
        if let field {
            error["field"] = .string(field)
            if httpStatus == 400 {
                // google.rpc.BadRequest, so clients that read Google error details find the field too.
                error["details"] = .array([.object([
                    "@type": .string("type.googleapis.com/google.rpc.BadRequest"),
                    "fieldViolations": .array([.object(["field": .string(field), "description": .string(message)])]),
                ])])
            }
        }
        return .object(["error": .object(error)])
    }

    /// The HTTP response.
    public func render() -> Response {
        var headers = HTTPHeaders()
        switch httpStatus {
        case 401:
            // RFC 6750 §3: a bearer-protected resource names its scheme (and the problem) when refusing.
            var parts = [#"realm="hearth-uploads""#]
            if self != .missingIDToken { parts.append(#"error="invalid_token""#) }
            parts.append(#"error_description=""# + message.replacingOccurrences(of: "\"", with: "'") + #"""#)
            headers.set("WWW-Authenticate", "Bearer " + parts.joined(separator: ", "))
        case 405:
            headers.set("Allow", "POST, OPTIONS")
        default:
            break
        }
        var response = Response.json(body, status: httpStatus, headers: headers)
        response.logFields.append(("reason", .string(reason)))
        return response
    }
}
