import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import Testing
@testable import StorageEmulator

/// Downloads by download URL read metadata and bytes in one transaction: small bodies are sent
/// from memory, larger ones stream; ranges, replaced objects and wrong tokens behave as before.
@Suite struct DownloadTests {
    let b = StorageHarness.bucket

    /// Uploads `data` through the Firebase API as the owner; returns the object's download token.
    func upload(_ h: StorageHarness, _ name: String, _ data: [UInt8]) throws -> String {
        let r = h.send("POST", "/v0/b/\(b)/o?name=\(name)", headers: [("Authorization", "Bearer owner"), ("Content-Type", "image/png")],
                       body: data, chunkSize: 50_000)
        #expect(r.status == 200)
        // The one-shot upload's digests (hashed beside the request on their own thread) are the bytes'.
        #expect(r.json["md5Hash"]?.stringValue == Data(Digest.md5(data)).base64EncodedString())
        #expect(r.json["crc32c"]?.stringValue == StoredObject.base64(crc32c: CRC32.checksum(data, variant: .castagnoli)))
        return try #require(r.json["downloadTokens"]?.stringValue)
    }

    @Test(arguments: [0, 4096, StorageService.inlineLimit, StorageService.inlineLimit + 1, 3 << 20])
    func theDownloadURLAnswersTheBytesWithGCSHeaders(size: Int64) throws {
        let h = try StorageHarness()
        let data = StorageHarness.bytes(Int(size))
        let token = try upload(h, "f.png", data)
        let r = h.send("GET", "/v0/b/\(b)/o/f.png?alt=media&token=\(token)")
        #expect(r.status == 200)
        #expect(r.body.count == data.count && r.body == data, "download differs")
        #expect(r.headers["Content-Type"] == "image/png")
        #expect(r.headers["x-goog-stored-content-length"] == String(size))
        let md5 = Data(Digest.md5(data)).base64EncodedString()
        let crc = StoredObject.base64(crc32c: CRC32.checksum(data, variant: .castagnoli))
        #expect(r.headers["x-goog-hash"] == "crc32c=\(crc),md5=\(md5)")
        // The same bytes through the JSON API (privileged, no token).
        #expect(h.send("GET", "/download/storage/v1/b/\(b)/o/f.png?alt=media").body == data)
    }

    @Test func rangesThroughADownloadURL() throws {
        let h = try StorageHarness()
        let data = StorageHarness.bytes(3 << 20)
        let token = try upload(h, "r.png", data)
        let url = "/v0/b/\(b)/o/r.png?alt=media&token=\(token)"
        let across = h.send("GET", url, headers: [("Range", "bytes=1048000-2097200")])
        #expect(across.status == 206)
        #expect(across.headers["Content-Range"] == "bytes 1048000-2097200/\(data.count)")
        #expect(across.body == Array(data[1_048_000...2_097_200]))
        let tail = h.send("GET", url, headers: [("Range", "bytes=-10")])
        #expect(tail.status == 206 && tail.body == Array(data[(data.count - 10)...]))
        #expect(h.send("GET", url, headers: [("Range", "bytes=\(data.count)-\(data.count + 10)")]).status == 416)
    }

    /// A range starting at (or past) the end is 416 with `Content-Range: bytes */size` on every
    /// download path, in each API's error shape; an empty object has no first byte to start at.
    @Test(arguments: [0, 5, 4096])
    func aRangeFromTheEndIsNotSatisfiable(size: Int) throws {
        let h = try StorageHarness()
        let data = StorageHarness.bytes(size)
        let token = try upload(h, "e.png", data)
        let paths = ["/v0/b/\(b)/o/e.png?alt=media&token=\(token)", "/download/storage/v1/b/\(b)/o/e.png?alt=media",
                     "/storage/v1/b/\(b)/o/e.png?alt=media"]
        for (i, path) in paths.enumerated() {
            for range in ["bytes=\(size)-", "bytes=\(size)-\(size + 10)", "bytes=\(size + 1)-", "bytes=-0"] {
                let r = h.send("GET", path, headers: [("Range", range)])
                #expect(r.status == 416, "\(path) \(range)")
                #expect(r.headers["Content-Range"] == "bytes */\(size)", "\(path) \(range)")
                #expect(r.json["error"]?["code"]?.intValue == 416)
                // The JSON API's errors[] carry the reason; the Firebase API's body has none.
                #expect((r.json["error"]?["errors"]?[0]?["reason"]?.stringValue == "requestedRangeNotSatisfiable") == (i > 0))
            }
            // Not a valid range (last before first, not bytes, two ranges): ignored, the whole object.
            for range in ["bytes=3-1", "items=0-", "bytes=0-0,1-1"] {
                let r = h.send("GET", path, headers: [("Range", range)])
                #expect(r.status == 200 && r.body == data, "\(path) \(range)")
            }
            // A suffix of an empty object has no byte to send: the whole (empty) object.
            let suffix = h.send("GET", path, headers: [("Range", "bytes=-3")])
            #expect(suffix.status == (size == 0 ? 200 : 206) && suffix.body == Array(data.suffix(3)), "\(path)")
            if size > 0 {
                let last = h.send("GET", path, headers: [("Range", "bytes=\(size - 1)-")])
                #expect(last.status == 206 && last.body == [data[size - 1]])
                #expect(last.headers["Content-Range"] == "bytes \(size - 1)-\(size - 1)/\(size)")
            }
        }
    }

    @Test func aReplacedObjectTakesItsOldTokenWithIt() throws {
        let h = try StorageHarness()
        let old = try upload(h, "p.png", StorageHarness.bytes(100))
        // Downloaded once, so the object is in the download cache when it is replaced.
        #expect(h.send("GET", "/v0/b/\(b)/o/p.png?alt=media&token=\(old)").body == StorageHarness.bytes(100))
        let newer = Array(StorageHarness.bytes(200).reversed())
        // The owner replaces the bytes; the new generation gets a token of its own.
        let token = try upload(h, "p.png", newer)
        #expect(token != old)
        let r = h.send("GET", "/v0/b/\(b)/o/p.png?alt=media&token=\(token)")
        #expect(r.status == 200 && r.body == newer)
        // The old token no longer opens anything: without credentials the rules decide (and deny).
        #expect(h.send("GET", "/v0/b/\(b)/o/p.png?alt=media&token=\(old)").status == 403)
        // A token for a missing object or bucket is no way in either.
        #expect(h.send("GET", "/v0/b/\(b)/o/none.png?alt=media&token=\(token)").status == 403)
        #expect(h.send("GET", "/v0/b/no-such-bucket/o/p.png?alt=media&token=\(token)").status == 404)
    }

    /// A small object is answered from the download cache (bytes and headers) until any write: a
    /// metadata change shows in the very next download's headers, ranges are cut from the cached bytes.
    @Test func aCachedDownloadFollowsAMetadataChange() throws {
        let h = try StorageHarness()
        let data = StorageHarness.bytes(5000)
        let token = try upload(h, "m.png", data)
        let url = "/v0/b/\(b)/o/m.png?alt=media&token=\(token)"
        for _ in 0..<2 { #expect(h.send("GET", url).headers["Content-Type"] == "image/png") }
        #expect(h.service.objectCache.count == 1)
        let part = h.send("GET", url, headers: [("Range", "bytes=10-19")])
        #expect(part.status == 206 && part.body == Array(data[10...19]) && part.headers["Content-Range"] == "bytes 10-19/5000")
        let owner = [("Authorization", "Bearer owner"), ("Content-Type", "application/json")]
        #expect(h.send("PATCH", "/v0/b/\(b)/o/m.png", headers: owner, body: Array(#"{"contentType":"image/gif"}"#.utf8)).status == 200)
        let after = h.send("GET", url)
        #expect(after.status == 200 && after.body == data)
        #expect(after.headers["Content-Type"] == "image/gif" && after.headers["x-goog-metageneration"] == "2")
    }

    /// Tokens are the comma-separated fields of `firebaseStorageDownloadTokens`; a token matches
    /// one field whole.
    @Test func aTokenMatchesOneFieldWhole() {
        let now = Instant(unixSeconds: 1_767_225_600)
        let o = StoredObject(bucket: b, name: "t", generation: 1, metageneration: 1, blobID: 1, size: 0, md5: [], crc32c: 0,
                             contentType: nil, contentEncoding: nil, contentDisposition: nil, contentLanguage: nil,
                             cacheControl: nil, metadata: [(StoredObject.downloadTokensKey, "a1,,b2,c3")], timeCreated: now, updated: now)
        #expect(o.downloadTokens == ["a1", "b2", "c3"])
        for (token, matches) in [("a1", true), ("b2", true), ("c3", true), ("", false), ("a", false), ("a1,", false), ("a1,,b2", false),
                                 ("a1,,b2,c3", false), ("c", false), ("c3 ", false), ("A1", false)] {
            #expect(o.hasDownloadToken(token) == matches, "\(token)")
        }
        // Fields compared as bytes at either end of the entry, and an entry with no field.
        for (raw, token, matches) in [(",x", "x", true), ("x,", "x", true), ("x", "x", true), ("", "x", false), (",", "x", false),
                                      ("é,ß", "ß", true), ("e\u{301}", "é", false)] {
            var t = o
            t.metadata = [(StoredObject.downloadTokensKey, raw)]
            #expect(t.hasDownloadToken(token) == matches, "\(raw) \(token)")
        }
    }

    /// The route's path segments are the generic split's (every piece after the leading '/', empty
    /// ones kept, each percent-decoded), taken from the bytes in place.
    @Test func pathSegmentsAreTheGenericSplit() {
        for path in ["", "/", "//", "/v0/b/bkt/o/users%2Falice%2Fme.png", "/v0/b/bkt/o/", "/a//b/", "/ünï/çødé%20x", "no-slash", "/%zz/+"] {
            let generic = Substring(path).utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
                .dropFirst().map { Request.percentDecode(String(Substring($0))) }
            #expect(StorageService.pathSegments(path) == Array(generic), "\(path)")
        }
    }

    /// A token the owner deletes stops working at once, though the object was just downloaded with it.
    @Test func aDeletedTokenStopsWorkingAtOnce() throws {
        let h = try StorageHarness()
        let data = StorageHarness.bytes(4096)
        let token = try upload(h, "d.png", data)
        let url = "/v0/b/\(b)/o/d.png?alt=media&token="
        for _ in 0..<2 { #expect(h.send("GET", url + token).body == data) }
        let owner = [("Authorization", "Bearer owner"), ("Content-Type", "application/json")]
        let added = h.send("POST", "/v0/b/\(b)/o/d.png?create_token=true", headers: owner, body: Array("{}".utf8))
        let tokens = try #require(added.json["downloadTokens"]?.stringValue).split(separator: ",").map(String.init)
        #expect(tokens.count == 2)
        let second = try #require(tokens.first { $0 != token })
        #expect(h.send("GET", url + second).body == data)
        #expect(h.send("POST", "/v0/b/\(b)/o/d.png?delete_token=\(token)", headers: owner, body: Array("{}".utf8)).status == 200)
        #expect(h.send("GET", url + token).status == 403)
        #expect(h.send("GET", url + second).body == data)
    }
}
