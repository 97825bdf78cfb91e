import HearthHTTP
import Testing
@testable import S3Emulator

/// S3's request limits on headers: a header section over 8 KB is `RequestHeaderSectionTooLarge`
/// (before authentication), user metadata over 2 KB is `MetadataTooLarge` (docs/s3.md, *Limits*).
@Suite struct HeaderLimitsTests {
    /// A signed request whose header section (`HTTPHeaders.sectionSize`) is exactly `size` bytes,
    /// padded with an `X-Pad` field.
    static func padded(_ s3: S3Harness, _ method: String, _ target: String, size: Int, body: [UInt8] = [],
                       signed: Bool = true) -> Request {
        let probe = s3.request(method, target, headers: [("X-Pad", "")], body: body, signed: signed)
        let pad = String(repeating: "p", count: size - probe.headers.sectionSize)
        return s3.request(method, target, headers: [("X-Pad", pad)], body: body, signed: signed)
    }

    static func expectTooLarge(_ r: S3TestResponse) {
        #expect(r.status == 400)
        #expect(r.header("Content-Type") == "application/xml")
        #expect(r.xml?.childText("Code") == "RequestHeaderSectionTooLarge")
        #expect(r.xml?.childText("Message") == "Your request header section exceeds the maximum allowed size.")
        #expect(r.xml?.childText("MaxSizeAllowed") == "8192")
        #expect(r.xml?.children.map(\.name) == ["Code", "Message", "MaxSizeAllowed", "RequestId", "HostId"])
        #expect(r.header("x-amz-request-id") != nil && r.xml?.childText("RequestId") == r.header("x-amz-request-id"))
        #expect(r.header("x-amz-id-2") != nil && r.xml?.childText("HostId") == r.header("x-amz-id-2"))
    }

    @Test func aSectionOf8192BytesIsTakenAndOneMoreIsRefused() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let put = Self.padded(s3, "PUT", "/bkt/k", size: 8192, body: [1, 2, 3])
        #expect(put.headers.sectionSize == 8192)
        #expect(s3.send(put).status == 200)
        let get = Self.padded(s3, "GET", "/bkt/k", size: 8192)
        let got = s3.send(get)
        #expect(got.status == 200 && got.body == [1, 2, 3])

        let big = Self.padded(s3, "PUT", "/bkt/other", size: 8193, body: [4])
        #expect(big.headers.sectionSize == 8193)
        Self.expectTooLarge(s3.send(big))
        #expect(s3.call("GET", "/bkt/other").status == 404)
        Self.expectTooLarge(s3.send(Self.padded(s3, "GET", "/bkt/k", size: 8193)))
        Self.expectTooLarge(s3.send(Self.padded(s3, "GET", "/bkt/k", size: 30_000)))
    }

    /// The size is checked before the signature and the target: an unsigned request, a bad URI and a
    /// HEAD (no body) all get the same error.
    @Test func theSectionIsCheckedFirst() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        Self.expectTooLarge(s3.send(Self.padded(s3, "GET", "/bkt/k", size: 9000, signed: false)))
        #expect(s3.send(Self.padded(s3, "GET", "/bkt/k", size: 8192, signed: false)).xml?.childText("Code") == "AccessDenied")
        let head = s3.send(Self.padded(s3, "HEAD", "/bkt/k", size: 9000))
        #expect(head.status == 400 && head.body.isEmpty && head.header("x-amz-request-id") != nil)
    }

    /// User metadata: the bytes of each name (after `x-amz-meta-`) and value, 2,048 at most.
    @Test func metadataOver2KBIsRefused() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        #expect(s3.put("bkt", "fits", [1], headers: [("x-amz-meta-a", String(repeating: "m", count: 2047))]).status == 200)
        let r = s3.put("bkt", "big", [1], headers: [("x-amz-meta-a", String(repeating: "m", count: 1000)),
                                                    ("x-amz-meta-bb", String(repeating: "é", count: 524))])
        #expect(r.status == 400)
        #expect(r.xml?.childText("Code") == "MetadataTooLarge")
        #expect(r.xml?.childText("Message") == "Your metadata headers exceed the maximum allowed metadata size")
        #expect(r.xml?.childText("Size") == "2051")
        #expect(r.xml?.childText("MaxSizeAllowed") == "2048")
        #expect(s3.call("GET", "/bkt/big").status == 404)
    }
}
