import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import S3Emulator

/// A body of several chunk rows (hashed piece by piece as it streams into them): the payload hash,
/// ETag and checksum cover every byte in order, and a failed check leaves the old object and no
/// staged bytes — the checks that moving the hashing elsewhere would have to keep.
@Suite struct LargeBodyHashingTests {
    static let size = 3 * (1 << 20) + 12_345

    func seeded() throws -> S3Harness {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        s3.put("bkt", "k", Array("original".utf8))
        return s3
    }

    static func crc32c(_ bytes: [UInt8]) -> String {
        var c = CRC32(.castagnoli)
        c.update(bytes)
        return Data(c.bigEndianBytes).base64EncodedString()
    }

    func staged(_ s3: S3Harness) throws -> Int64? {
        try s3.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_blobs WHERE staging = 1") }
    }

    @Test func storedBytesETagAndChecksumMatchTheBody() throws {
        let s3 = try seeded()
        let body = S3Harness.bytes(Self.size)
        let crc = Self.crc32c(body)
        let r = s3.call("PUT", "/bkt/k", headers: [("Content-MD5", S3Harness.base64MD5(body)), ("x-amz-checksum-crc32c", crc)],
                        body: body)
        #expect(r.status == 200)
        #expect(r.header("ETag") == "\"\(Hex.encode(Digest.md5(body)))\"")
        #expect(r.header("x-amz-checksum-crc32c") == crc)
        let got = s3.call("GET", "/bkt/k")
        #expect(got.body == body)
        #expect(try staged(s3) == 0)
    }

    @Test(arguments: ["sha256", "md5", "checksum"])
    func aWrongDigestRefusesTheBodyAndKeepsTheOldObject(which: String) throws {
        let s3 = try seeded()
        let body = S3Harness.bytes(Self.size)
        var wrong = body
        wrong[wrong.count - 1] ^= 1
        let r: S3TestResponse
        switch which {
        case "sha256":
            r = s3.send(s3.request("PUT", "/bkt/k", body: body, payloadHash: Hex.encode(Digest.sha256(wrong))))
            #expect(r.errorCode == "XAmzContentSHA256Mismatch")
        case "md5":
            r = s3.call("PUT", "/bkt/k", headers: [("Content-MD5", S3Harness.base64MD5(wrong))], body: body)
            #expect(r.errorCode == "BadDigest")
        default:
            let crc = Self.crc32c(wrong)
            r = s3.call("PUT", "/bkt/k", headers: [("x-amz-checksum-crc32c", crc)], body: body)
            #expect(r.errorCode == "BadDigest")
        }
        #expect(r.status == 400)
        #expect(s3.call("GET", "/bkt/k").text == "original")
        #expect(try staged(s3) == 0)
    }
}
