import Foundation
import Testing
@testable import HearthClient

@Suite struct S3ErrorResponseTests {
    static let signatureMismatch = """
    <?xml version="1.0" encoding="UTF-8"?>
    <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message><AWSAccessKeyId>test</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256
    20250102T030405Z
    20250102/us-east-1/s3/aws4_request
    5f1c</StringToSign><SignatureProvided>abc123</SignatureProvided><StringToSignBytes>41 57 53</StringToSignBytes><CanonicalRequest>PUT
    /uploads/users/u1/uploads/x.jpg
    X-Amz-Algorithm=AWS4-HMAC-SHA256&amp;X-Amz-SignedHeaders=content-type%3Bhost
    content-type:image/png
    host:127.0.0.1:9000

    content-type;host
    UNSIGNED-PAYLOAD</CanonicalRequest><CanonicalRequestBytes>50 55 54</CanonicalRequestBytes><Diagnosis>Content-Type was signed as image/jpeg but the request sent image/png</Diagnosis><RequestId>4442587FB7D0A2F9</RequestId><HostId>hearth</HostId></Error>
    """

    @Test func signatureMismatchKeepsEveryElement() throws {
        let e = try #require(S3ErrorResponse(status: 403, headers: ["x-hearth-diagnosis": "from header"], body: Self.signatureMismatch))
        #expect(e.code == "SignatureDoesNotMatch")
        #expect(e.message.hasPrefix("The request signature we calculated"))
        #expect(e.accessKeyID == "test")
        #expect(e.signatureProvided == "abc123")
        #expect(e.stringToSign?.hasPrefix("AWS4-HMAC-SHA256\n20250102T030405Z\n") == true)
        #expect(e.canonicalRequest?.contains("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-SignedHeaders=content-type%3Bhost") == true)
        #expect(e.canonicalRequest?.contains("\n\ncontent-type;host\nUNSIGNED-PAYLOAD") == true)
        #expect(e["CanonicalRequestBytes"] == "50 55 54")
        // The XML element wins over the header.
        #expect(e.diagnosis == "Content-Type was signed as image/jpeg but the request sent image/png")
        #expect(e.requestID == "4442587FB7D0A2F9")
        #expect(e.fields.map(\.name) == ["Code", "Message", "AWSAccessKeyId", "StringToSign", "SignatureProvided", "StringToSignBytes",
                                         "CanonicalRequest", "CanonicalRequestBytes", "Diagnosis", "RequestId", "HostId"])
        #expect(e.description.contains("image/jpeg"))
    }

    @Test func expiredURL() throws {
        let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired</Message><X-Amz-Expires>60</X-Amz-Expires><Expires>2025-01-02T03:05:05Z</Expires><ServerTime>2025-01-02T04:00:00Z</ServerTime><RequestId>R</RequestId></Error>"
        let e = try #require(S3ErrorResponse(status: 403, body: body))
        #expect(e.code == "AccessDenied")
        #expect(e.message == "Request has expired")
        #expect(e["X-Amz-Expires"] == "60")
        #expect(e["ServerTime"] == "2025-01-02T04:00:00Z")
    }

    @Test(arguments: [
        ("&lt;a&gt; &amp; &quot;b&quot; &apos;c&apos;", "<a> & \"b\" 'c'"),
        ("&#65;&#x42;&#X43;", "ABC"),
        ("&unknown; &", "&unknown; &"),
        ("<![CDATA[<raw> & stuff]]>", "<raw> & stuff"),
    ])
    func entities(_ raw: String, _ decoded: String) {
        #expect(S3ErrorXML.decodeEntities(Substring(raw)) == decoded)
    }

    @Test(arguments: ["", "not xml", "<ListBucketResult></ListBucketResult>", "{\"error\": {}}"])
    func otherBodiesAreNotS3Errors(_ body: String) {
        #expect(S3ErrorResponse(status: 400, body: body) == nil)
    }

    @Test func emptyElementsAndAttributes() throws {
        let e = try #require(S3ErrorResponse(status: 404, body: "<Error xmlns=\"x\"><Code>NoSuchKey</Code><Message/><Key>a&amp;b</Key></Error>"))
        #expect(e.code == "NoSuchKey")
        #expect(e.message == "")
        #expect(e["Key"] == "a&b")
    }

    @Test func bodilessErrorsTakeTheirCodeFromTheStatus() {
        #expect(S3ErrorResponse(bodilessStatus: 404).code == "NotFound")
        #expect(S3ErrorResponse(bodilessStatus: 403).code == "Forbidden")
        #expect(S3ErrorResponse(bodilessStatus: 503).code == "503")
        #expect(S3ErrorResponse(bodilessStatus: 403, headers: ["x-hearth-diagnosis": "d"]).diagnosis == "d")
    }

    @Test func responsesAreClassifiedByShape() {
        let xml = HTTPResult(status: 403, headers: ["content-type": "application/xml"], body: Data(Self.signatureMismatch.utf8))
        guard case .s3(let s3) = HearthClientError.from(xml, method: "PUT") else { Issue.record("not s3"); return }
        #expect(s3.code == "SignatureDoesNotMatch")

        let json = HTTPResult(status: 403, headers: ["content-type": "application/json"],
                              body: Data(#"{"error": {"code": 403, "message": "false for 'get' @ L5", "status": "PERMISSION_DENIED"}}"#.utf8))
        let denied = HearthClientError.from(json, method: "GET")
        #expect(denied.isPermissionDenied)
        #expect(denied.httpStatus == 403)

        let head = HTTPResult(status: 404, headers: [:], body: Data())
        guard case .s3(let h) = HearthClientError.from(head, method: "HEAD") else { Issue.record("not s3"); return }
        #expect(h.code == "NotFound")

        let other = HTTPResult(status: 502, headers: [:], body: Data("Bad gateway".utf8))
        #expect(HearthClientError.from(other, method: "GET") == .http(status: 502, body: "Bad gateway"))
    }
}
