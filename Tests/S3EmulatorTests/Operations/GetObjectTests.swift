import Foundation
import HearthCore
import Testing
@testable import S3Emulator

@Suite struct GetObjectTests {
    func harness(size: Int = 10) throws -> (S3Harness, [UInt8], String) {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let body = S3Harness.bytes(size)
        let etag = s3.put("bkt", "obj", body).header("ETag") ?? ""
        return (s3, body, etag)
    }

    @Test func rangeRequests() throws {
        let (s3, body, _) = try harness()
        let r = s3.call("GET", "/bkt/obj", headers: [("Range", "bytes=2-5")])
        #expect(r.status == 206)
        #expect(r.body == Array(body[2...5]))
        #expect(r.header("Content-Range") == "bytes 2-5/10")
        #expect(r.declaredLength == 4)
        let suffix = s3.call("GET", "/bkt/obj", headers: [("Range", "bytes=-3")])
        #expect(suffix.body == Array(body[7...]))
        let head = s3.call("HEAD", "/bkt/obj", headers: [("Range", "bytes=0-0")])
        #expect(head.status == 206)
        #expect(head.declaredLength == 1)
        #expect(head.header("Content-Range") == "bytes 0-0/10")
    }

    @Test func unsatisfiableRange() throws {
        let (s3, _, _) = try harness()
        let r = s3.call("GET", "/bkt/obj", headers: [("Range", "bytes=10-")])
        #expect(r.status == 416)
        #expect(r.errorCode == "InvalidRange")
        #expect(r.xml?.childText("RangeRequested") == "bytes=10-")
        #expect(r.xml?.childText("ActualObjectSize") == "10")
        let head = s3.call("HEAD", "/bkt/obj", headers: [("Range", "bytes=10-")])
        #expect(head.status == 416)
        #expect(head.body.isEmpty)
    }

    @Test func largeRangeStreamsAcrossChunks() throws {
        let (s3, body, _) = try harness(size: 3 << 20 + 12_345)
        let whole = s3.call("GET", "/bkt/obj")
        #expect(whole.streamed)
        #expect(whole.body == body)
        let start = (1 << 20) - 100
        let end = (2 << 20) + 5000
        let r = s3.call("GET", "/bkt/obj", headers: [("Range", "bytes=\(start)-\(end)")])
        #expect(r.status == 206)
        #expect(r.streamed)
        #expect(r.body == Array(body[start...end]))
    }

    @Test func conditionalGets() throws {
        let (s3, _, etag) = try harness()
        #expect(s3.call("GET", "/bkt/obj", headers: [("If-Match", etag)]).status == 200)
        let failed = s3.call("GET", "/bkt/obj", headers: [("If-Match", "\"0000\"")])
        #expect(failed.status == 412)
        #expect(failed.errorCode == "PreconditionFailed")
        #expect(failed.xml?.childText("Condition") == "If-Match")
        let notModified = s3.call("GET", "/bkt/obj", headers: [("If-None-Match", etag)])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        #expect(notModified.header("ETag") == etag)
        let since = s3.call("GET", "/bkt/obj", headers: [("If-Modified-Since", S3Harness.start.adding(seconds: 5).httpDate)])
        #expect(since.status == 304)
        let unmodified = s3.call("HEAD", "/bkt/obj", headers: [("If-Unmodified-Since", S3Harness.start.adding(seconds: -5).httpDate)])
        #expect(unmodified.status == 412)
        #expect(unmodified.body.isEmpty)
        // Preconditions are evaluated before the range.
        let both = s3.call("GET", "/bkt/obj", headers: [("If-Match", "\"0000\""), ("Range", "bytes=50-")])
        #expect(both.status == 412)
        #expect(s3.call("GET", "/bkt/missing", headers: [("If-Match", etag)]).status == 404)
    }

    @Test func responseOverrides() throws {
        let (s3, _, _) = try harness()
        let r = s3.call("GET", "/bkt/obj?response-content-type=text%2Fplain&response-content-disposition=attachment%3B%20filename%3D%22x.txt%22&response-cache-control=no-cache&response-content-language=de&response-expires=Thu%2C%2001%20Dec%202026%2016%3A00%3A00%20GMT&response-content-encoding=identity")
        #expect(r.status == 200)
        #expect(r.header("Content-Type") == "text/plain")
        #expect(r.header("Content-Disposition") == "attachment; filename=\"x.txt\"")
        #expect(r.header("Cache-Control") == "no-cache")
        #expect(r.header("Content-Language") == "de")
        #expect(r.header("Expires") == "Thu, 01 Dec 2026 16:00:00 GMT")
        #expect(r.header("Content-Encoding") == "identity")
    }

    @Test func partNumberOnSinglePartObject() throws {
        let (s3, body, _) = try harness()
        let r = s3.call("GET", "/bkt/obj?partNumber=1")
        #expect(r.status == 206)
        #expect(r.body == body)
        let bad = s3.call("GET", "/bkt/obj?partNumber=2")
        #expect(bad.status == 416)
        #expect(bad.errorCode == "InvalidPartNumber")
        #expect(s3.call("GET", "/bkt/obj?partNumber=0").errorCode == "InvalidArgument")
        #expect(s3.call("GET", "/bkt/obj?partNumber=1", headers: [("Range", "bytes=0-1")]).errorCode == "InvalidRequest")
    }

    @Test func emptyObject() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        #expect(s3.put("bkt", "empty", []).header("ETag") == "\"d41d8cd98f00b204e9800998ecf8427e\"")
        let r = s3.call("GET", "/bkt/empty")
        #expect(r.status == 200)
        #expect(r.body.isEmpty)
        #expect(r.declaredLength == 0)
        #expect(s3.call("GET", "/bkt/empty", headers: [("Range", "bytes=0-")]).status == 416)
    }

    @Test func versionIdNullIsTheObject() throws {
        let (s3, body, _) = try harness()
        #expect(s3.call("GET", "/bkt/obj?versionId=null").body == body)
        #expect(s3.call("GET", "/bkt/obj?versionId=abc").errorCode == "InvalidArgument")
    }
}
