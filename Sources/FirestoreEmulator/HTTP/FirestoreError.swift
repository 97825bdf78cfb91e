import HearthCore
import HearthHTTP

/// Every failure the Firestore API reports, with Google's canonical code, HTTP status and message.
///
/// Rendered as Google's error JSON: `{"error": {"code": 404, "message": "…", "status": "NOT_FOUND"}}`.
enum FirestoreError: Error, Equatable, Sendable {
    case invalidArgument(String)
    case notFound(String)
    case alreadyExists(String)
    case failedPrecondition(String)
    case aborted(String)
    case permissionDenied(String)
    case unauthenticated(String)
    case resourceExhausted(String)
    case unimplemented(String)
    case `internal`(String)

    /// The HTTP status Google's frontends map the canonical code to.
    var httpStatus: Int {
        switch self {
        case .invalidArgument, .failedPrecondition: 400
        case .unauthenticated: 401
        case .permissionDenied: 403
        case .notFound: 404
        case .alreadyExists, .aborted: 409
        case .resourceExhausted: 429
        case .unimplemented: 501
        case .internal: 500
        }
    }

    /// The canonical status name.
    var status: String {
        switch self {
        case .invalidArgument: "INVALID_ARGUMENT"
        case .notFound: "NOT_FOUND"
        case .alreadyExists: "ALREADY_EXISTS"
        case .failedPrecondition: "FAILED_PRECONDITION"
        case .aborted: "ABORTED"
        case .permissionDenied: "PERMISSION_DENIED"
        case .unauthenticated: "UNAUTHENTICATED"
        case .resourceExhausted: "RESOURCE_EXHAUSTED"
        case .unimplemented: "UNIMPLEMENTED"
        case .internal: "INTERNAL"
        }
    }

    /// The gRPC code number (used in `BatchWriteResponse.status[].code`).
    var grpcCode: Int64 {
        switch self {
        case .invalidArgument: 3
        case .notFound: 5
        case .alreadyExists: 6
        case .permissionDenied: 7
        case .resourceExhausted: 8
        case .failedPrecondition: 9
        case .aborted: 10
        case .unimplemented: 12
        case .internal: 13
        case .unauthenticated: 16
        }
    }

    var message: String {
        switch self {
        case .invalidArgument(let m), .notFound(let m), .alreadyExists(let m), .failedPrecondition(let m),
             .aborted(let m), .permissionDenied(let m), .unauthenticated(let m), .resourceExhausted(let m),
             .unimplemented(let m), .internal(let m):
            m
        }
    }

    /// The `google.rpc.Status` JSON (`{"code": 7, "message": "…"}`).
    var statusJSON: JSON {
        .object(["code": .int(grpcCode), "message": .string(message)])
    }

    /// Google's error body.
    var json: JSON {
        .object(["error": .object(["code": .int(Int64(httpStatus)), "message": .string(message), "status": .string(status)])])
    }

    /// The HTTP response carrying this error.
    func response() -> Response {
        Response.json(json, status: httpStatus)
    }
}

extension FirestoreError {
    /// A REST body that is not JSON Hearth can take. A number past a double's range (`1e400`,
    /// anywhere in the body) is what the official emulator answers "Payload isn't valid for
    /// request." to (checked against it: a value, a query's `limit`, a `findNearest` threshold, a
    /// `readTime`'s seconds); other malformed text keeps the real front end's wording.
    static func badJSON(_ error: JSONParseError) -> FirestoreError {
        if error.isNumberOutOfRange { return .invalidArgument("Payload isn't valid for request.") }
        return .invalidArgument("Invalid JSON payload received. \(error.reason) at byte \(error.offset).")
    }

    /// The error a REST answer's `error.status` names (the gRPC adapter reads REST answers).
    static func fromStatus(_ status: String, message: String, httpStatus: Int) -> FirestoreError {
        switch status {
        case "INVALID_ARGUMENT": .invalidArgument(message)
        case "NOT_FOUND": .notFound(message)
        case "ALREADY_EXISTS": .alreadyExists(message)
        case "FAILED_PRECONDITION": .failedPrecondition(message)
        case "ABORTED": .aborted(message)
        case "PERMISSION_DENIED": .permissionDenied(message)
        case "UNAUTHENTICATED": .unauthenticated(message)
        case "RESOURCE_EXHAUSTED": .resourceExhausted(message)
        case "UNIMPLEMENTED": .unimplemented(message)
        default: httpStatus == 404 ? .notFound(message) : (httpStatus < 500 ? .invalidArgument(message) : .internal(message))
        }
    }
}
