import HearthCore

/// What S3 shows about a signature it could not verify (the body of `SignatureDoesNotMatch`).
struct SignatureMismatch: Sendable, Equatable {
    /// The access key the request named.
    var accessKey: String
    /// The string to sign the server computed.
    var stringToSign: String
    /// The signature the request carried.
    var signatureProvided: String
    /// The canonical request the server computed (SigV4 request signatures only; chunk, trailer
    /// and SigV2 signatures have none).
    var canonicalRequest: String?
    /// Hearth's explanation of the likely cause, when it found one.
    var diagnosis: String?
    /// The canonical request and string to sign that reproduce the provided signature, when the
    /// diagnosis found them (what the client signed), as `<DiagnosisCanonicalRequest>` and
    /// `<DiagnosisStringToSign>`.
    var clientCanonicalRequest: String? = nil
    var clientStringToSign: String? = nil
}

/// Every way authenticating an S3 request can fail, each with S3's own code, status, message and
/// extra error elements, plus Hearth's plain-words diagnosis.
///
/// s3store renders one into S3's error document with `xmlElements()` (Code, Message, extras),
/// then appends `<Diagnosis>` and the `x-hearth-diagnosis` header when `diagnosis` is non-nil.
enum SigV4Failure: Error, Sendable, Equatable {
    // MARK: No usable authentication
    /// Neither an Authorization header nor presigned query parameters.
    case anonymous
    /// An Authorization header in a scheme S3 does not know.
    case unsupportedAuthorizationType(header: String)
    /// Both an Authorization header and presigned query parameters.
    case multipleAuthMechanisms(header: String)

    // MARK: Authorization header (SigV4)
    /// Credential, SignedHeaders or Signature is missing.
    case headerMissingComponents
    /// A component is not `Name=value`.
    case headerComponentMalformed(component: String)
    /// The credential is not `AKID/yyyyMMdd/region/service/aws4_request`.
    case headerCredentialMalformed
    /// The credential's access key is empty.
    case headerEmptyAccessKey
    /// The credential's date is not `yyyyMMdd`.
    case headerCredentialDateFormat(date: String)
    /// The credential names another region than the endpoint's.
    case headerWrongRegion(given: String, expected: String)
    /// The credential names another service than `s3`.
    case headerWrongService(given: String)
    /// The credential does not end in `aws4_request`.
    case headerWrongTerminal(given: String)
    /// The credential's date is not X-Amz-Date's day.
    case headerCredentialDateMismatch(credentialDate: String, requestDate: String)
    /// No parseable `x-amz-date` or `Date` header.
    case missingDate

    // MARK: Presigned query (SigV4)
    /// One of the six required `X-Amz-*` parameters is missing.
    case queryMissingParameters
    /// `X-Amz-Algorithm` is not `AWS4-HMAC-SHA256`.
    case queryUnsupportedAlgorithm(given: String)
    /// `X-Amz-Date` is not `yyyyMMdd'T'HHmmss'Z'`.
    case queryDateFormat(given: String)
    /// `X-Amz-Expires` is not an integer.
    case queryExpiresNotNumber(given: String)
    /// `X-Amz-Expires` is negative.
    case queryExpiresNegative
    /// `X-Amz-Expires` is more than a week.
    case queryExpiresTooLarge(given: Int64)
    /// `X-Amz-Credential` is not `AKID/yyyyMMdd/region/service/aws4_request`.
    case queryCredentialMalformed
    /// `X-Amz-Credential`'s access key is empty.
    case queryEmptyAccessKey
    /// `X-Amz-Credential`'s date is not `yyyyMMdd`.
    case queryCredentialDateFormat(date: String)
    /// `X-Amz-Credential` names another region than the endpoint's.
    case queryWrongRegion(given: String, expected: String)
    /// `X-Amz-Credential` names another service than `s3`.
    case queryWrongService(given: String)
    /// `X-Amz-Credential` does not end in `aws4_request`.
    case queryWrongTerminal(given: String)
    /// `X-Amz-Credential`'s date is not X-Amz-Date's day.
    case queryCredentialDateMismatch(credentialDate: String, requestDate: String)

    // MARK: Keys and permissions
    /// The access key is not configured.
    case invalidAccessKeyId(accessKey: String)
    /// The access key may not use this bucket.
    case bucketAccessDenied(accessKey: String, bucket: String)

    // MARK: Time
    /// Header authentication dated more than 15 minutes from the server's clock.
    case requestTimeTooSkewed(requestTime: String, serverTime: Instant)
    /// A presigned URL past `X-Amz-Date + X-Amz-Expires`.
    case requestExpired(expiresSeconds: Int64, expiresAt: Instant, serverTime: Instant)
    /// A presigned URL dated more than 15 minutes in the future.
    case requestNotYetValid(requestDate: Instant, expiresAt: Instant, serverTime: Instant)

    // MARK: Headers
    /// Header authentication without `x-amz-content-sha256`.
    case missingContentSHA256
    /// `x-amz-content-sha256` is neither a known mode nor a SHA-256 hex digest.
    case invalidContentSHA256(value: String)
    /// `host` or `x-amz-*` headers present but not signed.
    case headersNotSigned(names: [String])

    // MARK: Signatures
    /// The SigV4 request signature differs.
    case signatureDoesNotMatch(SignatureMismatch)
    /// An aws-chunked chunk signature differs.
    case chunkSignatureDoesNotMatch(SignatureMismatch)
    /// The aws-chunked trailer signature differs or is missing.
    case trailerSignatureDoesNotMatch(SignatureMismatch)

    // MARK: Payload
    /// The body's SHA-256 differs from the signed `x-amz-content-sha256`.
    case contentSHA256Mismatch(clientComputed: String, computed: String)
    /// An aws-chunked upload without `x-amz-decoded-content-length`.
    case missingDecodedContentLength
    /// `x-amz-decoded-content-length` is not a non-negative integer.
    case invalidDecodedContentLength(value: String)
    /// The decoded aws-chunked body is not as long as declared.
    case decodedLengthMismatch(declared: Int64, received: Int64)
    /// aws-chunked framing that cannot be parsed.
    case malformedChunkedEncoding(detail: String)
    /// The body ended inside a chunk or before the final chunk.
    case incompleteBody
    /// More than one `x-amz-checksum-*` header.
    case multipleChecksums
    /// An `x-amz-checksum-*` header whose value is not a checksum of its algorithm.
    case invalidChecksumHeader(name: String)
    /// An `x-amz-checksum-*` trailer whose value is not a checksum of its algorithm.
    case invalidChecksumTrailer(name: String)
    /// A checksum (header or trailer) that differs from the body's.
    case checksumMismatch(algorithm: ChecksumAlgorithm, declared: String, computed: String)
    /// `x-amz-trailer` names something other than a checksum S3 knows.
    case unsupportedTrailer(name: String)
    /// Trailer lines that cannot be parsed, or an undeclared trailer.
    case malformedTrailer(detail: String)
    /// The trailer `x-amz-trailer` declared did not arrive.
    case missingTrailer(name: String)

    // MARK: SigV2
    /// SigV2 while only SigV4 is accepted (the default, as for S3 buckets created since 2020).
    case sigV2NotSupported(presigned: Bool)
    /// `Authorization: AWS` without `AKID:signature`.
    case sigV2HeaderMalformed(header: String)
    /// Presigned SigV2 without all of AWSAccessKeyId, Signature and Expires.
    case sigV2MissingQueryParameters
    /// Presigned SigV2 `Expires` that is not seconds since the epoch.
    case sigV2InvalidExpires(given: String)
    /// Presigned SigV2 past its `Expires`.
    case sigV2Expired(expiresAt: Instant, serverTime: Instant)
    /// The SigV2 signature differs.
    case sigV2SignatureDoesNotMatch(SignatureMismatch)

    // MARK: Wire form

    /// S3's error code.
    var code: String {
        switch self {
        case .anonymous, .bucketAccessDenied, .requestExpired, .requestNotYetValid, .headersNotSigned,
             .missingDate, .sigV2MissingQueryParameters, .sigV2InvalidExpires, .sigV2Expired:
            "AccessDenied"
        case .unsupportedAuthorizationType, .multipleAuthMechanisms, .invalidContentSHA256, .sigV2HeaderMalformed,
             .invalidDecodedContentLength:
            "InvalidArgument"
        case .headerMissingComponents, .headerComponentMalformed, .headerCredentialMalformed, .headerEmptyAccessKey,
             .headerCredentialDateFormat, .headerWrongRegion, .headerWrongService, .headerWrongTerminal,
             .headerCredentialDateMismatch:
            "AuthorizationHeaderMalformed"
        case .queryMissingParameters, .queryUnsupportedAlgorithm, .queryDateFormat, .queryExpiresNotNumber,
             .queryExpiresNegative, .queryExpiresTooLarge, .queryCredentialMalformed, .queryEmptyAccessKey,
             .queryCredentialDateFormat, .queryWrongRegion, .queryWrongService, .queryWrongTerminal,
             .queryCredentialDateMismatch:
            "AuthorizationQueryParametersError"
        case .invalidAccessKeyId: "InvalidAccessKeyId"
        case .requestTimeTooSkewed: "RequestTimeTooSkewed"
        case .missingContentSHA256, .sigV2NotSupported, .multipleChecksums, .invalidChecksumHeader,
             .invalidChecksumTrailer, .unsupportedTrailer, .malformedChunkedEncoding:
            "InvalidRequest"
        case .signatureDoesNotMatch, .chunkSignatureDoesNotMatch, .trailerSignatureDoesNotMatch,
             .sigV2SignatureDoesNotMatch:
            "SignatureDoesNotMatch"
        case .contentSHA256Mismatch: "XAmzContentSHA256Mismatch"
        case .missingDecodedContentLength: "MissingContentLength"
        case .decodedLengthMismatch, .incompleteBody: "IncompleteBody"
        case .checksumMismatch: "BadDigest"
        case .malformedTrailer, .missingTrailer: "MalformedTrailerError"
        }
    }

    /// The HTTP status S3 answers with.
    var httpStatus: Int {
        switch code {
        case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "RequestTimeTooSkewed": 403
        case "MissingContentLength": 411
        default: 400
        }
    }

    private static let credentialShape = "\"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\""
    private static let mismatchMessage = "The request signature we calculated does not match the signature you provided. Check your key and signing method."

    /// S3's message.
    var message: String {
        switch self {
        case .anonymous, .bucketAccessDenied: "Access Denied"
        case .unsupportedAuthorizationType: "Unsupported Authorization Type"
        case .multipleAuthMechanisms:
            "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified"
        case .headerMissingComponents:
            "The authorization header is malformed; the authorization header requires three components: Credential, SignedHeaders, and Signature."
        case .headerComponentMalformed(let component):
            "The authorization header is malformed; the authorization component \"\(component)\" is malformed."
        case .headerCredentialMalformed:
            "The authorization header is malformed; the Credential is mal-formed; expecting \(Self.credentialShape)."
        case .headerEmptyAccessKey:
            "The authorization header is malformed; a non-empty Access Key (AKID) must be provided in the credential."
        case .headerCredentialDateFormat(let date):
            "The authorization header is malformed; incorrect date format \"\(date)\". This date in the credential must be in the format \"yyyyMMdd\"."
        case .headerWrongRegion(let given, let expected):
            "The authorization header is malformed; the region '\(given)' is wrong; expecting '\(expected)'"
        case .headerWrongService(let given):
            "The authorization header is malformed; incorrect service \"\(given)\". This endpoint belongs to \"s3\"."
        case .headerWrongTerminal(let given):
            "The authorization header is malformed; incorrect terminal \"\(given)\". This endpoint uses \"aws4_request\"."
        case .headerCredentialDateMismatch:
            "The authorization header is malformed; Invalid credential date. Date is not the same as X-Amz-Date."
        case .missingDate: "AWS authentication requires a valid Date or x-amz-date header"
        case .queryMissingParameters:
            "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters."
        case .queryUnsupportedAlgorithm: "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\""
        case .queryDateFormat: "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\""
        case .queryExpiresNotNumber: "X-Amz-Expires should be a number"
        case .queryExpiresNegative: "X-Amz-Expires must be non-negative"
        case .queryExpiresTooLarge: "X-Amz-Expires must be less than a week (in seconds) that is; 604800"
        case .queryCredentialMalformed:
            "Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; expecting \(Self.credentialShape)."
        case .queryEmptyAccessKey:
            "Error parsing the X-Amz-Credential parameter; a non-empty Access Key (AKID) must be provided in the credential."
        case .queryCredentialDateFormat(let date):
            "Error parsing the X-Amz-Credential parameter; incorrect date format \"\(date)\". This date in the credential must be in the format \"yyyyMMdd\"."
        case .queryWrongRegion(let given, let expected):
            "Error parsing the X-Amz-Credential parameter; the region '\(given)' is wrong; expecting '\(expected)'"
        case .queryWrongService(let given):
            "Error parsing the X-Amz-Credential parameter; incorrect service \"\(given)\". This endpoint belongs to \"s3\"."
        case .queryWrongTerminal(let given):
            "Error parsing the X-Amz-Credential parameter; incorrect terminal \"\(given)\". This endpoint uses \"aws4_request\"."
        case .queryCredentialDateMismatch(let credentialDate, let requestDate):
            "Invalid credential date \"\(credentialDate)\". This date is not the same as X-Amz-Date: \"\(requestDate)\"."
        case .invalidAccessKeyId: "The AWS Access Key Id you provided does not exist in our records."
        case .requestTimeTooSkewed: "The difference between the request time and the current time is too large."
        case .requestExpired, .sigV2Expired: "Request has expired"
        case .requestNotYetValid: "Request is not yet valid"
        case .missingContentSHA256: "Missing required header for this request: x-amz-content-sha256"
        case .invalidContentSHA256:
            "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER or a valid sha256 value."
        case .headersNotSigned: "There were headers present in the request which were not signed"
        case .signatureDoesNotMatch, .chunkSignatureDoesNotMatch, .trailerSignatureDoesNotMatch, .sigV2SignatureDoesNotMatch:
            Self.mismatchMessage
        case .contentSHA256Mismatch: "The provided 'x-amz-content-sha256' header does not match what was computed."
        case .missingDecodedContentLength: "You must provide the Content-Length HTTP header."
        case .invalidDecodedContentLength: "Invalid x-amz-decoded-content-length header value."
        case .decodedLengthMismatch: "You did not provide the number of bytes specified by the Content-Length HTTP header."
        case .malformedChunkedEncoding: "Invalid chunked upload: the aws-chunked body is malformed."
        case .incompleteBody: "The request body terminated unexpectedly"
        case .multipleChecksums: "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."
        case .invalidChecksumHeader(let name): "Value for \(name) header is invalid."
        case .invalidChecksumTrailer(let name): "Value for \(name) trailing header is invalid."
        case .checksumMismatch(let algorithm, _, _): "The \(algorithm.displayName) you specified did not match the calculated checksum."
        case .unsupportedTrailer: "The value specified in the x-amz-trailer header is not supported"
        case .malformedTrailer, .missingTrailer:
            "The request contained trailing data that was not well-formed or did not conform to our published schema."
        case .sigV2NotSupported:
            "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."
        case .sigV2HeaderMalformed: "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature"
        case .sigV2MissingQueryParameters:
            "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters"
        case .sigV2InvalidExpires(let given): "Invalid date (should be seconds since epoch): \(given)"
        }
    }

    /// The extra elements S3 puts after Message, in S3's order.
    var xmlFields: [(String, String)] {
        switch self {
        case .unsupportedAuthorizationType(let header), .multipleAuthMechanisms(let header), .sigV2HeaderMalformed(let header):
            return [("ArgumentName", "Authorization"), ("ArgumentValue", header)]
        case .invalidContentSHA256(let value):
            return [("ArgumentName", "x-amz-content-sha256"), ("ArgumentValue", value)]
        case .invalidDecodedContentLength(let value):
            return [("ArgumentName", "x-amz-decoded-content-length"), ("ArgumentValue", value)]
        case .headerWrongRegion(_, let expected), .queryWrongRegion(_, let expected):
            return [("Region", expected)]
        case .invalidAccessKeyId(let key):
            return [("AWSAccessKeyId", key)]
        case .requestTimeTooSkewed(let requestTime, let serverTime):
            return [("RequestTime", requestTime), ("ServerTime", SigV4Time.iso8601(serverTime)),
                    ("MaxAllowedSkewMilliseconds", "900000")]
        case .requestExpired(let seconds, let expiresAt, let serverTime):
            return [("X-Amz-Expires", String(seconds)), ("Expires", SigV4Time.iso8601(expiresAt)),
                    ("ServerTime", SigV4Time.iso8601(serverTime))]
        case .requestNotYetValid(let requestDate, let expiresAt, let serverTime):
            // S3 prints this X-Amz-Date as epoch milliseconds, unlike every other date it shows.
            return [("X-Amz-Date", String(requestDate.unixSeconds * 1000)), ("Expires", SigV4Time.iso8601(expiresAt)),
                    ("ServerTime", SigV4Time.iso8601(serverTime))]
        case .sigV2Expired(let expiresAt, let serverTime):
            return [("Expires", SigV4Time.iso8601(expiresAt)), ("ServerTime", SigV4Time.iso8601(serverTime))]
        case .headersNotSigned(let names):
            return [("HeadersNotSigned", names.joined(separator: ", "))]
        case .signatureDoesNotMatch(let m), .chunkSignatureDoesNotMatch(let m), .trailerSignatureDoesNotMatch(let m),
             .sigV2SignatureDoesNotMatch(let m):
            var fields: [(String, String)] = [
                ("AWSAccessKeyId", m.accessKey), ("StringToSign", m.stringToSign), ("SignatureProvided", m.signatureProvided),
                ("StringToSignBytes", SigV4Encoding.spacedHex(m.stringToSign)),
            ]
            if let canonical = m.canonicalRequest {
                fields.append(("CanonicalRequest", canonical))
                fields.append(("CanonicalRequestBytes", SigV4Encoding.spacedHex(canonical)))
            }
            // Hearth's additions (as `<Diagnosis>`): what the client signed, when the diagnosis reproduced it.
            if let c = m.clientCanonicalRequest { fields.append(("DiagnosisCanonicalRequest", c)) }
            if let s = m.clientStringToSign { fields.append(("DiagnosisStringToSign", s)) }
            return fields
        case .contentSHA256Mismatch(let client, let computed):
            return [("ClientComputedContentSHA256", client), ("S3ComputedContentSHA256", computed)]
        case .decodedLengthMismatch(let declared, let received):
            return [("NumberBytesExpected", String(declared)), ("NumberBytesProvided", String(received))]
        default:
            return []
        }
    }

    /// Headers S3 adds to this error response.
    var responseHeaders: [(String, String)] {
        switch self {
        case .headerWrongRegion(_, let expected), .queryWrongRegion(_, let expected): [("x-amz-bucket-region", expected)]
        default: []
        }
    }

    /// Code, Message and the extra elements, in S3's order (RequestId and HostId are the renderer's).
    func xmlElements() -> [(String, String)] { [("Code", code), ("Message", message)] + xmlFields }

    /// The diagnosis on one line of printable ASCII, fit for the `x-hearth-diagnosis` header.
    var diagnosisHeaderValue: String? {
        guard let diagnosis else { return nil }
        var out = ""
        out.reserveCapacity(diagnosis.utf8.count)
        for scalar in diagnosis.unicodeScalars {
            out.unicodeScalars.append(scalar.value >= 0x20 && scalar.value < 0x7F ? scalar : " ")
        }
        return out
    }

    /// Hearth's explanation in plain words (an extra `<Diagnosis>` element and `x-hearth-diagnosis`).
    var diagnosis: String? {
        switch self {
        case .anonymous:
            "The request has no Authorization header and no presigned query parameters; S3 denies anonymous requests. Give the client credentials (e.g. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)."
        case .unsupportedAuthorizationType(let header):
            "The Authorization header starts with '\(header.split(separator: " ").first.map(String.init) ?? "")'; S3 accepts only 'AWS4-HMAC-SHA256' (and legacy 'AWS')."
        case .multipleAuthMechanisms:
            "The request carries an Authorization header and presigned query parameters at once; send a presigned URL without an Authorization header (check for a client or proxy adding credentials)."
        case .headerWrongRegion(let given, let expected), .queryWrongRegion(let given, let expected):
            "The client signed for region '\(given)' but this endpoint is '\(expected)'. Configure the client with region '\(expected)' (AWS_REGION=\(expected), boto3 region_name='\(expected)')."
        case .headerWrongService(let given), .queryWrongService(let given):
            "The credential scope names service '\(given)'; S3 requests must be signed for service 's3'."
        case .headerCredentialDateMismatch(let credentialDate, let requestDate), .queryCredentialDateMismatch(let credentialDate, let requestDate):
            "The credential scope date \(credentialDate) is not the day of the request timestamp \(requestDate); derive both from the same UTC time (a local-time date is a common cause)."
        case .missingDate:
            "Header authentication needs an x-amz-date (yyyyMMdd'T'HHmmss'Z') or Date header."
        case .invalidAccessKeyId(let key):
            "Access key '\(key)' is not configured in Hearth. Use the pair shown by `hearth start` (or add this key to the S3 credentials)."
        case .bucketAccessDenied(let key, let bucket):
            "Access key '\(key)' is limited to other buckets and may not use bucket '\(bucket)'."
        case .requestTimeTooSkewed(let requestTime, let serverTime):
            "The request was signed at \(requestTime) but the emulator clock reads \(SigV4Time.iso8601(serverTime)); more than 15 minutes apart. Check the client's clock, or the emulator clock (PUT /emulator/v1/clock)."
        case .requestExpired(_, let expiresAt, let serverTime):
            "The presigned URL expired at \(SigV4Time.iso8601(expiresAt)); the emulator clock reads \(SigV4Time.iso8601(serverTime)). Mint a new URL (or check whether the emulator clock was advanced)."
        case .requestNotYetValid(let requestDate, _, let serverTime):
            "The presigned URL is dated \(SigV4Time.iso8601(requestDate)), more than 15 minutes after the emulator clock (\(SigV4Time.iso8601(serverTime))). The signing machine's clock runs ahead."
        case .queryExpiresTooLarge(let given):
            "X-Amz-Expires is \(given) seconds; SigV4 presigned URLs live at most 604800 seconds (7 days)."
        case .missingContentSHA256:
            "SigV4 header authentication for S3 must send x-amz-content-sha256 (the body's hex SHA-256, UNSIGNED-PAYLOAD or a STREAMING-* mode). A generic SigV4 signer that omits it is not S3-aware."
        case .headersNotSigned(let names):
            names.contains("host")
                ? "The Host header must be signed (X-Amz-SignedHeaders/SignedHeaders must include 'host')."
                : "These headers were added after signing: \(names.joined(separator: ", ")). Sign them, or do not send them with this signature."
        case .signatureDoesNotMatch(let m), .chunkSignatureDoesNotMatch(let m), .trailerSignatureDoesNotMatch(let m),
             .sigV2SignatureDoesNotMatch(let m):
            m.diagnosis
        case .contentSHA256Mismatch:
            "The body's SHA-256 differs from the x-amz-content-sha256 the client signed: the body changed after signing, or was sent with a different encoding."
        case .checksumMismatch(let algorithm, let declared, let computed):
            "The body's \(algorithm.displayName) is \(computed) but the request declared \(declared): the body was changed or truncated in transit."
        case .decodedLengthMismatch(let declared, let received):
            "x-amz-decoded-content-length declared \(declared) bytes but the aws-chunked body decoded to \(received)."
        case .sigV2NotSupported(let presigned):
            (presigned ? "This presigned URL was signed with Signature Version 2 (AWSAccessKeyId/Signature/Expires). " : "The request was signed with Signature Version 2 (Authorization: AWS key:signature). ")
                + "S3 accepts only SigV4 for buckets created since 2020, and so does Hearth by default. Switch the client to SigV4: boto3 `Config(signature_version='s3v4')` (boto3 presigns SigV2 URLs for us-east-1 unless told), AWS CLI/SDK config `s3 = signature_version = s3v4`, or start Hearth with --s3-allow-sigv2 to validate SigV2 as legacy buckets do."
        case .sigV2Expired(let expiresAt, let serverTime):
            "The SigV2 presigned URL expired at \(SigV4Time.iso8601(expiresAt)); the emulator clock reads \(SigV4Time.iso8601(serverTime))."
        default:
            nil
        }
    }
}
