import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import S3Emulator

@Suite struct MultipartTests {
    static let partSize = 5 << 20

    func create(_ s3: S3Harness, key: String = "big.bin", headers: [(String, String)] = []) throws -> String {
        let r = s3.call("POST", "/bkt/\(key)?uploads", headers: headers)
        #expect(r.status == 200, "\(r.text)")
        #expect(r.xml?.name == "InitiateMultipartUploadResult")
        #expect(r.xml?.childText("Key") == key)
        return try #require(r.xml?.childText("UploadId"))
    }

    func uploadPart(_ s3: S3Harness, _ upload: String, _ n: Int, _ body: [UInt8], key: String = "big.bin",
                    headers: [(String, String)] = []) -> S3TestResponse {
        s3.call("PUT", "/bkt/\(key)?partNumber=\(n)&uploadId=\(upload)", headers: headers, body: body)
    }

    func completeXML(_ parts: [(Int, String)], extra: (Int) -> String = { _ in "" }) -> [UInt8] {
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for (n, etag) in parts { xml += "<Part><ETag>\(etag)</ETag><PartNumber>\(n)</PartNumber>\(extra(n))</Part>" }
        return Array((xml + "</CompleteMultipartUpload>").utf8)
    }

    @Test func fullUploadFlow() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let upload = try create(s3, headers: [("Content-Type", "video/mp4"), ("x-amz-meta-origin", "test")])
        let parts = [S3Harness.bytes(Self.partSize, seed: 1), S3Harness.bytes(Self.partSize, seed: 2), S3Harness.bytes(1234, seed: 3)]
        var etags: [String] = []
        for (i, p) in parts.enumerated() {
            let r = uploadPart(s3, upload, i + 1, p)
            #expect(r.status == 200, "\(r.text)")
            etags.append(r.header("ETag") ?? "")
            #expect(r.header("ETag") == ETag.quoted(md5: Digest.md5(p)))
        }
        let listed = s3.call("GET", "/bkt/big.bin?uploadId=\(upload)")
        #expect(listed.xml?.name == "ListPartsResult")
        #expect(listed.xml?.children(named: "Part").compactMap { $0.childText("PartNumber") } == ["1", "2", "3"])
        #expect(listed.xml?.children(named: "Part").last?.childText("Size") == "1234")
        let uploads = s3.call("GET", "/bkt?uploads")
        #expect(uploads.xml?.children(named: "Upload").compactMap { $0.childText("UploadId") } == [upload])

        s3.clock.advance(seconds: 120)
        let done = s3.call("POST", "/bkt/big.bin?uploadId=\(upload)", body: completeXML(Array(zip([1, 2, 3], etags))))
        #expect(done.status == 200, "\(done.text)")
        let md5s = etags.flatMap { Hex.decode(ETag.bare($0)) ?? [] }
        let expected = "\"\(Hex.encode(Digest.md5(md5s)))-3\""
        #expect(done.xml?.childText("ETag") == expected)
        #expect(done.xml?.childText("Location") == "http://127.0.0.1:9000/bkt/big.bin")
        #expect(done.xml?.childText("Bucket") == "bkt")

        let got = s3.call("GET", "/bkt/big.bin")
        #expect(got.body == parts.flatMap { $0 })
        #expect(got.header("ETag") == expected)
        #expect(got.header("Content-Type") == "video/mp4")
        #expect(got.header("x-amz-meta-origin") == "test")
        // S3 dates a multipart object by its initiation.
        #expect(got.header("Last-Modified") == S3Harness.start.httpDate)
        let part2 = s3.call("GET", "/bkt/big.bin?partNumber=2")
        #expect(part2.status == 206)
        #expect(part2.body == parts[1])
        #expect(part2.header("x-amz-mp-parts-count") == "3")
        #expect(part2.header("Content-Range") == "bytes \(Self.partSize)-\(2 * Self.partSize - 1)/\(2 * Self.partSize + 1234)")
        let across = s3.call("GET", "/bkt/big.bin", headers: [("Range", "bytes=\(Self.partSize - 10)-\(Self.partSize + 9)")])
        #expect(across.body == Array(parts[0].suffix(10) + parts[1].prefix(10)))

        #expect(s3.call("GET", "/bkt?uploads").xml?.children(named: "Upload").isEmpty == true)
        #expect(s3.call("GET", "/bkt/big.bin?uploadId=\(upload)").errorCode == "NoSuchUpload")
        // The object's bytes are the parts' chunk rows, not copies.
        let chunkBytes = try s3.database.read { c in try c.scalarInt("SELECT sum(length(data)) FROM s3_chunks") }
        #expect(chunkBytes == Int64(2 * Self.partSize + 1234))
    }

    @Test func partValidation() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let upload = try create(s3)
        let small = uploadPart(s3, upload, 1, [1, 2, 3]).header("ETag") ?? ""
        let second = uploadPart(s3, upload, 2, [4, 5]).header("ETag") ?? ""

        let tooSmall = s3.call("POST", "/bkt/big.bin?uploadId=\(upload)", body: completeXML([(1, small), (2, second)]))
        #expect(tooSmall.status == 400)
        #expect(tooSmall.errorCode == "EntityTooSmall")
        #expect(tooSmall.xml?.childText("ProposedSize") == "3")
        #expect(tooSmall.xml?.childText("MinSizeAllowed") == "5242880")
        #expect(tooSmall.xml?.childText("PartNumber") == "1")

        let order = s3.call("POST", "/bkt/big.bin?uploadId=\(upload)", body: completeXML([(2, second), (1, small)]))
        #expect(order.errorCode == "InvalidPartOrder")
        let wrongETag = s3.call("POST", "/bkt/big.bin?uploadId=\(upload)", body: completeXML([(1, "\"00000000000000000000000000000000\"")]))
        #expect(wrongETag.errorCode == "InvalidPart")
        #expect(wrongETag.xml?.childText("PartNumber") == "1")
        let missingPart = s3.call("POST", "/bkt/big.bin?uploadId=\(upload)", body: completeXML([(7, small)]))
        #expect(missingPart.errorCode == "InvalidPart")
        let empty = s3.call("POST", "/bkt/big.bin?uploadId=\(upload)", body: Array("<CompleteMultipartUpload></CompleteMultipartUpload>".utf8))
        #expect(empty.errorCode == "MalformedXML")
        let garbage = s3.call("POST", "/bkt/big.bin?uploadId=\(upload)", body: Array("not xml".utf8))
        #expect(garbage.errorCode == "MalformedXML")

        // A single small part is fine (the last part has no minimum).
        let single = s3.call("POST", "/bkt/big.bin?uploadId=\(upload)", body: completeXML([(2, second)]))
        #expect(single.status == 200)
        #expect(s3.call("GET", "/bkt/big.bin").body == [4, 5])
        #expect(try s3.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_chunks") } == 1)
    }

    @Test func noSuchUploadAndBadPartNumbers() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let r = uploadPart(s3, "nope", 1, [1])
        #expect(r.status == 404)
        #expect(r.errorCode == "NoSuchUpload")
        #expect(r.xml?.childText("UploadId") == "nope")
        let upload = try create(s3)
        #expect(uploadPart(s3, upload, 0, [1]).errorCode == "InvalidArgument")
        #expect(uploadPart(s3, upload, 10_001, [1]).errorCode == "InvalidArgument")
        #expect(uploadPart(s3, upload, 1, [1], key: "other-key").errorCode == "NoSuchUpload")
        #expect(s3.call("DELETE", "/bkt/big.bin?uploadId=nope").errorCode == "NoSuchUpload")
        #expect(s3.call("POST", "/bkt/big.bin?uploadId=nope", body: completeXML([(1, "\"x\"")])).errorCode == "NoSuchUpload")
    }

    @Test func abortDiscardsParts() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let upload = try create(s3)
        #expect(uploadPart(s3, upload, 1, S3Harness.bytes(2 << 20)).status == 200)
        #expect(uploadPart(s3, upload, 1, S3Harness.bytes(100)).status == 200, "re-uploading a part replaces it")
        #expect(try s3.bodyRowCount() == 1)
        #expect(s3.call("DELETE", "/bkt/big.bin?uploadId=\(upload)").status == 204)
        #expect(try s3.bodyRowCount() == 0)
        #expect(s3.call("GET", "/bkt/big.bin?uploadId=\(upload)").errorCode == "NoSuchUpload")
    }

    @Test func compositeChecksum() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let upload = try create(s3, headers: [("x-amz-checksum-algorithm", "CRC32")])
        let parts = [S3Harness.bytes(Self.partSize, seed: 4), S3Harness.bytes(10, seed: 5)]
        var etags: [String] = []
        var sums: [[UInt8]] = []
        for (i, p) in parts.enumerated() {
            let sum = RunningChecksum.checksum(.crc32, p)
            sums.append(sum)
            let r = uploadPart(s3, upload, i + 1, p, headers: [("x-amz-checksum-crc32", Data(sum).base64EncodedString()),
                                                              ("x-amz-sdk-checksum-algorithm", "CRC32")])
            #expect(r.status == 200, "\(r.text)")
            etags.append(r.header("ETag") ?? "")
        }
        let listParts = s3.call("GET", "/bkt/big.bin?uploadId=\(upload)")
        #expect(listParts.xml?.child("Part")?.childText("ChecksumCRC32") == Data(sums[0]).base64EncodedString())
        #expect(listParts.xml?.childText("ChecksumAlgorithm") == "CRC32")
        let body = completeXML(Array(zip([1, 2], etags))) { n in "<ChecksumCRC32>\(Data(sums[n - 1]).base64EncodedString())</ChecksumCRC32>" }
        let done = s3.call("POST", "/bkt/big.bin?uploadId=\(upload)", body: body)
        #expect(done.status == 200, "\(done.text)")
        let composite = Data(RunningChecksum.checksum(.crc32, sums.flatMap { $0 })).base64EncodedString() + "-2"
        #expect(done.xml?.childText("ChecksumCRC32") == composite)
        #expect(done.xml?.childText("ChecksumType") == "COMPOSITE")
        let head = s3.call("HEAD", "/bkt/big.bin", headers: [("x-amz-checksum-mode", "ENABLED")])
        #expect(head.header("x-amz-checksum-crc32") == composite)
        #expect(head.header("x-amz-checksum-type") == "COMPOSITE")
    }

    @Test func fullObjectChecksum() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let upload = try create(s3, headers: [("x-amz-checksum-algorithm", "CRC64NVME")])
        let parts = [S3Harness.bytes(Self.partSize, seed: 6), S3Harness.bytes(99, seed: 7)]
        var etags: [String] = []
        for (i, p) in parts.enumerated() {
            let r = uploadPart(s3, upload, i + 1, p, headers: [("x-amz-checksum-crc64nvme", Data(RunningChecksum.checksum(.crc64nvme, p)).base64EncodedString())])
            etags.append(r.header("ETag") ?? "")
        }
        let done = s3.call("POST", "/bkt/big.bin?uploadId=\(upload)", body: completeXML(Array(zip([1, 2], etags))))
        let whole = Data(RunningChecksum.checksum(.crc64nvme, parts.flatMap { $0 })).base64EncodedString()
        #expect(done.xml?.childText("ChecksumCRC64NVME") == whole)
        #expect(done.xml?.childText("ChecksumType") == "FULL_OBJECT")
        #expect(s3.call("POST", "/bkt/k?uploads", headers: [("x-amz-checksum-algorithm", "SHA256"), ("x-amz-checksum-type", "FULL_OBJECT")]).errorCode == "InvalidRequest")
        #expect(s3.call("POST", "/bkt/k?uploads", headers: [("x-amz-checksum-algorithm", "MD5")]).errorCode == "InvalidRequest")
    }

    @Test func uploadPartCopy() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let source = S3Harness.bytes(6 << 20, seed: 9)
        s3.put("bkt", "src", source)
        let upload = try create(s3, key: "dst")
        let p1 = s3.call("PUT", "/bkt/dst?partNumber=1&uploadId=\(upload)", headers: [("x-amz-copy-source", "/bkt/src")])
        #expect(p1.status == 200, "\(p1.text)")
        #expect(p1.xml?.name == "CopyPartResult")
        let p2 = s3.call("PUT", "/bkt/dst?partNumber=2&uploadId=\(upload)", headers: [("x-amz-copy-source", "bkt/src"),
                                                                                       ("x-amz-copy-source-range", "bytes=100-199")])
        #expect(p2.xml?.childText("ETag") == ETag.quoted(md5: Digest.md5(Array(source[100...199]))))
        let bad = s3.call("PUT", "/bkt/dst?partNumber=3&uploadId=\(upload)", headers: [("x-amz-copy-source", "bkt/src"),
                                                                                        ("x-amz-copy-source-range", "bytes=0-\(6 << 20)")])
        #expect(bad.errorCode == "InvalidArgument")  // S3: "Range specified is not valid for source object of size: N"
        let etags = [p1.xml?.childText("ETag") ?? "", p2.xml?.childText("ETag") ?? ""]
        let done = s3.call("POST", "/bkt/dst?uploadId=\(upload)", body: completeXML(Array(zip([1, 2], etags))))
        #expect(done.status == 200, "\(done.text)")
        #expect(s3.call("GET", "/bkt/dst").body == source + Array(source[100...199]))
        // Part copies share the source's chunk rows.
        #expect(try s3.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_chunks") } == 6)
    }

    @Test func listMultipartUploadsPagingAndPrefixes() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        var ids: [String] = []
        for key in ["a/1", "a/2", "b", "c"] { ids.append(try create(s3, key: key)) }
        let grouped = s3.call("GET", "/bkt?uploads&delimiter=%2F")
        #expect(grouped.xml?.children(named: "CommonPrefixes").compactMap { $0.childText("Prefix") } == ["a/"])
        #expect(grouped.xml?.children(named: "Upload").compactMap { $0.childText("Key") } == ["b", "c"])
        let page = s3.call("GET", "/bkt?uploads&max-uploads=2")
        #expect(page.xml?.childText("IsTruncated") == "true")
        #expect(page.xml?.childText("NextKeyMarker") == "a/2")
        let rest = s3.call("GET", "/bkt?uploads&key-marker=a%2F2")
        #expect(rest.xml?.children(named: "Upload").compactMap { $0.childText("Key") } == ["b", "c"])
        let prefixed = s3.call("GET", "/bkt?uploads&prefix=a")
        #expect(prefixed.xml?.children(named: "Upload").count == 2)
    }

    @Test func deleteBucketRemovesUploads() throws {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        let upload = try create(s3)
        _ = uploadPart(s3, upload, 1, [1, 2, 3])
        #expect(s3.call("DELETE", "/bkt").status == 204)
        #expect(try s3.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_parts") } == 0)
        #expect(try s3.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_chunks") } == 0)
    }
}
