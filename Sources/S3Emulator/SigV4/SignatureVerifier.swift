import HearthCore
import HearthCrypto
import HearthHTTP

/// The parts of a request a SigV4 signature covers, with header names lower-cased once.
struct SignedRequestParts: Sendable {
    var method: String
    var rawPath: String
    var rawQuery: String
    /// Header fields in the order received, names lower-cased.
    var headers: [(name: String, value: String)]
    var isTLS: Bool

    init(method: String, rawPath: String, rawQuery: String, headers: [(name: String, value: String)], isTLS: Bool = false) {
        self.method = method
        self.rawPath = rawPath
        self.rawQuery = rawQuery
        self.headers = headers
        self.isTLS = isTLS
    }

    init(_ request: Request) {
        var headers = [(name: String, value: String)]()
        headers.reserveCapacity(request.headers.fields.count)
        var contentLength: String?
        for field in request.headers.fields {
            let name = field.name.lowercased()
            if name == "content-length" {
                // A repeated Content-Length with the same value is one field (RFC 9112 §6.3 lets a
                // recipient replace "a list of identical decimal values" by the value), and S3 signs
                // it so: Go clients that copy a presigner's lower-cased `content-length` into the
                // header map send it twice (rclone's presigned PUTs, its default before 1.59).
                if contentLength == field.value { continue }
                contentLength = field.value
            }
            headers.append((name: name, value: field.value))
        }
        self.init(method: request.method, rawPath: request.rawPath, rawQuery: request.rawQuery, headers: headers, isTLS: request.isTLS)
    }

    /// The first value of header `name` (lower-case).
    func header(_ name: String) -> String? { headers.first(where: { $0.name == name })?.value }
}

/// Verifies SigV4 request signatures and the time and signed-header rules around them.
///
/// Related: "Signature Calculations for the Authorization Header" and "Authenticating Requests: Using
/// Query Parameters" in the S3 API reference.
enum SignatureVerifier {
    /// S3 accepts header-signed requests up to 15 minutes off its clock.
    static let maxSkewMicros: Int64 = 900 * 1_000_000

    /// The hex SHA-256 of an empty body.
    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// `AWS4-HMAC-SHA256\n<amz date>\n<scope>\n<hex sha256(canonical request)>`.
    static func stringToSign(amzDate: String, scope: String, canonicalRequestHash: String) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(17 + amzDate.utf8.count + scope.utf8.count + 66)
        out.append(contentsOf: "AWS4-HMAC-SHA256\n".utf8)
        out.append(contentsOf: amzDate.utf8)
        out.append(0x0A)
        out.append(contentsOf: scope.utf8)
        out.append(0x0A)
        out.append(contentsOf: canonicalRequestHash.utf8)
        return out
    }

    /// One signature computation, kept for S3's SignatureDoesNotMatch details.
    struct Computation {
        let canonicalRequest: CanonicalRequest
        let stringToSign: [UInt8]
        let signature: String
    }

    /// Computes the signature of `parts` as `authorization` describes it.
    static func compute(_ parts: SignedRequestParts, authorization: SigV4Authorization, payloadHash: String,
                        signingKey: [UInt8], options: CanonicalRequest.Options = CanonicalRequest.Options(),
                        method: String? = nil, headers: [(name: String, value: String)]? = nil) -> Computation {
        let canonical = CanonicalRequest(method: method ?? parts.method, rawPath: parts.rawPath, rawQuery: parts.rawQuery,
                                         presigned: authorization.presigned, headers: headers ?? parts.headers,
                                         signedHeaders: authorization.signedHeaders, payloadHash: payloadHash, options: options)
        let sts = stringToSign(amzDate: authorization.amzDate, scope: authorization.credential.scope,
                               canonicalRequestHash: canonical.hashHex)
        return Computation(canonicalRequest: canonical, stringToSign: sts, signature: SigningKey.sign(signingKey, sts))
    }

    /// Whether `provided` is `expected` (lower-case hex), compared in constant time.
    static func matches(expected: String, provided: String) -> Bool {
        ConstantTime.equals(Array(expected.utf8), Array(provided.lowercased().utf8))
    }

    /// Applies S3's clock rules: 15 minutes of skew for header authentication; for presigned URLs,
    /// not dated more than 15 minutes ahead and not past `X-Amz-Date + X-Amz-Expires`.
    /// `unshifted` is the system time while the emulator clock runs with an offset: a request
    /// signed by an SDK on the real clock is in time against either, so moving the emulator clock
    /// (to see lifecycle rules or retention act) does not lock every client out.
    static func checkTime(_ authorization: SigV4Authorization, now: Instant, unshifted: Instant? = nil) throws(SigV4Failure) {
        let t = authorization.requestTime
        guard let expires = authorization.expires else {
            if !isWithinSkew(t, now: now, unshifted: unshifted) {
                throw .requestTimeTooSkewed(requestTime: authorization.rawRequestTime, serverTime: now)
            }
            return
        }
        let expiresAt = Instant(unixMicros: t.unixMicros + expires * 1_000_000)
        if t.unixMicros - now.unixMicros > maxSkewMicros {
            throw .requestNotYetValid(requestDate: t, expiresAt: expiresAt, serverTime: now)
        }
        // X-Amz-Expires=0 is a URL that is already expired (S3 answers 403, not a parameter error).
        if now.unixMicros > expiresAt.unixMicros || expires == 0 {
            throw .requestExpired(expiresSeconds: expires, expiresAt: expiresAt, serverTime: now)
        }
    }

    /// Whether a header-signed request's time is within 15 minutes of `now` (or of `unshifted`).
    static func isWithinSkew(_ t: Instant, now: Instant, unshifted: Instant?) -> Bool {
        for reference in [now, unshifted].compactMap({ $0 }) {
            let skew = t.unixMicros - reference.unixMicros
            if skew <= maxSkewMicros && skew >= -maxSkewMicros { return true }
        }
        return false
    }

    /// Applies S3's signed-header rules: `host` must be signed, and so must every `x-amz-*` header
    /// present (except `x-amz-content-sha256`, which S3 tolerates unsigned).
    static func checkSignedHeaders(_ authorization: SigV4Authorization, parts: SignedRequestParts) throws(SigV4Failure) {
        var missing: [String] = []
        if !authorization.signedHeaders.contains("host") { missing.append("host") }
        for field in parts.headers where field.name.hasPrefix("x-amz-") && field.name != "x-amz-content-sha256" {
            if !authorization.signedHeaders.contains(field.name) && !missing.contains(field.name) { missing.append(field.name) }
        }
        if !missing.isEmpty { throw .headersNotSigned(names: missing) }
    }
}
