/// What S3 said about a successful PUT.
public struct UploadReceipt: Sendable, Equatable {
    /// The quoted MD5 ETag.
    public let etag: String?
    /// Bytes sent.
    public let size: Int
}
