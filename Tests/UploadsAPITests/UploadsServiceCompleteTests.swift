import HearthCore
import HearthHTTP
import Testing
@testable import UploadsAPI

@Suite struct UploadsServiceCompleteTests {
    static let key = "users/alice/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.jpg"

    @Test func completeWritesTheFileDocumentFromWhatS3Stored() throws {
        let f = try Fixture()
        f.objects.put(key: Self.key, size: 1234, contentType: "image/jpeg")
        let r = f.send("POST", "/v1/files/file-1/complete", json: #"{"key": "\#(Self.key)"}"#)
        #expect(r.status == 200)
        let write = try #require(f.documents.writes.last)
        #expect(write.projectID == "demo-hearth")
        #expect(write.path == "users/alice/files/file-1")
        #expect(write.serverTimestampFields == ["createdAt"])
        #expect(JSON.object(write.fields) == .object([
            "ownerUid": .object(["stringValue": .string("alice")]),
            "storage": .object(["stringValue": .string("s3")]),
            "s3Key": .object(["stringValue": .string(Self.key)]),
            "contentType": .object(["stringValue": .string("image/jpeg")]),
            "size": .object(["integerValue": .string("1234")]),
            "status": .object(["stringValue": .string("ready")]),
        ]))
        #expect(write.fields.keys == ["ownerUid", "storage", "s3Key", "contentType", "size", "status"])
        // The response: the REST document plus its fields as plain JSON.
        #expect(r.json["id"] == .string("file-1"))
        #expect(r.json["path"] == .string("users/alice/files/file-1"))
        #expect(r.json["ownerUid"] == .string("alice"))
        #expect(r.json["s3Key"] == .string(Self.key))
        #expect(r.json["size"] == .int(1234))
        #expect(r.json["status"] == .string("ready"))
        #expect(r.json["createdAt"] == .string("2025-01-02T03:04:05.000000Z"))
        #expect(r.json["name"] == .string("projects/demo-hearth/databases/(default)/documents/users/alice/files/file-1"))
        #expect(r.json["fields"]?["s3Key"]?["stringValue"] == .string(Self.key))
        #expect(r.json["createTime"] != nil)
    }

    @Test func originalNameIsKeptWhenGiven() throws {
        let f = try Fixture()
        f.objects.put(key: Self.key, size: 1, contentType: "image/jpeg")
        let r = f.send("POST", "/v1/files/f/complete", json: #"{"key": "\#(Self.key)", "originalName": "cat.jpg"}"#)
        #expect(r.status == 200)
        #expect(f.documents.writes.last?.fields["originalName"] == .object(["stringValue": .string("cat.jpg")]))
        for name in ["a/b", "https://x.example/cat.jpg", "cat.jpg?X-Amz-Signature=ab", String(repeating: "n", count: 1025)] {
            let bad = f.send("POST", "/v1/files/f/complete", json: #"{"key": "\#(Self.key)", "originalName": "\#(name)"}"#)
            #expect(bad.status == 400, "\(name)")
            #expect(bad.field == "originalName")
        }
    }

    @Test func completeBeforeThePutIs404() throws {
        let f = try Fixture()
        let r = f.send("POST", "/v1/files/f/complete", json: #"{"key": "\#(Self.key)"}"#)
        #expect(r.status == 404)
        #expect(r.json["error"]?["status"] == .string("NOT_FOUND"))
        #expect(r.reason == "OBJECT_NOT_FOUND")
        #expect(f.documents.writes.isEmpty)
    }

    @Test(arguments: [
        "users/bob/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.jpg",
        "users/alice-other/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.jpg",
        "users/alic/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.jpg",
        "public/x.jpg",
        "/users/alice/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.jpg",
        "users/alice",
    ])
    func anotherUsersKeyIs403EvenWhenItExists(_ key: String) throws {
        let f = try Fixture()
        f.objects.put(key: key, size: 1, contentType: "image/jpeg")
        let r = f.send("POST", "/v1/files/f/complete", json: #"{"key": "\#(key)"}"#)
        #expect(r.status == 403)
        #expect(r.json["error"]?["status"] == .string("PERMISSION_DENIED"))
        #expect(r.reason == "NOT_OWNER")
        #expect(r.field == "key")
        #expect(f.documents.writes.isEmpty)
    }

    @Test(arguments: [
        "users/alice/avatar.jpg",
        "users/alice/uploads/not-a-uuid.jpg",
        "users/alice/uploads/0E8A5D0C-7D5E-4C3A-9D2E-0B5F8F1E2A3B.jpg",
        "users/alice/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b",
        "users/alice/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.",
        "users/alice/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.tar.gz",
        "users/alice/uploads/x/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.jpg",
        "users/alice/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.jpg/..",
    ])
    func ownKeysNotShapedAsMintedAre400(_ key: String) throws {
        let f = try Fixture()
        f.objects.put(key: key, size: 1, contentType: "image/jpeg")
        let r = f.send("POST", "/v1/files/f/complete", json: #"{"key": "\#(key)"}"#)
        #expect(r.status == 400)
        #expect(r.reason == "INVALID_KEY")
        #expect(r.field == "key")
    }

    @Test(arguments: [
        ("/v1/files/__x__/complete", "INVALID_FILE_ID"),
        ("/v1/files/____/complete", "INVALID_FILE_ID"),
        ("/v1/files/a%2Fb/complete", "INVALID_FILE_ID"),
        ("/v1/files/./complete", "INVALID_FILE_ID"),
        ("/v1/files/..%2F/complete", "INVALID_FILE_ID"),
    ])
    func badFileIDsAre400(_ target: String, _ reason: String) throws {
        let f = try Fixture()
        f.objects.put(key: Self.key, size: 1, contentType: "image/jpeg")
        let r = f.send("POST", target, json: #"{"key": "\#(Self.key)"}"#)
        #expect(r.status == 400)
        #expect(r.reason == reason)
        #expect(r.field == "fileId")
    }

    @Test func fileIDsMayHoldAnyOtherCharacter() throws {
        let f = try Fixture()
        f.objects.put(key: Self.key, size: 1, contentType: "image/jpeg")
        let r = f.send("POST", "/v1/files/caf%C3%A9%20%231/complete", json: #"{"key": "\#(Self.key)"}"#)
        #expect(r.status == 200)
        #expect(f.documents.writes.last?.path == "users/alice/files/café #1")
        #expect(f.send("POST", "/v1/files/___/complete", json: #"{"key": "\#(Self.key)"}"#).status == 200)
        #expect(f.send("POST", "/v1/files/__x/complete", json: #"{"key": "\#(Self.key)"}"#).status == 200)
    }

    @Test(arguments: [
        ("{}", "MISSING_FIELD"),
        (#"{"key": 3}"#, "WRONG_TYPE"),
        (#"{"key": ""}"#, "MISSING_FIELD"),
        (#"{"s3Key": "users/alice/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.jpg"}"#, "MISSING_FIELD"),
    ])
    func theKeyIsRequired(_ body: String, _ reason: String) throws {
        let f = try Fixture()
        let r = f.send("POST", "/v1/files/f/complete", json: body)
        #expect(r.status == 400)
        #expect(r.reason == reason)
        #expect(r.field == "key")
    }

    @Test func aKeyLongerThanS3AllowsIs400() throws {
        let f = try Fixture()
        let key = "users/alice/" + String(repeating: "a", count: 1100)
        let r = f.send("POST", "/v1/files/f/complete", json: #"{"key": "\#(key)"}"#)
        #expect(r.status == 400)
        #expect(r.reason == "INVALID_KEY")
    }

    @Test func aFailingDocumentStoreIs500() throws {
        let f = try Fixture()
        f.objects.put(key: Self.key, size: 1, contentType: "image/jpeg")
        f.documents.fail = true
        let r = f.send("POST", "/v1/files/f/complete", json: #"{"key": "\#(Self.key)"}"#)
        #expect(r.status == 500)
        #expect(r.reason == "BACKEND_FAILURE")
    }
}
