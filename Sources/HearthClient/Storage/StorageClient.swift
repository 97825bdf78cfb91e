import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cloud Storage for Firebase through the REST protocol the Firebase SDKs speak (`/v0/b/{bucket}/o…`):
/// resumable uploads in chunks, metadata, download URLs with tokens, downloads, deletes.
///
/// ```swift
/// let storage = try hearth.instance.storage(token: session.bearer)
/// let object = try await storage.upload(jpegData, to: "users/\(uid)/profile.jpg", contentType: "image/jpeg")
/// let url = try storage.downloadURL(for: object)      // what you save in the user's document
/// ```
public struct StorageClient: Sendable {
    /// The storage listener (`http://127.0.0.1:9199` on Hearth).
    public let emulatorURL: URL
    public let bucket: String
    public let token: BearerToken
    let transport: HTTPTransport

    public init(emulatorURL: URL, bucket: String, token: BearerToken, session: URLSession = .shared) {
        self.emulatorURL = emulatorURL
        self.bucket = bucket
        self.token = token
        transport = HTTPTransport(session: session)
    }

    /// Uploads `data` with the SDKs' resumable protocol: `start`, then `upload` chunks of
    /// `chunkSize` bytes at their offsets, the last one with `finalize`.
    /// - Throws: `HearthClientError.api` with Storage's status and message (403 when the rules deny).
    public func upload(_ data: Data, to path: String, contentType: String, metadata: [String: String] = [:],
                       chunkSize: Int = 256 * 1024) async throws -> StorageObject {
        guard chunkSize > 0 else { throw HearthClientError.invalidArgument("chunkSize must be positive") }
        var headers = try await authHeaders()
        headers["X-Goog-Upload-Protocol"] = "resumable"
        headers["X-Goog-Upload-Command"] = "start"
        headers["X-Goog-Upload-Header-Content-Length"] = String(data.count)
        headers["X-Goog-Upload-Header-Content-Type"] = contentType
        headers["Content-Type"] = "application/json; charset=utf-8"
        var body: [String: AnyJSON] = ["name": .string(path), "contentType": .string(contentType)]
        if !metadata.isEmpty { body["metadata"] = .object(metadata.mapValues { .string($0) }) }
        let start = try await transport.send("POST", try objectsURL(query: [("name", path), ("uploadType", "resumable")]),
                                             headers: headers, body: try WireJSON.encode(body))
        guard start.isSuccess else { throw HearthClientError.from(start, method: "POST") }
        guard let location = start.headers["x-goog-upload-url"], let uploadURL = URL(string: location) else {
            throw HearthClientError.transport("the storage start response has no X-Goog-Upload-URL")
        }
        var offset = 0
        repeat {
            let end = min(offset + chunkSize, data.count)
            var chunkHeaders = try await authHeaders()
            chunkHeaders["X-Goog-Upload-Command"] = end == data.count ? "upload, finalize" : "upload"
            chunkHeaders["X-Goog-Upload-Offset"] = String(offset)
            chunkHeaders["Content-Type"] = "application/octet-stream"
            let r = try await transport.send("POST", uploadURL, headers: chunkHeaders, body: data.subdata(in: offset..<end))
            guard r.isSuccess else { throw HearthClientError.from(r, method: "POST") }
            if end == data.count { return try WireJSON.decode(StorageObject.self, from: r, what: "storage upload response") }
            offset = end
        } while true
    }

    /// The object's metadata.
    public func metadata(_ path: String) async throws -> StorageObject {
        let r = try await transport.send("GET", try objectURL(path), headers: try await authHeaders())
        guard r.isSuccess else { throw HearthClientError.from(r, method: "GET") }
        return try WireJSON.decode(StorageObject.self, from: r, what: "storage metadata")
    }

    /// The download URL the SDKs build (`…?alt=media&token=…`), which needs no credentials.
    public func downloadURL(for object: StorageObject) throws -> URL {
        guard let token = object.downloadTokens?.split(separator: ",").first else {
            throw HearthClientError.invalidArgument("\(object.name) has no download token")
        }
        return try objectURL(object.name, query: [("alt", "media"), ("token", String(token))])
    }

    /// The object's bytes, as this client's user (judged by storage.rules).
    public func download(_ path: String) async throws -> Data {
        let r = try await transport.send("GET", try objectURL(path, query: [("alt", "media")]), headers: try await authHeaders())
        guard r.isSuccess else { throw HearthClientError.from(r, method: "GET") }
        return r.body
    }

    /// Deletes the object.
    public func delete(_ path: String) async throws {
        let r = try await transport.send("DELETE", try objectURL(path), headers: try await authHeaders())
        guard r.isSuccess else { throw HearthClientError.from(r, method: "DELETE") }
    }

    // MARK: Plumbing

    /// The SDKs send `Authorization: Firebase <ID token>`.
    private func authHeaders() async throws(HearthClientError) -> [String: String] {
        var h = try await token.headers()
        if let bearer = h["Authorization"] { h["Authorization"] = "Firebase " + bearer.dropFirst("Bearer ".count) }
        return h
    }

    private func objectsURL(query: [(String, String)]) throws(HearthClientError) -> URL {
        try URLBuilder.url(emulatorURL, "/v0/b/\(URLBuilder.queryEscape(bucket))/o", query: query)
    }

    private func objectURL(_ path: String, query: [(String, String)] = []) throws(HearthClientError) -> URL {
        try URLBuilder.url(emulatorURL, "/v0/b/\(URLBuilder.queryEscape(bucket))/o/\(URLBuilder.queryEscape(path))", query: query)
    }
}
