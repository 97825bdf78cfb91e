import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HearthCore
import HearthCrypto
import HearthHTTP
import Testing
@testable import S3Emulator

/// The S3 service behind a real HTTPServer on a free port, exercised with URLSession.
@Suite struct S3SocketTests {
    final class Server: @unchecked Sendable {
        let s3: S3Harness
        let server: HTTPServer
        var base: String { server.url }
        var host: String { "127.0.0.1:\(server.port)" }

        init() throws {
            s3 = try S3Harness()
            server = HTTPServer(name: "s3-test", configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threads: 2),
                                service: s3.service.http, ids: IDGenerator(seed: 3), clock: s3.clock)
            try server.start()
            s3.service.setPublicBaseURL(server.url)
        }

        deinit { server.stop(graceSeconds: 1) }

        /// A URLRequest signed in the Authorization header with `signer`.
        func signed(_ method: String, _ target: String, body: Data = Data(), headers: [(String, String)] = [],
                    signer: RequestSigner? = nil) -> URLRequest {
            var h = HTTPHeaders()
            h.add("Host", host)
            for (n, v) in headers { h.add(n, v) }
            let (path, query, _) = Request.split(target: target)
            let signed = (signer ?? s3.signer).sign(method: method, rawPath: path, rawQuery: query, headers: h,
                                                    payloadHash: Hex.encode(Digest.sha256([UInt8](body))), date: s3.clock.now()).headers
            var request = URLRequest(url: URL(string: base + target)!)
            request.httpMethod = method
            for (name, value) in signed where name.lowercased() != "host" { request.setValue(value, forHTTPHeaderField: name) }
            if !body.isEmpty || method == "PUT" { request.httpBody = body }
            return request
        }
    }

    static func send(_ request: URLRequest) async throws -> (Int, [String: String], Data) {
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var headers: [String: String] = [:]
        for (k, v) in http.allHeaderFields { headers[String(describing: k).lowercased()] = String(describing: v) }
        return (http.statusCode, headers, data)
    }

    static func xml(_ data: Data) -> XMLElement? { try? S3XMLParser.parse([UInt8](data)) }

    @Test func roundTripOverTheWire() async throws {
        let t = try Server()
        #expect(try await Self.send(t.signed("PUT", "/wire")).0 == 200)
        let body = Data(S3Harness.bytes(3 << 20 + 11))
        let (status, headers, _) = try await Self.send(t.signed("PUT", "/wire/a%20b/big.bin", body: body, headers: [("Content-Type", "app/x")]))
        #expect(status == 200)
        #expect(headers["etag"] == ETag.quoted(md5: Digest.md5([UInt8](body))))
        let got = try await Self.send(t.signed("GET", "/wire/a%20b/big.bin"))
        #expect(got.0 == 200)
        #expect(got.2 == body)
        #expect(got.1["content-type"] == "app/x")
        #expect(got.1["content-length"] == String(body.count))
        #expect(got.1["server"] == "AmazonS3")
        let head = try await Self.send(t.signed("HEAD", "/wire/a%20b/big.bin"))
        #expect(head.0 == 200)
        #expect(head.1["content-length"] == String(body.count))
        #expect(head.2.isEmpty)
        let range = try await Self.send(t.signed("GET", "/wire/a%20b/big.bin", headers: [("Range", "bytes=100-199")]))
        #expect(range.0 == 206)
        #expect(range.2 == body[100...199])
        let missing = try await Self.send(t.signed("GET", "/wire/nothing"))
        #expect(missing.0 == 404)
        #expect(Self.xml(missing.2)?.childText("RequestId") == missing.1["x-amz-request-id"])
    }

    @Test func presignedPutWithWrongContentType() async throws {
        let t = try Server()
        t.s3.makeBucket("photos")
        let url = try t.s3.service.presignedURL(method: "PUT", bucket: "photos", key: "cat.jpg", expiresSeconds: 300,
                                                signedHeaders: ["content-type": "image/jpeg"])
        var good = URLRequest(url: URL(string: url)!)
        good.httpMethod = "PUT"
        good.setValue("image/jpeg", forHTTPHeaderField: "Content-Type")
        good.httpBody = Data("jpeg".utf8)
        #expect(try await Self.send(good).0 == 200)

        var bad = good
        bad.setValue("image/png", forHTTPHeaderField: "Content-Type")
        bad.httpBody = Data("png".utf8)
        let (status, headers, data) = try await Self.send(bad)
        #expect(status == 403)
        #expect(Self.xml(data)?.childText("Code") == "SignatureDoesNotMatch")
        let diagnosis = headers["x-hearth-diagnosis"] ?? ""
        #expect(diagnosis.contains("image/jpeg") && diagnosis.contains("image/png"), "\(diagnosis)")
        #expect(t.s3.call("GET", "/photos/cat.jpg").text == "jpeg")
    }

    @Test func presignedURLExpiresWithTheClock() async throws {
        let t = try Server()
        t.s3.makeBucket("docs")
        t.s3.put("docs", "a.txt", Array("doc".utf8))
        let url = URL(string: try t.s3.service.presignedURL(method: "GET", bucket: "docs", key: "a.txt", expiresSeconds: 900, signedHeaders: [:]))!
        let ok = try await Self.send(URLRequest(url: url))
        #expect(ok.0 == 200)
        #expect(ok.2 == Data("doc".utf8))
        t.s3.clock.advance(seconds: 901)
        let (status, _, data) = try await Self.send(URLRequest(url: url))
        #expect(status == 403)
        let error = try #require(Self.xml(data))
        #expect(error.childText("Code") == "AccessDenied")
        #expect(error.childText("Message") == "Request has expired")
        #expect(error.childText("X-Amz-Expires") == "900")
    }

    @Test func wrongSecretAndUnknownKey() async throws {
        let t = try Server()
        t.s3.makeBucket("locked")
        let wrong = RequestSigner(accessKey: "test", secret: "guess", region: "us-east-1")
        let (status, _, data) = try await Self.send(t.signed("GET", "/locked?list-type=2", signer: wrong))
        #expect(status == 403)
        #expect(Self.xml(data)?.childText("Code") == "SignatureDoesNotMatch")
        #expect(Self.xml(data)?.childText("AWSAccessKeyId") == "test")
        let unknown = RequestSigner(accessKey: "AKIANOBODY", secret: "x", region: "us-east-1")
        let u = try await Self.send(t.signed("PUT", "/locked/k", body: Data("x".utf8), signer: unknown))
        #expect(u.0 == 403)
        #expect(Self.xml(u.2)?.childText("Code") == "InvalidAccessKeyId")
        #expect(t.s3.call("GET", "/locked/k").errorCode == "NoSuchKey")
        let headUnknown = try await Self.send(t.signed("HEAD", "/locked/k", signer: unknown))
        #expect(headUnknown.0 == 403)
        #expect(headUnknown.2.isEmpty)
    }
}
