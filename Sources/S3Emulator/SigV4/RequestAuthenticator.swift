import HearthCore
import HearthHTTP

/// Authenticates S3 requests exactly as S3 does: SigV4 in the Authorization header or a presigned
/// query, SigV2 refused (or validated with `allowSigV2`), anonymous requests denied.
///
/// s3store calls `authenticate` when a request's headers have arrived, before reading the body,
/// then pipes the body through `AuthenticatedRequest.makePayloadVerifier()`.
struct RequestAuthenticator: Sendable {
    let credentials: S3Credentials
    /// The endpoint's region: credential scopes must name it.
    let region: String
    let clock: Clock
    /// Validate SigV2 instead of refusing it.
    let allowSigV2: Bool
    let presignLedger: PresignLedger
    let signingKeys: SigningKeyCache
    /// Successful SigV4 verifications, reused for byte-identical requests (see its type).
    let verified: VerifiedSignatureCache

    init(credentials: S3Credentials, region: String, clock: Clock, allowSigV2: Bool = false,
         presignLedger: PresignLedger = PresignLedger(), signingKeys: SigningKeyCache = SigningKeyCache(),
         verified: VerifiedSignatureCache = VerifiedSignatureCache()) {
        self.credentials = credentials
        self.region = region
        self.clock = clock
        self.allowSigV2 = allowSigV2
        self.presignLedger = presignLedger
        self.signingKeys = signingKeys
        self.verified = verified
    }

    /// A presigner sharing this authenticator's credentials, region, clock, ledger and key cache.
    var presigner: Presigner {
        Presigner(credentials: credentials, region: region, clock: clock, ledger: presignLedger, signingKeys: signingKeys)
    }

    private var diagnosis: SignatureDiagnosis {
        SignatureDiagnosis(credentials: credentials, ledger: presignLedger, signingKeys: signingKeys)
    }

    /// Authenticates `request`.
    /// - Parameters:
    ///   - bucket: the bucket s3store resolved (from the path or the host), nil for ListBuckets.
    ///   - virtualHosted: whether the bucket came from the Host header (only SigV2 signs it
    ///     differently); detected from the Host header when nil.
    func authenticate(_ request: Request, bucket: String?, virtualHosted: Bool? = nil) -> Result<AuthenticatedRequest, SigV4Failure> {
        do throws(SigV4Failure) {
            return .success(try authenticateOrThrow(request, bucket: bucket, virtualHosted: virtualHosted))
        } catch {
            return .failure(error)
        }
    }

    private func authenticateOrThrow(_ request: Request, bucket: String?, virtualHosted: Bool?) throws(SigV4Failure) -> AuthenticatedRequest {
        if let repeated = reverified(request, bucket: bucket) { return repeated }
        let parts = SignedRequestParts(request)
        let query = QueryParameters(rawQuery: request.rawQuery)
        switch try AuthorizationParser.scheme(authorization: parts.header("authorization"), query: query) {
        case .anonymous:
            throw .anonymous
        case .sigV4Header(let value):
            let authorization = try AuthorizationParser.parseHeader(value, headers: parts.headers, expectedRegion: region)
            return try verifySigV4(authorization, request, parts: parts, query: query, bucket: bucket)
        case .sigV4Query:
            let authorization = try AuthorizationParser.parseQuery(query, expectedRegion: region)
            return try verifySigV4(authorization, request, parts: parts, query: query, bucket: bucket)
        case .sigV2Header(let value):
            guard allowSigV2 else { throw .sigV2NotSupported(presigned: false) }
            let authorization = try AuthorizationParser.parseSigV2Header(value)
            return try verifySigV2(authorization, parts: parts, query: query, bucket: bucket, virtualHosted: virtualHosted)
        case .sigV2Query:
            guard allowSigV2 else { throw .sigV2NotSupported(presigned: true) }
            let authorization = try AuthorizationParser.parseSigV2Query(query)
            return try verifySigV2(authorization, parts: parts, query: query, bucket: bucket, virtualHosted: virtualHosted)
        }
    }

    // MARK: SigV4

    /// The remembered result of an earlier verification of this very request, when what can have
    /// changed since still holds: the clock rules at the current time (through the same
    /// `checkTime`), the key's secret, the key's access to `bucket`. nil sends the request through
    /// the full verifier (which gives the exact error when one of these fails now).
    private func reverified(_ request: Request, bucket: String?) -> AuthenticatedRequest? {
        guard let entry = verified.lookup(request, authorization: request.headers["Authorization"]) else { return nil }
        // One lookup of the key for both its secret and its buckets.
        guard let key = credentials.key(entry.result.accessKey), ExactText.sameBytes(key.secret, entry.secret),
              key.allows(bucket: bucket) else { return nil }
        do throws(SigV4Failure) {
            try SignatureVerifier.checkTime(entry.authorization, now: clock.now(), unshifted: unshiftedNow())
        } catch {
            return nil
        }
        request.queryItems = entry.queryItems
        return entry.result
    }

    private func verifySigV4(_ authorization: SigV4Authorization, _ request: Request, parts: SignedRequestParts, query: QueryParameters, bucket: String?) throws(SigV4Failure) -> AuthenticatedRequest {
        let scope = authorization.credential
        guard let secret = credentials.secret(for: scope.accessKey) else { throw .invalidAccessKeyId(accessKey: scope.accessKey) }

        // The payload hash line: the header for header authentication (required); for presigned
        // URLs an X-Amz-Content-Sha256 parameter or header, else UNSIGNED-PAYLOAD.
        let payloadHash: String
        if authorization.presigned {
            payloadHash = query.first("X-Amz-Content-Sha256")
                ?? parts.header("x-amz-content-sha256") ?? "UNSIGNED-PAYLOAD"
        } else {
            guard let header = parts.header("x-amz-content-sha256") else { throw .missingContentSHA256 }
            payloadHash = header
        }
        let payload = try payloadMode(payloadHash, parts: parts)

        try SignatureVerifier.checkTime(authorization, now: clock.now(), unshifted: unshiftedNow())
        try SignatureVerifier.checkSignedHeaders(authorization, parts: parts)

        // Some presigners (the v2 JavaScript SDK) put a signed header's value in the query
        // instead of asking the caller to send it; S3 reads it from there.
        let received = parts
        var parts = parts
        if authorization.presigned {
            for name in authorization.signedHeaders where name != "host" && parts.header(name) == nil {
                if let item = query.items.first(where: { $0.name.lowercased() == name }) { parts.headers.append((name, item.value)) }
            }
        }

        let key = signingKeys.key(secret: secret, date: scope.date, region: scope.region, service: scope.service)
        let computed = SignatureVerifier.compute(parts, authorization: authorization, payloadHash: payloadHash, signingKey: key)
        guard SignatureVerifier.matches(expected: computed.signature, provided: authorization.signature) else {
            let found = diagnosis.diagnoseWithEvidence(parts, authorization: authorization, payloadHash: payloadHash, secret: secret)
            throw .signatureDoesNotMatch(SignatureMismatch(
                accessKey: scope.accessKey, stringToSign: String(decoding: computed.stringToSign, as: UTF8.self),
                signatureProvided: authorization.signature, canonicalRequest: computed.canonicalRequest.text,
                diagnosis: found.message, clientCanonicalRequest: found.signed?.canonicalRequest.text,
                clientStringToSign: found.signed.map { String(decoding: $0.stringToSign, as: UTF8.self) }))
        }
        guard credentials.allows(accessKey: scope.accessKey, bucket: bucket) else {
            throw .bucketAccessDenied(accessKey: scope.accessKey, bucket: bucket ?? "")
        }

        var chunkSigning: ChunkSigningContext?
        if case .streaming(true, _, _) = payload {
            chunkSigning = ChunkSigningContext(accessKey: scope.accessKey, signingKey: key, amzDate: authorization.amzDate,
                                               scope: scope.scope, seedSignature: computed.signature)
        }
        let result = AuthenticatedRequest(
            accessKey: scope.accessKey, method: authorization.presigned ? .sigV4Query : .sigV4Header, payload: payload,
            declaredTrailer: try declaredTrailer(payload, parts: parts), headerChecksum: try headerChecksum(parts, query: query),
            chunkSigning: chunkSigning)
        verified.store(received, authorization: authorization, secret: secret, result: result, queryItems: request.queryItems)
        return result
    }

    /// The payload mode `x-amz-content-sha256` names.
    private func payloadMode(_ value: String, parts: SignedRequestParts) throws(SigV4Failure) -> PayloadMode {
        func decodedLength() throws(SigV4Failure) -> Int64 {
            guard let text = parts.header("x-amz-decoded-content-length") else { throw .missingDecodedContentLength }
            guard let length = Int64(text.sigV4TrimmingSpaces), length >= 0 else { throw .invalidDecodedContentLength(value: text) }
            return length
        }
        switch value {
        case "UNSIGNED-PAYLOAD": return .unsigned
        case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD": return .streaming(signed: true, trailer: false, decodedLength: try decodedLength())
        case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER": return .streaming(signed: true, trailer: true, decodedLength: try decodedLength())
        case "STREAMING-UNSIGNED-PAYLOAD-TRAILER": return .streaming(signed: false, trailer: true, decodedLength: try decodedLength())
        default:
            let lower = value.lowercased()
            guard lower.utf8.count == 64, lower.utf8.allSatisfy({ SigV4Encoding.hexValue($0) != nil }) else {
                throw .invalidContentSHA256(value: value)
            }
            return .sha256(lower)
        }
    }

    /// The checksum `x-amz-trailer` announces, for bodies with a trailer.
    private func declaredTrailer(_ payload: PayloadMode, parts: SignedRequestParts) throws(SigV4Failure) -> ChecksumAlgorithm? {
        guard case .streaming(_, true, _) = payload, let name = parts.header("x-amz-trailer")?.sigV4TrimmingSpaces, !name.isEmpty else {
            return nil
        }
        guard let algorithm = ChecksumAlgorithm(headerName: String(name)) else { throw .unsupportedTrailer(name: String(name)) }
        return algorithm
    }

    /// The `x-amz-checksum-<algorithm>` header to verify against the body. CompleteMultipartUpload's
    /// checksum describes the object, not its XML body, so it is left to s3store.
    private func headerChecksum(_ parts: SignedRequestParts, query: QueryParameters) throws(SigV4Failure) -> DeclaredChecksum? {
        if parts.method == "POST" && query.contains("uploadId") { return nil }
        var found: DeclaredChecksum?
        for field in parts.headers {
            guard let algorithm = ChecksumAlgorithm(headerName: field.name) else { continue }
            if let found, found.algorithm != algorithm { throw .multipleChecksums }
            let value = String(field.value.sigV4TrimmingSpaces)
            guard algorithm.isWellFormed(value) else { throw .invalidChecksumHeader(name: algorithm.headerName) }
            found = DeclaredChecksum(algorithm: algorithm, value: value)
        }
        return found
    }

    /// The system time while the emulator clock runs shifted by an offset (nil otherwise).
    private func unshiftedNow() -> Instant? {
        guard case .system(let offset) = clock.mode, offset != 0 else { return nil }
        return Instant(unixMicros: clock.now().unixMicros - offset)
    }

    // MARK: SigV2

    private func verifySigV2(_ authorization: SigV2Authorization, parts: SignedRequestParts, query: QueryParameters,
                             bucket: String?, virtualHosted: Bool?) throws(SigV4Failure) -> AuthenticatedRequest {
        let now = clock.now()
        if let expiresText = authorization.expires {
            guard let seconds = Int64(expiresText) else { throw .sigV2InvalidExpires(given: expiresText) }
            guard let secret = credentials.secret(for: authorization.accessKey) else {
                throw .invalidAccessKeyId(accessKey: authorization.accessKey)
            }
            // Clamped: any 64-bit number is a valid Expires, far past what microseconds can hold.
            let expiresAt = Instant(clampingUnixSeconds: seconds)
            if now.unixMicros > expiresAt.unixMicros { throw .sigV2Expired(expiresAt: expiresAt, serverTime: now) }
            return try checkSigV2(authorization, secret: secret, parts: parts, query: query, bucket: bucket, virtualHosted: virtualHosted)
        }
        // Header form: the Date (or x-amz-date) must be within 15 minutes.
        let raw = parts.header("x-amz-date") ?? parts.header("date")
        // A date before 1970 is no valid date to S3 (refused as missing, not as skewed).
        guard let raw, let time = SigV4Time.parseHTTPDate(raw) ?? SigV4Time.parseAmzDate(raw), time.unixSeconds >= 0 else {
            throw .missingDate
        }
        if !SignatureVerifier.isWithinSkew(time, now: now, unshifted: unshiftedNow()) {
            throw .requestTimeTooSkewed(requestTime: raw, serverTime: now)
        }
        guard let secret = credentials.secret(for: authorization.accessKey) else {
            throw .invalidAccessKeyId(accessKey: authorization.accessKey)
        }
        return try checkSigV2(authorization, secret: secret, parts: parts, query: query, bucket: bucket, virtualHosted: virtualHosted)
    }

    private func checkSigV2(_ authorization: SigV2Authorization, secret: String, parts: SignedRequestParts, query: QueryParameters,
                            bucket: String?, virtualHosted: Bool?) throws(SigV4Failure) -> AuthenticatedRequest {
        let hosted = virtualHosted ?? Self.isVirtualHosted(host: parts.header("host"), bucket: bucket)
        let resourceBucket = hosted ? bucket : nil
        let stringToSign = SigV2.stringToSign(method: parts.method, rawPath: parts.rawPath, query: query, headers: parts.headers,
                                              resourceBucket: resourceBucket, expires: authorization.expires)
        let expected = SigV2.signature(secret: secret, stringToSign: stringToSign)
        guard SigV2.matches(expected: expected, provided: authorization.signature) else {
            throw .sigV2SignatureDoesNotMatch(SignatureMismatch(
                accessKey: authorization.accessKey, stringToSign: stringToSign, signatureProvided: authorization.signature,
                canonicalRequest: nil,
                diagnosis: diagnosis.diagnoseSigV2(parts, authorization: authorization, query: query,
                                                   resourceBucket: resourceBucket, secret: secret)))
        }
        guard credentials.allows(accessKey: authorization.accessKey, bucket: bucket) else {
            throw .bucketAccessDenied(accessKey: authorization.accessKey, bucket: bucket ?? "")
        }
        return AuthenticatedRequest(accessKey: authorization.accessKey, method: authorization.presigned ? .sigV2Query : .sigV2Header,
                                    payload: .unsigned, declaredTrailer: nil, headerChecksum: try headerChecksum(parts, query: query),
                                    chunkSigning: nil)
    }

    /// Whether the bucket is addressed by host name (`bucket.s3.localhost:9000`), never for IP hosts.
    static func isVirtualHosted(host: String?, bucket: String?) -> Bool {
        guard let bucket, var host = host?.lowercased() else { return false }
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") { host = String(host[..<colon]) }
        if host.hasPrefix("[") || host.allSatisfy({ $0.isNumber || $0 == "." }) { return false }
        return host.hasPrefix(bucket.lowercased() + ".")
    }
}
