import Testing
@testable import UploadsAPI

@Suite struct UploadKeyTests {
    @Test func mintedKeysPassTheShapeCheck() throws {
        let key = UploadKey.make(uid: "u1", uuid: "0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b", fileExt: "webp")
        #expect(key == "users/u1/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.webp")
        try UploadKey.checkOwnership(key, uid: "u1", field: "key")
        try UploadKey.checkMintedShape(key, uid: "u1", field: "key")
    }

    @Test(arguments: [
        ("0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b", true),
        ("0e8a5d0c7d5e-4c3a-9d2e-0b5f8f1e2a3b-", false),
        ("0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3", false),
        ("0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3g", false),
        ("", false),
    ])
    func uuidRecognition(_ text: String, _ expected: Bool) {
        #expect(UploadKey.isUUID(Substring(text)) == expected)
    }

    /// Keys and ids are compared as bytes: under `String`'s canonical equivalence the key of uid
    /// `\u{212A}im` (KELVIN SIGN) was `Kim`'s, and a `/` followed by a combining mark was no `/`.
    @Test func ownershipAndIdsAreCheckedAsBytes() throws {
        let uuid = "0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b"
        #expect(throws: UploadsError.notOwner(field: "key", key: "users/\u{212A}im/uploads/\(uuid).jpg", uid: "Kim")) {
            try UploadKey.checkOwnership("users/\u{212A}im/uploads/\(uuid).jpg", uid: "Kim", field: "key")
        }
        try UploadKey.checkOwnership("users/Kim/uploads/\(uuid).jpg", uid: "Kim", field: "key")
        // A combining mark after the owner's prefix is not dropped with its `/`.
        #expect(throws: UploadsError.self) { try UploadKey.checkMintedShape("users/u1/\u{301}uploads/\(uuid).jpg", uid: "u1", field: "key") }
        #expect(throws: UploadsError.self) { try UploadKey.validateFileID("a/\u{301}b") }
        try UploadKey.validateFileID("a\u{301}b")
    }

    @Test(arguments: ["jpg", "JPG", "mp4", "0123456789abcdef"])
    func acceptedExtensions(_ ext: String) throws {
        try UploadKey.validateExtension(ext)
    }

    @Test(arguments: ["", ".", "a.b", "a/b", "a\\b", "a b", "a?b", "a#b", "é", "0123456789abcdefg", "tar-gz", "a_b"])
    func refusedExtensions(_ ext: String) {
        #expect(throws: UploadsError.self) { try UploadKey.validateExtension(ext) }
    }
}
