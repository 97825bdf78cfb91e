import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The seed app's upload flow: the backend's presign/complete/download API, and the PUT/GET to S3
/// with the presigned URLs.
///
/// ```swift
/// let uploads = UploadsClient(baseURL: apiURL, token: session.bearer)
/// let p = try await uploads.presign(contentType: "image/jpeg", fileExt: "jpg")
/// try await uploads.upload(jpegData, to: p)
/// let file = try await uploads.complete(fileID: "f1", key: p.key)
/// ```
public struct UploadsClient: Sendable {
    /// The uploads API (`http://127.0.0.1:8000` on Hearth).
    public let baseURL: URL
    /// The user's Firebase ID token.
    public let token: BearerToken
    /// An App Check token sent as `X-Firebase-AppCheck`, when the API requires one.
    public let appCheckToken: String?
    let transport: HTTPTransport

    public init(baseURL: URL, token: BearerToken, appCheckToken: String? = nil, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.token = token
        self.appCheckToken = appCheckToken
        transport = HTTPTransport(session: session)
    }

    /// The same client for another user.
    public func with(token: BearerToken) -> UploadsClient {
        UploadsClient(baseURL: baseURL, token: token, appCheckToken: appCheckToken, session: transport.session)
    }

    // MARK: Backend API

    /// `POST /v1/uploads/presign`.
    /// - Throws: `HearthClientError.api`: 400 naming the `field`, 401 for a missing/expired/revoked token.
    public func presign(contentType: String, fileExt: String, expiresSeconds: Int? = nil) async throws -> PresignedUpload {
        var body: [String: AnyJSON] = ["contentType": .string(contentType), "fileExt": .string(fileExt)]
        if let expiresSeconds { body["expiresSeconds"] = .int(Int64(expiresSeconds)) }
        return try await call("/v1/uploads/presign", body, as: PresignedUpload.self)
    }

    /// `POST /v1/files/{fileId}/complete`: after the PUT, the server records the file in Firestore.
    /// - Throws: 404 when nothing was uploaded under `key`, 403 when `key` is another user's.
    public func complete(fileID: String, key: String, originalName: String? = nil) async throws -> CompletedFile {
        var body: [String: AnyJSON] = ["key": .string(key)]
        if let originalName { body["originalName"] = .string(originalName) }
        let escaped = URLBuilder.queryEscape(fileID)
        return try await call("/v1/files/\(escaped)/complete", body, as: CompletedFile.self)
    }

    /// `POST /v1/files/presign-download`.
    /// - Throws: 403 for another user's key, 404 when the object does not exist.
    public func presignDownload(s3Key: String, expiresSeconds: Int? = nil) async throws -> PresignedDownload {
        var body: [String: AnyJSON] = ["s3Key": .string(s3Key)]
        if let expiresSeconds { body["expiresSeconds"] = .int(Int64(expiresSeconds)) }
        return try await call("/v1/files/presign-download", body, as: PresignedDownload.self)
    }

    // MARK: S3

    /// PUTs `data` to the presigned URL with the headers that were signed.
    /// - Parameter contentType: sends this Content-Type instead of the signed one — only to
    ///   reproduce the classic mistake (S3 answers 403 SignatureDoesNotMatch).
    /// - Throws: `HearthClientError.s3` with S3's code, message, canonical request and Hearth's diagnosis.
    @discardableResult
    public func upload(_ data: Data, to presigned: PresignedUpload, contentType: String? = nil) async throws -> UploadReceipt {
        guard let url = URL(string: presigned.putUrl) else { throw HearthClientError.invalidArgument("putUrl is not a URL") }
        var headers = presigned.headers ?? [:]
        if let contentType {
            headers = headers.filter { $0.key.lowercased() != "content-type" }
            headers["Content-Type"] = contentType
        } else if headers.keys.allSatisfy({ $0.lowercased() != "content-type" }) {
            // Without a signed type, still send one so URLSession does not pick a form type.
            headers["Content-Type"] = "application/octet-stream"
        }
        let result = try await transport.send(presigned.method ?? "PUT", url, headers: headers, body: data)
        guard result.isSuccess else { throw HearthClientError.from(result, method: "PUT") }
        return UploadReceipt(etag: result.headers["etag"], size: data.count)
    }

    /// GETs the object behind a presigned download URL.
    public func download(_ presigned: PresignedDownload) async throws -> Data {
        guard let url = URL(string: presigned.getUrl) else { throw HearthClientError.invalidArgument("getUrl is not a URL") }
        return try await download(from: url)
    }

    /// GETs any presigned URL.
    /// - Throws: `HearthClientError.s3` (e.g. 403 AccessDenied "Request has expired").
    public func download(from url: URL) async throws -> Data {
        let result = try await transport.send("GET", url)
        guard result.isSuccess else { throw HearthClientError.from(result, method: "GET") }
        return result.body
    }

    // MARK: Plumbing

    func call<T: Decodable>(_ path: String, _ body: [String: AnyJSON], as type: T.Type) async throws(HearthClientError) -> T {
        let url = try URLBuilder.url(baseURL, path)
        var headers = try await token.headers()
        headers["Content-Type"] = "application/json"
        if let appCheckToken { headers["X-Firebase-AppCheck"] = appCheckToken }
        let result = try await transport.send("POST", url, headers: headers, body: try WireJSON.encode(body))
        guard result.isSuccess else { throw HearthClientError.from(result, method: "POST") }
        return try WireJSON.decode(type, from: result, what: "\(path) response")
    }
}
