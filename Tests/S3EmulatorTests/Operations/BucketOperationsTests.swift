import Foundation
import HearthCore
import Testing
@testable import S3Emulator

@Suite struct BucketOperationsTests {
    @Test func createListHeadDelete() throws {
        let s3 = try S3Harness()
        let created = s3.call("PUT", "/photos")
        #expect(created.status == 200)
        #expect(created.header("Location") == "/photos")
        #expect(created.header("x-amz-request-id") != nil)
        #expect(created.header("x-amz-id-2") != nil)
        #expect(created.header("Server") == "AmazonS3")
        #expect(created.header("Date") == S3Harness.start.httpDate)

        let list = s3.call("GET", "/")
        #expect(list.status == 200)
        #expect(list.header("Content-Type") == "application/xml")
        let root = try #require(list.xml)
        #expect(root.name == "ListAllMyBucketsResult")
        let names = root.child("Buckets")?.children(named: "Bucket").compactMap { $0.childText("Name") }
        #expect(names == ["photos"])
        #expect(root.child("Buckets")?.child("Bucket")?.childText("CreationDate") == "2026-11-30T06:33:14.000Z")
        #expect(root.child("Owner")?.childText("ID")?.count == 64)

        let head = s3.call("HEAD", "/photos")
        #expect(head.status == 200)
        #expect(head.header("x-amz-bucket-region") == "us-east-1")

        #expect(s3.call("DELETE", "/photos").status == 204)
        let gone = s3.call("HEAD", "/photos")
        #expect(gone.status == 404)
        #expect(gone.body.isEmpty)
    }

    @Test func createWithLocationConstraintBody() throws {
        let s3 = try S3Harness(configuration: S3Configuration(region: "eu-west-1"))
        let body = Array(#"<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>"#.utf8)
        #expect(s3.call("PUT", "/euro", body: body).status == 200)
        let location = s3.call("GET", "/euro?location")
        #expect(location.xml?.name == "LocationConstraint")
        #expect(location.xml?.text == "eu-west-1")
        // Another region's endpoint: the unspecified constraint is refused outside us-east-1.
        let bare = s3.call("PUT", "/bare")
        #expect(bare.status == 400)
        #expect(bare.errorCode == "IllegalLocationConstraintException")
        #expect(bare.xml?.childText("Message") == "The unspecified location constraint is incompatible for the region specific endpoint this request was sent to.")
    }

    @Test(arguments: [
        ("us-east-1", "InvalidLocationConstraint"),
        ("us-west-2", "IllegalLocationConstraintException"),
    ])
    func usEast1RejectsConstraints(constraint: String, code: String) throws {
        let s3 = try S3Harness()
        let body = Array("<CreateBucketConfiguration><LocationConstraint>\(constraint)</LocationConstraint></CreateBucketConfiguration>".utf8)
        let r = s3.call("PUT", "/b-\(constraint)", body: body)
        #expect(r.status == 400)
        #expect(r.errorCode == code)
    }

    @Test func usEast1LocationIsEmpty() throws {
        let s3 = try S3Harness()
        s3.makeBucket("plain")
        let r = s3.call("GET", "/plain?location")
        #expect(r.text.hasSuffix(#"<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>"#))
    }

    @Test func malformedCreateBody() throws {
        let s3 = try S3Harness()
        let r = s3.call("PUT", "/bad-xml", body: Array("<CreateBucketConfiguration><Loc".utf8))
        #expect(r.errorCode == "MalformedXML")
        #expect(r.status == 400)
    }

    @Test func ownedBucketAgainInUSEast1() throws {
        // us-east-1 answers 200 again (setup scripts create unconditionally); other regions 409.
        let s3 = try S3Harness()
        s3.makeBucket("dup")
        #expect(s3.call("PUT", "/dup").status == 200)
    }

    @Test func alreadyOwnedByYou() throws {
        let s3 = try S3Harness(configuration: S3Configuration(region: "eu-west-1"))
        let body = Array("<CreateBucketConfiguration><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>".utf8)
        #expect(s3.call("PUT", "/dup", body: body).status == 200)
        let r = s3.call("PUT", "/dup", body: body)
        #expect(r.status == 409)
        #expect(r.errorCode == "BucketAlreadyOwnedByYou")
        #expect(r.xml?.childText("BucketName") == "dup")
        #expect(r.xml?.childText("RequestId") == "0000000000000000")
        #expect(r.xml?.childText("HostId") == r.header("x-amz-id-2"))
    }

    @Test func alreadyExistsForAnotherKey() throws {
        let config = S3Configuration(credentials: [.init(accessKey: "test", secretKey: "test"), .init(accessKey: "other", secretKey: "secret2")])
        let s3 = try S3Harness(configuration: config)
        s3.makeBucket("taken")
        let other = RequestSigner(accessKey: "other", secret: "secret2", region: "us-east-1")
        let r = s3.send(s3.request("PUT", "/taken", signer: other))
        #expect(r.errorCode == "BucketAlreadyExists")
        #expect(r.status == 409)
    }

    @Test(arguments: ["ab", "UPPER", "a..b", "-start", "end-", "192.168.1.1", "xn--punycode", "has_underscore",
                      String(repeating: "a", count: 64), "bucket-s3alias", "sthree-x"])
    func invalidBucketNames(name: String) throws {
        let s3 = try S3Harness()
        let r = s3.call("PUT", "/\(name)")
        #expect(r.status == 400)
        #expect(r.errorCode == "InvalidBucketName")
        #expect(r.xml?.childText("BucketName") == name)
    }

    @Test(arguments: ["abc", "my.bucket.name", "a-b-c", "123", String(repeating: "a", count: 63)])
    func validBucketNames(name: String) throws {
        let s3 = try S3Harness()
        #expect(s3.call("PUT", "/\(name)").status == 200)
    }

    @Test func deleteNonEmptyAndMissing() throws {
        let s3 = try S3Harness()
        s3.makeBucket("full")
        s3.put("full", "k", [1, 2, 3])
        let r = s3.call("DELETE", "/full")
        #expect(r.status == 409)
        #expect(r.errorCode == "BucketNotEmpty")
        let missing = s3.call("DELETE", "/nope")
        #expect(missing.status == 404)
        #expect(missing.errorCode == "NoSuchBucket")
        #expect(missing.xml?.childText("BucketName") == "nope")
        #expect(missing.xml?.childText("Message") == "The specified bucket does not exist")
    }

    @Test func virtualHostedStyle() throws {
        let s3 = try S3Harness()
        #expect(s3.call("PUT", "/", host: "vhost.localhost:9000").status == 200)
        #expect(s3.call("PUT", "/dir/file.txt", body: Array("hi".utf8), host: "vhost.s3.localhost:9000").status == 200)
        let got = s3.call("GET", "/vhost/dir/file.txt")
        #expect(got.text == "hi")
        let listed = s3.call("GET", "/?list-type=2", host: "vhost.localhost:9000")
        #expect(listed.xml?.childText("Name") == "vhost")
        #expect(listed.xml?.child("Contents")?.childText("Key") == "dir/file.txt")
    }

    @Test(arguments: [
        ("versioning", 200, "VersioningConfiguration"), ("encryption", 200, "ServerSideEncryptionConfiguration"),
        ("cors", 404, "NoSuchCORSConfiguration"), ("policy", 404, "NoSuchBucketPolicy"), ("tagging", 404, "NoSuchTagSet"),
        ("lifecycle", 404, "NoSuchLifecycleConfiguration"), ("website", 404, "NoSuchWebsiteConfiguration"),
        ("publicAccessBlock", 200, "PublicAccessBlockConfiguration"), ("acl", 200, "AccessControlPolicy"),
    ])
    func bucketConfigurationReads(name: String, status: Int, element: String) throws {
        let s3 = try S3Harness()
        s3.makeBucket("conf")
        let r = s3.call("GET", "/conf?\(name)")
        #expect(r.status == status)
        if status == 200 { #expect(r.xml?.name == element) } else { #expect(r.errorCode == element) }
    }

    @Test func unsupportedSubresourcesAreNotImplemented() throws {
        let s3 = try S3Harness()
        s3.makeBucket("nix")
        let r = s3.call("PUT", "/nix?website", body: Array("<WebsiteConfiguration><IndexDocument><Suffix>index.html</Suffix></IndexDocument></WebsiteConfiguration>".utf8))
        #expect(r.status == 501)
        #expect(r.errorCode == "NotImplemented")
    }

    @Test func listBucketsHonoursAllowedBuckets() throws {
        let config = S3Configuration(credentials: [.init(accessKey: "test", secretKey: "test"),
                                                   .init(accessKey: "limited", secretKey: "s2", allowedBuckets: ["mine"])])
        let s3 = try S3Harness(configuration: config)
        s3.makeBucket("mine")
        s3.makeBucket("theirs")
        let limited = RequestSigner(accessKey: "limited", secret: "s2", region: "us-east-1")
        let r = s3.send(s3.request("GET", "/", signer: limited))
        let names = r.xml?.child("Buckets")?.children(named: "Bucket").compactMap { $0.childText("Name") }
        #expect(names == ["mine"])
    }

    @Test func defaultBucketsAndReset() throws {
        let s3 = try S3Harness(configuration: S3Configuration(defaultBuckets: ["uploads"]))
        s3.put("uploads", "a", [1])
        s3.makeBucket("extra")
        try s3.service.reset()
        let names = s3.call("GET", "/").xml?.child("Buckets")?.children(named: "Bucket").compactMap { $0.childText("Name") }
        #expect(names == ["uploads"])
        #expect(s3.call("GET", "/uploads/a").errorCode == "NoSuchKey")
    }
}
