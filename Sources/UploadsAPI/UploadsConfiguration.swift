/// Settings of the uploads API (`hearth start --uploads-bucket`, `--require-app-check`, …).
public struct UploadsConfiguration: Sendable, Equatable {
    /// The Firebase project whose ID tokens are accepted and whose Firestore receives file documents.
    public var projectID: String
    /// The bucket every upload URL is presigned for; created when missing.
    public var bucket: String
    /// Media types a client may presign an upload for (compared case-insensitively, parameters ignored).
    public var allowedContentTypes: [String]
    /// Upper bound of `expiresSeconds` for upload and download URLs.
    public var maxExpiresSeconds: Int
    /// Lifetime of a URL when the request names none (capped by `maxExpiresSeconds`).
    public var defaultExpiresSeconds: Int
    /// Whether every request must carry a verifiable `X-Firebase-AppCheck` token.
    public var requireAppCheck: Bool
    /// Largest JSON request body accepted (bytes).
    public var maxBodyBytes: Int

    /// The default allowlist: common images, PDF, MP4 video, and opaque bytes.
    public static let defaultContentTypes = [
        "image/jpeg", "image/png", "image/gif", "image/webp", "image/heic",
        "application/pdf", "video/mp4", "application/octet-stream",
    ]

    public init(projectID: String = "demo-hearth", bucket: String = "uploads",
                allowedContentTypes: [String] = UploadsConfiguration.defaultContentTypes,
                maxExpiresSeconds: Int = 3600, defaultExpiresSeconds: Int = 900,
                requireAppCheck: Bool = false, maxBodyBytes: Int = 64 << 10) {
        self.projectID = projectID
        self.bucket = bucket
        self.allowedContentTypes = allowedContentTypes
        // S3 refuses presigned URLs valid for more than 7 days; no setting may promise more.
        self.maxExpiresSeconds = min(max(1, maxExpiresSeconds), 604_800)
        self.defaultExpiresSeconds = max(1, defaultExpiresSeconds)
        self.requireAppCheck = requireAppCheck
        self.maxBodyBytes = max(1024, maxBodyBytes)
    }
}
