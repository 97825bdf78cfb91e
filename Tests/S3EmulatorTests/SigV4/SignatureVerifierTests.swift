import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

/// The official SigV4 suites, used as they are: canonical request, string to sign and signature
/// for every case that applies to S3's rules; the cases that do not apply are checked to differ
/// exactly where S3 differs (see docs/sigv4.md).
@Suite struct SignatureVerifierTests {
    static let aws4Root = SigV4Fixtures.sigv4.appendingPathComponent("aws4_testsuite")
    static let cAuthRoot = SigV4Fixtures.sigv4.appendingPathComponent("aws-c-auth-v4")
    static let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

    /// Every aws4_testsuite case directory (relative path), found on disk.
    static let aws4Cases: [String] = {
        let fm = FileManager.default
        guard let walker = fm.enumerator(atPath: aws4Root.path) else { return [] }
        var cases: [String] = []
        while let item = walker.nextObject() as? String {
            let name = (item as NSString).lastPathComponent
            if fm.fileExists(atPath: aws4Root.appendingPathComponent(item).appendingPathComponent(name + ".sreq").path) {
                cases.append(item)
            }
        }
        return cases.sorted()
    }()

    /// aws4_testsuite cases whose expected canonical request normalises the path, which S3 does not.
    static let aws4NotApplicable: Set<String> = [
        "normalize-path/get-relative", "normalize-path/get-relative-relative", "normalize-path/get-slash",
        "normalize-path/get-slash-dot-slash", "normalize-path/get-slash-pointless-dot", "normalize-path/get-slashes",
    ]

    static let cAuthCases: [String] = {
        let items = (try? FileManager.default.contentsOfDirectory(atPath: cAuthRoot.path)) ?? []
        return items.filter { FileManager.default.fileExists(atPath: cAuthRoot.appendingPathComponent($0).appendingPathComponent("context.json").path) }.sorted()
    }()

    /// aws-c-auth cases with `"normalize": true` whose normalised path differs from the path as sent.
    static let cAuthNormalized: Set<String> = [
        "get-relative-normalized", "get-relative-relative-normalized", "get-slash-dot-slash-normalized",
        "get-slash-normalized", "get-slash-pointless-dot-normalized", "get-slashes-normalized",
    ]

    @Test(.enabled(if: SigV4Fixtures.hasReference, SigV4Fixtures.referenceMissing)) func vectorsArePresent() {
        #expect(Self.aws4Cases.count == 34)
        #expect(Self.cAuthCases.count == 38)
    }

    // MARK: aws4_testsuite

    @Test(.enabled(if: SigV4Fixtures.hasReference, SigV4Fixtures.referenceMissing), arguments: aws4Cases)
    func aws4TestSuite(_ name: String) throws {
        let dir = Self.aws4Root.appendingPathComponent(name)
        let base = (name as NSString).lastPathComponent
        let request = SigV4Fixtures.parseHTTP(SigV4Fixtures.bytes(dir.appendingPathComponent(base + ".sreq")))
        let creq = SigV4Fixtures.text(dir.appendingPathComponent(base + ".creq"))
        let sts = SigV4Fixtures.text(dir.appendingPathComponent(base + ".sts"))
        let authz = SigV4Fixtures.text(dir.appendingPathComponent(base + ".authz"))
        let parts = SignedRequestParts(request)
        let authorization = try AuthorizationParser.parseHeader(try #require(parts.header("authorization")), headers: parts.headers,
                                                                expectedRegion: "us-east-1", service: "service")
        let key = SigningKey.derive(secret: Self.secret, date: "20150830", region: "us-east-1", service: "service")
        let computed = SignatureVerifier.compute(parts, authorization: authorization,
                                                 payloadHash: SigV4Fixtures.sha256Hex(request.body), signingKey: key)
        if Self.aws4NotApplicable.contains(name) {
            // S3 keeps dot segments and repeated slashes; the suite's other services remove them.
            let expectedPath = creq.split(separator: "\n", omittingEmptySubsequences: false)[1]
            #expect(computed.canonicalRequest.text != creq)
            #expect(CanonicalRequest.uri(rawPath: request.rawPath) == request.rawPath)
            #expect(CanonicalRequest.uri(rawPath: request.rawPath, form: .normalized) == String(expectedPath))
        } else {
            #expect(computed.canonicalRequest.text == creq)
            #expect(String(decoding: computed.stringToSign, as: UTF8.self) == sts)
            #expect(authz.hasSuffix("Signature=" + computed.signature))
            // Verify against the .authz header: get-vanilla-with-session-token's .sreq carries
            // get-vanilla's signature (a defect of the suite as botocore ships it).
            let expected = try AuthorizationParser.parseHeader(authz, headers: parts.headers, expectedRegion: "us-east-1", service: "service")
            #expect(SignatureVerifier.matches(expected: computed.signature, provided: expected.signature))
            if name != "get-vanilla-with-session-token" {
                #expect(SignatureVerifier.matches(expected: computed.signature, provided: authorization.signature))
            }
        }
    }

    @Test(.enabled(if: SigV4Fixtures.hasReference, SigV4Fixtures.referenceMissing)) func stsHeaderAfterSigningIsRefusedByS3Rules() throws {
        // The suite adds X-Amz-Security-Token after signing; S3 requires every x-amz-* header signed.
        let dir = Self.aws4Root.appendingPathComponent("post-sts-token/post-sts-header-after")
        let request = SigV4Fixtures.parseHTTP(SigV4Fixtures.bytes(dir.appendingPathComponent("post-sts-header-after.sreq")))
        let parts = SignedRequestParts(request)
        let authorization = try AuthorizationParser.parseHeader(parts.header("authorization")!, headers: parts.headers,
                                                                expectedRegion: "us-east-1", service: "service")
        #expect(throws: SigV4Failure.headersNotSigned(names: ["x-amz-security-token"])) {
            try SignatureVerifier.checkSignedHeaders(authorization, parts: parts)
        }
    }

    // MARK: aws-c-auth

    struct Context {
        let secret: String
        let region: String
        let service: String
        let timestamp: Instant
    }

    static func context(_ name: String) throws -> Context {
        let data = try Data(contentsOf: cAuthRoot.appendingPathComponent(name).appendingPathComponent("context.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let credentials = try #require(json["credentials"] as? [String: Any])
        let timestamp = try #require(json["timestamp"] as? String)
        return Context(secret: try #require(credentials["secret_access_key"] as? String),
                       region: try #require(json["region"] as? String), service: try #require(json["service"] as? String),
                       timestamp: try #require(Instant(rfc3339: timestamp)))
    }

    @Test(.enabled(if: SigV4Fixtures.hasReference, SigV4Fixtures.referenceMissing), arguments: cAuthCases)
    func awsCAuthHeader(_ name: String) throws {
        let dir = Self.cAuthRoot.appendingPathComponent(name)
        let context = try Self.context(name)
        let request = SigV4Fixtures.parseHTTP(SigV4Fixtures.bytes(dir.appendingPathComponent("header-signed-request.txt")))
        let parts = SignedRequestParts(request)
        let authorization = try AuthorizationParser.parseHeader(try #require(parts.header("authorization")), headers: parts.headers,
                                                                expectedRegion: context.region, service: context.service)
        try SignatureVerifier.checkTime(authorization, now: context.timestamp)
        let key = SigningKey.derive(secret: context.secret, date: authorization.credential.date, region: context.region, service: context.service)
        let payload = parts.header("x-amz-content-sha256") ?? SigV4Fixtures.sha256Hex(request.body)
        let computed = SignatureVerifier.compute(parts, authorization: authorization, payloadHash: payload, signingKey: key)
        let creq = SigV4Fixtures.text(dir.appendingPathComponent("header-canonical-request.txt"))
        if Self.cAuthNormalized.contains(name) {
            #expect(computed.canonicalRequest.text != creq)
            #expect(CanonicalRequest.uri(rawPath: request.rawPath, form: .normalized) == String(creq.split(separator: "\n")[1]))
        } else {
            #expect(computed.canonicalRequest.text == creq)
            #expect(String(decoding: computed.stringToSign, as: UTF8.self) == SigV4Fixtures.text(dir.appendingPathComponent("header-string-to-sign.txt")))
            #expect(computed.signature == SigV4Fixtures.text(dir.appendingPathComponent("header-signature.txt")))
            #expect(SignatureVerifier.matches(expected: computed.signature, provided: authorization.signature))
        }
    }

    @Test(.enabled(if: SigV4Fixtures.hasReference, SigV4Fixtures.referenceMissing), arguments: cAuthCases)
    func awsCAuthQuery(_ name: String) throws {
        let dir = Self.cAuthRoot.appendingPathComponent(name)
        let context = try Self.context(name)
        let request = SigV4Fixtures.parseHTTP(SigV4Fixtures.bytes(dir.appendingPathComponent("query-signed-request.txt")))
        let parts = SignedRequestParts(request)
        let authorization = try AuthorizationParser.parseQuery(QueryParameters(rawQuery: request.rawQuery),
                                                               expectedRegion: context.region, service: context.service)
        try SignatureVerifier.checkTime(authorization, now: context.timestamp)
        try SignatureVerifier.checkTime(authorization, now: context.timestamp.adding(seconds: 3599))
        let key = SigningKey.derive(secret: context.secret, date: authorization.credential.date, region: context.region, service: context.service)
        // aws-c-auth hashes the body for presigned requests of generic services; S3 would use
        // UNSIGNED-PAYLOAD, which is an input here, not part of what the vectors test.
        let computed = SignatureVerifier.compute(parts, authorization: authorization,
                                                 payloadHash: SigV4Fixtures.sha256Hex(request.body), signingKey: key)
        let creq = SigV4Fixtures.text(dir.appendingPathComponent("query-canonical-request.txt"))
        if Self.cAuthNormalized.contains(name) {
            #expect(computed.canonicalRequest.text != creq)
        } else if name == "post-sts-header-after" {
            // The token was added to the URL after signing; S3 signs every query parameter.
            #expect(computed.canonicalRequest.text != creq)
            #expect(computed.canonicalRequest.text.contains("X-Amz-Security-Token="))
            #expect(!SignatureVerifier.matches(expected: computed.signature, provided: authorization.signature))
        } else {
            #expect(computed.canonicalRequest.text == creq)
            #expect(String(decoding: computed.stringToSign, as: UTF8.self) == SigV4Fixtures.text(dir.appendingPathComponent("query-string-to-sign.txt")))
            #expect(computed.signature == SigV4Fixtures.text(dir.appendingPathComponent("query-signature.txt")))
            #expect(SignatureVerifier.matches(expected: computed.signature, provided: authorization.signature))
        }
    }

    // MARK: Time and signed-header rules

    static func authorization(presigned: Bool, at amzDate: String, expires: Int64? = nil, signed: [String] = ["host"]) -> SigV4Authorization {
        SigV4Authorization(presigned: presigned, credential: CredentialScope(accessKey: "AK", date: String(amzDate.prefix(8)), region: "us-east-1", service: "s3", terminal: "aws4_request"),
                           signedHeaders: signed, signature: "", amzDate: amzDate, requestTime: SigV4Fixtures.instant(amzDate),
                           rawRequestTime: amzDate, expires: expires)
    }

    @Test(arguments: [(-900, true), (900, true), (-901, false), (901, false), (0, true)])
    func headerClockSkew(offset: Int, accepted: Bool) {
        let auth = Self.authorization(presigned: false, at: "20261130T060000Z")
        let now = SigV4Fixtures.instant("20261130T060000Z").adding(seconds: Double(offset))
        let result = Result { () throws(SigV4Failure) in try SignatureVerifier.checkTime(auth, now: now) }
        if accepted {
            #expect(result.sigFailure == nil)
        } else {
            #expect(result.sigFailure == .requestTimeTooSkewed(requestTime: "20261130T060000Z", serverTime: now))
        }
    }

    @Test func presignedWindow() {
        let t = SigV4Fixtures.instant("20261130T060000Z")
        let auth = Self.authorization(presigned: true, at: "20261130T060000Z", expires: 60)
        let expiresAt = t.adding(seconds: 60)
        #expect(Result { () throws(SigV4Failure) in try SignatureVerifier.checkTime(auth, now: t.adding(seconds: 60)) }.sigFailure == nil)
        #expect(Result { () throws(SigV4Failure) in try SignatureVerifier.checkTime(auth, now: t.adding(seconds: 61)) }.sigFailure
            == .requestExpired(expiresSeconds: 60, expiresAt: expiresAt, serverTime: t.adding(seconds: 61)))
        // Up to 15 minutes ahead of the server clock is tolerated, as for header authentication.
        #expect(Result { () throws(SigV4Failure) in try SignatureVerifier.checkTime(auth, now: t.adding(seconds: -900)) }.sigFailure == nil)
        #expect(Result { () throws(SigV4Failure) in try SignatureVerifier.checkTime(auth, now: t.adding(seconds: -901)) }.sigFailure
            == .requestNotYetValid(requestDate: t, expiresAt: expiresAt, serverTime: t.adding(seconds: -901)))
        let zero = Self.authorization(presigned: true, at: "20261130T060000Z", expires: 0)
        #expect(Result { () throws(SigV4Failure) in try SignatureVerifier.checkTime(zero, now: t) }.sigFailure
            == .requestExpired(expiresSeconds: 0, expiresAt: t, serverTime: t))
    }

    @Test func signedHeaderRules() {
        let parts = SignedRequestParts(method: "PUT", rawPath: "/b/k", rawQuery: "", headers: [
            ("host", "h"), ("x-amz-date", "d"), ("x-amz-content-sha256", "UNSIGNED-PAYLOAD"), ("x-amz-meta-a", "1"),
            ("x-amzn-trace-id", "t"), ("content-type", "text/plain"), ("x-amz-acl", "private"),
        ])
        func check(_ signed: [String]) -> SigV4Failure? {
            Result { () throws(SigV4Failure) in
                try SignatureVerifier.checkSignedHeaders(Self.authorization(presigned: false, at: "20261130T060000Z", signed: signed), parts: parts)
            }.sigFailure
        }
        #expect(check(["host", "x-amz-date", "x-amz-meta-a", "x-amz-acl"]) == nil)
        #expect(check(["x-amz-date", "x-amz-meta-a", "x-amz-acl"]) == .headersNotSigned(names: ["host"]))
        #expect(check(["host", "x-amz-date"]) == .headersNotSigned(names: ["x-amz-meta-a", "x-amz-acl"]))
        #expect(check([]) == .headersNotSigned(names: ["host", "x-amz-date", "x-amz-meta-a", "x-amz-acl"]))
    }
}
