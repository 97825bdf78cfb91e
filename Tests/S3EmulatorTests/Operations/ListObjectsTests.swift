import Foundation
import HearthCore
import Testing
@testable import S3Emulator

@Suite struct ListObjectsTests {
    static let keys = ["a.txt", "photos/2026/jan.jpg", "photos/2026/feb.jpg", "photos/2025/x.jpg", "photos/top.jpg",
                       "videos/v1.mp4", "z", "a b/c d.txt", "a+b"]

    func harness() throws -> S3Harness {
        let s3 = try S3Harness()
        s3.makeBucket("bkt")
        for k in Self.keys { s3.put("bkt", k, Array(k.utf8)) }
        return s3
    }

    func keys(_ r: S3TestResponse) -> [String] { r.xml?.children(named: "Contents").compactMap { $0.childText("Key") } ?? [] }
    func prefixes(_ r: S3TestResponse) -> [String] {
        r.xml?.children(named: "CommonPrefixes").compactMap { $0.childText("Prefix") } ?? []
    }

    @Test func listAllSorted() throws {
        let s3 = try harness()
        let r = s3.call("GET", "/bkt?list-type=2")
        #expect(r.status == 200)
        #expect(keys(r) == Self.keys.sorted())
        #expect(r.xml?.childText("KeyCount") == "9")
        #expect(r.xml?.childText("MaxKeys") == "1000")
        #expect(r.xml?.childText("IsTruncated") == "false")
        let first = r.xml?.child("Contents")
        #expect(first?.childText("Size") == "11")
        #expect(first?.childText("StorageClass") == "STANDARD")
        #expect(first?.childText("LastModified") == "2026-11-30T06:33:14.000Z")
        #expect(first?.child("Owner") == nil)
        #expect(s3.call("GET", "/bkt?list-type=2&fetch-owner=true").xml?.child("Contents")?.child("Owner") != nil)
    }

    /// Page sizes and encoding-type are checked alike by every listing (objects, uploads, parts).
    @Test(arguments: [
        ("/bkt?list-type=2&max-keys=-1", "Provided max-keys not an integer or within integer range", "max-keys"),
        ("/bkt?max-keys=ten", "Provided max-keys not an integer or within integer range", "max-keys"),
        ("/bkt?uploads&max-uploads=x", "Provided max-uploads not an integer or within integer range", "max-uploads"),
        ("/bkt?list-type=2&encoding-type=base64", "Invalid Encoding Method specified in Request", "encoding-type"),
        ("/bkt?uploads&encoding-type=zip", "Invalid Encoding Method specified in Request", "encoding-type"),
    ])
    func invalidListingParameters(target: String, message: String, name: String) throws {
        let s3 = try harness()
        let r = s3.call("GET", target)
        #expect(r.status == 400)
        #expect(r.xml?.childText("Code") == "InvalidArgument")
        #expect(r.xml?.childText("Message") == message)
        #expect(r.xml?.childText("ArgumentName") == name)
    }

    @Test func pageSizeAboveTheMaximumIsCapped() throws {
        let s3 = try harness()
        #expect(s3.call("GET", "/bkt?list-type=2&max-keys=5000").xml?.childText("MaxKeys") == "1000")
        #expect(s3.call("GET", "/bkt?list-type=2&max-keys=2").xml?.childText("MaxKeys") == "2")
    }

    @Test func prefixAndDelimiter() throws {
        let s3 = try harness()
        let top = s3.call("GET", "/bkt?list-type=2&delimiter=%2F")
        #expect(keys(top) == ["a+b", "a.txt", "z"])
        #expect(prefixes(top) == ["a b/", "photos/", "videos/"])
        #expect(top.xml?.childText("KeyCount") == "6")
        #expect(top.xml?.childText("Delimiter") == "/")
        let photos = s3.call("GET", "/bkt?list-type=2&prefix=photos%2F&delimiter=%2F")
        #expect(keys(photos) == ["photos/top.jpg"])
        #expect(prefixes(photos) == ["photos/2025/", "photos/2026/"])
        #expect(photos.xml?.childText("Prefix") == "photos/")
        let deep = s3.call("GET", "/bkt?list-type=2&prefix=photos%2F2026")
        #expect(keys(deep) == ["photos/2026/feb.jpg", "photos/2026/jan.jpg"])
        #expect(keys(s3.call("GET", "/bkt?list-type=2&prefix=nothing")) == [])
    }

    @Test func paginationWithContinuationTokens() throws {
        let s3 = try harness()
        var seen: [String] = []
        var token: String?
        var pages = 0
        repeat {
            let q = "/bkt?list-type=2&max-keys=2&delimiter=%2F" + (token.map { "&continuation-token=" + S3Harness.encode($0).replacingOccurrences(of: "/", with: "%2F") } ?? "")
            let r = s3.call("GET", q)
            #expect(r.status == 200, "\(r.text)")
            seen += keys(r) + prefixes(r)
            token = r.xml?.childText("NextContinuationToken")
            #expect((r.xml?.childText("IsTruncated") == "true") == (token != nil))
            pages += 1
        } while token != nil && pages < 10
        #expect(Set(seen) == Set(["a+b", "a.txt", "z", "a b/", "photos/", "videos/"]))
        #expect(seen.count == 6)
        #expect(pages == 3)
        #expect(s3.call("GET", "/bkt?list-type=2&continuation-token=%21%21").errorCode == "InvalidArgument")
    }

    @Test func startAfterAndMaxKeys() throws {
        let s3 = try harness()
        let r = s3.call("GET", "/bkt?list-type=2&start-after=photos%2F2026%2Fjan.jpg")
        #expect(keys(r) == ["photos/top.jpg", "videos/v1.mp4", "z"])
        #expect(r.xml?.childText("StartAfter") == "photos/2026/jan.jpg")
        let zero = s3.call("GET", "/bkt?list-type=2&max-keys=0")
        #expect(keys(zero) == [])
        #expect(zero.xml?.childText("IsTruncated") == "false")
        #expect(s3.call("GET", "/bkt?list-type=2&max-keys=-1").errorCode == "InvalidArgument")
        #expect(s3.call("GET", "/bkt?list-type=2&max-keys=abc").errorCode == "InvalidArgument")
        #expect(s3.call("GET", "/bkt?list-type=2&max-keys=5000").xml?.childText("MaxKeys") == "1000")
    }

    @Test func urlEncoding() throws {
        let s3 = try harness()
        let r = s3.call("GET", "/bkt?list-type=2&prefix=a&encoding-type=url")
        #expect(keys(r) == ["a%20b/c%20d.txt", "a%2Bb", "a.txt"])
        #expect(r.xml?.childText("EncodingType") == "url")
        #expect(s3.call("GET", "/bkt?list-type=2&encoding-type=xml").errorCode == "InvalidArgument")
    }

    @Test func listObjectsV1() throws {
        let s3 = try harness()
        let r = s3.call("GET", "/bkt?max-keys=2&delimiter=%2F")
        #expect(r.xml?.name == "ListBucketResult")
        #expect(r.xml?.childText("Marker") == "")
        #expect(keys(r) == ["a+b"])
        #expect(prefixes(r) == ["a b/"])
        #expect(r.xml?.childText("IsTruncated") == "true")
        let next = try #require(r.xml?.childText("NextMarker"))
        #expect(next == "a+b")
        let page2 = s3.call("GET", "/bkt?max-keys=10&delimiter=%2F&marker=" + S3Harness.encode(next).replacingOccurrences(of: "/", with: "%2F"))
        #expect(keys(page2) == ["a.txt", "z"])
        #expect(prefixes(page2) == ["photos/", "videos/"])
        #expect(r.xml?.child("Contents")?.child("Owner") != nil)
        // Without a delimiter there is no NextMarker; clients continue from the last key.
        let plain = s3.call("GET", "/bkt?max-keys=1")
        #expect(plain.xml?.childText("NextMarker") == nil)
        #expect(plain.xml?.childText("IsTruncated") == "true")
    }

    @Test func markerEqualToCommonPrefixSkipsIt() throws {
        let s3 = try harness()
        let r = s3.call("GET", "/bkt?delimiter=%2F&marker=photos%2F")
        #expect(prefixes(r) == ["videos/"])
        #expect(keys(r) == ["z"])
    }

    @Test func listObjectVersions() throws {
        let s3 = try harness()
        let r = s3.call("GET", "/bkt?versions&prefix=photos%2F2026")
        #expect(r.xml?.name == "ListVersionsResult")
        let versions = r.xml?.children(named: "Version") ?? []
        #expect(versions.compactMap { $0.childText("Key") } == ["photos/2026/feb.jpg", "photos/2026/jan.jpg"])
        #expect(versions.first?.childText("VersionId") == "null")
        #expect(versions.first?.childText("IsLatest") == "true")
    }

    @Test func listMissingBucket() throws {
        let s3 = try S3Harness()
        #expect(s3.call("GET", "/nobucket?list-type=2").errorCode == "NoSuchBucket")
    }

    @Test func manyKeysAcrossBatches() throws {
        let s3 = try S3Harness()
        s3.makeBucket("many")
        for i in 0..<1_205 { s3.put("many", String(format: "k%05d", i), []) }
        for i in 0..<30 { s3.put("many", "dir\(i)/x", []) }
        let r = s3.call("GET", "/many?list-type=2")
        #expect(keys(r).count == 1000)
        #expect(r.xml?.childText("IsTruncated") == "true")
        let token = try #require(r.xml?.childText("NextContinuationToken"))
        let r2 = s3.call("GET", "/many?list-type=2&continuation-token=" + S3Harness.encode(token).replacingOccurrences(of: "/", with: "%2F"))
        #expect(keys(r2).count == 235)
        #expect(keys(r2).first == "k00970")
        let grouped = s3.call("GET", "/many?list-type=2&delimiter=%2F&max-keys=1000")
        #expect(prefixes(grouped).count == 30)
        #expect(keys(grouped).count == 970)
    }
}
