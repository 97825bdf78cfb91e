import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HearthCore
import HearthCrypto
import HearthHTTP
import Testing
@testable import S3Emulator

/// A form upload and a CORS preflight over a real socket: the server's streaming and early
/// answers carry them as the harness does.
@Suite struct PostObjectSocketTests {
    @Test func aFormUploadOverTheWire() async throws {
        let t = try S3SocketTests.Server()
        t.s3.makeBucket("forms")
        let data = S3Harness.bytes(2 << 20 + 5)
        var form = t.s3.signedForm(bucket: "forms", key: "up/${filename}", file: data)
        form.fields = PostPolicySigner.signedFields([("key", "up/${filename}"), ("success_action_status", "201")], bucket: "forms",
                                                    date: t.s3.clock.now().amzDate)
        form.filename = "big.bin"
        var request = URLRequest(url: URL(string: t.base + "/forms")!)
        request.httpMethod = "POST"
        request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(form.body())
        let (status, headers, body) = try await S3SocketTests.send(request)
        #expect(status == 201, "\(String(decoding: body, as: UTF8.self))")
        #expect(headers["etag"] == ETag.quoted(md5: Digest.md5(data)))
        #expect(S3SocketTests.xml(body)?.childText("Key") == "up/big.bin")
        #expect(S3SocketTests.xml(body)?.childText("Location") == "\(t.base)/forms/up%2Fbig.bin")
        let get = try await S3SocketTests.send(t.signed("GET", "/forms/up/big.bin"))
        #expect(get.2 == Data(data))

        // A refused form still has its whole body read, and the connection stays usable.
        var bad = form
        bad.fields = bad.fields.map { $0.0 == "x-amz-signature" ? ($0.0, String(repeating: "0", count: 64)) : $0 }
        request.httpBody = Data(bad.body())
        let refused = try await S3SocketTests.send(request)
        #expect(refused.0 == 403)
        #expect(S3SocketTests.xml(refused.2)?.childText("Code") == "SignatureDoesNotMatch")
        #expect(refused.1["x-hearth-diagnosis"] != nil)
    }

    @Test func aPreflightOverTheWire() async throws {
        let t = try S3SocketTests.Server()
        t.s3.makeBucket("site")
        let rules = Array("<CORSConfiguration><CORSRule><AllowedOrigin>http://app.test</AllowedOrigin><AllowedMethod>PUT</AllowedMethod><AllowedHeader>*</AllowedHeader></CORSRule></CORSConfiguration>".utf8)
        let put = try await S3SocketTests.send(t.signed("PUT", "/site?cors", body: Data(rules), headers: [("Content-MD5", S3Harness.base64MD5(rules))]))
        #expect(put.0 == 200)
        var preflight = URLRequest(url: URL(string: t.base + "/site/photo.jpg")!)
        preflight.httpMethod = "OPTIONS"
        preflight.setValue("http://app.test", forHTTPHeaderField: "Origin")
        preflight.setValue("PUT", forHTTPHeaderField: "Access-Control-Request-Method")
        preflight.setValue("content-type", forHTTPHeaderField: "Access-Control-Request-Headers")
        let (status, headers, _) = try await S3SocketTests.send(preflight)
        #expect(status == 200)
        #expect(headers["access-control-allow-origin"] == "http://app.test")
        #expect(headers["access-control-allow-methods"] == "PUT")
        #expect(headers["access-control-allow-headers"] == "content-type")
        preflight.setValue("http://other.test", forHTTPHeaderField: "Origin")
        let refused = try await S3SocketTests.send(preflight)
        #expect(refused.0 == 403)
        #expect(S3SocketTests.xml(refused.2)?.childText("Code") == "AccessForbidden")
    }
}
