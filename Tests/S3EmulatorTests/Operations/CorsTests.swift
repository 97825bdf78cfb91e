import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import Testing
@testable import S3Emulator

/// Bucket CORS: PutBucketCors/GetBucketCors/DeleteBucketCors with S3's validation, the preflight
/// answers S3 gives (recorded against S3 by LocalStack's validated tests), and the headers actual
/// requests get.
@Suite struct CorsTests {
    static func cors(_ rules: String) -> [UInt8] {
        Array("<CORSConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\(rules)</CORSConfiguration>".utf8)
    }

    static let localhostRule = "<CORSRule><AllowedOrigin>https://localhost:4200</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod><AllowedHeader>*</AllowedHeader><MaxAgeSeconds>3000</MaxAgeSeconds></CORSRule>"

    /// A harness with bucket `web` holding `a.txt`, configured with `rules` when given.
    static func harness(_ rules: String? = nil, configuration: S3Configuration = S3Configuration()) throws -> S3Harness {
        let h = try S3Harness(configuration: configuration)
        h.makeBucket("web")
        h.put("web", "a.txt", Array("cors".utf8))
        if let rules {
            let r = putCors(h, cors(rules))
            precondition(r.status == 200, r.text)
        }
        return h
    }

    @discardableResult
    static func putCors(_ h: S3Harness, _ body: [UInt8], bucket: String = "web", md5: Bool = true) -> S3TestResponse {
        h.call("PUT", "/\(bucket)?cors", headers: md5 ? [("Content-MD5", S3Harness.base64MD5(body))] : [], body: body)
    }

    /// An unsigned OPTIONS request.
    static func options(_ h: S3Harness, _ target: String, _ headers: [(String, String)]) -> S3TestResponse {
        h.send(h.request("OPTIONS", target, headers: headers, signed: false))
    }

    // MARK: Configuration operations

    @Test func putGetDelete() throws {
        let h = try Self.harness()
        #expect(h.call("GET", "/web?cors").errorCode == "NoSuchCORSConfiguration")
        let missing = h.call("GET", "/web?cors").xml
        #expect(missing?.childText("Message") == "The CORS configuration does not exist")
        #expect(missing?.childText("BucketName") == "web")
        #expect(h.call("DELETE", "/web?cors").status == 204)
        let rules = "<CORSRule><ID>one</ID><AllowedHeader>x-amz-*</AllowedHeader><AllowedHeader>x-AMZ-server-SIDE-encryption</AllowedHeader><AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod><AllowedOrigin>https://test.com</AllowedOrigin><AllowedOrigin>http://test.com:80</AllowedOrigin><AllowedOrigin></AllowedOrigin><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds></CORSRule><CORSRule><AllowedMethod>PUT</AllowedMethod><AllowedOrigin>*</AllowedOrigin></CORSRule>"
        #expect(Self.putCors(h, Self.cors(rules)).status == 200)
        let got = h.call("GET", "/web?cors")
        #expect(got.status == 200)
        let doc = try #require(got.xml)
        #expect(doc.name == "CORSConfiguration")
        let first = doc.children(named: "CORSRule")[0]
        #expect(first.childText("ID") == "one")
        #expect(first.children(named: "AllowedHeader").map(\.text) == ["x-amz-*", "x-AMZ-server-SIDE-encryption"])
        #expect(first.children(named: "AllowedMethod").map(\.text) == ["GET", "HEAD"])
        #expect(first.children(named: "AllowedOrigin").map(\.text) == ["https://test.com", "http://test.com:80", ""])
        #expect(first.childText("ExposeHeader") == "ETag")
        #expect(first.childText("MaxAgeSeconds") == "3000")
        let second = doc.children(named: "CORSRule")[1]
        #expect(second.child("ID") == nil && second.child("MaxAgeSeconds") == nil)
        // A new configuration replaces the old one.
        #expect(Self.putCors(h, Self.cors(Self.localhostRule)).status == 200)
        #expect(h.call("GET", "/web?cors").xml?.children(named: "CORSRule").count == 1)
        #expect(h.call("DELETE", "/web?cors").status == 204)
        #expect(h.call("GET", "/web?cors").errorCode == "NoSuchCORSConfiguration")
    }

    @Test(arguments: [
        ("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>MYMETHOD</AllowedMethod></CORSRule>",
         "InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is MYMETHOD"),
        ("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>OPTIONS</AllowedMethod></CORSRule>",
         "InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is OPTIONS"),
        ("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>get</AllowedMethod></CORSRule>",
         "InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is get"),
        ("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod></AllowedMethod></CORSRule>",
         "InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is "),
        ("<CORSRule><AllowedOrigin>*example*.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>",
         "InvalidRequest", "AllowedOrigin \"*example*.com\" can not have more than one wildcard."),
        ("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>x-*-*</AllowedHeader></CORSRule>",
         "InvalidRequest", "AllowedHeader \"x-*-*\" can not have more than one wildcard."),
        ("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><ExposeHeader>*</ExposeHeader></CORSRule>",
         "InvalidRequest", "ExposeHeader \"*\" contains wildcard. We currently do not support wildcard for ExposeHeader."),
        ("", "MalformedXML", nil),
        ("<CORSRule/>", "MalformedXML", nil),
        ("<CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule>", "MalformedXML", nil),
        ("<CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule>", "MalformedXML", nil),
        ("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>soon</MaxAgeSeconds></CORSRule>",
         "MalformedXML", nil),
        ("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><Unknown>1</Unknown></CORSRule>", "MalformedXML", nil),
        ("<Rule/>", "MalformedXML", nil),
        (String(repeating: "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>", count: 101),
         "MalformedXML", nil),
        ("<CORSRule><ID>\(String(repeating: "i", count: 256))</ID><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>",
         "InvalidArgument", nil),
    ] as [(String, String, String?)])
    func invalidConfigurations(rules: String, code: String, message: String?) throws {
        let h = try Self.harness()
        let r = Self.putCors(h, Self.cors(rules))
        #expect(r.status == 400)
        #expect(r.errorCode == code)
        if let message { #expect(r.xml?.childText("Message") == message) }
        #expect(h.call("GET", "/web?cors").errorCode == "NoSuchCORSConfiguration")
    }

    @Test func aHundredRulesAreAllowed() throws {
        let h = try Self.harness()
        let rules = String(repeating: "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>", count: 100)
        #expect(Self.putCors(h, Self.cors(rules)).status == 200)
    }

    @Test func anIntegrityHeaderIsRequired() throws {
        let h = try Self.harness()
        let body = Self.cors(Self.localhostRule)
        let none = Self.putCors(h, body, md5: false)
        #expect(none.errorCode == "InvalidRequest")
        #expect(none.xml?.childText("Message") == "Missing required header for this request: Content-MD5")
        let crc = Data(RunningChecksum.checksum(.crc32, body)).base64EncodedString()
        #expect(h.call("PUT", "/web?cors", headers: [("x-amz-checksum-crc32", crc)], body: body).status == 200)
        let wrong = h.call("PUT", "/web?cors", headers: [("Content-MD5", S3Harness.base64MD5([1]))], body: body)
        #expect(wrong.errorCode == "BadDigest")
    }

    @Test func theConfigurationGoesWithItsBucket() throws {
        let h = try Self.harness(Self.localhostRule)
        #expect(Self.putCors(h, Self.cors(Self.localhostRule), bucket: "nowhere").errorCode == "NoSuchBucket")
        #expect(h.call("GET", "/nowhere?cors").errorCode == "NoSuchBucket")
        h.call("DELETE", "/web/a.txt")
        #expect(h.call("DELETE", "/web").status == 204)
        h.makeBucket("web")
        #expect(h.call("GET", "/web?cors").errorCode == "NoSuchCORSConfiguration")
        #expect(Self.putCors(h, Self.cors(Self.localhostRule)).status == 200)
        try h.service.reset()
        h.makeBucket("web")
        #expect(h.call("GET", "/web?cors").errorCode == "NoSuchCORSConfiguration")
    }

    // MARK: Preflight

    static let notAllowed = "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."

    @Test func preflightsWithoutConfiguration() throws {
        let h = try Self.harness()
        let noOrigin = Self.options(h, "/web/a.txt", [])
        #expect(noOrigin.status == 400)
        #expect(noOrigin.errorCode == "BadRequest")
        #expect(noOrigin.xml?.childText("Message") == "Insufficient information. Origin request header needed.")
        let withMethod = Self.options(h, "/web/a.txt", [("Origin", "whatever"), ("Access-Control-Request-Method", "PUT")])
        #expect(withMethod.status == 403)
        #expect(withMethod.errorCode == "AccessForbidden")
        #expect(withMethod.xml?.childText("Message") == "CORSResponse: CORS is not enabled for this bucket.")
        #expect(withMethod.xml?.childText("Method") == "PUT")
        #expect(withMethod.xml?.childText("ResourceType") == "BUCKET")
        #expect(withMethod.header("x-hearth-diagnosis")?.contains("--s3-cors-origins") == true)
        let withoutMethod = Self.options(h, "/web/a.txt", [("Origin", "whatever")])
        #expect(withoutMethod.xml?.childText("Method") == "OPTIONS")
        let noBucket = Self.options(h, "/nowhere/a.txt", [("Origin", "whatever")])
        #expect(noBucket.status == 403)
        #expect(noBucket.xml?.childText("Message") == "CORSResponse: Bucket not found")
        #expect(Self.options(h, "/nowhere/a.txt", []).status == 400)
        // The element order S3 uses: Code, Message, Method, ResourceType, RequestId, HostId.
        #expect(noBucket.xml?.children.map(\.name).prefix(4) == ["Code", "Message", "Method", "ResourceType"])
        #expect(noBucket.header("Access-Control-Allow-Origin") == nil)
    }

    @Test func aMatchingPreflight() throws {
        let h = try Self.harness(Self.localhostRule)
        let r = Self.options(h, "/web/a.txt", [("Origin", "https://localhost:4200"), ("Access-Control-Request-Method", "PUT")])
        #expect(r.status == 200)
        #expect(r.body.isEmpty)
        #expect(r.header("Access-Control-Allow-Origin") == "https://localhost:4200")
        #expect(r.header("Access-Control-Allow-Methods") == "GET, PUT")
        #expect(r.header("Access-Control-Max-Age") == "3000")
        #expect(r.header("Access-Control-Allow-Credentials") == "true")
        #expect(r.header("Vary") == "Origin, Access-Control-Request-Headers, Access-Control-Request-Method")
        #expect(r.header("Access-Control-Allow-Headers") == nil)
        #expect(r.header("Content-Type") == nil)
        #expect(r.header("x-amz-request-id") != nil)
        let headers = Self.options(h, "/web/a.txt", [("Origin", "https://localhost:4200"), ("Access-Control-Request-Method", "GET"),
                                                   ("Access-Control-Request-Headers", "x-amz-request-payer,X-Amz-Expected-Bucket-Owner")])
        #expect(headers.header("Access-Control-Allow-Headers") == "x-amz-request-payer, x-amz-expected-bucket-owner")
    }

    @Test(arguments: [
        ("/web/a.txt", "http://localhost:4200", "PUT", nil, "OBJECT"),
        ("/web/a.txt", "https://localhost:4200", "DELETE", nil, "OBJECT"),
        ("/web", "https://localhost:4200/", "GET", nil, "BUCKET"),
    ] as [(String, String, String, String?, String)])
    func preflightsNoRuleAllows(path: String, origin: String, method: String, headers: String?, resourceType: String) throws {
        let h = try Self.harness(Self.localhostRule)
        var request = [("Origin", origin), ("Access-Control-Request-Method", method)]
        if let headers { request.append(("Access-Control-Request-Headers", headers)) }
        let r = Self.options(h, path, request)
        #expect(r.status == 403)
        #expect(r.errorCode == "AccessForbidden")
        #expect(r.xml?.childText("Message") == Self.notAllowed)
        #expect(r.xml?.childText("Method") == method)
        #expect(r.xml?.childText("ResourceType") == resourceType)
        #expect(r.header("x-hearth-diagnosis")?.contains("rule 1") == true)
        #expect(r.header("Access-Control-Allow-Origin") == nil)
    }

    @Test(arguments: [(nil, "null"), ("PATCH", "PATCH"), ("get", "get")] as [(String?, String)])
    func preflightsNeedAMethodS3Knows(method: String?, shown: String) throws {
        let h = try Self.harness(Self.localhostRule)
        var headers = [("Origin", "https://localhost:4200")]
        if let method { headers.append(("Access-Control-Request-Method", method)) }
        let r = Self.options(h, "/web/a.txt", headers)
        #expect(r.status == 400)
        #expect(r.errorCode == "BadRequest")
        #expect(r.xml?.childText("Message") == "Invalid Access-Control-Request-Method: \(shown)")
    }

    @Test(arguments: [
        // (AllowedOrigin, Origin, allowed)
        ("http://*.origin.com", "http://test.origin.com", true),
        ("http://*.origin.com", "http://test.origin.com/", false),
        ("http://*.origin.com", "https://test.origin.com", false),
        ("*suffix", "foo.suffix", true),
        ("start*end", "startend", true),
        ("start*end", "start12end", true),
        ("start*end", "0start12end", false),
        ("prefix*", "prefix.suffix", true),
        ("prefix*", "bla.prefix", false),
        ("http://test.com", "http://test.com:80", false),
        ("http://test.com", "HTTP://TEST.COM", false),
        ("*", "null", true),
    ])
    func originPatterns(pattern: String, origin: String, allowed: Bool) throws {
        let h = try Self.harness("<CORSRule><AllowedOrigin>\(pattern)</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>")
        let r = Self.options(h, "/web", [("Origin", origin), ("Access-Control-Request-Method", "GET")])
        #expect(r.status == (allowed ? 200 : 403))
        if allowed {
            #expect(r.header("Access-Control-Allow-Origin") == (pattern == "*" ? "*" : origin))
            #expect(r.header("Access-Control-Allow-Credentials") == (pattern == "*" ? nil : "true"))
        }
    }

    @Test(arguments: [
        ("", "x-amz-request-payer", false),
        ("<AllowedHeader>*</AllowedHeader>", "x-amz-request-payer, authorization", true),
        ("<AllowedHeader>x-amz-*</AllowedHeader>", "x-amz-request-payer", true),
        ("<AllowedHeader>x-amz-*</AllowedHeader>", "content-type", false),
        ("<AllowedHeader>X-AMZ-Expected-Bucket-Owner</AllowedHeader>", "x-amz-expected-bucket-owner", true),
        ("<AllowedHeader>x-amz-expected-bucket-owner</AllowedHeader>", "x-amz-expected-bucket-owner, x-amz-request-payer", false),
        ("", "", true),
    ])
    func requestedHeaders(allowedHeaders: String, requested: String, allowed: Bool) throws {
        let h = try Self.harness("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>\(allowedHeaders)<ExposeHeader>x-amz-request-id</ExposeHeader><ExposeHeader>ETag</ExposeHeader></CORSRule>")
        let r = Self.options(h, "/web/a.txt", [("Origin", "localhost:4566"), ("Access-Control-Request-Method", "GET"),
                                              ("Access-Control-Request-Headers", requested)])
        #expect(r.status == (allowed ? 200 : 403))
        if allowed {
            #expect(r.header("Access-Control-Expose-Headers") == "x-amz-request-id, ETag")
            #expect(r.header("Access-Control-Max-Age") == nil)
        }
    }

    @Test func theFirstMatchingRuleAnswers() throws {
        let h = try Self.harness("""
            <CORSRule><AllowedOrigin>https://a.test</AllowedOrigin><AllowedMethod>PUT</AllowedMethod><MaxAgeSeconds>1</MaxAgeSeconds></CORSRule>
            <CORSRule><AllowedOrigin>https://a.test</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>2</MaxAgeSeconds></CORSRule>
            <CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>3</MaxAgeSeconds></CORSRule>
            """)
        let r = Self.options(h, "/web/a.txt", [("Origin", "https://a.test"), ("Access-Control-Request-Method", "GET")])
        #expect(r.header("Access-Control-Max-Age") == "2")
        let other = Self.options(h, "/web/a.txt", [("Origin", "https://b.test"), ("Access-Control-Request-Method", "GET")])
        #expect(other.header("Access-Control-Max-Age") == "3")
        #expect(other.header("Access-Control-Allow-Origin") == "*")
    }

    // MARK: Actual requests

    @Test func actualRequestsFromAnAllowedOrigin() throws {
        let h = try Self.harness(Self.localhostRule)
        let get = h.call("GET", "/web/a.txt", headers: [("Origin", "https://localhost:4200")])
        #expect(get.text == "cors")
        #expect(get.header("Access-Control-Allow-Origin") == "https://localhost:4200")
        #expect(get.header("Access-Control-Allow-Methods") == "GET, PUT")
        #expect(get.header("Access-Control-Max-Age") == "3000")
        #expect(get.header("Access-Control-Allow-Credentials") == "true")
        #expect(get.header("Vary") == "Origin, Access-Control-Request-Headers, Access-Control-Request-Method")
        // No Origin, another origin, a method the rule lacks: no CORS headers, the request itself succeeds.
        #expect(h.call("GET", "/web/a.txt").header("Access-Control-Allow-Origin") == nil)
        let wrong = h.call("GET", "/web/a.txt", headers: [("Origin", "http://localhost:4200")])
        #expect(wrong.status == 200 && wrong.header("Access-Control-Allow-Origin") == nil && wrong.header("Vary") == nil)
        let delete = h.call("DELETE", "/web/b.txt", headers: [("Origin", "https://localhost:4200")])
        #expect(delete.status == 204 && delete.header("Access-Control-Allow-Origin") == nil)
        // S3 takes Access-Control-Request-Method for the method even on an actual request.
        let odd = h.call("GET", "/web/a.txt", headers: [("Origin", "https://localhost:4200"), ("Access-Control-Request-Method", "DELETE")])
        #expect(odd.status == 200 && odd.header("Access-Control-Allow-Origin") == nil)
    }

    @Test func errorsCarryTheHeadersSoAPageCanReadThem() throws {
        let h = try Self.harness(Self.localhostRule)
        let wrongSecret = RequestSigner(accessKey: "test", secret: "wrong", region: "us-east-1")
        let put = h.send(h.request("PUT", "/web/new.txt", headers: [("Origin", "https://localhost:4200")], body: [1], signer: wrongSecret))
        #expect(put.errorCode == "SignatureDoesNotMatch")
        #expect(put.header("Access-Control-Allow-Origin") == "https://localhost:4200")
        let missing = h.call("GET", "/web/none", headers: [("Origin", "https://localhost:4200")])
        #expect(missing.errorCode == "NoSuchKey")
        #expect(missing.header("Access-Control-Allow-Origin") == "https://localhost:4200")
    }

    @Test func formUploadAnswersCarryTheHeaders() throws {
        let h = try Self.harness("<CORSRule><AllowedOrigin>http://app.test</AllowedOrigin><AllowedMethod>POST</AllowedMethod><ExposeHeader>Location</ExposeHeader></CORSRule>")
        let preflight = Self.options(h, "/web", [("Origin", "http://app.test"), ("Access-Control-Request-Method", "POST")])
        #expect(preflight.status == 200)
        let r = h.post(h.signedForm(bucket: "web", key: "up"), bucket: "web", headers: [("Origin", "http://app.test")])
        #expect(r.status == 204)
        #expect(r.header("Access-Control-Allow-Origin") == "http://app.test")
        #expect(r.header("Access-Control-Expose-Headers") == "Location")
    }

    // MARK: The permissive default

    @Test func thePermissiveDefaultAppliesOnlyWithoutAConfiguration() throws {
        let h = try Self.harness(configuration: S3Configuration(corsOrigins: ["http://localhost:3000"]))
        let r = Self.options(h, "/web/a.txt", [("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "PUT"),
                                              ("Access-Control-Request-Headers", "content-type,x-amz-date")])
        #expect(r.status == 200)
        #expect(r.header("Access-Control-Allow-Origin") == "http://localhost:3000")
        #expect(r.header("Access-Control-Allow-Headers") == "content-type, x-amz-date")
        #expect(r.header("Access-Control-Expose-Headers")?.contains("x-hearth-diagnosis") == true)
        #expect(Self.options(h, "/web/a.txt", [("Origin", "http://evil.test"), ("Access-Control-Request-Method", "PUT")]).status == 403)
        // Even a missing bucket answers, so the page can read NoSuchBucket.
        #expect(Self.options(h, "/nowhere/a.txt", [("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "GET")]).status == 200)
        let get = h.call("GET", "/nowhere/a.txt", headers: [("Origin", "http://localhost:3000")])
        #expect(get.errorCode == "NoSuchBucket")
        #expect(get.header("Access-Control-Allow-Origin") == "http://localhost:3000")
        // GetBucketCors still says there is none, and a bucket's own configuration wins.
        #expect(h.call("GET", "/web?cors").errorCode == "NoSuchCORSConfiguration")
        #expect(Self.putCors(h, Self.cors(Self.localhostRule)).status == 200)
        #expect(Self.options(h, "/web/a.txt", [("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "PUT")]).status == 403)
    }

    @Test func storedConfigurationsRoundTrip() throws {
        let configuration = CORSConfiguration(rules: [
            CORSRule(id: "a", allowedHeaders: ["*"], allowedMethods: ["GET"], allowedOrigins: ["*"], exposeHeaders: ["ETag"], maxAgeSeconds: 5),
            CORSRule(id: nil, allowedHeaders: [], allowedMethods: ["PUT", "POST"], allowedOrigins: ["http://x"], exposeHeaders: [], maxAgeSeconds: nil),
        ])
        #expect(CORSConfiguration(json: configuration.json) == configuration)
        #expect((try? CORSConfiguration.parse(configuration.document.bytes).get()) == configuration)
    }
}
