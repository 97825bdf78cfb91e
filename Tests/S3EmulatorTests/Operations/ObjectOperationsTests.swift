import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import S3Emulator

@Suite struct ObjectOperationsTests {
    @Test func putGetHeadRoundTrip() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let body = Array("hello world".utf8)
        let put = s3.put("bkt", "small.txt", body)
        #expect(put.status == 200)
        #expect(put.header("ETag") == "\"5eb63bbbe01eeed093cb22bb8f5acdc3\"")
        #expect(put.header("x-amz-server-side-encryption") == "AES256")

        let get = s3.call("GET", "/bkt/small.txt")
        #expect(get.status == 200)
        #expect(get.body == body)
        #expect(get.header("ETag") == "\"5eb63bbbe01eeed093cb22bb8f5acdc3\"")
        #expect(get.header("Content-Type") == "binary/octet-stream")
        #expect(get.header("Last-Modified") == S3Harness.start.httpDate)
        #expect(get.header("Accept-Ranges") == "bytes")
        #expect(get.declaredLength == 11)

        let head = s3.call("HEAD", "/bkt/small.txt")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.declaredLength == 11)
        #expect(head.header("ETag") == get.header("ETag"))
    }

    @Test func storesAndReturnsStandardHeadersAndMetadata() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        s3.put("bkt", "doc", [1, 2, 3], headers: [
            ("Content-Type", "image/jpeg"), ("Content-Disposition", "attachment; filename=\"a.jpg\""),
            ("Content-Encoding", "gzip"), ("Content-Language", "fr"), ("Cache-Control", "max-age=60"),
            ("Expires", "Thu, 01 Dec 2026 16:00:00 GMT"), ("X-Amz-Meta-Camera", "Nikon"), ("x-amz-meta-ISO", "200"),
            ("x-amz-storage-class", "STANDARD_IA"), ("x-amz-tagging", "a=1&b=2"),
        ])
        let r = s3.call("GET", "/bkt/doc")
        #expect(r.header("Content-Type") == "image/jpeg")
        #expect(r.header("Content-Disposition") == "attachment; filename=\"a.jpg\"")
        #expect(r.header("Content-Encoding") == "gzip")
        #expect(r.header("Content-Language") == "fr")
        #expect(r.header("Cache-Control") == "max-age=60")
        #expect(r.header("Expires") == "Thu, 01 Dec 2026 16:00:00 GMT")
        #expect(r.header("x-amz-meta-camera") == "Nikon")
        #expect(r.headers.fields.contains { $0.name == "x-amz-meta-iso" && $0.value == "200" })
        #expect(r.header("x-amz-storage-class") == "STANDARD_IA")
        #expect(r.header("x-amz-tagging-count") == "2")
    }

    @Test func awsChunkedContentEncodingIsNotStored() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let payload = S3Harness.bytes(200_000)
        let r = s3.chunkedPut("/bkt/chunked", payload: payload, headers: [("Content-Encoding", "gzip")])
        #expect(r.status == 200, "\(r.text)")
        let got = s3.call("GET", "/bkt/chunked")
        #expect(got.body == payload)
        #expect(got.header("Content-Encoding") == "gzip")
        let plain = s3.chunkedPut("/bkt/plain", payload: [1, 2, 3])
        #expect(plain.status == 200)
        #expect(s3.call("HEAD", "/bkt/plain").header("Content-Encoding") == nil)
    }

    @Test func awsChunkedWithTrailerStoresChecksum() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let payload = S3Harness.bytes(100_000)
        let r = s3.chunkedPut("/bkt/t", payload: payload, chunkSize: 8192, trailer: .crc32)
        #expect(r.status == 200, "\(r.text)")
        let expected = Data(CRC32.checksum(payload).bigEndianBytesValue).base64EncodedString()
        #expect(r.header("x-amz-checksum-crc32") == expected)
        let head = s3.call("HEAD", "/bkt/t", headers: [("x-amz-checksum-mode", "ENABLED")])
        #expect(head.header("x-amz-checksum-crc32") == expected)
        #expect(head.header("x-amz-checksum-type") == "FULL_OBJECT")
    }

    @Test func keysAreStoredVerbatim() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let keys = ["../etc/passwd", "a//b", "dir/./x", "spaces in name", "ünïcödé/日本語.txt", "100%", "plus+sign", "q?mark", "trailing/",
                    "/leading", "a\tb", "emoji-😀", "#hash", String(repeating: "k", count: 1024)]
        for (i, key) in keys.enumerated() {
            let put = s3.put("bkt", key, [UInt8(i)])
            #expect(put.status == 200, "\(key): \(put.text)")
        }
        for (i, key) in keys.enumerated() {
            #expect(s3.call("GET", "/bkt/\(S3Harness.encode(key))").body == [UInt8(i)], "\(key)")
        }
        let listed = s3.call("GET", "/bkt?list-type=2").xml?.children(named: "Contents").compactMap { $0.childText("Key") } ?? []
        #expect(Set(listed) == Set(keys))
        #expect(listed == keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    @Test func keyTooLong() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let r = s3.put("bkt", String(repeating: "é", count: 513), [1])
        #expect(r.status == 400)
        #expect(r.errorCode == "KeyTooLongError")
        #expect(r.xml?.childText("Size") == "1026")
        #expect(r.xml?.childText("MaxSizeAllowed") == "1024")
    }

    @Test func missingObjectAndBucket() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let r = s3.call("GET", "/bkt/missing%20key")
        #expect(r.status == 404)
        #expect(r.errorCode == "NoSuchKey")
        #expect(r.xml?.childText("Key") == "missing key")
        #expect(r.xml?.childText("Message") == "The specified key does not exist.")
        let head = s3.call("HEAD", "/bkt/missing")
        #expect(head.status == 404)
        #expect(head.body.isEmpty)
        let noBucket = s3.put("nobucket", "k", [1])
        #expect(noBucket.errorCode == "NoSuchBucket")
    }

    @Test func contentMD5() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let body = Array("payload".utf8)
        #expect(s3.put("bkt", "ok", body, headers: [("Content-MD5", S3Harness.base64MD5(body))]).status == 200)
        let bad = s3.put("bkt", "bad", body, headers: [("Content-MD5", S3Harness.base64MD5(Array("other".utf8)))])
        #expect(bad.status == 400)
        #expect(bad.errorCode == "BadDigest")
        #expect(bad.xml?.childText("CalculatedDigest") == S3Harness.base64MD5(body))
        #expect(s3.call("GET", "/bkt/bad").errorCode == "NoSuchKey")
        let invalid = s3.put("bkt", "invalid", body, headers: [("Content-MD5", "not-base64!")])
        #expect(invalid.status == 400)
        #expect(invalid.errorCode == "InvalidDigest")
    }

    @Test(arguments: ChecksumAlgorithm.allCases)
    func checksumHeaders(algorithm: ChecksumAlgorithm) throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let body = S3Harness.bytes(3000)
        let good = Data(RunningChecksum.checksum(algorithm, body)).base64EncodedString()
        let put = s3.put("bkt", "k", body, headers: [(algorithm.headerName, good)])
        #expect(put.status == 200, "\(put.text)")
        #expect(put.header(algorithm.headerName) == good)
        let withMode = s3.call("GET", "/bkt/k", headers: [("x-amz-checksum-mode", "ENABLED")])
        #expect(withMode.header(algorithm.headerName) == good)
        #expect(s3.call("GET", "/bkt/k").header(algorithm.headerName) == nil)
        let listed = s3.call("GET", "/bkt?list-type=2").xml?.child("Contents")
        #expect(listed?.childText("ChecksumAlgorithm") == algorithm.displayName)

        let wrong = Data(RunningChecksum.checksum(algorithm, Array("x".utf8))).base64EncodedString()
        let bad = s3.put("bkt", "k", Array("new".utf8), headers: [(algorithm.headerName, wrong)])
        #expect(bad.status == 400)
        #expect(bad.errorCode == "BadDigest")
        #expect(s3.call("GET", "/bkt/k").body == body, "a failed upload leaves the old object")

        let invalid = s3.put("bkt", "k2", body, headers: [(algorithm.headerName, "AAAA")])
        #expect(invalid.status == 400)
        #expect(invalid.errorCode == "InvalidRequest")
    }

    @Test func multipleChecksumHeadersRejected() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let body = Array("abc".utf8)
        let r = s3.put("bkt", "k", body, headers: [
            ("x-amz-checksum-crc32", Data(RunningChecksum.checksum(.crc32, body)).base64EncodedString()),
            ("x-amz-checksum-sha1", Data(RunningChecksum.checksum(.sha1, body)).base64EncodedString()),
        ])
        #expect(r.status == 400)
        #expect(r.errorCode == "InvalidRequest")
    }

    @Test func ifNoneMatchStar() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        #expect(s3.put("bkt", "once", [1], headers: [("If-None-Match", "*")]).status == 200)
        let again = s3.put("bkt", "once", [2], headers: [("If-None-Match", "*")])
        #expect(again.status == 412)
        #expect(again.errorCode == "PreconditionFailed")
        #expect(again.xml?.childText("Condition") == "If-None-Match")
        #expect(s3.call("GET", "/bkt/once").body == [1])
    }

    @Test func putIfMatch() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let etag = try #require(s3.put("bkt", "k", [1]).header("ETag"))
        #expect(s3.put("bkt", "k", [2], headers: [("If-Match", etag)]).status == 200)
        #expect(s3.put("bkt", "k", [3], headers: [("If-Match", etag)]).status == 412)
        #expect(s3.put("bkt", "absent", [3], headers: [("If-Match", etag)]).errorCode == "NoSuchKey")
    }

    @Test func overwriteReplacesAndFreesOldChunks() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        s3.put("bkt", "k", S3Harness.bytes(3 << 20))
        s3.put("bkt", "k", S3Harness.bytes(10, seed: 2))
        #expect(s3.call("GET", "/bkt/k").body == S3Harness.bytes(10, seed: 2))
        // The small body is its blob's row; the 3 MiB body's chunks are gone.
        #expect(try s3.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_chunks") } == 0)
        #expect(try s3.bodyRowCount() == 1)
        #expect(s3.call("DELETE", "/bkt/k").status == 204)
        #expect(s3.call("DELETE", "/bkt/k").status == 204, "deleting a missing key succeeds")
        let left = try s3.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_chunks") }
        #expect(left == 0)
    }

    @Test func entityTooLargeAndMissingLength() throws {
        var config = S3Configuration()
        config.maxObjectSize = 100
        let s3 = try S3Harness(configuration: config)
        s3.makeBucket("bkt")
        let r = s3.put("bkt", "big", S3Harness.bytes(101))
        #expect(r.status == 400)
        #expect(r.errorCode == "EntityTooLarge")
        #expect(r.xml?.childText("ProposedSize") == "101")
        #expect(r.xml?.childText("MaxSizeAllowed") == "100")

        var request = s3.request("PUT", "/bkt/nolength", headers: [("Transfer-Encoding", "chunked")], body: [1, 2])
        #expect(s3.send(request).status == 501)
        request = s3.signer.signedRequest(method: "PUT", target: "/bkt/nolength", headers: ["Host": s3.host], body: [], date: s3.clock.now())
        let missing = s3.send(request)
        #expect(missing.status == 411)
        #expect(missing.errorCode == "MissingContentLength")
    }

    @Test func deleteObjectsBatch() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        for k in ["a", "b", "c"] { s3.put("bkt", k, [1]) }
        let xml = Array("<Delete><Object><Key>a</Key></Object><Object><Key>b</Key></Object><Object><Key>zzz</Key></Object></Delete>".utf8)
        let r = s3.call("POST", "/bkt?delete", headers: [("Content-MD5", S3Harness.base64MD5(xml))], body: xml)
        #expect(r.status == 200)
        #expect(r.xml?.name == "DeleteResult")
        #expect(r.xml?.children(named: "Deleted").compactMap { $0.childText("Key") } == ["a", "b", "zzz"])
        let remaining = s3.call("GET", "/bkt?list-type=2").xml?.children(named: "Contents").compactMap { $0.childText("Key") }
        #expect(remaining == ["c"])

        let quiet = Array("<Delete><Quiet>true</Quiet><Object><Key>c</Key></Object></Delete>".utf8)
        let q = s3.call("POST", "/bkt?delete", headers: [("x-amz-checksum-crc32", Data(RunningChecksum.checksum(.crc32, quiet)).base64EncodedString())], body: quiet)
        #expect(q.status == 200)
        #expect(q.xml?.children.isEmpty == true)

        let noDigest = s3.call("POST", "/bkt?delete", body: quiet)
        #expect(noDigest.errorCode == "InvalidRequest")
        let malformed = Array("<Delete><Object></Object></Delete>".utf8)
        #expect(s3.call("POST", "/bkt?delete", headers: [("Content-MD5", S3Harness.base64MD5(malformed))], body: malformed).errorCode == "MalformedXML")
    }

    @Test func copyObject() throws {
        let s3 = try S3Harness()
        s3.makeBucket("src")
        s3.makeBucket("dst")
        s3.put("src", "a b/ü.txt", Array("data".utf8), headers: [("Content-Type", "text/plain"), ("x-amz-meta-k", "v")])
        s3.clock.advance(seconds: 60)
        let copied = s3.call("PUT", "/dst/copy", headers: [("x-amz-copy-source", "/src/a%20b/%C3%BC.txt")])
        #expect(copied.status == 200, "\(copied.text)")
        #expect(copied.xml?.name == "CopyObjectResult")
        #expect(copied.xml?.childText("ETag") == "\"8d777f385d3dfec8815d20f7496026dc\"")
        #expect(copied.xml?.childText("LastModified") == S3Harness.start.adding(seconds: 60).rfc3339(fractionDigits: 3))
        let got = s3.call("GET", "/dst/copy")
        #expect(got.text == "data")
        #expect(got.header("Content-Type") == "text/plain")
        #expect(got.header("x-amz-meta-k") == "v")

        let replaced = s3.call("PUT", "/dst/replaced", headers: [("x-amz-copy-source", "src/a%20b/%C3%BC.txt"),
                                                                  ("x-amz-metadata-directive", "REPLACE"), ("Content-Type", "app/x")])
        #expect(replaced.status == 200)
        let r = s3.call("HEAD", "/dst/replaced")
        #expect(r.header("Content-Type") == "app/x")
        #expect(r.header("x-amz-meta-k") == nil)

        let selfCopy = s3.call("PUT", "/dst/copy", headers: [("x-amz-copy-source", "dst/copy")])
        #expect(selfCopy.errorCode == "InvalidRequest")
        let selfReplace = s3.call("PUT", "/dst/copy", headers: [("x-amz-copy-source", "dst/copy"), ("x-amz-metadata-directive", "REPLACE")])
        #expect(selfReplace.status == 200)

        #expect(s3.call("PUT", "/dst/x", headers: [("x-amz-copy-source", "src/missing")]).errorCode == "NoSuchKey")
        #expect(s3.call("PUT", "/dst/x", headers: [("x-amz-copy-source", "nobucket/k")]).errorCode == "NoSuchBucket")
        #expect(s3.call("PUT", "/dst/x", headers: [("x-amz-copy-source", "justbucket")]).errorCode == "InvalidArgument")
        #expect(s3.call("PUT", "/dst/x", headers: [("x-amz-copy-source", "src/a%20b/%C3%BC.txt"), ("x-amz-metadata-directive", "MOVE")]).errorCode == "InvalidArgument")
        let cond = s3.call("PUT", "/dst/x", headers: [("x-amz-copy-source", "src/a%20b/%C3%BC.txt"), ("x-amz-copy-source-if-match", "\"nope\"")])
        #expect(cond.status == 412)
        #expect(cond.xml?.childText("Condition") == "x-amz-copy-source-If-Match")
        // Source and copy share chunk rows; deleting the source keeps the copy's bytes.
        #expect(s3.call("DELETE", "/src/a%20b/%C3%BC.txt").status == 204)
        #expect(s3.call("GET", "/dst/copy").text == "data")
    }

    @Test func objectTagging() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        s3.put("bkt", "k", [1], headers: [("x-amz-tagging", "team=core&note=a%20b")])
        let tags = s3.call("GET", "/bkt/k?tagging")
        #expect(tags.xml?.name == "Tagging")
        let pairs = tags.xml?.child("TagSet")?.children(named: "Tag").map { ($0.childText("Key") ?? "", $0.childText("Value") ?? "") }
        #expect(pairs?.map(\.0) == ["team", "note"])
        #expect(pairs?.map(\.1) == ["core", "a b"])
        let body = Array("<Tagging><TagSet><Tag><Key>k/1</Key><Value>v &amp; w</Value></Tag></TagSet></Tagging>".utf8)
        #expect(s3.call("PUT", "/bkt/k?tagging", body: body).status == 200)
        let replaced = s3.call("GET", "/bkt/k?tagging").xml?.child("TagSet")?.child("Tag")
        #expect(replaced?.childText("Key") == "k/1")
        #expect(replaced?.childText("Value") == "v & w")
        #expect(s3.call("HEAD", "/bkt/k").header("x-amz-tagging-count") == "1")
        #expect(s3.call("DELETE", "/bkt/k?tagging").status == 204)
        #expect(s3.call("GET", "/bkt/k?tagging").xml?.child("TagSet")?.children.isEmpty == true)
        #expect(s3.call("GET", "/bkt/missing?tagging").errorCode == "NoSuchKey")
        #expect(s3.call("PUT", "/bkt/k?tagging", body: Array("<Nope/>".utf8)).errorCode == "MalformedXML")
    }

    @Test func unsupportedMethodAndPost() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let r = s3.call("PATCH", "/bkt/k")
        #expect(r.status == 405)
        #expect(r.errorCode == "MethodNotAllowed")
        #expect(r.xml?.childText("Method") == "PATCH")
    }
}

extension UInt32 {
    var bigEndianBytesValue: [UInt8] { [UInt8(self >> 24), UInt8(self >> 16 & 0xFF), UInt8(self >> 8 & 0xFF), UInt8(self & 0xFF)] }
}
