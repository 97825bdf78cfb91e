import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import StorageEmulator

@Suite struct FirebaseAPITests {
    let b = StorageHarness.bucket

    func startUpload(_ h: StorageHarness, user: String, name: String, size: Int, type: String) -> TestResponse {
        h.send("POST", "/v0/b/\(b)/o?name=\(name.replacingOccurrences(of: "/", with: "%2F"))&uploadType=resumable",
               headers: [("Authorization", "Firebase \(user)"), ("X-Goog-Upload-Protocol", "resumable"),
                         ("X-Goog-Upload-Command", "start"), ("X-Goog-Upload-Header-Content-Length", String(size)),
                         ("X-Goog-Upload-Header-Content-Type", type), ("Content-Type", "application/json")],
               body: Array(#"{"contentType":"\#(type)","metadata":{"by":"test"}}"#.utf8))
    }

    @Test func theOwnerUploadsThroughTheResumableProtocol() throws {
        let h = try StorageHarness()
        let data = StorageHarness.bytes(900)
        let started = startUpload(h, user: "alice", name: "users/alice/me.png", size: data.count, type: "image/png")
        #expect(started.status == 200)
        #expect(started.headers["X-Goog-Upload-Status"] == "active")
        let url = try #require(started.headers["X-Goog-Upload-URL"]).replacingOccurrences(of: "http://127.0.0.1:9199", with: "")
        let auth = ("Authorization", "Firebase alice")
        let first = h.send("POST", url, headers: [auth, ("X-Goog-Upload-Command", "upload"), ("X-Goog-Upload-Offset", "0")], body: Array(data[0..<400]))
        #expect(first.headers["X-Goog-Upload-Size-Received"] == "400")
        // A wrong offset is refused and says what was persisted.
        let wrong = h.send("POST", url, headers: [auth, ("X-Goog-Upload-Command", "upload"), ("X-Goog-Upload-Offset", "300")], body: Array(data[300...]))
        #expect(wrong.status == 400)
        #expect(wrong.headers["X-Goog-Upload-Size-Received"] == "400")
        let query = h.send("POST", url, headers: [auth, ("X-Goog-Upload-Command", "query")])
        #expect(query.headers["X-Goog-Upload-Size-Received"] == "400")
        let done = h.send("POST", url, headers: [auth, ("X-Goog-Upload-Command", "upload, finalize"), ("X-Goog-Upload-Offset", "400")], body: Array(data[400...]))
        #expect(done.status == 200)
        #expect(done.headers["X-Goog-Upload-Status"] == "final")
        #expect(done.json["contentType"]?.stringValue == "image/png")
        // Digests computed while the chunks streamed in (no read-back) are the bytes' digests.
        #expect(done.json["md5Hash"]?.stringValue == Data(Digest.md5(data)).base64EncodedString())
        #expect(done.json["crc32c"]?.stringValue == StoredObject.base64(crc32c: CRC32.checksum(data, variant: .castagnoli)))
        #expect(done.json["metadata"]?["by"]?.stringValue == "test")
        let token = try #require(done.json["downloadTokens"]?.stringValue)
        // A query after the final response was lost reports the upload as final, with its metadata.
        let after = h.send("POST", url, headers: [auth, ("X-Goog-Upload-Command", "query")])
        #expect(after.headers["X-Goog-Upload-Status"] == "final")
        #expect(after.json["generation"] == done.json["generation"])
        // The download URL with its token needs no credentials.
        let download = h.send("GET", "/v0/b/\(b)/o/users%2Falice%2Fme.png?alt=media&token=\(token)")
        #expect(download.status == 200)
        #expect(download.body == data)
        #expect(h.send("GET", "/v0/b/\(b)/o/users%2Falice%2Fme.png?alt=media&token=wrong").status == 403)
        #expect(h.send("GET", "/v0/b/\(b)/o/users%2Falice%2Fme.png", headers: [auth]).json["size"]?.stringValue == "900")
    }

    @Test func rulesDenyOthersLargeAndNonImageUploads() throws {
        let h = try StorageHarness()
        for (user, size, type) in [("bob", 10, "image/png"), ("alice", 5000, "image/png"), ("alice", 10, "text/plain")] {
            let r = startUpload(h, user: user, name: "users/alice/x.png", size: size, type: type)
            #expect(r.status == 403)
            #expect(r.json["error"]?["code"]?.intValue == 403)
            #expect(r.json["error"]?["message"]?.stringValue?.hasPrefix("Permission denied.") == true)
        }
        // A media upload whose real body breaks the rules is denied and leaves nothing behind.
        let big = h.send("POST", "/v0/b/\(b)/o?name=users%2Falice%2Fy.png", headers: [("Authorization", "Firebase alice"), ("Content-Type", "image/png")],
                         body: StorageHarness.bytes(5000))
        #expect(big.status == 403)
        #expect(try h.count("storage_objects") == 0)
        #expect(try h.count("storage_chunks") == 0)
        // The owner credential bypasses rules.
        let owner = h.send("POST", "/v0/b/\(b)/o?name=anything.txt", headers: [("Authorization", "Bearer owner"), ("Content-Type", "text/plain")], body: [1, 2])
        #expect(owner.status == 200)
    }

    @Test func finalizingShortOfTheDeclaredSizeIsRefused() throws {
        let h = try StorageHarness()
        let started = startUpload(h, user: "alice", name: "users/alice/s.png", size: 100, type: "image/png")
        let url = try #require(started.headers["X-Goog-Upload-URL"]).replacingOccurrences(of: "http://127.0.0.1:9199", with: "")
        let r = h.send("POST", url, headers: [("Authorization", "Firebase alice"), ("X-Goog-Upload-Command", "finalize")])
        #expect(r.status == 400)
        #expect(try h.count("storage_objects") == 0)
    }

    @Test func listingIsJudgedOnThePrefix() throws {
        let h = try StorageHarness()
        _ = h.send("POST", "/v0/b/\(b)/o?name=users%2Falice%2Fa.png", headers: [("Authorization", "Firebase alice"), ("Content-Type", "image/png")], body: [1])
        let mine = h.send("GET", "/v0/b/\(b)/o?prefix=users%2Falice%2F&delimiter=%2F", headers: [("Authorization", "Firebase alice")])
        #expect(mine.status == 200)
        #expect(mine.json["items"]?[0]?["name"]?.stringValue == "users/alice/a.png")
        #expect(h.send("GET", "/v0/b/\(b)/o?prefix=users%2Falice%2F&delimiter=%2F", headers: [("Authorization", "Firebase bob")]).status == 403)
    }
}

@Suite struct StorageCORSTests {
    @Test func browsersMayCallTheFirebaseAPI() throws {
        let h = try StorageHarness()
        let pre = h.send("OPTIONS", "/v0/b/\(StorageHarness.bucket)/o?name=x", headers: [("Origin", "http://localhost:3000"),
                                                                                       ("Access-Control-Request-Headers", "x-goog-upload-command")])
        #expect(pre.status == 204)
        #expect(pre.headers["Access-Control-Allow-Origin"] == "http://localhost:3000")
        #expect(pre.headers["Access-Control-Allow-Headers"] == "x-goog-upload-command")
        let upload = h.send("POST", "/v0/b/\(StorageHarness.bucket)/o?name=users%2Falice%2Fa.png",
                            headers: [("Origin", "http://localhost:3000"), ("Authorization", "Firebase alice"), ("Content-Type", "image/png")], body: [1, 2])
        #expect(upload.status == 200)
        #expect(upload.headers["Access-Control-Allow-Origin"] == "http://localhost:3000")
        #expect(upload.headers["Access-Control-Expose-Headers"]?.contains("X-Goog-Upload-URL") == true)
    }
}
