import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

/// SigV2 with `allowSigV2`: the S3 documentation's examples ("Signing and Authenticating REST
/// Requests"), sub-resources, presigned URLs, and each failure.
@Suite struct SigV2Tests {
    static let accessKey = "AKIAIOSFODNN7EXAMPLE"
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

    static func authenticator(at rfc3339: String) -> RequestAuthenticator {
        RequestAuthenticator(credentials: S3Credentials([.init(accessKey: accessKey, secret: secret), .init(accessKey: "other", secret: "other-secret")]),
                             region: "us-east-1", clock: Clock(frozenAt: Instant(rfc3339: rfc3339)!), allowSigV2: true)
    }

    static func stringToSign(_ request: Request, bucket: String?, expires: String? = nil) -> String {
        SigV2.stringToSign(method: request.method, rawPath: request.rawPath, query: QueryParameters(rawQuery: request.rawQuery),
                           headers: SignedRequestParts(request).headers, resourceBucket: bucket, expires: expires)
    }

    static func signing(_ request: Request, bucket: String?, secret: String = secret, accessKey: String = accessKey) -> Request {
        var headers = request.headers
        headers.set("Authorization", "AWS \(accessKey):\(SigV2.signature(secret: secret, stringToSign: stringToSign(request, bucket: bucket)))")
        return Request(method: request.method, rawPath: request.rawPath, rawQuery: request.rawQuery, headers: headers)
    }

    @Test func documentedGetObject() throws {
        let request = Request(method: "GET", target: "/photos/puppy.jpg", headers: [
            "Host": "awsexamplebucket1.us-west-1.s3.amazonaws.com", "Date": "Tue, 27 Mar 2007 19:36:42 +0000",
            "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:qgk2+6Sv9/oM7G3qLEjTH1a1l1g=",
        ])
        #expect(Self.stringToSign(request, bucket: "awsexamplebucket1") == "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/awsexamplebucket1/photos/puppy.jpg")
        let authenticated = try #require(Self.authenticator(at: "2007-03-27T19:40:00Z").authenticate(request, bucket: "awsexamplebucket1").sigValue)
        #expect(authenticated.method == .sigV2Header)
        #expect(authenticated.payload == .unsigned)
        // Path-style, the same resource is signed with the bucket in the path.
        #expect(Self.stringToSign(Request(method: "GET", target: "/awsexamplebucket1/photos/puppy.jpg", headers: ["Date": "d"]), bucket: nil)
            == "GET\n\n\nd\n/awsexamplebucket1/photos/puppy.jpg")
    }

    @Test func documentedUploadWithAmzHeaders() throws {
        let request = Request(method: "PUT", target: "/db-backup.dat.gz", headers: HTTPHeaders([
            ("User-Agent", "curl/7.15.5"), ("Host", "static.example.com:8080"), ("Date", "Tue, 27 Mar 2007 21:06:08 +0000"),
            ("x-amz-acl", "public-read"), ("content-type", "application/x-download"), ("Content-MD5", "4gJE4saaMU4BqNR0kLY+lw=="),
            ("X-Amz-Meta-ReviewedBy", "email@example.com"), ("X-Amz-Meta-ReviewedBy", "jane@example.com"),
            ("X-Amz-Meta-FileChecksum", "0x02661779"), ("X-Amz-Meta-ChecksumAlgorithm", "crc32"),
            ("Content-Disposition", "attachment; filename=database.dat"), ("Content-Encoding", "gzip"), ("Content-Length", "5913339"),
        ]))
        #expect(Self.stringToSign(request, bucket: "static.example.com") == """
            PUT
            4gJE4saaMU4BqNR0kLY+lw==
            application/x-download
            Tue, 27 Mar 2007 21:06:08 +0000
            x-amz-acl:public-read
            x-amz-meta-checksumalgorithm:crc32
            x-amz-meta-filechecksum:0x02661779
            x-amz-meta-reviewedby:email@example.com,jane@example.com
            /static.example.com/db-backup.dat.gz
            """)
        // A CNAME bucket is virtual-hosted without a `bucket.` prefix: s3store says so.
        let signed = Self.signing(request, bucket: "static.example.com")
        #expect(Self.authenticator(at: "2007-03-27T21:06:08Z").authenticate(signed, bucket: "static.example.com", virtualHosted: true).sigValue != nil)
        #expect(Self.authenticator(at: "2007-03-27T21:06:08Z").authenticate(signed, bucket: "static.example.com", virtualHosted: false).sigFailure?.code == "SignatureDoesNotMatch")
    }

    @Test func subresources() {
        let request = Request(method: "PUT", target: "/bkt/key?uploadId=a%2Bb&partNumber=2&prefix=x&response-content-type=text%2Fplain&acl&max-keys=5",
                              headers: ["Date": "d", "x-amz-date": "Tue, 27 Mar 2007 21:06:08 +0000"])
        // x-amz-date replaces the Date line (which is then empty); sub-resources keep decoded values, sorted.
        #expect(Self.stringToSign(request, bucket: nil) == """
            PUT


            
            x-amz-date:Tue, 27 Mar 2007 21:06:08 +0000
            /bkt/key?acl&partNumber=2&response-content-type=text/plain&uploadId=a+b
            """)
        #expect(SigV2.canonicalizedResource(rawPath: "/bkt/k", query: QueryParameters(rawQuery: "uploads"), resourceBucket: nil) == "/bkt/k?uploads")
        // A bucket alone is `/bucket/`, path-style as well (botocore's ListObjectsV2 signs "/bkt/").
        #expect(SigV2.canonicalizedResource(rawPath: "/bkt", query: QueryParameters(rawQuery: "list-type=2&prefix=a"), resourceBucket: nil) == "/bkt/")
        #expect(SigV2.canonicalizedResource(rawPath: "/", query: QueryParameters(rawQuery: ""), resourceBucket: nil) == "/")
        #expect(SigV2.canonicalizedResource(rawPath: "/", query: QueryParameters(rawQuery: "location="), resourceBucket: "bkt") == "/bkt/?location=")
    }

    @Test func presignedURLWithHeadersInTheQuery() throws {
        // botocore's HmacV1QueryAuth moves x-amz-* and Content-Type into the query string.
        let unsigned = Request(method: "PUT", target: "/bkt/k?AWSAccessKeyId=\(Self.accessKey)&Expires=1796019477&content-type=image%2Fjpeg&x-amz-security-token=tok",
                               headers: ["Host": "h"])
        let sts = Self.stringToSign(unsigned, bucket: nil, expires: "1796019477")
        #expect(sts == "PUT\n\nimage/jpeg\n1796019477\nx-amz-security-token:tok\n/bkt/k")
        let signature = SigV2.signature(secret: Self.secret, stringToSign: sts)
        let encoded = SigV4Encoding.encode(signature)
        let target = unsigned.rawPath + "?" + unsigned.rawQuery + "&Signature=" + encoded
        let authenticator = Self.authenticator(at: "2026-11-30T06:02:57Z")
        #expect(authenticator.authenticate(Request(method: "PUT", target: target, headers: ["Host": "h"]), bucket: "bkt").sigValue?.method == .sigV2Query)
        // A Content-Type header, when sent, is what counts.
        let png = authenticator.authenticate(Request(method: "PUT", target: target, headers: ["Host": "h", "Content-Type": "image/png"]), bucket: "bkt").sigFailure
        #expect(png?.diagnosis == "Content-Type was signed as image/jpeg but the request sent image/png.")
        // A signature whose `+` was left unencoded still means `+`.
        if signature.contains("+") {
            let raw = unsigned.rawPath + "?" + unsigned.rawQuery + "&Signature=" + signature.replacingOccurrences(of: "/", with: "%2F").replacingOccurrences(of: "=", with: "%3D")
            #expect(authenticator.authenticate(Request(method: "PUT", target: raw, headers: ["Host": "h"]), bucket: "bkt").sigValue != nil)
        }
    }

    @Test func failures() throws {
        let authenticator = Self.authenticator(at: "2007-03-27T19:36:42Z")
        let base = Request(method: "GET", target: "/bkt/k", headers: ["Host": "h", "Date": "Tue, 27 Mar 2007 19:36:42 +0000"])
        let signed = Self.signing(base, bucket: nil)
        #expect(authenticator.authenticate(signed, bucket: "bkt").sigValue != nil)

        let skewed = try #require(Self.authenticator(at: "2007-03-27T19:52:43Z").authenticate(signed, bucket: "bkt").sigFailure)
        #expect(skewed.code == "RequestTimeTooSkewed")
        #expect(skewed.xmlFields.first?.1 == "Tue, 27 Mar 2007 19:36:42 +0000")

        let noDate = Self.signing(Request(method: "GET", target: "/bkt/k", headers: ["Host": "h"]), bucket: nil)
        #expect(authenticator.authenticate(noDate, bucket: "bkt").sigFailure == .missingDate)

        let unknown = Self.signing(base, bucket: nil, accessKey: "AKIANOPE")
        #expect(authenticator.authenticate(unknown, bucket: "bkt").sigFailure == .invalidAccessKeyId(accessKey: "AKIANOPE"))

        let malformed = Request(method: "GET", target: "/bkt/k", headers: ["Host": "h", "Date": "Tue, 27 Mar 2007 19:36:42 +0000", "Authorization": "AWS nocolon"])
        let failure = try #require(authenticator.authenticate(malformed, bucket: "bkt").sigFailure)
        #expect(failure.code == "InvalidArgument")
        #expect(failure.message == "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature")

        let otherSecret = Self.signing(base, bucket: nil, secret: "other-secret")
        let mismatch = try #require(authenticator.authenticate(otherSecret, bucket: "bkt").sigFailure)
        #expect(mismatch.code == "SignatureDoesNotMatch")
        #expect(mismatch.diagnosis?.contains("secret key of access key 'other'") == true)

        let badExpires = Request(method: "GET", target: "/bkt/k?AWSAccessKeyId=\(Self.accessKey)&Signature=abc&Expires=soon", headers: ["Host": "h"])
        let expires = try #require(authenticator.authenticate(badExpires, bucket: "bkt").sigFailure)
        #expect(expires.code == "AccessDenied")
        #expect(expires.message == "Invalid date (should be seconds since epoch): soon")

        let missing = Request(method: "GET", target: "/bkt/k?AWSAccessKeyId=\(Self.accessKey)&Signature=abc", headers: ["Host": "h"])
        #expect(authenticator.authenticate(missing, bucket: "bkt").sigFailure?.message == "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters")
    }

    @Test func methodAndPathSuspects() throws {
        let authenticator = Self.authenticator(at: "2007-03-27T19:36:42Z")
        let get = Request(method: "GET", target: "/bkt/a%20b", headers: ["Host": "h", "Date": "Tue, 27 Mar 2007 19:36:42 +0000"])
        let signed = Self.signing(get, bucket: nil)
        let head = Request(method: "HEAD", rawPath: signed.rawPath, rawQuery: "", headers: signed.headers)
        #expect(authenticator.authenticate(head, bucket: "bkt").sigFailure?.diagnosis == "The signature is valid for a GET request, but this request is HEAD.")
        var headers = get.headers
        headers.set("Authorization", "AWS \(Self.accessKey):\(SigV2.signature(secret: Self.secret, stringToSign: "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/bkt/a b"))")
        let decoded = Request(method: "GET", target: "/bkt/a%20b", headers: headers)
        #expect(authenticator.authenticate(decoded, bucket: "bkt").sigFailure?.diagnosis?.contains("decoded path") == true)
    }
}
