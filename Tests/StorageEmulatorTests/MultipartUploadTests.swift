import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import StorageEmulator

/// Multipart uploads stream: the media part goes to the blob store as it arrives, whatever the
/// pieces the body comes in, and a malformed body leaves nothing behind.
@Suite struct MultipartUploadTests {
    let b = StorageHarness.bucket
    static let boundary = "hearth_boundary_123"

    static func body(metadata: String, media: [UInt8], type: String = "image/png", boundary: String = boundary) -> [UInt8] {
        Array("--\(boundary)\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n\(metadata)\r\n--\(boundary)\r\nContent-Type: \(type)\r\n\r\n".utf8)
            + media + Array("\r\n--\(boundary)--\r\n".utf8)
    }

    func upload(_ h: StorageHarness, _ body: [UInt8], chunkSize: Int, abandonAfter: Int? = nil) -> TestResponse {
        h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=multipart",
               headers: [("Content-Type", "multipart/related; boundary=\(Self.boundary)")], body: body,
               chunkSize: chunkSize, abandonAfter: abandonAfter)
    }

    /// Media that holds the delimiter's prefixes (CR, CRLF, CRLF--, CRLF--bound…) but never all of it.
    static func trickyMedia(_ n: Int) -> [UInt8] {
        var out: [UInt8] = []
        let near = Array("\r\n--\(boundary)".utf8)
        var k = 0
        while out.count < n {
            out += near.prefix(1 + k % (near.count - 1))
            out += StorageHarness.bytes(7 + k % 13)
            k += 1
        }
        return Array(out.prefix(n))
    }

    @Test(arguments: [1, 2, 7, 23, 4096, 1 << 20])
    func theMediaPartArrivesWholeWhateverThePieces(chunkSize: Int) throws {
        let h = try StorageHarness()
        let media = Self.trickyMedia(chunkSize == 1 ? 3000 : 300_000)
        let r = upload(h, Self.body(metadata: #"{"name":"m/x.bin","metadata":{"k":"v"}}"#, media: media), chunkSize: chunkSize)
        #expect(r.status == 200)
        #expect(r.json["size"]?.stringValue == String(media.count))
        #expect(r.json["contentType"]?.stringValue == "image/png")
        #expect(r.json["metadata"]?["k"]?.stringValue == "v")
        #expect(r.json["md5Hash"]?.stringValue == Data(Digest.md5(media)).base64EncodedString())
        let back = h.send("GET", "/storage/v1/b/\(b)/o/m%2Fx.bin?alt=media")
        #expect(back.body == media)
    }

    @Test func anEmptyMediaPartMakesAnEmptyObject() throws {
        let h = try StorageHarness()
        let r = upload(h, Self.body(metadata: #"{"name":"empty"}"#, media: []), chunkSize: 5)
        #expect(r.status == 200)
        #expect(r.json["size"]?.stringValue == "0")
    }

    @Test func malformedBodiesAreRefusedAndLeaveNothing() throws {
        let h = try StorageHarness()
        let media = StorageHarness.bytes(5000)
        var cut = Self.body(metadata: #"{"name":"cut"}"#, media: media)
        cut.removeLast(30)  // no closing boundary
        let cases: [(String, [UInt8])] = [
            ("no closing boundary", cut),
            ("one part only", Array("--\(Self.boundary)\r\nContent-Type: application/json\r\n\r\n{\"name\":\"one\"}\r\n--\(Self.boundary)--\r\n".utf8)),
            ("no boundary at all", Array("just bytes".utf8)),
            ("bad metadata JSON", Self.body(metadata: "{not json", media: media)),
            ("no name", Self.body(metadata: "{}", media: media)),
            ("a declared md5 that lies", Self.body(metadata: #"{"name":"md5","md5Hash":"AAAAAAAAAAAAAAAAAAAAAA=="}"#, media: media)),
        ]
        for (what, body) in cases {
            let r = upload(h, body, chunkSize: 100)
            #expect(r.status == 400, "\(what)")
            #expect(r.json["error"]?["errors"]?[0]?["reason"] != nil, "\(what)")
        }
        let abandoned = upload(h, Self.body(metadata: #"{"name":"gone"}"#, media: StorageHarness.bytes(3 << 20)), chunkSize: 65_536, abandonAfter: 2 << 20)
        #expect(abandoned.status == 0)
        #expect(try h.count("storage_objects") == 0)
        #expect(try h.count(StorageBlobNamespace.tables.blobs) == 0)
        #expect(try h.count(StorageBlobNamespace.tables.chunks) == 0)
    }

    @Test func theFirebaseAPIJudgesAStreamedMultipartUpload() throws {
        let h = try StorageHarness()
        func send(_ user: String, _ name: String, _ media: [UInt8], _ type: String) -> TestResponse {
            h.send("POST", "/v0/b/\(b)/o?name=\(name.replacingOccurrences(of: "/", with: "%2F"))",
                   headers: [("Authorization", "Firebase \(user)"), ("X-Goog-Upload-Protocol", "multipart"),
                             ("Content-Type", "multipart/related; boundary=\(Self.boundary)")],
                   body: Self.body(metadata: #"{"contentType":"\#(type)"}"#, media: media, type: type), chunkSize: 64)
        }
        let ok = send("alice", "users/alice/a.png", StorageHarness.bytes(500), "image/png")
        #expect(ok.status == 200)
        #expect(ok.json["downloadTokens"]?.stringValue?.isEmpty == false)
        #expect(send("bob", "users/alice/b.png", StorageHarness.bytes(500), "image/png").status == 403)
        #expect(send("alice", "users/alice/c.png", StorageHarness.bytes(5000), "image/png").status == 403)
        #expect(try h.count("storage_objects") == 1)
    }
}
