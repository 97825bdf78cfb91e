import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

@Suite struct S3ErrorTests {
    /// One value of every case (the switch in `code` is exhaustive, this list must follow it).
    static let all: [S3Error] = [
        .accessDenied(message: "Access Denied"), .badDigest(expected: "a", calculated: "b"), .checksumMismatch(.crc32),
        .bucketAlreadyExists(bucket: "b"), .bucketAlreadyOwnedByYou(bucket: "b"), .bucketNotEmpty(bucket: "b"),
        .entityTooLarge(proposedSize: 2, maxSize: 1), .entityTooSmall(proposedSize: 1, minSize: 5, partNumber: 1, etag: "\"e\""),
        .illegalLocationConstraint(constraint: "eu-west-1"), .incompleteBody, .internalError,
        .invalidArgument(message: "m", name: "n", value: "v"), .invalidBucketName(bucket: "B"), .invalidDigest(contentMD5: "x"),
        .invalidLocationConstraint(constraint: "us-east-1"), .invalidPart(uploadID: "u", partNumber: 1, etag: "e"),
        .invalidPartNumber(partNumberRequested: 3, actualPartCount: 1), .invalidPartOrder(uploadID: "u"),
        .invalidRange(requested: "bytes=9-", actualSize: 1), .invalidRequest(message: "m"), .invalidStorageClass(storageClass: "X"),
        .invalidURI, .keyTooLong(size: 2000), .malformedXML, .metadataTooLarge(size: 3000), .requestHeaderSectionTooLarge, .methodNotAllowed(method: "PATCH", resourceType: "OBJECT"),
        .missingContentLength, .noSuchBucket(bucket: "b"), .noSuchKey(key: "k"), .noSuchUpload(uploadID: "u"),
        .noSuchVersion(key: "k", versionID: "v"), .noSuchBucketConfiguration(code: "NoSuchTagSet", message: "The TagSet does not exist", bucket: "b"),
        .notImplemented(header: "Transfer-Encoding"), .preconditionFailed(condition: "If-Match"), .signature(.anonymous),
        .accessForbidden(message: "CORSResponse: Bucket not found", method: "GET", resourceType: "BUCKET", diagnosis: nil),
        .badRequest(message: "Insufficient information. Origin request header needed."),
        .postForm(.invalidPolicy(detail: "Invalid JSON.")),
        .malformedPolicy(message: "Policy has invalid resource"), .illegalVersioningConfiguration,
        .invalidTag(message: "Cannot provide multiple Tags with the same key"), .deletedKey(key: "k", versionID: "null"),
        .deleteMarkerNotAllowed(method: "GET", versionID: "null", lastModified: "Mon, 30 Nov 2026 06:33:14 GMT"),
    ]

    @Test(arguments: all)
    func everyCaseRenders(error: S3Error) throws {
        let response = S3ErrorRenderer.response(error, requestID: "REQ123", hostID: "HOST456", method: "GET")
        #expect(response.status == error.httpStatus)
        #expect((400...599).contains(response.status))
        #expect(response.headers["Content-Type"] == "application/xml")
        let bytes = try #require(response.bodyBytes)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>"))
        let xml = try S3XMLParser.parse(bytes)
        #expect(xml.name == "Error")
        #expect(xml.children.first?.name == "Code")
        #expect(xml.childText("Code") == error.code)
        #expect(!error.code.isEmpty)
        #expect(xml.childText("Message") == error.message)
        #expect(!error.message.isEmpty)
        #expect(xml.childText("RequestId") == "REQ123")
        #expect(xml.childText("HostId") == "HOST456")
        let names = xml.children.map(\.name)
        #expect(Array(names.prefix(2)) == ["Code", "Message"])
        #expect(Array(names.dropFirst(2).prefix(error.details.count)) == error.details.map(\.0))
        let head = S3ErrorRenderer.response(error, requestID: "REQ123", hostID: "HOST456", method: "HEAD")
        #expect(head.status == error.httpStatus)
        #expect(head.bodyBytes == [])
    }

    @Test func onlyKnownCasesShareACode() {
        // Content-MD5 and checksum mismatches are both BadDigest; anonymous requests are AccessDenied;
        // a delete marker answers NoSuchKey and MethodNotAllowed with its own headers.
        let codes = Self.all.map(\.code)
        let shared = Dictionary(grouping: codes, by: { $0 }).filter { $0.value.count > 1 }.keys
        #expect(Set(shared) == ["BadDigest", "AccessDenied", "NoSuchKey", "MethodNotAllowed"])
    }

    @Test func statusesMatchS3() {
        let expected: [String: Int] = ["NoSuchKey": 404, "NoSuchBucket": 404, "NoSuchUpload": 404, "BucketNotEmpty": 409,
                                       "BucketAlreadyOwnedByYou": 409, "InvalidRange": 416, "PreconditionFailed": 412,
                                       "MethodNotAllowed": 405, "NotImplemented": 501, "MissingContentLength": 411,
                                       "InternalError": 500, "AccessDenied": 403, "EntityTooSmall": 400, "InvalidPart": 400]
        for e in Self.all {
            if let status = expected[e.code] { #expect(e.httpStatus == status, "\(e.code)") }
        }
    }

    @Test func textIsEscaped() throws {
        let bytes = S3ErrorRenderer.document(.noSuchKey(key: "a<b>&\"c'\r"), requestID: "r", hostID: "h")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("<Key>a&lt;b&gt;&amp;&quot;c&apos;&#13;</Key>"))
        #expect(try S3XMLParser.parse(bytes).childText("Key") == "a<b>&\"c'\r")
    }

    @Test func signatureFailuresCarryTheirDiagnosis() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let wrong = RequestSigner(accessKey: "test", secret: "not-the-secret", region: "us-east-1")
        let r = s3.send(s3.request("GET", "/bkt/k", signer: wrong))
        #expect(r.status == 403)
        #expect(r.errorCode == "SignatureDoesNotMatch")
        let names = r.xml?.children.map(\.name) ?? []
        #expect(names.first == "Code")
        #expect(names.contains("StringToSign"))
        #expect(names.contains("CanonicalRequest"))
        #expect(names.suffix(3) == ["RequestId", "HostId", "Diagnosis"] || names.suffix(2) == ["RequestId", "HostId"])
        if let diagnosis = r.xml?.childText("Diagnosis") {
            #expect(r.header("x-hearth-diagnosis") == S3ErrorRenderer.headerSafe(diagnosis))
        }
        let unknown = RequestSigner(accessKey: "nobody", secret: "x", region: "us-east-1")
        let u = s3.send(s3.request("GET", "/bkt/k", signer: unknown))
        #expect(u.status == 403)
        #expect(u.errorCode == "InvalidAccessKeyId")
        let anonymous = s3.send(s3.request("GET", "/bkt/k", signed: false))
        #expect(anonymous.status == 403)
        #expect(anonymous.errorCode == "AccessDenied")
        let headAnonymous = s3.send(s3.request("HEAD", "/bkt/k", signed: false))
        #expect(headAnonymous.status == 403)
        #expect(headAnonymous.body.isEmpty)
    }

    @Test func internalErrorsAreLoggedAndRendered() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        try s3.database.write { c in try c.execute("DROP TABLE s3_objects") }
        let r = s3.call("GET", "/bkt/k")
        #expect(r.status == 500)
        #expect(r.errorCode == "InternalError")
    }
}
