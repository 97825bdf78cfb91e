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

/// Numbers that are no numbers of the field's kind: each is a 400 and changes nothing. Before,
/// each was read as "absent", which dropped a condition or picked a default.
extension BadInputTests {
    func upload(_ h: StorageHarness, _ name: String) -> String? {
        h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=\(name)", headers: owner, body: [1, 2, 3]).json["generation"]?.stringValue
    }

    /// `generation=abc` on a delete meant one generation; read as absent it deleted the live object.
    @Test(arguments: ["abc", "1.5", "1e3", "99999999999999999999"])
    func aDeleteOfAGenerationThatIsNoIntegerDeletesNothing(generation: String) throws {
        let h = try StorageHarness()
        _ = try #require(upload(h, "g.txt"))
        let r = h.send("DELETE", "/storage/v1/b/\(b)/o/g.txt?generation=\(generation)", headers: owner)
        #expect(r.status == 400 && r.json["error"]?["errors"]?[0]?["reason"]?.stringValue == "invalid")
        #expect(try h.count("storage_objects") == 1)
        #expect(h.send("GET", "/storage/v1/b/\(b)/o/g.txt?generation=\(generation)", headers: owner).status == 400)
    }

    /// A compose source's `generation` or `ifGenerationMatch` of the wrong kind dropped its
    /// condition and composed anyway.
    @Test(arguments: [#""generation": "latest""#, #""generation": 1.5"#, #""objectPreconditions": {"ifGenerationMatch": 1.5}"#,
                      #""objectPreconditions": {"ifGenerationMatch": "x"}"#, #""objectPreconditions": {"ifGenerationMatch": true}"#])
    func aComposeSourceConditionOfTheWrongKindIsRefused(condition: String) throws {
        let h = try StorageHarness()
        _ = try #require(upload(h, "a"))
        let body = #"{"sourceObjects": [{"name": "a", \#(condition)}]}"#
        let r = h.send("POST", "/storage/v1/b/\(b)/o/ab/compose", headers: owner, body: Array(body.utf8))
        #expect(r.status == 400, "\(r.json)")
        #expect(try h.count("storage_objects") == 1)
        // The same conditions as integers, or their strings, still hold.
        let g = try #require(upload(h, "a"))
        let ok = #"{"sourceObjects": [{"name": "a", "generation": "\#(g)", "objectPreconditions": {"ifGenerationMatch": \#(g)}}]}"#
        #expect(h.send("POST", "/storage/v1/b/\(b)/o/ab/compose", headers: owner, body: Array(ok.utf8)).status == 200)
    }

    /// `maxResults=abc` listed a page of 1,000, both APIs.
    @Test func aPageSizeThatIsNoIntegerIsRefused() throws {
        let h = try StorageHarness()
        _ = try #require(upload(h, "a"))
        for size in ["abc", "-1", "1e3", "4294967296"] {
            #expect(h.send("GET", "/storage/v1/b/\(b)/o?maxResults=\(size)", headers: owner).status == 400, "\(size)")
            #expect(h.send("GET", "/v0/b/\(b)/o?maxResults=\(size)", headers: owner).status == 400, "\(size)")
        }
        #expect(h.send("GET", "/storage/v1/b/\(b)/o?maxResults=5000", headers: owner).json["items"]?.arrayValue?.count == 1)
        #expect(h.send("GET", "/v0/b/\(b)/o?maxResults=0", headers: owner).status == 200)
    }

    /// An IAM policy's `version` of `1.5` or `"three"` was taken as version 1.
    @Test func anIAMPolicyVersionThatIsNoIntegerIsRefused() throws {
        let h = try StorageHarness()
        for version in ["1.5", #""three""#, "[3]"] {
            let r = h.send("PUT", "/storage/v1/b/\(b)/iam", headers: owner,
                           body: Array(#"{"version": \#(version), "bindings": [{"role": "roles/storage.objectViewer", "members": ["allUsers"]}]}"#.utf8))
            #expect(r.status == 400, "\(version)")
        }
        let three = h.send("PUT", "/storage/v1/b/\(b)/iam", headers: owner,
                           body: Array(#"{"version": "3", "bindings": [{"role": "roles/storage.objectViewer", "members": ["allUsers"]}]}"#.utf8))
        #expect(three.status == 200 && three.json["version"]?.intValue == 3)
    }

    /// A body holding a number past a double's range is refused whole (metadata of `1e400` was
    /// refused only because the value was no string; a `generation` of it was dropped).
    @Test func aBodyWithANumberPastADoublesRangeIsRefused() throws {
        let h = try StorageHarness()
        _ = try #require(upload(h, "a"))
        let r = h.send("POST", "/storage/v1/b/\(b)/o/ab/compose", headers: owner,
                       body: Array(#"{"sourceObjects": [{"name": "a", "generation": 1e400}]}"#.utf8))
        #expect(r.status == 400 && r.json["error"]?["message"]?.stringValue?.contains("Number exceeds the range of double.") == true)
        #expect(try h.count("storage_objects") == 1)
    }
}
