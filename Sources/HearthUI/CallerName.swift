import Foundation
import HearthCore
import HearthHTTP

/// Who a request's credentials name, for the request log: read, never verified (the service
/// verifies; the log only shows who the caller claims to be).
enum CallerName {
    static func of(_ request: Request) -> String? {
        if let auth = request.headers["Authorization"], let name = ofAuthorization(auth) { return name }
        if let credential = request.query("X-Amz-Credential") { return accessKey(credential) }
        if let key = request.query("AWSAccessKeyId") { return key }
        return nil
    }

    /// The caller an `Authorization` value names: a bearer token's user, or a signature's access key.
    static func ofAuthorization(_ auth: String) -> String? {
        if auth.hasPrefix("Bearer ") {
            // Decoding an ID token through Foundation cost ~0.95M instructions, three times a whole
            // Firestore get; a client sends the same token for up to an hour.
            if let known = bearerNames.name(of: auth) { return known }
            let name = bearer(String(auth.dropFirst(7)).trimmingCharacters(in: .whitespaces))
            bearerNames.remember(auth, name)
            return name
        }
        if auth.hasPrefix("AWS4-HMAC-SHA256"), let r = auth.range(of: "Credential=") {
            return accessKey(String(auth[r.upperBound...]))
        }
        if auth.hasPrefix("AWS "), let colon = auth.lastIndex(of: ":") {
            return String(auth.dropFirst(4)[..<colon]).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    private static let bearerNames = BearerNames()

    /// `Authorization: Bearer …` values seen lately and whom they name (nil: nobody); a few hundred
    /// at most, forgotten all at once when full.
    final class BearerNames: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [String: String?] = [:]

        func name(of auth: String) -> String?? {
            lock.lock()
            defer { lock.unlock() }
            return names[auth]
        }

        func remember(_ auth: String, _ name: String?) {
            lock.lock()
            defer { lock.unlock() }
            if names.count >= 512 { names.removeAll(keepingCapacity: true) }
            names[auth] = .some(name)
        }
    }

    /// `AKID/20240101/us-east-1/s3/aws4_request, …` → `AKID`.
    static func accessKey(_ credential: String) -> String? {
        let id = credential.prefix { $0 != "/" && $0 != "," }
        return id.isEmpty ? nil : String(id)
    }

    /// An ID token's `user_id` (or `sub`); `owner` as is; nil for anything else.
    static func bearer(_ token: String) -> String? {
        if token == "owner" { return "owner" }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, let payload = base64URLDecode(String(parts[1])),
              let json = try? JSON.parse(payload) else { return nil }
        return json["user_id"]?.stringValue ?? json["sub"]?.stringValue
    }

    static func base64URLDecode(_ text: String) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).map { Array($0) }
    }
}
