import HearthCore
import HearthHTTP
import Testing
@testable import UploadsAPI

@Suite struct UploadsServiceDownloadTests {
    static let key = "users/alice/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.pdf"

    @Test func presignDownloadSignsAGetForTheCallersObject() throws {
        let f = try Fixture()
        f.objects.put(key: Self.key, size: 99, contentType: "application/pdf")
        let r = f.send("POST", "/v1/files/presign-download", json: #"{"s3Key": "\#(Self.key)", "expiresSeconds": 120}"#)
        #expect(r.status == 200)
        #expect(r.json["getUrl"]?.stringValue?.hasPrefix("http://127.0.0.1:9000/uploads/\(Self.key)?") == true)
        #expect(r.json["expiresSeconds"] == .int(120))
        #expect(r.json["contentType"] == .string("application/pdf"))
        #expect(r.json["size"] == .int(99))
        #expect(f.objects.presigns.last == .init(method: "GET", bucket: "uploads", key: Self.key, expiresSeconds: 120, signedHeaders: [:]))
    }

    @Test func anyObjectUnderTheCallersPrefixMayBeDownloaded() throws {
        let f = try Fixture()
        f.objects.put(key: "users/alice/avatar.png", size: 1, contentType: "image/png")
        #expect(f.send("POST", "/v1/files/presign-download", json: #"{"s3Key": "users/alice/avatar.png"}"#).status == 200)
        // `key` is accepted as an alias.
        #expect(f.send("POST", "/v1/files/presign-download", json: #"{"key": "users/alice/avatar.png"}"#).status == 200)
    }

    @Test func anotherUsersKeyIs403WhetherOrNotItExists() throws {
        let f = try Fixture()
        let bobs = "users/bob/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.pdf"
        f.objects.put(key: bobs, size: 1, contentType: "application/pdf")
        for key in [bobs, "users/bob/missing.pdf", "elsewhere.pdf"] {
            let r = f.send("POST", "/v1/files/presign-download", json: #"{"s3Key": "\#(key)"}"#)
            #expect(r.status == 403, "\(key)")
            #expect(r.json["error"]?["status"] == .string("PERMISSION_DENIED"))
            #expect(r.field == "s3Key")
        }
        #expect(f.objects.presigns.isEmpty)
        // Bob himself may.
        #expect(f.send("POST", "/v1/files/presign-download", token: "bob-token", json: #"{"s3Key": "\#(bobs)"}"#).status == 200)
    }

    @Test func aMissingObjectIs404() throws {
        let f = try Fixture()
        let r = f.send("POST", "/v1/files/presign-download", json: #"{"s3Key": "\#(Self.key)"}"#)
        #expect(r.status == 404)
        #expect(r.reason == "OBJECT_NOT_FOUND")
    }

    @Test func anArchivedObjectIs403UntilRestored() throws {
        let f = try Fixture()
        f.objects.put(key: Self.key, size: 5, contentType: "application/pdf", archivedStorageClass: "DEEP_ARCHIVE")
        let r = f.send("POST", "/v1/files/presign-download", json: #"{"s3Key": "\#(Self.key)"}"#)
        #expect(r.status == 403)
        #expect(r.reason == "OBJECT_ARCHIVED")
        #expect(r.field == "s3Key")
        #expect(r.json["error"]?["message"]?.stringValue?.contains("DEEP_ARCHIVE") == true)
        // No URL is signed for a read S3 would refuse.
        #expect(f.objects.presigns.isEmpty)
        // Restored (the store no longer reports it archived): the download is signed as usual.
        f.objects.put(key: Self.key, size: 5, contentType: "application/pdf")
        #expect(f.send("POST", "/v1/files/presign-download", json: #"{"s3Key": "\#(Self.key)"}"#).status == 200)
    }

    @Test(arguments: [
        ("{}", "s3Key", "MISSING_FIELD"),
        (#"{"s3Key": 1}"#, "s3Key", "WRONG_TYPE"),
        (#"{"s3Key": "users/alice/x", "expiresSeconds": 0}"#, "expiresSeconds", "EXPIRES_OUT_OF_RANGE"),
        (#"{"s3Key": "users/alice/x", "expiresSeconds": 3601}"#, "expiresSeconds", "EXPIRES_OUT_OF_RANGE"),
    ])
    func invalidRequestsAre400(_ body: String, _ field: String, _ reason: String) throws {
        let f = try Fixture()
        f.objects.put(key: "users/alice/x", size: 1, contentType: "image/png")
        let r = f.send("POST", "/v1/files/presign-download", json: body)
        #expect(r.status == 400)
        #expect(r.field == field)
        #expect(r.reason == reason)
    }
}
