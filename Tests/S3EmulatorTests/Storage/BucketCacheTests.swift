import Foundation
import HearthCore
import Testing
@testable import S3Emulator

/// A bucket's access settings stay cached across writes to its objects (`S3Store.bucketGeneration`
/// moves only with writes to buckets), and every change to the bucket itself — policy, public
/// access block, versioning, ACL, deletion, creation — is seen by the very next request.
@Suite struct BucketCacheTests {
    static let off = "<PublicAccessBlockConfiguration><BlockPublicAcls>false</BlockPublicAcls><IgnorePublicAcls>false</IgnorePublicAcls><BlockPublicPolicy>false</BlockPublicPolicy><RestrictPublicBuckets>false</RestrictPublicBuckets></PublicAccessBlockConfiguration>"

    func anonymousGet(_ s3: S3Harness, _ target: String) -> Int {
        s3.send(s3.request("GET", target, signed: false)).status
    }

    @Test func objectWritesKeepTheBucketCached() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let store = s3.service.store
        s3.put("bkt", "a", Array("one".utf8))
        let generation = store.bucketGeneration
        #expect(store.bucketCache.count == 1)
        // Overwrites, deletes and a multi-object write change no bucket: the entry stays.
        s3.put("bkt", "a", Array("two".utf8))
        s3.put("bkt", "b", Array("three".utf8))
        #expect(s3.call("DELETE", "/bkt/b").status == 204)
        #expect(store.bucketGeneration == generation)
        #expect(store.bucketCache.count == 1)
        #expect(try store.bucketAccess("bkt")?.bucket.name == "bkt")
        #expect(s3.call("GET", "/bkt/a").body == Array("two".utf8))
    }

    @Test func policyAndPublicAccessBlockChangesAreSeenAtOnce() throws {
        let s3 = try S3Harness()
        s3.makeBucket("site")
        s3.put("site", "index.html", Array("hi".utf8))
        #expect(anonymousGet(s3, "/site/index.html") == 403)
        #expect(s3.call("PUT", "/site?publicAccessBlock", body: Array(Self.off.utf8)).status == 200)
        s3.put("site", "index.html", Array("hi again".utf8))
        #expect(anonymousGet(s3, "/site/index.html") == 403)
        #expect(s3.call("PUT", "/site?policy", body: Array(BucketPolicyTests.publicRead("site").utf8)).status == 204)
        #expect(anonymousGet(s3, "/site/index.html") == 200)
        s3.put("site", "index.html", Array("third".utf8))
        #expect(anonymousGet(s3, "/site/index.html") == 200)
        let restrict = "<PublicAccessBlockConfiguration><RestrictPublicBuckets>true</RestrictPublicBuckets></PublicAccessBlockConfiguration>"
        #expect(s3.call("PUT", "/site?publicAccessBlock", body: Array(restrict.utf8)).status == 200)
        #expect(anonymousGet(s3, "/site/index.html") == 403)
        #expect(s3.call("DELETE", "/site?publicAccessBlock").status == 204)
        #expect(anonymousGet(s3, "/site/index.html") == 200)
        #expect(s3.call("DELETE", "/site?policy").status == 204)
        #expect(anonymousGet(s3, "/site/index.html") == 403)
    }

    @Test func versioningAclAndBucketLifeAreSeenAtOnce() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        #expect(s3.put("bkt", "k", Array("1".utf8)).header("x-amz-version-id") == nil)
        let enabled = "<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>"
        #expect(s3.call("PUT", "/bkt?versioning", body: Array(enabled.utf8)).status == 200)
        #expect(s3.put("bkt", "k", Array("2".utf8)).header("x-amz-version-id") != nil)
        #expect(try s3.service.store.bucketAccess("bkt")?.bucket.versioning == "Enabled")

        // An ACL granting public reads counts once ACLs are enabled and public ACLs unblocked.
        s3.makeBucket("acl")
        s3.put("acl", "k", Array("x".utf8))
        #expect(anonymousGet(s3, "/acl") == 403)
        let preferred = "<OwnershipControls><Rule><ObjectOwnership>BucketOwnerPreferred</ObjectOwnership></Rule></OwnershipControls>"
        #expect(s3.call("PUT", "/acl?ownershipControls", body: Array(preferred.utf8)).status == 200)
        #expect(s3.call("PUT", "/acl?publicAccessBlock", body: Array(Self.off.utf8)).status == 200)
        #expect(s3.call("PUT", "/acl?acl", headers: [("x-amz-acl", "public-read")]).status == 200)
        #expect(anonymousGet(s3, "/acl") == 200)
        #expect(s3.call("PUT", "/acl?acl", headers: [("x-amz-acl", "private")]).status == 200)
        #expect(anonymousGet(s3, "/acl") == 403)

        // Deleted, then created again: each answer follows at once.
        #expect(s3.call("DELETE", "/acl/k").status == 204)
        #expect(s3.call("DELETE", "/acl").status == 204)
        #expect(s3.put("acl", "k", Array("y".utf8)).errorCode == "NoSuchBucket")
        s3.makeBucket("acl")
        #expect(s3.put("acl", "k", Array("y".utf8)).status == 200)
        #expect(anonymousGet(s3, "/acl") == 403)
    }
}
