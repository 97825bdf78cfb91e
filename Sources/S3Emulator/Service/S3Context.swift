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

    /// Header lookup (case-insensitive). An `x-amz-*` name on a request that has none (a
    /// presigned URL's usual case) answers nil without a scan: a PUT looks up some twenty of them.
    func header(_ name: String) -> String? {
        if !mayHaveAmzHeaders && S3Context.nameHasPrefix(name, "x-amz-") { return nil }
        return request.headers[name]
    }

    /// Whether a header named `prefix…` (lower-case ASCII prefix, compared ignoring ASCII case)
    /// may be present; true for any non-ASCII name, which only the lookup's own rule can decide.
    func mayHaveHeader(prefix: String) -> Bool {
        if !mayHaveAmzHeaders && S3Context.nameHasPrefix(prefix, "x-amz-") { return false }
        return request.headers.contains { field in
            S3Context.nameHasPrefix(field.name, prefix) || S3Context.isNonASCII(field.name)
        }
    }

    /// Whether the request may have an `x-amz-*` header (one pass over the names, on first use).
    /// A non-ASCII name counts: lower-casing could make it equal to an ASCII one.
    private(set) lazy var mayHaveAmzHeaders: Bool = request.headers.contains { field in
        S3Context.nameHasPrefix(field.name, "x-amz-") || S3Context.isNonASCII(field.name)
    }

    /// Whether `name` has a byte ≥ 0x80, eight bytes at a time (the generic walk of the UTF-8 view
    /// cost ~0.1k instructions a name on every request).
    static func isNonASCII(_ name: String) -> Bool {
        name.utf8.withContiguousStorageIfAvailable { !HTTPHeaders.isASCII(UnsafeRawBufferPointer($0)) }
            ?? name.utf8.contains(where: { $0 >= 0x80 })
    }

    /// Whether `name` starts with `prefix` (lower-case ASCII), ignoring ASCII case.
    static func nameHasPrefix(_ name: String, _ prefix: String) -> Bool {
        // Native strings compare on their contiguous bytes: indexing the UTF8Views cost ~500
        // instructions a call, and GetObject asks for some ten `x-amz-` names.
        let fast: Bool?? = name.utf8.withContiguousStorageIfAvailable { n in
            prefix.utf8.withContiguousStorageIfAvailable { p in
                n.count >= p.count && zip(n, p).allSatisfy { HTTPHeaders.asciiLowercase($0) == $1 }
            }
        }
        if let fast, let answer = fast { return answer }
        let n = name.utf8, p = prefix.utf8
        guard n.count >= p.count else { return false }
        var i = n.startIndex
        for c in p {
            if HTTPHeaders.asciiLowercase(n[i]) != c { return false }
            i = n.index(after: i)
        }
        return true
    }

    /// Query parameter lookup.
    func query(_ name: String) -> String? { request.query(name) }
}
