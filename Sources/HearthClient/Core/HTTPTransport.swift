import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response as the clients need it: status, headers with lower-cased names, body.
struct HTTPResult: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    var isSuccess: Bool { (200..<300).contains(status) }
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// The one place requests go out: URLSession, with transport failures turned into `HearthClientError`.
struct HTTPTransport: Sendable {
    let session: URLSession

    func send(_ method: String, _ url: URL, headers: [String: String] = [:], body: Data? = nil,
              timeout: TimeInterval = 60) async throws(HearthClientError) -> HTTPResult {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let data: Data
        let response: URLResponse
        do {
            if let body {
                // An upload task sends exactly these bytes; URLSession adds only Content-Length.
                (data, response) = try await session.upload(for: request, from: body)
            } else {
                (data, response) = try await session.data(for: request)
            }
        } catch {
            throw .transport("\(method) \(HTTPTransport.redacted(url)): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw .transport("\(method) \(HTTPTransport.redacted(url)): not an HTTP response")
        }
        var lowered: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let n = name as? String, let v = value as? String { lowered[n.lowercased()] = v }
        }
        return HTTPResult(status: http.statusCode, headers: lowered, body: data)
    }

    /// The URL without its query, which may hold a presigned signature or an API key.
    static func redacted(_ url: URL) -> String {
        guard var c = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "<url>" }
        c.query = nil
        return c.string ?? "<url>"
    }
}
