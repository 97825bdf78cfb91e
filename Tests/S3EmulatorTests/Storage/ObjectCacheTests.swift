import Foundation
import HearthCore
import Testing
@testable import S3Emulator

/// Small objects read whole are answered from `S3Store.objectCache` until the next write, with
/// the same answers a read from SQLite gives.
@Suite struct ObjectCacheTests {
    func harness(_ body: [UInt8], key: String = "obj") throws -> S3Harness {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        s3.put("bkt", key, body, headers: [("Content-Type", "text/plain"), ("x-amz-meta-color", "blue")])
        return s3
    }

    /// The headers a GET answers with, minus the per-request ones.
    func objectHeaders(_ r: S3TestResponse) -> [String?] {
        ["ETag", "Last-Modified", "Content-Type", "x-amz-meta-color", "Accept-Ranges", "x-amz-server-side-encryption"]
            .map { r.header($0) }
    }

    @Test func repeatedGetIsAnsweredFromTheCacheUntilAWrite() throws {
        let first = S3Harness.bytes(4096)
        let s3 = try harness(first)
        let read = s3.call("GET", "/bkt/obj")
        #expect(read.status == 200)
        #expect(read.body == first)
        #expect(s3.service.store.objectCache.count == 1)
        let cached = s3.call("GET", "/bkt/obj")
        #expect(cached.status == 200)
        #expect(cached.body == first)
        #expect(objectHeaders(cached) == objectHeaders(read))
        #expect(objectHeaders(cached).allSatisfy { $0 != nil })

        // Any write moves the database's write generation: the next GET sees what it wrote.
        let second = S3Harness.bytes(100, seed: 9)
        s3.put("bkt", "obj", second)
        #expect(s3.call("GET", "/bkt/obj").body == second)
        #expect(s3.call("GET", "/bkt/obj").body == second)
        #expect(s3.call("DELETE", "/bkt/obj").status == 204)
        #expect(s3.call("GET", "/bkt/obj").errorCode == "NoSuchKey")
        #expect(s3.call("DELETE", "/bkt").status == 204)
        #expect(s3.call("GET", "/bkt/obj").errorCode == "NoSuchBucket")
    }

    @Test func cachedObjectAnswersRangesHeadAndConditionsAsAReadDoes() throws {
        let body = S3Harness.bytes(1000)
        let s3 = try harness(body)
        let etag = try #require(s3.call("GET", "/bkt/obj").header("ETag"))
        #expect(s3.service.store.objectCache.count == 1)
        let range = s3.call("GET", "/bkt/obj", headers: [("Range", "bytes=2-5")])
        #expect(range.status == 206)
        #expect(range.body == Array(body[2...5]))
        #expect(range.header("Content-Range") == "bytes 2-5/1000")
        let head = s3.call("HEAD", "/bkt/obj")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.declaredLength == 1000)
        #expect(s3.call("GET", "/bkt/obj", headers: [("If-None-Match", etag)]).status == 304)
        #expect(s3.call("GET", "/bkt/obj", headers: [("If-Match", "\"0000\"")]).status == 412)
        #expect(s3.call("GET", "/bkt/obj", headers: [("Range", "bytes=1000-")]).errorCode == "InvalidRange")
        let overridden = s3.call("GET", "/bkt/obj?response-content-type=image%2Fpng")
        #expect(overridden.header("Content-Type") == "image/png")
        #expect(overridden.body == body)
        // Still the whole object, unchanged by the partial answers above.
        #expect(s3.call("GET", "/bkt/obj").body == body)
    }

    @Test func keysThatDifferOnlyInNormalisationStayTwoObjects() throws {
        // Swift's `==` equates these two keys; S3 and SQLite see different bytes.
        let precomposed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let a = S3Harness.bytes(64, seed: 1), b = S3Harness.bytes(64, seed: 2)
        let s3 = try harness(a, key: precomposed)
        s3.put("bkt", decomposed, b)
        for _ in 0..<2 {
            #expect(s3.call("GET", "/bkt/" + S3Harness.encode(precomposed)).body == a)
            #expect(s3.call("GET", "/bkt/" + S3Harness.encode(decomposed)).body == b)
        }
        #expect(s3.service.store.objectCache.count == 2)
    }

    @Test func largeObjectsAndVersionReadsAreNotCached() throws {
        let large = S3Harness.bytes(S3Store.cachedObjectLimit + 1)
        let s3 = try harness(large)
        #expect(s3.call("GET", "/bkt/obj").body == large)
        #expect(s3.call("GET", "/bkt/obj").body == large)
        #expect(s3.service.store.objectCache.count == 0)

        let body = Array("<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>".utf8)
        #expect(s3.call("PUT", "/bkt?versioning", body: body).status == 200)
        let version = try #require(s3.put("bkt", "v", Array("one".utf8)).header("x-amz-version-id"))
        for _ in 0..<2 {
            let current = s3.call("GET", "/bkt/v")
            #expect(current.body == Array("one".utf8))
            #expect(current.header("x-amz-version-id") == version)
        }
        #expect(s3.service.store.objectCache.count == 1)
        #expect(s3.call("GET", "/bkt/v?versionId=\(version)").body == Array("one".utf8))
        #expect(s3.service.store.objectCache.count == 1)
    }
}
