import HearthCore
import HearthHTTP

/// Everything one S3 request's handling needs, from authentication to the log entry.
///
/// A request is handled by one server thread at a time (headers, then body callbacks, then the
/// response), so the mutable fields are never touched concurrently; `@unchecked Sendable` lets the
/// `.collect` handler (a `@Sendable` closure) carry it.
final class S3Context: @unchecked Sendable {
    let request: Request
    let target: S3Target
    /// Emulator time when the headers arrived.
    let now: Instant
    /// `x-amz-id-2` / `<HostId>`.
    let hostID: String
    var operation: S3Operation?
    /// The access key that signed the request.
    var accessKey: String?
    /// The account that key acts for (nil: anonymous).
    var account: S3Accounts.Account?
    /// The stored owner new buckets, objects and uploads get: the caller's account.
    var ownerKey: String? { account?.key ?? accessKey }
    /// How the request authenticated (payload mode, declared checksums).
    var auth: AuthenticatedRequest?
    /// Verifies (and for aws-chunked bodies decodes) the payload against what was signed.
    var payload: PayloadVerifier?
    /// The key a browser form upload names in its fields (its URL names only the bucket).
    var formKey: String?
    /// The bucket's owner and access settings, when authorization read them.
    var bucketAccess: S3Store.BucketAccess?
    /// For an unsigned request a bucket policy lets through: what that policy grants.
    var anonymousAccess: AnonymousAccess?

    init(request: Request, target: S3Target, now: Instant, hostID: String) {
        self.request = request
        self.target = target
        self.now = now
        self.hostID = hostID
    }

    /// The bucket of a bucket- or object-level operation (routing guarantees one).
    var bucket: String { target.bucket ?? "" }
    /// The key of an object-level operation (routing guarantees one).
    var key: String { target.key ?? "" }

    /// Header lookup (case-insensitive).
    func header(_ name: String) -> String? { request.headers[name] }

    /// Query parameter lookup.
    func query(_ name: String) -> String? { request.query(name) }
}
