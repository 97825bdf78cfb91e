import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

/// Every failure mode through the entry point, with S3's exact code, status, message and fields.
@Suite struct RequestAuthenticatorTests {
    static let now = SigV4Fixtures.instant("20261130T060000Z")
    static let credentials = S3Credentials([
        .init(accessKey: "test", secret: "test"),
        .init(accessKey: "limited", secret: "limited-secret", allowedBuckets: ["allowed-bkt"]),
    ])
    static let signer = RequestSigner(accessKey: "test", secret: "test", region: "us-east-1")

    static func authenticator(allowSigV2: Bool = false, ledger: PresignLedger = PresignLedger()) -> RequestAuthenticator {
        RequestAuthenticator(credentials: credentials, region: "us-east-1", clock: Clock(frozenAt: now), allowSigV2: allowSigV2, presignLedger: ledger)
    }

    static func signed(_ method: String = "GET", _ target: String = "/bkt/key.txt", headers: HTTPHeaders = ["Host": "127.0.0.1:9000"],
                       body: [UInt8] = [], date: Instant = now, signer: RequestSigner = signer, payloadHash: String? = nil,
                       signedHeaders: [String]? = nil) -> Request {
        signer.signedRequest(method: method, target: target, headers: headers, body: body, date: date, payloadHash: payloadHash,
                             signedHeaders: signedHeaders)
    }

    /// `request` with header `name` replaced (or removed when nil), keeping everything else.
    static func editing(_ request: Request, _ name: String, _ value: String?) -> Request {
        var headers = request.headers
        headers.remove(name)
        if let value { headers.add(name, value) }
        return Request(method: request.method, rawPath: request.rawPath, rawQuery: request.rawQuery, headers: headers, body: request.body)
    }

    static func failure(_ request: Request, bucket: String? = "bkt", allowSigV2: Bool = false) -> SigV4Failure? {
        authenticator(allowSigV2: allowSigV2).authenticate(request, bucket: bucket).sigFailure
    }

    @Test func validHeaderRequest() throws {
        let authenticated = try #require(Self.authenticator().authenticate(Self.signed(), bucket: "bkt").sigValue)
        #expect(authenticated.accessKey == "test")
        #expect(authenticated.method == .sigV4Header)
        #expect(authenticated.payload == .sha256(SignatureVerifier.emptySHA256))
        #expect(authenticated.decodedContentLength == nil)
        #expect(!authenticated.isAWSChunked)
    }

    @Test func anonymous() throws {
        let failure = try #require(Self.failure(Request(method: "GET", target: "/bkt/key.txt", headers: ["Host": "h"])))
        #expect(failure.xmlElements().map(\.0) == ["Code", "Message"])
        #expect(failure.xmlElements().map(\.1) == ["AccessDenied", "Access Denied"])
        #expect(failure.httpStatus == 403)
        #expect(failure.diagnosis != nil)
    }

    @Test func unsupportedAndMultipleMechanisms() throws {
        let bearer = try #require(Self.failure(Self.editing(Self.signed(), "Authorization", "Bearer abc")))
        #expect(bearer.code == "InvalidArgument")
        #expect(bearer.httpStatus == 400)
        #expect(bearer.message == "Unsupported Authorization Type")
        #expect(bearer.xmlFields.map(\.0) == ["ArgumentName", "ArgumentValue"])
        #expect(bearer.xmlFields.map(\.1) == ["Authorization", "Bearer abc"])
        let signed = Self.signed()
        let both = Request(method: "GET", rawPath: signed.rawPath, rawQuery: "X-Amz-Algorithm=AWS4-HMAC-SHA256", headers: signed.headers)
        let failure = try #require(Self.failure(both))
        #expect(failure.code == "InvalidArgument")
        #expect(failure.message.hasPrefix("Only one auth mechanism allowed"))
    }

    @Test func wrongRegion() throws {
        let west = RequestSigner(accessKey: "test", secret: "test", region: "us-west-2")
        let failure = try #require(Self.failure(Self.signed(signer: west)))
        #expect(failure.code == "AuthorizationHeaderMalformed")
        #expect(failure.httpStatus == 400)
        #expect(failure.message == "The authorization header is malformed; the region 'us-west-2' is wrong; expecting 'us-east-1'")
        #expect(failure.xmlFields.map(\.0) == ["Region"])
        #expect(failure.xmlFields.map(\.1) == ["us-east-1"])
        #expect(failure.responseHeaders.map(\.0) == ["x-amz-bucket-region"])
        #expect(failure.responseHeaders.map(\.1) == ["us-east-1"])
        #expect(failure.diagnosis?.contains("AWS_REGION=us-east-1") == true)
    }

    @Test func wrongService() throws {
        let sqs = RequestSigner(accessKey: "test", secret: "test", region: "us-east-1", service: "sqs")
        #expect(Self.failure(Self.signed(signer: sqs)) == .headerWrongService(given: "sqs"))
    }

    @Test func unknownAccessKey() throws {
        let other = RequestSigner(accessKey: "AKIAUNKNOWN", secret: "x", region: "us-east-1")
        let failure = try #require(Self.failure(Self.signed(signer: other)))
        #expect(failure.code == "InvalidAccessKeyId")
        #expect(failure.httpStatus == 403)
        #expect(failure.message == "The AWS Access Key Id you provided does not exist in our records.")
        #expect(failure.xmlFields.map(\.0) == ["AWSAccessKeyId"])
        #expect(failure.xmlFields.map(\.1) == ["AKIAUNKNOWN"])
    }

    @Test func contentSHA256Header() throws {
        let missing = try #require(Self.failure(Self.editing(Self.signed(), "x-amz-content-sha256", nil)))
        #expect(missing.code == "InvalidRequest")
        #expect(missing.httpStatus == 400)
        #expect(missing.message == "Missing required header for this request: x-amz-content-sha256")
        let invalid = try #require(Self.failure(Self.signed(payloadHash: "abc")))
        #expect(invalid.code == "InvalidArgument")
        #expect(invalid.xmlFields.map(\.1) == ["x-amz-content-sha256", "abc"])
        #expect(invalid.message.hasPrefix("x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER,"))
        #expect(Self.authenticator().authenticate(Self.signed(payloadHash: "UNSIGNED-PAYLOAD"), bucket: "bkt").sigValue?.payload == .unsigned)
        let upper = SigV4Fixtures.sha256Hex([1, 2]).uppercased()
        #expect(Self.authenticator().authenticate(Self.signed("PUT", body: [1, 2], payloadHash: upper), bucket: "bkt").sigValue?.payload
            == .sha256(upper.lowercased()))
    }

    @Test func clockSkew() throws {
        let early = Self.signed(date: Self.now.adding(seconds: -901))
        let failure = try #require(Self.failure(early))
        #expect(failure.code == "RequestTimeTooSkewed")
        #expect(failure.httpStatus == 403)
        #expect(failure.message == "The difference between the request time and the current time is too large.")
        #expect(failure.xmlFields.map(\.0) == ["RequestTime", "ServerTime", "MaxAllowedSkewMilliseconds"])
        #expect(failure.xmlFields.map(\.1) == ["20261130T054459Z", "2026-11-30T06:00:00Z", "900000"])
        #expect(Self.failure(Self.signed(date: Self.now.adding(seconds: 900))) == nil)
        #expect(Self.failure(Self.signed(date: Self.now.adding(seconds: 901)))?.code == "RequestTimeTooSkewed")
    }

    @Test func dateHeaderInsteadOfXAmzDate() throws {
        var headers: HTTPHeaders = ["Host": "127.0.0.1:9000", "Date": Self.now.httpDate, "X-Amz-Content-SHA256": SignatureVerifier.emptySHA256]
        let canonical = CanonicalRequest(method: "GET", rawPath: "/bkt/k", rawQuery: "", presigned: false,
                                         headers: headers.fields.map { ($0.name.lowercased(), $0.value) },
                                         signedHeaders: ["date", "host", "x-amz-content-sha256"], payloadHash: SignatureVerifier.emptySHA256)
        let sts = SignatureVerifier.stringToSign(amzDate: "20261130T060000Z", scope: "20261130/us-east-1/s3/aws4_request", canonicalRequestHash: canonical.hashHex)
        let signature = SigningKey.sign(SigningKey.derive(secret: "test", date: "20261130", region: "us-east-1", service: "s3"), sts)
        headers.add("Authorization", "AWS4-HMAC-SHA256 Credential=test/20261130/us-east-1/s3/aws4_request, SignedHeaders=date;host;x-amz-content-sha256, Signature=\(signature)")
        #expect(Self.failure(Request(method: "GET", target: "/bkt/k", headers: headers)) == nil)
        let missing = try #require(Self.failure(Self.editing(Self.signed(), "X-Amz-Date", nil)))
        #expect(missing.code == "AccessDenied")
        #expect(missing.message == "AWS authentication requires a valid Date or x-amz-date header")
    }

    @Test func unsignedHeaders() throws {
        let noHost = Self.signed(signedHeaders: ["x-amz-content-sha256", "x-amz-date"])
        let failure = try #require(Self.failure(noHost))
        #expect(failure.code == "AccessDenied")
        #expect(failure.httpStatus == 403)
        #expect(failure.message == "There were headers present in the request which were not signed")
        #expect(failure.xmlFields.map(\.1) == ["host"])
        let added = Self.editing(Self.signed("PUT"), "x-amz-acl", "public-read")
        #expect(Self.failure(added) == .headersNotSigned(names: ["x-amz-acl"]))
        // x-amz-content-sha256 may stay unsigned; so may headers outside x-amz-*.
        let lenient = Self.signed(signedHeaders: ["host", "x-amz-date"])
        #expect(Self.failure(Self.editing(lenient, "User-Agent", "curl")) == nil)
    }

    @Test func securityTokenIsAcceptedWhenSigned() {
        let request = Self.signed(headers: ["Host": "h", "X-Amz-Security-Token": "FwoGZXIvYXdzE"])
        #expect(Self.failure(request) == nil)
    }

    @Test func wrongSecret() throws {
        let wrong = RequestSigner(accessKey: "test", secret: "not-test", region: "us-east-1")
        let failure = try #require(Self.failure(Self.signed(signer: wrong)))
        #expect(failure.code == "SignatureDoesNotMatch")
        #expect(failure.httpStatus == 403)
        #expect(failure.message == "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
        #expect(failure.xmlFields.map(\.0) == ["AWSAccessKeyId", "StringToSign", "SignatureProvided", "StringToSignBytes", "CanonicalRequest", "CanonicalRequestBytes"])
        let fields = Dictionary(uniqueKeysWithValues: failure.xmlFields.map { ($0.0, $0.1) })
        #expect(fields["AWSAccessKeyId"] == "test")
        #expect(fields["StringToSign"]?.hasPrefix("AWS4-HMAC-SHA256\n20261130T060000Z\n20261130/us-east-1/s3/aws4_request\n") == true)
        #expect(fields["StringToSignBytes"]?.hasPrefix("41 57 53 34 2d 48 4d 41 43 2d 53 48 41 32 35 36 0a 32") == true)
        #expect(fields["CanonicalRequest"]?.hasPrefix("GET\n/bkt/key.txt\n\nhost:127.0.0.1:9000\n") == true)
        #expect(fields["CanonicalRequestBytes"] == SigV4Encoding.spacedHex(fields["CanonicalRequest"] ?? ""))
        #expect(failure.diagnosis?.contains("a secret key for 'test' other than the configured one") == true)
    }

    @Test func bucketRestrictions() {
        let limited = RequestSigner(accessKey: "limited", secret: "limited-secret", region: "us-east-1")
        let request = Self.signed(signer: limited)
        #expect(Self.failure(request, bucket: "allowed-bkt") == nil)
        #expect(Self.failure(request, bucket: nil) == nil)
        let denied = Self.failure(request, bucket: "bkt")
        #expect(denied == .bucketAccessDenied(accessKey: "limited", bucket: "bkt"))
        #expect(denied?.code == "AccessDenied")
        #expect(denied?.message == "Access Denied")
        #expect(denied?.httpStatus == 403)
    }

    // MARK: Presigned

    static func presigned(_ method: String = "GET", key: String = "key.txt", headers: [(name: String, value: String)] = [],
                          expires: Int = 3600, at instant: Instant = now, query: [(name: String, value: String)] = []) throws -> Request {
        let presigner = Presigner(credentials: credentials, region: "us-east-1", clock: Clock(frozenAt: instant), ledger: PresignLedger())
        let url = try presigner.presign(method: method, endpoint: "http://127.0.0.1:9000", bucket: "bkt", key: key, query: query,
                                        headers: headers, expiresSeconds: expires).url
        return Request(method: method, target: String(url.dropFirst("http://127.0.0.1:9000".count)),
                       headers: HTTPHeaders([("Host", "127.0.0.1:9000")] + headers))
    }

    @Test func presignedWindow() throws {
        #expect(Self.failure(try Self.presigned()) == nil)
        let expired = try #require(Self.failure(try Self.presigned(expires: 60, at: Self.now.adding(seconds: -61))))
        #expect(expired.code == "AccessDenied")
        #expect(expired.message == "Request has expired")
        #expect(expired.xmlFields.map(\.0) == ["X-Amz-Expires", "Expires", "ServerTime"])
        #expect(expired.xmlFields.map(\.1) == ["60", "2026-11-30T05:59:59Z", "2026-11-30T06:00:00Z"])
        let future = try #require(Self.failure(try Self.presigned(at: Self.now.adding(seconds: 3600))))
        #expect(future.code == "AccessDenied")
        #expect(future.message == "Request is not yet valid")
        #expect(future.xmlFields.map(\.0) == ["X-Amz-Date", "Expires", "ServerTime"])
        #expect(future.xmlFields.first?.1 == String(Self.now.adding(seconds: 3600).unixSeconds * 1000))
    }

    @Test func presignedParameterErrors() throws {
        let request = try Self.presigned()
        func edited(_ find: String, _ replace: String) -> Request {
            Request(method: "GET", rawPath: request.rawPath, rawQuery: request.rawQuery.replacingOccurrences(of: find, with: replace), headers: request.headers)
        }
        let tooLong = try #require(Self.failure(edited("X-Amz-Expires=3600", "X-Amz-Expires=604801")))
        #expect(tooLong.code == "AuthorizationQueryParametersError")
        #expect(tooLong.httpStatus == 400)
        #expect(tooLong.message == "X-Amz-Expires must be less than a week (in seconds) that is; 604800")
        #expect(Self.failure(edited("X-Amz-Expires=3600", "X-Amz-Expires=-5"))?.message == "X-Amz-Expires must be non-negative")
        #expect(Self.failure(edited("X-Amz-Expires=3600", "X-Amz-Expires=3600.0"))?.message == "X-Amz-Expires should be a number")
        #expect(Self.failure(edited("X-Amz-Expires=3600", "X-Amz-Expires=0"))?.message == "Request has expired")
        #expect(Self.failure(edited("&X-Amz-SignedHeaders=host", ""))?.message.hasPrefix("Query-string authentication version 4 requires") == true)
        let region = try #require(Self.failure(edited("%2Fus-east-1%2F", "%2Feu-west-1%2F")))
        #expect(region.message == "Error parsing the X-Amz-Credential parameter; the region 'eu-west-1' is wrong; expecting 'us-east-1'")
        #expect(region.xmlFields.map(\.1) == ["us-east-1"])
        #expect(Self.failure(edited("X-Amz-SignedHeaders=host", "X-Amz-SignedHeaders="))?.xmlFields.map(\.1) == ["host"])
    }

    @Test func presignedRequestsMustNotAddAmzHeaders() throws {
        let request = try Self.presigned("PUT")
        var headers = request.headers
        headers.add("x-amz-acl", "public-read")
        headers.add("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
        let failure = Self.failure(Request(method: "PUT", rawPath: request.rawPath, rawQuery: request.rawQuery, headers: headers))
        #expect(failure == .headersNotSigned(names: ["x-amz-acl"]))
    }

    @Test func presignedContentLengthSentTwiceWithOneValue() throws {
        // rclone's presigned PUT: Go sends its own Content-Length and the presigner's `content-length`.
        let request = try Self.presigned("PUT", headers: [("content-length", "4")])
        var twice = request.headers
        twice.add("Content-Length", "4")
        #expect(Self.failure(Request(method: "PUT", rawPath: request.rawPath, rawQuery: request.rawQuery, headers: twice)) == nil)
        // Different values are two values: the signature (over one) does not match.
        var differing = request.headers
        differing.add("Content-Length", "5")
        let failure = Self.failure(Request(method: "PUT", rawPath: request.rawPath, rawQuery: request.rawQuery, headers: differing))
        #expect(failure?.code == "SignatureDoesNotMatch")
    }

    @Test func presignedSignedHeaderCarriedInTheQuery() throws {
        // The v2 JavaScript SDK lists x-amz-* headers in X-Amz-SignedHeaders but puts their values in the query.
        let presigner = Presigner(credentials: Self.credentials, region: "us-east-1", clock: Clock(frozenAt: Self.now), ledger: PresignLedger())
        let url = try presigner.presign(method: "PUT", endpoint: "http://h", bucket: "bkt", key: "k", query: [("x-amz-acl", "private")],
                                        headers: [("x-amz-acl", "private")]).url
        let request = Request(method: "PUT", target: String(url.dropFirst("http://h".count)), headers: ["Host": "h"])
        #expect(Self.authenticator().authenticate(request, bucket: "bkt").sigValue != nil)
    }

    @Test func presignedBodyHashParameter() throws {
        // A presigned URL may pin the body with X-Amz-Content-Sha256 (signed as a query parameter).
        let hash = SigV4Fixtures.sha256Hex(Array("pinned".utf8))
        let presigner = Presigner(credentials: Self.credentials, region: "us-east-1", clock: Clock(frozenAt: Self.now), ledger: PresignLedger())
        var url = try presigner.presign(method: "PUT", scheme: "http", host: "h", rawPath: "/bkt/k", query: [("X-Amz-Content-Sha256", hash)]).url
        // The presigner signs UNSIGNED-PAYLOAD; re-sign as a client pinning the hash would.
        let parts = SignedRequestParts(method: "PUT", rawPath: "/bkt/k", rawQuery: String(url.split(separator: "?")[1]), headers: [("host", "h")])
        let authorization = try AuthorizationParser.parseQuery(QueryParameters(rawQuery: parts.rawQuery), expectedRegion: "us-east-1")
        let key = SigningKey.derive(secret: "test", date: "20261130", region: "us-east-1", service: "s3")
        let signature = SignatureVerifier.compute(parts, authorization: authorization, payloadHash: hash, signingKey: key).signature
        url = url.replacingOccurrences(of: authorization.signature, with: signature)
        let request = Request(method: "PUT", target: String(url.dropFirst("http://h".count)), headers: ["Host": "h"])
        let authenticated = try #require(Self.authenticator().authenticate(request, bucket: "bkt").sigValue)
        #expect(authenticated.payload == .sha256(hash))
    }

    // MARK: Streaming and checksums

    @Test func streamingHeaders() throws {
        let missing = Self.signed("PUT", headers: ["Host": "h", "Content-Encoding": "aws-chunked"], payloadHash: "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
        let failure = try #require(Self.failure(missing))
        #expect(failure.code == "MissingContentLength")
        #expect(failure.httpStatus == 411)
        let bad = Self.signed("PUT", headers: ["Host": "h", "X-Amz-Decoded-Content-Length": "ten"], payloadHash: "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
        #expect(Self.failure(bad) == .invalidDecodedContentLength(value: "ten"))
        let trailer = Self.signed("PUT", headers: ["Host": "h", "X-Amz-Decoded-Content-Length": "10", "X-Amz-Trailer": "x-amz-checksum-md5"],
                                  payloadHash: "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
        #expect(Self.failure(trailer)?.message == "The value specified in the x-amz-trailer header is not supported")
        let good = Self.signed("PUT", headers: ["Host": "h", "X-Amz-Decoded-Content-Length": "10", "X-Amz-Trailer": "x-amz-checksum-crc32c"],
                               payloadHash: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER")
        let authenticated = try #require(Self.authenticator().authenticate(good, bucket: "bkt").sigValue)
        #expect(authenticated.payload == .streaming(signed: true, trailer: true, decodedLength: 10))
        #expect(authenticated.declaredTrailer == .crc32c)
        #expect(authenticated.chunkSigning?.seedSignature.count == 64)
    }

    @Test func checksumHeaders() throws {
        let two = Self.signed("PUT", headers: ["Host": "h", "x-amz-checksum-crc32": "DUoRhQ==", "x-amz-checksum-sha1": "Kq5sNclPz7QV2+lfQIuc6R7oRu0="])
        #expect(Self.failure(two)?.message == "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
        let invalid = Self.signed("PUT", headers: ["Host": "h", "x-amz-checksum-crc32": "zz"])
        #expect(Self.failure(invalid)?.message == "Value for x-amz-checksum-crc32 header is invalid.")
        let complete = Self.signed("POST", "/bkt/key.txt?uploadId=abc", headers: ["Host": "h", "x-amz-checksum-crc32": "AAAAAA=="])
        #expect(Self.authenticator().authenticate(complete, bucket: "bkt").sigValue?.headerChecksum == nil)
    }

    @Test func sigV2IsRefusedByDefault() throws {
        let request = Request(method: "GET", target: "/bkt/key.txt", headers: ["Host": "h", "Date": Self.now.httpDate, "Authorization": "AWS test:abc="])
        let failure = try #require(Self.failure(request))
        #expect(failure == .sigV2NotSupported(presigned: false))
        #expect(failure.diagnosis?.contains("Authorization: AWS key:signature") == true)
    }

    @Test func virtualHostedDetection() {
        #expect(RequestAuthenticator.isVirtualHosted(host: "bkt.localhost:9000", bucket: "bkt"))
        #expect(RequestAuthenticator.isVirtualHosted(host: "bkt.s3.localhost", bucket: "bkt"))
        #expect(!RequestAuthenticator.isVirtualHosted(host: "localhost:9000", bucket: "bkt"))
        #expect(!RequestAuthenticator.isVirtualHosted(host: "127.0.0.1:9000", bucket: "127"))
        #expect(!RequestAuthenticator.isVirtualHosted(host: "bkt.localhost", bucket: nil))
    }
}
