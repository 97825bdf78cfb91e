import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

@Suite struct HubRoutesTests {
    func hub(_ s3: S3Harness) -> Router {
        let router = Router()
        s3.service.registerHubRoutes(router)
        return router
    }

    func json(_ r: Response) throws -> JSON { try JSON.parse(r.bodyBytes ?? []) }

    @Test func presignedPutWorksAndMismatchIsDiagnosed() throws {
        let s3 = try S3Harness()
        s3.service.setPublicBaseURL("http://127.0.0.1:9000")
        s3.makeBucket("bkt")
        let body = Array(#"{"method":"PUT","bucket":"bkt","key":"photo 1.jpg","expiresSeconds":600,"headers":{"Content-Type":"image/jpeg"}}"#.utf8)
        let r = hub(s3).respond(to: Request(method: "POST", target: "/emulator/v1/s3/presign", body: body))
        #expect(r.status == 200)
        let url = try #require(json(r)["url"]?.stringValue)
        #expect(url.hasPrefix("http://127.0.0.1:9000/bkt/photo%201.jpg?"))
        #expect(url.contains("X-Amz-SignedHeaders=content-type%3Bhost"))
        let target = String(url.dropFirst("http://127.0.0.1:9000".count))

        let good = s3.send(Request(method: "PUT", target: target, headers: ["Host": "127.0.0.1:9000", "Content-Type": "image/jpeg", "Content-Length": "3"],
                                   body: [1, 2, 3]))
        #expect(good.status == 200, "\(good.text)")
        #expect(s3.call("GET", "/bkt/photo%201.jpg").body == [1, 2, 3])

        let bad = s3.send(Request(method: "PUT", target: target, headers: ["Host": "127.0.0.1:9000", "Content-Type": "image/png", "Content-Length": "3"],
                                  body: [4, 5, 6]))
        #expect(bad.status == 403)
        #expect(bad.errorCode == "SignatureDoesNotMatch")
        let diagnosis = try #require(bad.header("x-hearth-diagnosis"))
        #expect(diagnosis.contains("image/jpeg"))
        #expect(diagnosis.contains("image/png"))
        #expect(bad.xml?.childText("Diagnosis")?.contains("image/png") == true)

        let log = hub(s3).respond(to: Request(method: "GET", target: "/emulator/v1/s3/requests?limit=2"))
        let entries = try #require(json(log)["requests"]?.arrayValue)
        #expect(entries.count == 2)
        #expect(entries[0]["status"]?.intValue == 403)
        #expect(entries[0]["errorCode"]?.stringValue == "SignatureDoesNotMatch")
        #expect(entries[0]["diagnosis"]?.stringValue?.contains("image/png") == true)
        #expect(entries[0]["path"]?.stringValue == "/bkt/photo%201.jpg")
        #expect(entries[0]["method"]?.stringValue == "PUT")
        #expect(entries[1]["status"]?.intValue == 200)
        #expect(!log.bodyBytes!.contains(where: { _ in false }))
        #expect(!(String(decoding: log.bodyBytes ?? [], as: UTF8.self).contains("X-Amz-Signature")))
    }

    @Test func presignValidation() throws {
        let s3 = try S3Harness()
        let router = hub(s3)
        for body in [#"{"bucket":"b"}"#, "not json", #"{"bucket":"b","key":"k","method":"FETCH"}"#,
                     #"{"bucket":"b","key":"k","expiresSeconds":604801}"#, #"{"bucket":"b","key":"k","headers":[1]}"#] {
            let r = router.respond(to: Request(method: "POST", target: "/emulator/v1/s3/presign", body: Array(body.utf8)))
            #expect(r.status == 400, "\(body)")
        }
    }

    @Test func expiredPresignedURL() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        s3.put("bkt", "k", [9])
        let url = try s3.service.presignedURL(method: "GET", bucket: "bkt", key: "k", expiresSeconds: 60, signedHeaders: [:])
        let target = String(url.dropFirst(url.range(of: "9000")!.upperBound.utf16Offset(in: url)))
        #expect(s3.send(Request(method: "GET", target: target, headers: ["Host": "127.0.0.1:9000"])).body == [9])
        s3.clock.advance(seconds: 61)
        let expired = s3.send(Request(method: "GET", target: target, headers: ["Host": "127.0.0.1:9000"]))
        #expect(expired.status == 403)
        #expect(expired.errorCode == "AccessDenied")
        #expect(expired.xml?.childText("Message") == "Request has expired")
    }

    @Test func wipeEndpoint() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        s3.put("bkt", "k", [1])
        let r = hub(s3).respond(to: Request(method: "DELETE", target: "/emulator/v1/s3"))
        #expect(r.status == 200)
        #expect(s3.call("GET", "/").xml?.child("Buckets")?.children.isEmpty == true)
        #expect(try s3.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_chunks") } == 0)
    }

    @Test func objectStoreSeam() throws {
        let s3 = try S3Harness()
        let store: any ObjectStore = s3.service
        try store.ensureBucket("uploads")
        try store.ensureBucket("uploads")
        #expect(store.headObject(bucket: "uploads", key: "a") == nil)
        s3.put("uploads", "a", [1, 2], headers: [("Content-Type", "image/png")])
        let info = try #require(store.headObject(bucket: "uploads", key: "a"))
        #expect(info.size == 2)
        #expect(info.contentType == "image/png")
        #expect(info.etag.hasPrefix("\""))
        #expect(info.lastModified == S3Harness.start)
        #expect(throws: (any Error).self) { try store.ensureBucket("Bad_Name") }
    }

    @Test func requestLogIsBounded() throws {
        let s3 = try S3Harness(configuration: S3Configuration(requestLogCapacity: 3))
        for _ in 0..<5 { s3.call("GET", "/") }
        s3.call("GET", "/missing-bucket/k")
        let entries = s3.service.requestLog.recent(limit: 10)
        #expect(entries.count == 3)
        #expect(entries.first?.errorCode == "NoSuchBucket")
        #expect(entries.first?.operation == "GetObject")
    }
}
