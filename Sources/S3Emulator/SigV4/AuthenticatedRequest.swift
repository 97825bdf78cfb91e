/// How the request body is protected, from `x-amz-content-sha256` (or the presigned default).
enum PayloadMode: Sendable, Equatable {
    /// `UNSIGNED-PAYLOAD` (and every presigned or SigV2 request without a body hash).
    case unsigned
    /// The hex SHA-256 the body must have (lower-cased).
    case sha256(String)
    /// aws-chunked: `STREAMING-AWS4-HMAC-SHA256-PAYLOAD` (signed, no trailer),
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER` (signed, trailer) or
    /// `STREAMING-UNSIGNED-PAYLOAD-TRAILER` (unsigned, trailer).
    case streaming(signed: Bool, trailer: Bool, decodedLength: Int64)
}

/// A checksum the request declares in an `x-amz-checksum-*` header.
struct DeclaredChecksum: Sendable, Equatable {
    let algorithm: ChecksumAlgorithm
    /// The base64 value as sent.
    let value: String
}

/// A request whose credentials and signature verified; what s3store needs to handle its body.
struct AuthenticatedRequest: Sendable {
    /// How the request authenticated.
    enum Method: Sendable, Equatable {
        case sigV4Header, sigV4Query, sigV2Header, sigV2Query
    }

    /// The access key that signed the request.
    let accessKey: String
    let method: Method
    /// How the body is protected.
    let payload: PayloadMode
    /// The checksum trailer `x-amz-trailer` announced (aws-chunked with trailer only).
    let declaredTrailer: ChecksumAlgorithm?
    /// An `x-amz-checksum-*` header to verify against the body.
    let headerChecksum: DeclaredChecksum?
    /// Signing context for chunk signatures (signed aws-chunked only).
    let chunkSigning: ChunkSigningContext?

    /// Whether the body is aws-chunked (its decoded length is `decodedContentLength`, not Content-Length).
    var isAWSChunked: Bool {
        if case .streaming = payload { return true }
        return false
    }

    /// `x-amz-decoded-content-length` for aws-chunked bodies.
    var decodedContentLength: Int64? {
        if case .streaming(_, _, let length) = payload { return length }
        return nil
    }

    /// A fresh verifier for this request's body: feed it the raw body, store what it emits, and
    /// commit only when its `finish()` succeeds.
    func makePayloadVerifier() -> PayloadVerifier { PayloadVerifier(self) }
}
