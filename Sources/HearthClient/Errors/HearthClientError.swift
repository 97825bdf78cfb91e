import Foundation

/// Every failure of a HearthClient call, keeping what the server said.
public enum HearthClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A Google-style JSON error: Identity Toolkit, securetoken, Firestore (incl. rules denials),
    /// and the uploads API.
    case api(GoogleAPIError)
    /// An S3 error: the XML document (or, for HEAD, only the status and headers).
    case s3(S3ErrorResponse)
    /// A non-success response in neither shape.
    case http(status: Int, body: String)
    /// The request never got an HTTP response (connection refused, reset, timeout).
    case transport(String)
    /// A success response whose body is not what the API documents.
    case decoding(String)
    /// The caller passed something the client cannot send (a bad path, a non-map document …).
    case invalidArgument(String)

    /// The HTTP status, when there was a response.
    public var httpStatus: Int? {
        switch self {
        case .api(let e): e.httpStatus
        case .s3(let e): e.httpStatus
        case .http(let status, _): status
        case .transport, .decoding, .invalidArgument: nil
        }
    }

    /// Whether the server refused for lack of permission (Firestore rules, the uploads API's ownership checks).
    public var isPermissionDenied: Bool {
        if case .api(let e) = self { return e.status == "PERMISSION_DENIED" }
        return false
    }

    /// Whether the server answered 401 / UNAUTHENTICATED.
    public var isUnauthenticated: Bool {
        if case .api(let e) = self { return e.status == "UNAUTHENTICATED" || e.httpStatus == 401 }
        return false
    }

    /// Whether the thing asked for does not exist.
    public var isNotFound: Bool {
        switch self {
        case .api(let e): e.status == "NOT_FOUND" || e.httpStatus == 404
        case .s3(let e): e.httpStatus == 404
        case .http(let status, _): status == 404
        default: false
        }
    }

    public var description: String {
        switch self {
        case .api(let e): e.description
        case .s3(let e): e.description
        case .http(let status, let body): "HTTP \(status): \(body.prefix(300))"
        case .transport(let why): "transport error: \(why)"
        case .decoding(let why): "unexpected response: \(why)"
        case .invalidArgument(let why): "invalid argument: \(why)"
        }
    }

    /// The error a non-success response stands for, by its body's shape.
    static func from(_ result: HTTPResult, method: String) -> HearthClientError {
        let contentType = result.headers["content-type"]?.lowercased() ?? ""
        let text = result.bodyText
        let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        if contentType.contains("xml") || trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<Error") {
            if let e = S3ErrorResponse(status: result.status, headers: result.headers, body: text) { return .s3(e) }
        }
        if let e = GoogleAPIError(status: result.status, body: result.body) { return .api(e) }
        if method == "HEAD" || (result.body.isEmpty && (result.headers["x-amz-request-id"] != nil || result.headers["x-hearth-diagnosis"] != nil)) {
            return .s3(S3ErrorResponse(bodilessStatus: result.status, headers: result.headers))
        }
        return .http(status: result.status, body: text)
    }
}
