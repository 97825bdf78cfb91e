import Foundation

/// What `POST /v1/uploads/presign` returns: where and how to PUT the bytes.
public struct PresignedUpload: Sendable, Equatable, Codable {
    /// The object key, `users/<uid>/uploads/<uuid>.<ext>`: store this in Firestore, never the URL.
    public let key: String
    /// The SigV4-presigned PUT URL.
    public let putUrl: String
    /// `PUT`.
    public let method: String?
    /// Headers the PUT must carry exactly as given (the signed `Content-Type`).
    public let headers: [String: String]?
    /// How long the URL is valid, in seconds.
    public let expiresSeconds: Int
    /// When the URL expires (RFC 3339), on the server's clock.
    public let expiresAt: String?
    /// The bucket.
    public let bucket: String?

    /// The Content-Type that was signed.
    public var contentType: String? {
        headers?.first { $0.key.lowercased() == "content-type" }?.value
    }
}
