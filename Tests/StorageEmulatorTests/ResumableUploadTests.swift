import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import StorageEmulator

@Suite struct ResumableUploadTests {
    let b = StorageHarness.bucket

    /// Starts a JSON API session and returns its upload id.
    func start(_ h: StorageHarness, name: String, size: Int? = nil) -> String? {
        var headers = [("Content-Type", "application/json")]
        if let size { headers.append(("X-Upload-Content-Length", String(size))) }
        let r = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=resumable&name=\(name)", headers: headers,
                       body: Array(#"{"contentType":"application/octet-stream"}"#.utf8))
        guard r.status == 200, let location = r.headers["Location"] else { return nil }
        return location.components(separatedBy: "upload_id=").last
    }

    @Test func anInterruptedChunkIsResumedFromThePersistedOffset() throws {
        let h = try StorageHarness()
        let data = StorageHarness.bytes(3 << 20)
        let id = try #require(start(h, name: "big.bin", size: data.count))
        let url = "/upload/storage/v1/b/\(b)/o?uploadType=resumable&upload_id=\(id)"
        let first = h.send("PUT", url, headers: [("Content-Range", "bytes 0-\((1 << 20) - 1)/\(data.count)")], body: Array(data[0..<(1 << 20)]))
        #expect(first.status == 308)
        #expect(first.headers["Range"] == "bytes=0-\((1 << 20) - 1)")
        // The next chunk is cut off half way: nothing of it is acknowledged or kept.
        _ = h.send("PUT", url, headers: [("Content-Range", "bytes \(1 << 20)-\(data.count - 1)/\(data.count)")],
                   body: Array(data[(1 << 20)...]), abandonAfter: 1 << 20)
        let status = h.send("PUT", url, headers: [("Content-Range", "bytes */\(data.count)")])
        #expect(status.status == 308)
        #expect(status.headers["Range"] == "bytes=0-\((1 << 20) - 1)")
        #expect(try h.count("storage_blobs WHERE staging = 1") == 0)
        // The client resends from an earlier offset too: the overlap is skipped.
        let last = h.send("PUT", url, headers: [("Content-Range", "bytes 1000-\(data.count - 1)/\(data.count)")], body: Array(data[1000...]))
        #expect(last.status == 200)
        #expect(last.json["size"]?.stringValue == String(data.count))
        #expect(last.json["md5Hash"]?.stringValue == Data(Digest.md5(data)).base64EncodedString())
        let crc = CRC32.checksum(data, variant: .castagnoli)
        #expect(last.json["crc32c"]?.stringValue == StoredObject.base64(crc32c: crc))
        let down = h.send("GET", "/download/storage/v1/b/\(b)/o/big.bin?alt=media")
        #expect(down.body.count == data.count && down.body == data, "download differs")
        // Asking the completed session again (a lost final response) answers with the object;
        // its pieces are gone and only the object's blob remains.
        let again = h.send("PUT", url, headers: [("Content-Range", "bytes */\(data.count)")])
        #expect(again.status == 200)
        #expect(again.json["generation"] == last.json["generation"])
        #expect(try h.count("storage_upload_pieces") == 0)
        #expect(try h.count("storage_blobs") == 1)
    }

    /// objects.insert's projection: noAcl by default, full when the resource names an ACL or the
    /// session's start asks for it; the last chunk (and a completed session asked again) answers so.
    @Test func theFinalAnswerShowsTheACLWhenTheStartAskedForIt() throws {
        let h = try StorageHarness()
        func upload(_ query: String, _ resource: String) -> (TestResponse, TestResponse) {
            let r = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=resumable&name=a\(query)",
                           headers: [("Content-Type", "application/json"), ("X-Upload-Content-Length", "3")], body: Array(resource.utf8))
            let id = r.headers["Location"]?.components(separatedBy: "upload_id=").last ?? ""
            let url = "/upload/storage/v1/b/\(b)/o?uploadType=resumable&upload_id=\(id)"
            let last = h.send("PUT", url, headers: [("Content-Range", "bytes 0-2/3")], body: [1, 2, 3])
            return (last, h.send("PUT", url, headers: [("Content-Range", "bytes */3")]))
        }
        let plain = upload("", "{}")
        #expect(plain.0.status == 200 && plain.0.json["acl"] == nil && plain.0.json["owner"] == nil)
        let full = upload("&projection=full", "{}")
        #expect(full.0.json["acl"]?.arrayValue?.isEmpty == false && full.0.json["owner"] != nil)
        #expect(full.1.status == 200 && full.1.json["acl"] == full.0.json["acl"])
        let named = upload("", #"{"acl": [{"entity": "allUsers", "role": "READER"}]}"#)
        #expect(named.0.json["acl"]?.arrayValue?.contains { $0["entity"]?.stringValue == "allUsers" } == true)
        #expect(upload("&projection=noAcl", #"{"acl": [{"entity": "allUsers", "role": "READER"}]}"#).0.json["acl"] == nil)
    }

    @Test func badOffsetsAndLyingSizesAreRefused() throws {
        let h = try StorageHarness()
        let id = try #require(start(h, name: "x.bin", size: 10))
        let url = "/upload/storage/v1/b/\(b)/o?uploadType=resumable&upload_id=\(id)"
        // A gap after what was persisted.
        #expect(h.send("PUT", url, headers: [("Content-Range", "bytes 5-9/10")], body: [1, 2, 3, 4, 5]).status == 400)
        // A total other than the declared length.
        #expect(h.send("PUT", url, headers: [("Content-Range", "bytes 0-4/11")], body: [1, 2, 3, 4, 5]).status == 400)
        // A range that does not match the bytes sent.
        let lying = h.send("PUT", url, headers: [("Content-Range", "bytes 0-4/10")], body: [1, 2, 3])
        #expect(lying.status == 400)
        #expect(lying.json["error"]?["errors"]?[0]?["reason"]?.stringValue == "invalid")
        #expect(h.send("PUT", "/upload/storage/v1/b/\(b)/o?uploadType=resumable&upload_id=nope", headers: [("Content-Range", "bytes */10")]).status == 404)
        #expect(try h.count("storage_objects") == 0)
    }

    @Test(arguments: ["", ".", "..", ".well-known/acme-challenge/x", "a\nb", String(repeating: "n", count: 1025)])
    func badObjectNamesAreRefused(name: String) throws {
        let h = try StorageHarness()
        let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let r = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=\(encoded)", body: [1, 2, 3])
        #expect(r.status == 400)
        #expect(r.json["error"]?["code"]?.intValue == 400)
        #expect(try h.count("storage_objects") == 0)
    }

    @Test func preconditionsGuardGenerations() throws {
        let h = try StorageHarness()
        let put = { (q: String) in h.send("POST", "/upload/storage/v1/b/\(self.b)/o?uploadType=media&name=p.txt\(q)", body: Array("hi".utf8)) }
        let created = put("&ifGenerationMatch=0")
        #expect(created.status == 200)
        let again = put("&ifGenerationMatch=0")
        #expect(again.status == 412)
        #expect(again.json["error"]?["errors"]?[0]?["reason"]?.stringValue == "conditionNotMet")
        let generation = try #require(created.json["generation"]?.stringValue)
        #expect(put("&ifGenerationMatch=\(generation)").status == 200)
        #expect(h.send("DELETE", "/storage/v1/b/\(b)/o/p.txt?ifGenerationMatch=\(generation)").status == 412)
    }

    @Test func listingRollsUpPrefixes() throws {
        let h = try StorageHarness()
        for n in ["a/1", "a/2", "b/x/1", "c", "d"] {
            #expect(h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=\(n.replacingOccurrences(of: "/", with: "%2F"))", body: [1]).status == 200)
        }
        let page = h.send("GET", "/storage/v1/b/\(b)/o?delimiter=/&maxResults=3").json
        #expect(page["prefixes"]?.arrayValue?.compactMap(\.stringValue) == ["a/", "b/"])
        #expect(page["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["c"])
        let token = try #require(page["nextPageToken"]?.stringValue)
        let next = h.send("GET", "/storage/v1/b/\(b)/o?delimiter=/&maxResults=3&pageToken=\(token)").json
        #expect(next["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["d"])
        #expect(next["nextPageToken"] == nil)
    }
}
