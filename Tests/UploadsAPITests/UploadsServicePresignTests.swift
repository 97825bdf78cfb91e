import HearthCore
import HearthHTTP
import Testing
@testable import UploadsAPI

@Suite struct UploadsServicePresignTests {
    @Test func presignMintsAKeyUnderTheCallersUploadsAndSignsTheContentType() throws {
        let f = try Fixture()
        let r = f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/jpeg", "fileExt": "jpg", "expiresSeconds": 900}"#)
        #expect(r.status == 200)
        let key = try #require(r.json["key"]?.stringValue)
        #expect(key.hasPrefix("users/alice/uploads/"))
        #expect(key.hasSuffix(".jpg"))
        let uuid = key.dropFirst("users/alice/uploads/".count).dropLast(4)
        #expect(UploadKey.isUUID(uuid))
        #expect(r.json["expiresSeconds"] == .int(900))
        #expect(r.json["headers"]?["Content-Type"] == .string("image/jpeg"))
        #expect(r.json["method"] == .string("PUT"))
        #expect(r.json["bucket"] == .string("uploads"))
        #expect(r.json["expiresAt"] == .string("2025-01-02T03:19:05Z"))
        let presign = try #require(f.objects.presigns.last)
        #expect(presign == .init(method: "PUT", bucket: "uploads", key: key, expiresSeconds: 900, signedHeaders: ["content-type": "image/jpeg"]))
        #expect(r.json["putUrl"]?.stringValue?.contains("X-Amz-SignedHeaders=content-type%3Bhost") == true
            || r.json["putUrl"]?.stringValue?.contains("host%3Bcontent-type") == true)
        #expect(f.verifier.calls.last?.checkRevoked == true)
        #expect(f.verifier.calls.last?.projectID == "demo-hearth")
    }

    @Test func keysComeFromTheIDGeneratorSoSeedsReproduceThem() throws {
        let a = try Fixture(), b = try Fixture()
        let body = #"{"contentType": "image/png", "fileExt": "png"}"#
        let k1 = a.send("POST", "/v1/uploads/presign", json: body).json["key"]
        let k2 = b.send("POST", "/v1/uploads/presign", json: body).json["key"]
        let k3 = a.send("POST", "/v1/uploads/presign", json: body).json["key"]
        #expect(k1 == k2)
        #expect(k1 != k3)
    }

    @Test func expiresSecondsDefaultsTo900CappedByTheMaximum() throws {
        let f = try Fixture()
        #expect(f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/png", "fileExt": "png"}"#).json["expiresSeconds"] == .int(900))
        let short = try Fixture(configuration: UploadsConfiguration(maxExpiresSeconds: 60))
        #expect(short.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/png", "fileExt": "png"}"#).json["expiresSeconds"] == .int(60))
    }

    @Test(arguments: [
        ("min", #"{"contentType": "image/png", "fileExt": "png", "expiresSeconds": 1}"#, 200),
        ("max", #"{"contentType": "image/png", "fileExt": "png", "expiresSeconds": 3600}"#, 200),
        ("integral double", #"{"contentType": "image/png", "fileExt": "png", "expiresSeconds": 60.0}"#, 200),
        ("mixed-case type", #"{"contentType": "Image/PNG", "fileExt": "png"}"#, 200),
        ("type with parameter", #"{"contentType": "application/pdf; name=x", "fileExt": "pdf"}"#, 200),
        ("octet-stream", #"{"contentType": "application/octet-stream", "fileExt": "bin"}"#, 200),
        ("video", #"{"contentType": "video/mp4", "fileExt": "mp4"}"#, 200),
        ("heic", #"{"contentType": "image/heic", "fileExt": "HEIC"}"#, 200),
        ("ext of 16", #"{"contentType": "image/png", "fileExt": "abcdefghijklmnop"}"#, 200),
    ])
    func validRequestsAreAccepted(_ name: String, _ body: String, _ status: Int) throws {
        let f = try Fixture()
        #expect(f.send("POST", "/v1/uploads/presign", json: body).status == status, "\(name)")
    }

    @Test(arguments: [
        ("no body", "", "contentType", "MISSING_FIELD"),
        ("empty object", "{}", "contentType", "MISSING_FIELD"),
        ("null content type", #"{"contentType": null, "fileExt": "png"}"#, "contentType", "MISSING_FIELD"),
        ("empty content type", #"{"contentType": "", "fileExt": "png"}"#, "contentType", "MISSING_FIELD"),
        ("numeric content type", #"{"contentType": 5, "fileExt": "png"}"#, "contentType", "WRONG_TYPE"),
        ("text/html", #"{"contentType": "text/html", "fileExt": "html"}"#, "contentType", "CONTENT_TYPE_NOT_ALLOWED"),
        ("no slash", #"{"contentType": "jpeg", "fileExt": "jpg"}"#, "contentType", "CONTENT_TYPE_NOT_ALLOWED"),
        ("image/*", #"{"contentType": "image/*", "fileExt": "jpg"}"#, "contentType", "CONTENT_TYPE_NOT_ALLOWED"),
        ("header injection", #"{"contentType": "image/png\r\nX-Evil: 1", "fileExt": "png"}"#, "contentType", "CONTENT_TYPE_NOT_ALLOWED"),
        ("missing ext", #"{"contentType": "image/png"}"#, "fileExt", "MISSING_FIELD"),
        ("ext with dot", #"{"contentType": "image/png", "fileExt": ".png"}"#, "fileExt", "INVALID_FILE_EXT"),
        ("ext with inner dot", #"{"contentType": "image/png", "fileExt": "tar.gz"}"#, "fileExt", "INVALID_FILE_EXT"),
        ("ext with slash", #"{"contentType": "image/png", "fileExt": "a/b"}"#, "fileExt", "INVALID_FILE_EXT"),
        ("ext with backslash", #"{"contentType": "image/png", "fileExt": "a\\b"}"#, "fileExt", "INVALID_FILE_EXT"),
        ("ext of 17", #"{"contentType": "image/png", "fileExt": "abcdefghijklmnopq"}"#, "fileExt", "INVALID_FILE_EXT"),
        ("ext with space", #"{"contentType": "image/png", "fileExt": "p g"}"#, "fileExt", "INVALID_FILE_EXT"),
        ("ext with dash", #"{"contentType": "image/png", "fileExt": "tar-gz"}"#, "fileExt", "INVALID_FILE_EXT"),
        ("ext with underscore", #"{"contentType": "image/png", "fileExt": "a_b"}"#, "fileExt", "INVALID_FILE_EXT"),
        ("ext with percent", #"{"contentType": "image/png", "fileExt": "p%2F"}"#, "fileExt", "INVALID_FILE_EXT"),
        ("ext unicode", #"{"contentType": "image/png", "fileExt": "pñg"}"#, "fileExt", "INVALID_FILE_EXT"),
        ("ext array", #"{"contentType": "image/png", "fileExt": ["png"]}"#, "fileExt", "WRONG_TYPE"),
        ("expires 0", #"{"contentType": "image/png", "fileExt": "png", "expiresSeconds": 0}"#, "expiresSeconds", "EXPIRES_OUT_OF_RANGE"),
        ("expires negative", #"{"contentType": "image/png", "fileExt": "png", "expiresSeconds": -5}"#, "expiresSeconds", "EXPIRES_OUT_OF_RANGE"),
        ("expires 3601", #"{"contentType": "image/png", "fileExt": "png", "expiresSeconds": 3601}"#, "expiresSeconds", "EXPIRES_OUT_OF_RANGE"),
        ("expires huge", #"{"contentType": "image/png", "fileExt": "png", "expiresSeconds": 1e300}"#, "expiresSeconds", "WRONG_TYPE"),
        ("expires fractional", #"{"contentType": "image/png", "fileExt": "png", "expiresSeconds": 1.5}"#, "expiresSeconds", "WRONG_TYPE"),
        ("expires string", #"{"contentType": "image/png", "fileExt": "png", "expiresSeconds": "900"}"#, "expiresSeconds", "WRONG_TYPE"),
        ("expires bool", #"{"contentType": "image/png", "fileExt": "png", "expiresSeconds": true}"#, "expiresSeconds", "WRONG_TYPE"),
    ])
    func invalidRequestsAre400NamingTheField(_ name: String, _ body: String, _ field: String, _ reason: String) throws {
        let f = try Fixture()
        let r = f.send("POST", "/v1/uploads/presign", json: body)
        #expect(r.status == 400, "\(name)")
        #expect(r.json["error"]?["status"] == .string("INVALID_ARGUMENT"), "\(name)")
        #expect(r.field == field, "\(name)")
        #expect(r.reason == reason, "\(name)")
        #expect(r.json["error"]?["message"]?.stringValue?.contains(field) == true, "\(name): \(r.json)")
        #expect(r.json["error"]?["details"]?[0]?["fieldViolations"]?[0]?["field"] == .string(field), "\(name)")
        #expect(f.objects.presigns.isEmpty, "\(name)")
    }

    @Test(arguments: ["[1]", "\"x\"", "{", "{\"contentType\": }", "nul"])
    func bodiesThatAreNotJSONObjectsAre400(_ body: String) throws {
        let f = try Fixture()
        let r = f.send("POST", "/v1/uploads/presign", json: body)
        #expect(r.status == 400)
        #expect(r.reason == "INVALID_JSON")
        #expect(r.json["error"]?["code"] == .int(400))
    }

    @Test func theAllowlistIsConfigurable() throws {
        let f = try Fixture(configuration: UploadsConfiguration(allowedContentTypes: ["text/csv"]))
        #expect(f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "text/csv", "fileExt": "csv"}"#).status == 200)
        let r = f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/png", "fileExt": "png"}"#)
        #expect(r.status == 400)
        #expect(r.json["error"]?["message"]?.stringValue?.contains("text/csv") == true)
    }

    @Test func theSignedContentTypeIsTheOneTheClientGaveTrimmed() throws {
        let f = try Fixture()
        let r = f.send("POST", "/v1/uploads/presign", json: #"{"contentType": " Image/JPEG ", "fileExt": "jpg"}"#)
        #expect(r.json["headers"]?["Content-Type"] == .string("Image/JPEG"))
        #expect(f.objects.presigns.last?.signedHeaders == ["content-type": "Image/JPEG"])
    }

    @Test func theBucketIsCreatedAtStartAndByReset() throws {
        let f = try Fixture(configuration: UploadsConfiguration(bucket: "my-uploads"))
        #expect(f.objects.buckets == ["my-uploads"])
        let r = f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/png", "fileExt": "png"}"#)
        #expect(r.status == 200)
        #expect(f.objects.presigns.last?.bucket == "my-uploads")
        // Presigning does not touch the bucket (that would take the database writer per request).
        #expect(f.objects.ensureCount == 1)
        f.objects.deleteBucket("my-uploads")
        try f.service.reset()
        #expect(f.objects.buckets == ["my-uploads"])
    }

    @Test func aBucketThatCannotBeCreatedFailsTheStart() {
        let objects = FakeObjectStore()
        objects.failEnsure = true
        let clock = Clock()
        #expect(throws: FakeObjectStore.Failure.self) {
            try UploadsService(clock: clock, ids: IDGenerator(seed: 1), logger: Logger(quiet: true, sink: { _ in }),
                               configuration: UploadsConfiguration(), tokenVerifier: FakeTokenVerifier(), objectStore: objects,
                               documentStore: FakeDocumentStore(clock: clock))
        }
    }

    @Test func aFailingObjectStoreIs500NotACrash() throws {
        let f = try Fixture()
        f.objects.failPresign = true
        let r = f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/png", "fileExt": "png"}"#)
        #expect(r.status == 500)
        #expect(r.json["error"]?["status"] == .string("INTERNAL"))
    }

    /// Also a slash `String.contains` misses: followed by a combining mark it is one character
    /// with it, and `users/victim/\u{301}x/…` would be a key under another user's prefix.
    @Test(arguments: ["a/b", "victim/\u{301}x"])
    func aUIDWithASlashCannotNameAKey(_ uid: String) throws {
        let f = try Fixture()
        f.verifier.allow("slash-token", uid: uid)
        let r = f.send("POST", "/v1/uploads/presign", token: "slash-token", json: #"{"contentType": "image/png", "fileExt": "png"}"#)
        #expect(r.status == 400)
        #expect(r.reason == "UNUSABLE_UID")
    }
}
