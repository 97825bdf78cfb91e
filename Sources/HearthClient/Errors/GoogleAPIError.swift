import Foundation

/// Google's JSON error `{"error": {"code", "message", "status", "errors", "details"}}` as a value,
/// plus the uploads API's `reason` and `field`.
public struct GoogleAPIError: Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status of the response.
    public let httpStatus: Int
    /// `error.code` (normally the HTTP status).
    public let code: Int
    /// `error.status`, a `google.rpc.Code` name such as `PERMISSION_DENIED`; absent on Identity Toolkit 400s.
    public let status: String?
    /// `error.message`: for Firebase Auth a code such as `EMAIL_EXISTS`, for Firestore a rules denial
    /// such as `false for 'create' @ L5` followed by the evaluation trace.
    public let message: String
    /// `error.reason` (uploads API) or `error.errors[0].reason`.
    public let reason: String?
    /// `error.field` (uploads API) or the first `BadRequest` field violation.
    public let field: String?
    /// The response body as sent.
    public let rawBody: String

    /// The Firebase Auth error code: the message up to ` : ` (`WEAK_PASSWORD : Password should …` → `WEAK_PASSWORD`).
    public var authErrorCode: String {
        if let r = message.range(of: " : ") { return String(message[..<r.lowerBound]) }
        return message
    }

    public var description: String {
        var s = "HTTP \(httpStatus)"
        if let status { s += " \(status)" }
        if let reason { s += " [\(reason)]" }
        if let field { s += " (field \(field))" }
        return s + ": " + message
    }

    /// Parses a body holding `{"error": {…}}`, or the `[{"error": {…}}]` that streamed methods
    /// (`runQuery`, `batchGet`) send when they fail.
    init?(status: Int, body: Data) {
        guard let json = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else { return nil }
        var root = json as? [String: Any]
        if root == nil, let array = json as? [Any] {
            root = array.lazy.compactMap { ($0 as? [String: Any]).flatMap { $0["error"] != nil ? $0 : nil } }.first
        }
        guard let error = root?["error"] as? [String: Any] else { return nil }
        httpStatus = status
        code = (error["code"] as? NSNumber)?.intValue ?? status
        self.status = error["status"] as? String
        message = error["message"] as? String ?? ""
        let errors = error["errors"] as? [[String: Any]]
        reason = error["reason"] as? String ?? errors?.first?["reason"] as? String
        var field = error["field"] as? String
        if field == nil, let details = error["details"] as? [[String: Any]] {
            for d in details {
                if let v = (d["fieldViolations"] as? [[String: Any]])?.first?["field"] as? String { field = v; break }
            }
        }
        self.field = field
        rawBody = String(decoding: body, as: UTF8.self)
    }

    /// A value built by hand (tests, or wrapping another client's error).
    public init(httpStatus: Int, code: Int? = nil, status: String?, message: String, reason: String? = nil,
                field: String? = nil, rawBody: String = "") {
        self.httpStatus = httpStatus
        self.code = code ?? httpStatus
        self.status = status
        self.message = message
        self.reason = reason
        self.field = field
        self.rawBody = rawBody
    }
}
