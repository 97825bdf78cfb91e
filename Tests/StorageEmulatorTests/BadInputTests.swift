import Foundation
import HearthCore
import Testing
@testable import StorageEmulator

/// Issue 17's bad input not covered elsewhere: custom metadata over GCS's 8 KiB (in an upload and
/// merged by a PATCH), a Firebase resumable upload that sends more than it declared, and unknown
/// upload ids on the Firebase API. Each answers GCS's error code and leaves nothing half-written.
@Suite struct BadInputTests {
    let b = StorageHarness.bucket
    let owner = [("Authorization", "Bearer owner"), ("Content-Type", "application/json")]

    /// A `metadata` object of one key whose value makes keys and values total `bytes`.
    static func metadata(_ key: String, totalling bytes: Int) -> String {
        #"{"metadata":{"\#(key)":"\#(String(repeating: "v", count: bytes - key.utf8.count))"}}"#
    }

    @Test func customMetadataOverEightKiBIsRefused() throws {
        let h = try StorageHarness()
        let boundary = "b0undary"
        func multipart(_ meta: String) -> [UInt8] {
            Array("--\(boundary)\r\nContent-Type: application/json\r\n\r\n\(meta)\r\n--\(boundary)\r\nContent-Type: text/plain\r\n\r\nhello\r\n--\(boundary)--\r\n".utf8)
        }
        let upload = "/upload/storage/v1/b/\(b)/o?uploadType=multipart"
        let type = [("Content-Type", "multipart/related; boundary=\(boundary)")]
        let over = #"{"name":"m.txt","#.appending(Self.metadata("k", totalling: 8193).dropFirst())
        let refused = h.send("POST", upload, headers: type, body: multipart(over))
        #expect(refused.status == 400)
        #expect(refused.json["error"]?["errors"]?[0]?["reason"]?.stringValue == "invalid")
        #expect(try h.count("storage_objects") == 0)
        // Exactly 8 KiB is allowed.
        let at = #"{"name":"m.txt","#.appending(Self.metadata("k", totalling: 8192).dropFirst())
        #expect(h.send("POST", upload, headers: type, body: multipart(at)).status == 200)

        // A PATCH merges keys into the object's: each part is small, the merged total is not.
        let path = "/storage/v1/b/\(b)/o/m.txt"
        #expect(h.send("PATCH", path, headers: owner, body: Array(#"{"metadata":{"k":null}}"#.utf8)).json["metageneration"]?.stringValue == "2")
        #expect(h.send("PATCH", path, headers: owner, body: Array(Self.metadata("a", totalling: 5000).utf8)).status == 200)
        let merged = h.send("PATCH", path, headers: owner, body: Array(Self.metadata("b", totalling: 5000).utf8))
        #expect(merged.status == 400)
        #expect(merged.json["error"]?["code"]?.intValue == 400)
        let now = h.send("GET", path)
        #expect(now.json["metageneration"]?.stringValue == "3")
        #expect(now.json["metadata"]?["b"] == nil && now.json["metadata"]?["a"] != nil)
        // The Firebase API's PATCH is held to the same total, in its own error shape.
        let firebase = h.send("PATCH", "/v0/b/\(b)/o/m.txt", headers: owner, body: Array(Self.metadata("c", totalling: 5000).utf8))
        #expect(firebase.status == 400 && firebase.json["error"]?["code"]?.intValue == 400 && firebase.json["error"]?["errors"] == nil)
    }

    @Test func aFirebaseUploadSendingMoreThanItDeclaredIsRefused() throws {
        let h = try StorageHarness()
        let started = h.send("POST", "/v0/b/\(b)/o?name=users%2Falice%2Fa.png&uploadType=resumable",
                             headers: [("Authorization", "Firebase alice"), ("X-Goog-Upload-Protocol", "resumable"),
                                       ("X-Goog-Upload-Command", "start"), ("X-Goog-Upload-Header-Content-Length", "100"),
                                       ("X-Goog-Upload-Header-Content-Type", "image/png"), ("Content-Type", "application/json")],
                             body: Array(#"{"contentType":"image/png"}"#.utf8))
        #expect(started.status == 200)
        let url = try #require(started.headers["X-Goog-Upload-URL"]).replacingOccurrences(of: "http://127.0.0.1:9199", with: "")
        let auth = ("Authorization", "Firebase alice")
        let lying = h.send("POST", url, headers: [auth, ("X-Goog-Upload-Command", "upload, finalize"), ("X-Goog-Upload-Offset", "0")],
                           body: StorageHarness.bytes(150))
        #expect(lying.status == 400)
        #expect(lying.json["error"]?["code"]?.intValue == 400)
        // Nothing of the refused chunk was kept: the session still has 0 bytes and can go on.
        let query = h.send("POST", url, headers: [auth, ("X-Goog-Upload-Command", "query")])
        #expect(query.headers["X-Goog-Upload-Size-Received"] == "0")
        #expect(try h.count("storage_objects") == 0)
        #expect(try h.count(StorageBlobNamespace.tables.blobs) == 0)
        let good = h.send("POST", url, headers: [auth, ("X-Goog-Upload-Command", "upload, finalize"), ("X-Goog-Upload-Offset", "0")],
                          body: StorageHarness.bytes(100))
        #expect(good.status == 200 && good.json["size"]?.stringValue == "100")
    }

    @Test(arguments: ["upload", "query", "finalize", "cancel"])
    func anUnknownFirebaseUploadIdIsNotFound(command: String) throws {
        let h = try StorageHarness()
        var headers = [("Authorization", "Bearer owner"), ("X-Goog-Upload-Command", command)]
        if command == "upload" { headers.append(("X-Goog-Upload-Offset", "0")) }
        let r = h.send("POST", "/v0/b/\(b)/o?name=x.png&upload_id=no-such-upload&upload_protocol=resumable", headers: headers, body: [1, 2, 3])
        #expect(r.status == 404)
        #expect(r.json["error"]?["code"]?.intValue == 404)
        #expect(try h.count("storage_objects") == 0)
    }
}
