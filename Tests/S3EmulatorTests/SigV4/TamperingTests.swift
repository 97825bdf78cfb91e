import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

/// A valid signed request with each signed element changed in turn: every variant must be refused,
/// either when the headers arrive or when the body is verified.
@Suite struct TamperingTests {
    struct Tamper: Sendable, CustomTestStringConvertible {
        let name: String
        let apply: @Sendable (Request) -> Request
        var testDescription: String { name }
    }

    static let body = Array("hello tamper".utf8)

    /// PUT of a part with metadata, signed in the Authorization header with the body's SHA-256.
    static var headerSigned: Request {
        RequestAuthenticatorTests.signed("PUT", "/bkt/dir/key%20name.txt?partNumber=1&uploadId=abc%2Bdef", headers: [
            "Host": "127.0.0.1:9000", "Content-Type": "text/plain", "x-amz-meta-color": "blue", "x-amz-storage-class": "STANDARD",
            "Content-MD5": "oR4uCw8VLnTxe7NNpNt4cQ==",
        ], body: body)
    }

    /// A presigned GET with a response override and a signed header.
    static var presigned: Request {
        (try? RequestAuthenticatorTests.presigned("GET", key: "photos/a b.jpg", headers: [("x-amz-meta-owner", "me")],
                                                  query: [("response-content-type", "image/jpeg")])) ?? Request(method: "GET", target: "/")
    }

    static func rebuild(_ r: Request, method: String? = nil, path: String? = nil, query: String? = nil, headers: HTTPHeaders? = nil,
                        body: [UInt8]? = nil) -> Request {
        Request(method: method ?? r.method, rawPath: path ?? r.rawPath, rawQuery: query ?? r.rawQuery, headers: headers ?? r.headers,
                body: body ?? r.body)
    }

    static func header(_ name: String, _ value: String?) -> @Sendable (Request) -> Request {
        { r in
            var headers = r.headers
            headers.remove(name)
            if let value { headers.add(name, value) }
            return rebuild(r, headers: headers)
        }
    }

    static func addHeader(_ name: String, _ value: String) -> @Sendable (Request) -> Request {
        { r in
            var headers = r.headers
            headers.add(name, value)
            return rebuild(r, headers: headers)
        }
    }

    static func query(_ find: String, _ replace: String) -> @Sendable (Request) -> Request {
        { r in rebuild(r, query: r.rawQuery.replacingOccurrences(of: find, with: replace)) }
    }

    static func authorization(_ find: String, _ replace: String) -> @Sendable (Request) -> Request {
        { r in
            var headers = r.headers
            let value = headers["authorization"] ?? ""
            headers.set("Authorization", value.replacingOccurrences(of: find, with: replace))
            return rebuild(r, headers: headers)
        }
    }

    static let headerTampers: [Tamper] = [
        Tamper(name: "method POST") { rebuild($0, method: "POST") },
        Tamper(name: "method GET") { rebuild($0, method: "GET") },
        Tamper(name: "method DELETE") { rebuild($0, method: "DELETE") },
        Tamper(name: "path: other key") { rebuild($0, path: "/bkt/dir/key%20namf.txt") },
        Tamper(name: "path: other bucket") { rebuild($0, path: "/bkt2/dir/key%20name.txt") },
        Tamper(name: "path: extra segment") { rebuild($0, path: "/bkt/dir/x/key%20name.txt") },
        Tamper(name: "path: double slash") { rebuild($0, path: "/bkt/dir//key%20name.txt") },
        Tamper(name: "path: plus is not space") { rebuild($0, path: "/bkt/dir/key+name.txt") },
        Tamper(name: "path: encoded slash") { rebuild($0, path: "/bkt/dir%2Fkey%20name.txt") },
        Tamper(name: "query partNumber value", apply: query("partNumber=1", "partNumber=2")),
        Tamper(name: "query uploadId value", apply: query("uploadId=abc%2Bdef", "uploadId=abc%2Bdeg")),
        Tamper(name: "query uploadId plus read as space", apply: query("uploadId=abc%2Bdef", "uploadId=abc+def")),
        Tamper(name: "query partNumber removed", apply: query("partNumber=1&", "")),
        Tamper(name: "query uploadId removed", apply: query("&uploadId=abc%2Bdef", "")),
        Tamper(name: "query parameter added") { rebuild($0, query: $0.rawQuery + "&versionId=1") },
        Tamper(name: "query parameter duplicated") { rebuild($0, query: $0.rawQuery + "&partNumber=1") },
        Tamper(name: "query removed entirely") { rebuild($0, query: "") },
        Tamper(name: "header host", apply: header("Host", "127.0.0.1:9001")),
        Tamper(name: "header host without port", apply: header("Host", "127.0.0.1")),
        Tamper(name: "header content-type", apply: header("Content-Type", "text/html")),
        Tamper(name: "header content-type removed", apply: header("Content-Type", nil)),
        Tamper(name: "header content-md5", apply: header("Content-MD5", "AAAAAAAAAAAAAAAAAAAAAA==")),
        Tamper(name: "header x-amz-meta-color", apply: header("x-amz-meta-color", "red")),
        Tamper(name: "header x-amz-meta-color duplicated", apply: addHeader("x-amz-meta-color", "red")),
        Tamper(name: "header x-amz-storage-class", apply: header("x-amz-storage-class", "GLACIER")),
        Tamper(name: "header x-amz-storage-class removed", apply: header("x-amz-storage-class", nil)),
        Tamper(name: "unsigned x-amz header added", apply: addHeader("x-amz-acl", "public-read")),
        Tamper(name: "header x-amz-date one second later", apply: header("X-Amz-Date", "20261130T060001Z")),
        Tamper(name: "header x-amz-date next day", apply: header("X-Amz-Date", "20261201T060000Z")),
        Tamper(name: "header x-amz-content-sha256 other hash", apply: header("X-Amz-Content-SHA256", SignatureVerifier.emptySHA256)),
        Tamper(name: "header x-amz-content-sha256 unsigned payload", apply: header("X-Amz-Content-SHA256", "UNSIGNED-PAYLOAD")),
        Tamper(name: "body changed") { rebuild($0, body: Array("hello tampeR".utf8)) },
        Tamper(name: "body extended") { rebuild($0, body: body + [0x0A]) },
        Tamper(name: "body empty") { rebuild($0, body: []) },
        Tamper(name: "signature digit") { r in
            let auth = r.headers["authorization"] ?? ""
            return header("Authorization", String(auth.dropLast()) + (auth.last == "0" ? "1" : "0"))(r)
        },
        Tamper(name: "signed headers list shortened", apply: authorization("x-amz-meta-color;", "")),
        Tamper(name: "credential date", apply: authorization("test/20261130/", "test/20261129/")),
        Tamper(name: "credential access key", apply: authorization("Credential=test/", "Credential=limited/")),
    ]

    static let presignedTampers: [Tamper] = [
        Tamper(name: "method HEAD") { rebuild($0, method: "HEAD") },
        Tamper(name: "method PUT") { rebuild($0, method: "PUT") },
        Tamper(name: "path") { rebuild($0, path: "/bkt/photos/a%20c.jpg") },
        Tamper(name: "X-Amz-Date", apply: query("X-Amz-Date=20261130T060000Z", "X-Amz-Date=20261130T060001Z")),
        Tamper(name: "X-Amz-Expires", apply: query("X-Amz-Expires=3600", "X-Amz-Expires=7200")),
        Tamper(name: "X-Amz-Credential", apply: query("test%2F20261130", "limited%2F20261130")),
        Tamper(name: "X-Amz-SignedHeaders", apply: query("X-Amz-SignedHeaders=host%3Bx-amz-meta-owner", "X-Amz-SignedHeaders=host")),
        Tamper(name: "X-Amz-Algorithm", apply: query("X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Algorithm=AWS4-HMAC-SHA1")),
        Tamper(name: "X-Amz-Signature", apply: query("X-Amz-Signature=", "X-Amz-Signature=0")),
        Tamper(name: "response-content-type", apply: query("response-content-type=image%2Fjpeg", "response-content-type=text%2Fhtml")),
        Tamper(name: "response-content-type removed", apply: query("response-content-type=image%2Fjpeg&", "")),
        Tamper(name: "parameter added") { rebuild($0, query: $0.rawQuery + "&response-cache-control=no-cache") },
        Tamper(name: "signed header changed", apply: header("x-amz-meta-owner", "you")),
        Tamper(name: "signed header removed", apply: header("x-amz-meta-owner", nil)),
        Tamper(name: "host", apply: header("Host", "localhost:9000")),
    ]

    /// Authenticates and verifies the body; the failure, or nil when everything passed.
    static func outcome(_ request: Request) -> SigV4Failure? {
        switch RequestAuthenticatorTests.authenticator().authenticate(request, bucket: "bkt") {
        case .failure(let failure): return failure
        case .success(let authenticated):
            return Result { () throws(SigV4Failure) in try SigV4Fixtures.run(authenticated.makePayloadVerifier(), request.body) }.sigFailure
        }
    }

    @Test func untamperedRequestsPass() {
        #expect(Self.outcome(Self.headerSigned) == nil)
        #expect(Self.outcome(Self.presigned) == nil)
    }

    @Test(arguments: headerTampers)
    func headerSignedVariantIsRefused(_ tamper: Tamper) {
        let failure = Self.outcome(tamper.apply(Self.headerSigned))
        #expect(failure != nil)
    }

    @Test(arguments: presignedTampers)
    func presignedVariantIsRefused(_ tamper: Tamper) {
        #expect(Self.outcome(tamper.apply(Self.presigned)) != nil)
    }

    @Test func specificOutcomes() {
        #expect(Self.outcome(Self.rebuild(Self.headerSigned, body: [])) == .contentSHA256Mismatch(
            clientComputed: SigV4Fixtures.sha256Hex(Self.body), computed: SignatureVerifier.emptySHA256))
        #expect(Self.outcome(Self.header("x-amz-meta-color", "red")(Self.headerSigned))?.code == "SignatureDoesNotMatch")
        #expect(Self.outcome(Self.authorization("x-amz-meta-color;", "")(Self.headerSigned)) == .headersNotSigned(names: ["x-amz-meta-color"]))
        #expect(Self.outcome(Self.header("X-Amz-Date", "20261201T060000Z")(Self.headerSigned))?.code == "AuthorizationHeaderMalformed")
    }

    @Test func equivalentEncodingsStillVerify() {
        // S3 decodes and re-encodes the path and query, so these are the same signed request.
        let request = RequestAuthenticatorTests.signed("GET", "/bkt/%7Euser/a%2Db?prefix=a%20b&list-type=2")
        #expect(Self.outcome(request) == nil)
        #expect(Self.outcome(Self.rebuild(request, path: "/bkt/~user/a-b")) == nil)
        #expect(Self.outcome(Self.rebuild(request, query: "list-type=2&prefix=a+b")) == nil)
        #expect(Self.outcome(Self.rebuild(request, query: "prefix=a%20b&list-type=%32")) == nil)
    }
}
