import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

/// Each usual suspect, reproduced by signing the way a broken client does, must be named.
@Suite struct SignatureDiagnosisTests {
    /// `request` with its signature recomputed the way a client with the given mistake computes it.
    static func resigned(_ request: Request, secret: String = "test", region: String = "us-east-1",
                         options: CanonicalRequest.Options = CanonicalRequest.Options(), method: String? = nil,
                         headers: [(name: String, value: String)]? = nil, payload: String? = nil) throws -> Request {
        let parts = SignedRequestParts(request)
        let authorization = try AuthorizationParser.parseHeader(try #require(parts.header("authorization")), headers: parts.headers, expectedRegion: "us-east-1")
        let key = SigningKey.derive(secret: secret, date: authorization.credential.date, region: region, service: "s3")
        let signature = SignatureVerifier.compute(parts, authorization: authorization, payloadHash: payload ?? parts.header("x-amz-content-sha256") ?? "",
                                                  signingKey: key, options: options, method: method, headers: headers).signature
        var fields = request.headers
        fields.set("Authorization", (parts.header("authorization") ?? "").replacingOccurrences(of: authorization.signature, with: signature))
        return Request(method: request.method, rawPath: request.rawPath, rawQuery: request.rawQuery, headers: fields, body: request.body)
    }

    static func diagnosis(_ request: Request, ledger: PresignLedger = PresignLedger()) -> String? {
        let failure = RequestAuthenticatorTests.authenticator(ledger: ledger).authenticate(request, bucket: "bkt").sigFailure
        #expect(failure?.code == "SignatureDoesNotMatch")
        return failure?.diagnosis
    }

    static func signed(_ method: String = "GET", _ target: String = "/bkt/a%20b.txt", headers: HTTPHeaders = ["Host": "127.0.0.1:9000"]) -> Request {
        RequestAuthenticatorTests.signed(method, target, headers: headers)
    }

    static func parts(_ request: Request) -> [(name: String, value: String)] { SignedRequestParts(request).headers }

    @Test func anotherConfiguredSecret() throws {
        let request = try Self.resigned(Self.signed(), secret: "limited-secret")
        #expect(Self.diagnosis(request)?.contains("secret key of access key 'limited', but the request names access key 'test'") == true)
    }

    @Test func anotherMethod() throws {
        let get = Self.signed()
        let head = Request(method: "HEAD", rawPath: get.rawPath, rawQuery: get.rawQuery, headers: get.headers)
        #expect(Self.diagnosis(head)?.hasPrefix("The signature is valid for a GET request, but this request is HEAD") == true)
    }

    @Test func hostWithAndWithoutPort() throws {
        let request = Self.signed()
        let signedWithoutPort = try Self.resigned(request, headers: Self.parts(request).map { $0.name == "host" ? ("host", "127.0.0.1") : $0 })
        #expect(Self.diagnosis(signedWithoutPort)?.contains("signed the Host header as '127.0.0.1' but the request sent '127.0.0.1:9000'") == true)
        let plain = Self.signed(headers: ["Host": "localhost"])
        let signedWithPort = try Self.resigned(plain, headers: Self.parts(plain).map { $0.name == "host" ? ("host", "localhost:80") : $0 })
        #expect(Self.diagnosis(signedWithPort)?.contains("'localhost:80'") == true)
    }

    @Test(arguments: [
        ("/bkt/a%20b.txt", CanonicalRequest.PathForm.doubleEncoded, "URI-encoded the path twice"),
        ("/bkt/a%20b.txt", .decoded, "without URI-encoding it"),
        ("/bkt/%7Euser.txt", .asSent, "signed the path as sent ('/bkt/%7Euser.txt')"),
        ("/bkt/dir/../x.txt", .normalized, "removed '.'/'..' segments"),
    ])
    func pathEncoding(path: String, form: CanonicalRequest.PathForm, phrase: String) throws {
        let request = try Self.resigned(Self.signed("GET", path), options: CanonicalRequest.Options(path: form))
        #expect(Self.diagnosis(request)?.contains(phrase) == true)
    }

    @Test func plusInTheQuery() throws {
        let literal = try Self.resigned(Self.signed("GET", "/bkt?prefix=a+b"), options: CanonicalRequest.Options(plus: .literal))
        #expect(Self.diagnosis(literal)?.contains("signed as a literal plus") == true)
        let raw = try Self.resigned(Self.signed("GET", "/bkt?prefix=a+b%2Bc"), options: CanonicalRequest.Options(plus: .raw))
        #expect(Self.diagnosis(raw)?.contains("raw '+' instead of encoding it") == true)
    }

    @Test func untrimmedHeaderValues() throws {
        let request = try Self.resigned(Self.signed(headers: ["Host": "h", "x-amz-meta-note": "two  spaces"]),
                                        options: CanonicalRequest.Options(trimHeaderValues: false))
        #expect(Self.diagnosis(request)?.contains("'x-amz-meta-note' untrimmed") == true)
    }

    @Test func payloadMode() throws {
        let request = RequestAuthenticatorTests.signed("PUT", "/bkt/k", headers: ["Host": "h"], payloadHash: "UNSIGNED-PAYLOAD")
        let broken = try Self.resigned(request, payload: SignatureVerifier.emptySHA256)
        #expect(Self.diagnosis(broken)?.contains("signed the payload hash as '\(SignatureVerifier.emptySHA256)' but the request declares 'UNSIGNED-PAYLOAD'") == true)
    }

    @Test func queryParameterAddedAfterSigning() throws {
        let signed = Self.signed("GET", "/bkt?list-type=2")
        let added = Request(method: "GET", rawPath: signed.rawPath, rawQuery: "list-type=2&x-id=ListObjectsV2", headers: signed.headers)
        #expect(Self.diagnosis(added) == "Query parameter 'x-id' was added to the URL after it was signed.")
    }

    @Test func anotherRegionsKey() throws {
        let request = try Self.resigned(Self.signed(), region: "eu-west-1")
        #expect(Self.diagnosis(request)?.contains("derived for region 'eu-west-1' while the credential scope says 'us-east-1'") == true)
    }

    @Test func nothingMatches() throws {
        let request = try Self.resigned(Self.signed(), secret: "typo")
        let text = Self.diagnosis(request)
        #expect(text?.hasPrefix("No known cause") == true)
        #expect(text?.contains("a secret key for 'test' other than the configured one") == true)
    }

    @Test func unsortedQuery() throws {
        let request = try Self.resigned(Self.signed("GET", "/bkt?prefix=a&list-type=2"), options: CanonicalRequest.Options(unsortedQuery: true))
        #expect(Self.diagnosis(request)?.contains("in the order they were sent") == true)
    }

    @Test func bareQueryName() throws {
        let request = try Self.resigned(Self.signed("POST", "/bkt/k?uploads"), options: CanonicalRequest.Options(bareQueryNames: true))
        #expect(Self.diagnosis(request)?.contains("'uploads' without '='") == true)
    }

    @Test func signedForLocalhost() throws {
        let request = try Self.resigned(Self.signed(), headers: [("host", "localhost:9000")] + Self.parts(Self.signed()).filter { $0.name != "host" })
        #expect(Self.diagnosis(request)?.contains("signed the Host header as 'localhost:9000' but the request sent '127.0.0.1:9000'") == true)
    }

    // MARK: Presigned by Hearth

    static func hearthURL(ledger: PresignLedger, contentType: String = "image/jpeg") throws -> PresignedURL {
        let presigner = Presigner(credentials: RequestAuthenticatorTests.credentials, region: "us-east-1",
                                  clock: Clock(frozenAt: RequestAuthenticatorTests.now), ledger: ledger)
        return try presigner.presign(method: "PUT", endpoint: "http://127.0.0.1:9000", bucket: "bkt", key: "uploads/photo.jpg",
                                     headers: [("Content-Type", contentType), ("x-amz-meta-owner", "u1")], expiresSeconds: 900)
    }

    static func use(_ url: PresignedURL, method: String = "PUT", headers: HTTPHeaders) -> Request {
        Request(method: method, target: String(url.url.dropFirst("http://127.0.0.1:9000".count)), headers: headers)
    }

    /// A URL presigned elsewhere (boto3's generate_presigned_url), so not in Hearth's ledger.
    @Test(arguments: [("image/jpeg", "image/png"), ("application/pdf", "application/octet-stream"), ("video/mp4", "video/mp4; codecs=avc1")])
    func contentTypeOfAForeignPresignedURL(signedType: String, sentType: String) throws {
        let url = try Self.hearthURL(ledger: PresignLedger(), contentType: signedType)
        let request = Self.use(url, headers: ["Host": "127.0.0.1:9000", "Content-Type": sentType, "x-amz-meta-owner": "u1"])
        #expect(Self.diagnosis(request)?.hasPrefix("Content-Type was signed as \(signedType) but the request sent \(sentType)") == true)
    }

    @Test func ledgerNamesEachDifference() throws {
        let ledger = PresignLedger()
        let url = try Self.hearthURL(ledger: ledger)
        let good: HTTPHeaders = ["Host": "127.0.0.1:9000", "Content-Type": "image/jpeg", "x-amz-meta-owner": "u1"]
        #expect(RequestAuthenticatorTests.authenticator(ledger: ledger).authenticate(Self.use(url, headers: good), bucket: "bkt").sigValue != nil)

        let png = Self.diagnosis(Self.use(url, headers: ["Host": "127.0.0.1:9000", "Content-Type": "image/png", "x-amz-meta-owner": "u1"]), ledger: ledger)
        #expect(png == "This URL was presigned by Hearth for PUT /bkt/uploads/photo.jpg (signed headers: content-type;host;x-amz-meta-owner). Content-Type was signed as image/jpeg but the request sent image/png.")

        let missing = Self.diagnosis(Self.use(url, headers: ["Host": "127.0.0.1:9000", "x-amz-meta-owner": "u1"]), ledger: ledger)
        #expect(missing?.contains("Content-Type was signed as image/jpeg but the request did not send it.") == true)

        let post = Self.diagnosis(Self.use(url, method: "POST", headers: good), ledger: ledger)
        #expect(post?.contains("The URL was presigned for PUT but the request used POST.") == true)

        let otherHost = Self.diagnosis(Self.use(url, headers: ["Host": "localhost:9000", "Content-Type": "image/jpeg", "x-amz-meta-owner": "u1"]), ledger: ledger)
        #expect(otherHost?.contains("Host was signed as 127.0.0.1:9000 but the request sent localhost:9000.") == true)

        let request = Self.use(url, headers: good)
        let movedPath = Request(method: "PUT", rawPath: "/bkt/uploads/other.jpg", rawQuery: request.rawQuery, headers: good)
        #expect(Self.diagnosis(movedPath, ledger: ledger)?.contains("presigned for path /bkt/uploads/photo.jpg but the request asked for /bkt/uploads/other.jpg") == true)

        let longer = Request(method: "PUT", rawPath: request.rawPath, rawQuery: request.rawQuery.replacingOccurrences(of: "X-Amz-Expires=900", with: "X-Amz-Expires=901"), headers: good)
        #expect(Self.diagnosis(longer, ledger: ledger)?.contains("Query parameter X-Amz-Expires was signed as '900' but the request sent '901'.") == true)
    }

    @Test func ledgerFindsEditedSignaturesByScope() throws {
        let ledger = PresignLedger()
        let url = try Self.hearthURL(ledger: ledger)
        let request = Self.use(url, headers: ["Host": "127.0.0.1:9000", "Content-Type": "image/jpeg", "x-amz-meta-owner": "u1"])
        let edited = Request(method: "PUT", rawPath: request.rawPath, rawQuery: request.rawQuery.replacingOccurrences(of: url.signature, with: String(url.signature.reversed())),
                             headers: request.headers)
        #expect(Self.diagnosis(edited, ledger: ledger)?.contains("X-Amz-Signature differs from the one Hearth issued.") == true)
    }

    @Test func displayNames() {
        #expect(SignatureDiagnosis.displayName("content-type") == "Content-Type")
        #expect(SignatureDiagnosis.displayName("content-md5") == "Content-MD5")
        #expect(SignatureDiagnosis.displayName("x-amz-meta-owner") == "x-amz-meta-owner")
    }
}
