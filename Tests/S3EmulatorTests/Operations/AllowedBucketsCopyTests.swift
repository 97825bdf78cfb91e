import HearthCore
import Testing
@testable import S3Emulator

/// A key limited to some buckets (`allowedBuckets`) acts for the first key's account, which owns
/// the other buckets too. The authenticator checks the bucket a request names; a copy also reads
/// its source, which must be one of the key's buckets as well: without that check a limited key
/// read any bucket of the account by copying from it into its own (fail open).
@Suite struct AllowedBucketsCopyTests {
    static func harness() throws -> (S3Harness, RequestSigner) {
        let config = S3Configuration(credentials: [.init(accessKey: "test", secretKey: "test"),
                                                   .init(accessKey: "limited", secretKey: "s2", allowedBuckets: ["mine"])])
        let s3 = try S3Harness(configuration: config)
        s3.makeBucket("mine")
        s3.makeBucket("theirs")
        #expect(s3.put("theirs", "secret", Array("not for the limited key".utf8)).status == 200)
        #expect(s3.put("mine", "own", Array("its own".utf8)).status == 200)
        return (s3, RequestSigner(accessKey: "limited", secret: "s2", region: "us-east-1"))
    }

    @Test func aLimitedKeyCannotCopyFromAnotherBucket() throws {
        let (s3, limited) = try Self.harness()
        // Its own reads of the other bucket were refused already.
        #expect(s3.send(s3.request("GET", "/theirs/secret", signer: limited)).errorCode == "AccessDenied")
        let copy = s3.send(s3.request("PUT", "/mine/stolen", headers: [("x-amz-copy-source", "/theirs/secret")], signer: limited))
        #expect(copy.status == 403)
        #expect(copy.errorCode == "AccessDenied")
        #expect(s3.call("GET", "/mine/stolen").errorCode == "NoSuchKey")
    }

    @Test func aLimitedKeyCannotCopyAPartFromAnotherBucket() throws {
        let (s3, limited) = try Self.harness()
        let created = s3.send(s3.request("POST", "/mine/big?uploads", signer: limited))
        let upload = try #require(created.xml?.childText("UploadId"))
        let part = s3.send(s3.request("PUT", "/mine/big?partNumber=1&uploadId=\(upload)", headers: [("x-amz-copy-source", "theirs/secret")],
                                      signer: limited))
        #expect(part.status == 403)
        #expect(part.errorCode == "AccessDenied")
    }

    @Test func aLimitedKeyStillCopiesWithinItsBuckets() throws {
        let (s3, limited) = try Self.harness()
        let copy = s3.send(s3.request("PUT", "/mine/copy", headers: [("x-amz-copy-source", "/mine/own")], signer: limited))
        #expect(copy.status == 200)
        #expect(s3.call("GET", "/mine/copy").text == "its own")
        // And the unlimited key across buckets, as before.
        #expect(s3.call("PUT", "/mine/fromtheirs", headers: [("x-amz-copy-source", "/theirs/secret")]).status == 200)
    }
}
