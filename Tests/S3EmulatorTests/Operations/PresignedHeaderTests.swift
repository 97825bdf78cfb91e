import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import Testing
@testable import S3Emulator

/// A presigned request usually carries no `x-amz-*` header, and S3Context answers lookups of
/// those names without scanning; these requests carry some (signed into the URL), in any case,
/// and must be read exactly as before.
@Suite struct PresignedHeaderTests {
    static let customer = "x-amz-server-side-encryption-customer-"

    static func harness() throws -> S3Harness {
        let s3 = try S3Harness(configuration: S3Configuration(allowSSECOverHTTP: true))
        s3.makeBucket("bkt")
        return s3
    }

    /// A presigned request of `method` signing `headers` (sent as given).
    static func presigned(_ s3: S3Harness, _ method: String, _ key: String, headers: [(String, String)] = [],
                          body: [UInt8] = []) throws -> S3TestResponse {
        var signed: [String: String] = [:]
        for (n, v) in headers { signed[n] = v }
        let url = try s3.service.presignedURL(method: method, bucket: "bkt", key: key, expiresSeconds: 300, signedHeaders: signed)
        let target = String(url.dropFirst(url.range(of: "9000")!.upperBound.utf16Offset(in: url)))
        var h = HTTPHeaders()
        h.add("Host", "127.0.0.1:9000")
        for (n, v) in headers { h.add(n, v) }
        if method == "PUT" { h.add("Content-Length", String(body.count)) }
        return s3.send(Request(method: method, target: target, headers: h, body: body))
    }

    static func customerHeaders(upper: Bool) -> [(String, String)] {
        let key = [UInt8](repeating: 7, count: 32)
        let names = ["algorithm", "key", "key-MD5"].map { customer + $0 }
        let values = ["AES256", Data(key).base64EncodedString(), Data(Digest.md5(key)).base64EncodedString()]
        return zip(names, values).map { (upper ? $0.uppercased() : $0, $1) }
    }

    @Test(arguments: [false, true])
    func customerKeyHeadersAreSeenInAnyCase(upper: Bool) throws {
        let s3 = try Self.harness()
        let body = S3Harness.bytes(100)
        let put = try Self.presigned(s3, "PUT", "sealed", headers: Self.customerHeaders(upper: upper), body: body)
        #expect(put.status == 200, "\(put.text)")
        #expect(put.header("x-amz-server-side-encryption-customer-algorithm") == "AES256")
        // Without the key the read is refused as S3 refuses it; with it (in either case) it answers.
        let bare = try Self.presigned(s3, "GET", "sealed")
        #expect(bare.status == 400)
        #expect(bare.errorCode == "InvalidRequest")
        #expect(bare.xml?.childText("Message")?.hasPrefix("The object was stored using a form of Server Side Encryption") == true)
        let read = try Self.presigned(s3, "GET", "sealed", headers: Self.customerHeaders(upper: !upper))
        #expect(read.status == 200)
        #expect(read.body == body)
    }

    @Test func aKeyOnAPlainObjectAndAnEncryptionHeaderOnAReadAreRefused() throws {
        let s3 = try Self.harness()
        #expect(try Self.presigned(s3, "PUT", "plain", body: [1, 2, 3]).status == 200)
        let keyed = try Self.presigned(s3, "GET", "plain", headers: Self.customerHeaders(upper: false))
        #expect(keyed.status == 400)
        #expect(keyed.xml?.childText("Message") == "The encryption parameters are not applicable to this object.")
        let sse = try Self.presigned(s3, "GET", "plain", headers: [("X-Amz-Server-Side-Encryption", "AES256")])
        #expect(sse.status == 400)
        #expect(sse.errorCode == "InvalidArgument")
        #expect(try Self.presigned(s3, "GET", "plain").body == [1, 2, 3])
    }

    @Test func objectLockAndEncryptionHeadersOfAPresignedPutApply() throws {
        let s3 = try Self.harness()
        let put = try Self.presigned(s3, "PUT", "enc", headers: [("X-AMZ-SERVER-SIDE-ENCRYPTION", "AES256")], body: [4])
        #expect(put.status == 200)
        #expect(put.header("x-amz-server-side-encryption") == "AES256")
        // Object Lock headers on a bucket without Object Lock: refused, as before.
        let locked = try Self.presigned(s3, "PUT", "lock", headers: [("x-amz-object-lock-legal-hold", "ON")], body: [5])
        #expect(locked.status == 400)
        #expect(locked.xml?.childText("Message") == "Bucket is missing Object Lock Configuration")
    }

    @Test func contextLookups() {
        func ctx(_ headers: HTTPHeaders) -> S3Context {
            S3Context(request: Request(method: "GET", rawPath: "/b/k", headers: headers),
                      target: S3Target(bucket: "b", key: "k", virtualHosted: false), now: S3Harness.start, hostID: "")
        }
        let none = ctx(["Host": "h", "Range": "bytes=0-1"])
        #expect(none.header("x-amz-acl") == nil && none.header("range") == "bytes=0-1" && none.header("HOST") == "h")
        #expect(!none.mayHaveHeader(prefix: Self.customer) && none.mayHaveHeader(prefix: "ra") && !none.mayHaveHeader(prefix: "if-"))
        let some = ctx(["Host": "h", "X-Amz-ACL": "private", "x-AMZ-server-side-encryption-customer-KEY": "k"])
        #expect(some.header("x-amz-acl") == "private" && some.header("x-amz-server-side-encryption-customer-key") == "k")
        #expect(some.mayHaveHeader(prefix: Self.customer) && !some.mayHaveHeader(prefix: "x-amz-grant-"))
        // A non-ASCII name is left to the lookup's own rule (lower-casing decides it).
        let odd = ctx(["Host": "h", "x-amz-object-loc\u{212A}-mode": "GOVERNANCE"])
        #expect(odd.header("x-amz-object-lock-mode") == HTTPHeaders(odd.request.headers.fields)["x-amz-object-lock-mode"])
        #expect(odd.mayHaveHeader(prefix: "x-amz-object-lock-"))
    }
}
