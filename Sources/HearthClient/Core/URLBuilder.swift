import Foundation

/// Builds `base + path` without URL's path-component rules, which would escape `:` in `accounts:signUp`.
enum URLBuilder {
    static func url(_ base: URL, _ path: String, query: [(String, String)] = []) throws(HearthClientError) -> URL {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path.hasPrefix("/") ? path : "/" + path
        if !query.isEmpty {
            text += "?" + query.map { "\(queryEscape($0.0))=\(queryEscape($0.1))" }.joined(separator: "&")
        }
        guard let url = URL(string: text) else { throw .invalidArgument("not a valid URL: \(text)") }
        return url
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// RFC 3986 escaping of everything but unreserved characters.
    static func queryEscape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? s
    }

    /// Escapes each `/`-separated segment of a resource path, keeping the slashes.
    static func escapePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            String(segment).addingPercentEncoding(withAllowedCharacters: unreserved.union(CharacterSet(charactersIn: "()!$&'*+,;=:@"))) ?? String(segment)
        }.joined(separator: "/")
    }
}
