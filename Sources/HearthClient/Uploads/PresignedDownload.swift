/// What `POST /v1/files/presign-download` returns.
public struct PresignedDownload: Sendable, Equatable, Codable {
    /// The SigV4-presigned GET URL.
    public let getUrl: String
    /// How long it is valid, in seconds.
    public let expiresSeconds: Int
    public let expiresAt: String?
    public let s3Key: String?
    public let contentType: String?
    public let size: Int64?
}
