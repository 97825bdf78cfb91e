import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import Testing
@testable import S3Emulator

/// Browser form uploads (POST Object) through `dispose`, streamed in small pieces: what is stored,
/// what is answered, and each way S3 refuses a form.
@Suite struct PostObjectTests {
    static func harness() throws -> S3Harness {
        let h = try S3Harness()
        h.makeBucket("photos")
        return h
    }

    @Test func theDocumentationExampleUploadsAndRedirects() throws {
        let credentials = [S3Configuration.Credential(accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: PostFormAuthenticatorTests.exampleSecret)]
        let h = try S3Harness(configuration: S3Configuration(credentials: credentials))
        h.makeBucket("sigv4examplebucket")
        h.clock.freeze(at: Instant(rfc3339: "2015-12-29T12:00:00Z")!)
        var form = PostFormBuilder()
        form.fields = [
            ("key", "user/user1/${filename}"), ("acl", "public-read"),
            ("success_action_redirect", "http://sigv4examplebucket.s3.amazonaws.com/successful_upload.html"),
            ("Content-Type", "image/jpeg"), ("x-amz-meta-uuid", "14365123651274"), ("x-amz-server-side-encryption", "AES256"),
            ("X-Amz-Credential", "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request"), ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            ("X-Amz-Date", "20151229T000000Z"), ("x-amz-meta-tag", ""), ("Policy", PostFormAuthenticatorTests.examplePolicy),
            ("X-Amz-Signature", PostFormAuthenticatorTests.exampleSignature),
        ]
        form.file = Array("jpeg".utf8)
        form.filename = "photo.jpg"
        form.fileContentType = "image/png"
        form.afterFile = [("submit", "Upload to Amazon S3")]
        let r = h.post(form, bucket: "sigv4examplebucket", chunkSize: 97)
        #expect(r.status == 303, "\(r.text)")
        let etag = ETag.quoted(md5: Digest.md5(Array("jpeg".utf8)))
        #expect(r.header("Location") == "http://sigv4examplebucket.s3.amazonaws.com/successful_upload.html?bucket=sigv4examplebucket&key=user%2Fuser1%2Fphoto.jpg&etag=%22\(Hex.encode(Digest.md5(Array("jpeg".utf8))))%22")
        #expect(r.header("ETag") == etag)
        let get = h.call("GET", "/sigv4examplebucket/user/user1/photo.jpg")
        #expect(get.text == "jpeg")
        // The object's type is the Content-Type field, not the file part's.
        #expect(get.header("Content-Type") == "image/jpeg")
        #expect(get.header("x-amz-meta-uuid") == "14365123651274")
        #expect(get.header("x-amz-meta-tag") == "")
        #expect(h.service.requestLog.recent(limit: 3).first { $0.operation == "PostObject" }?.key == "user/user1/photo.jpg")
    }

    @Test(arguments: [
        (nil, 204), ("200", 200), ("201", 201), ("204", 204), ("404", 204), ("", 204),
    ] as [(String?, Int)])
    func successStatus(field: String?, status: Int) throws {
        let h = try Self.harness()
        let extra = field.map { [("success_action_status", $0)] } ?? []
        let r = h.post(h.signedForm(bucket: "photos", key: "dir/a b.txt", extra: extra), bucket: "photos")
        #expect(r.status == status, "\(r.text)")
        let etag = ETag.quoted(md5: Digest.md5(Array("hello form".utf8)))
        #expect(r.header("ETag") == etag)
        #expect(r.header("Location") == "http://127.0.0.1:9000/photos/dir%2Fa%20b.txt")
        #expect(r.header("x-amz-server-side-encryption") == "AES256")
        if status == 201 {
            let doc = try #require(r.xml)
            #expect(doc.name == "PostResponse")
            #expect(doc.childText("Location") == "http://127.0.0.1:9000/photos/dir%2Fa%20b.txt")
            #expect(doc.childText("Bucket") == "photos")
            #expect(doc.childText("Key") == "dir/a b.txt")
            #expect(doc.childText("ETag") == etag)
            #expect(r.header("Content-Type") == "application/xml")
        } else {
            #expect(r.body.isEmpty)
        }
        #expect(h.call("GET", "/photos/dir/a%20b.txt").text == "hello form")
    }

    @Test(arguments: [
        ("https://example.com/done", "https://example.com/done?"),
        ("http://example.com/?a=b", "http://example.com/?a=b&"),
    ])
    func redirects(url: String, prefix: String) throws {
        let h = try Self.harness()
        let r = h.post(h.signedForm(bucket: "photos", key: "k", extra: [("success_action_redirect", url), ("success_action_status", "201")]),
                       bucket: "photos")
        #expect(r.status == 303)
        #expect(r.header("Location")?.hasPrefix(prefix + "bucket=photos&key=k&etag=%22") == true)
    }

    @Test(arguments: ["not a url", "ftp://example.com/x", ""])
    func redirectsS3CannotInterpretAreIgnored(url: String) throws {
        let h = try Self.harness()
        let r = h.post(h.signedForm(bucket: "photos", key: "k", extra: [("redirect", url)]), bucket: "photos")
        #expect(r.status == 204)
        #expect(r.header("Location") == "http://127.0.0.1:9000/photos/k")
    }

    @Test func theFieldsBecomeTheObjectsProperties() throws {
        let h = try Self.harness()
        let tagging = "<Tagging><TagSet><Tag><Key>a</Key><Value>1 2</Value></Tag></TagSet></Tagging>"
        let fields = [
            ("Content-Type", "text/plain"), ("Cache-Control", "max-age=60"), ("Content-Disposition", "attachment"),
            ("Content-Encoding", "identity"), ("Expires", "Wed, 21 Oct 2037 07:28:00 GMT"), ("x-amz-meta-Color", "green"),
            ("x-amz-storage-class", "STANDARD_IA"), ("tagging", tagging), ("acl", "private"),
        ]
        let r = h.post(h.signedForm(bucket: "photos", key: "props", extra: fields), bucket: "photos")
        #expect(r.status == 204, "\(r.text)")
        let head = h.call("HEAD", "/photos/props")
        #expect(head.header("Content-Type") == "text/plain")
        #expect(head.header("Cache-Control") == "max-age=60")
        #expect(head.header("Content-Disposition") == "attachment")
        #expect(head.header("Content-Encoding") == "identity")
        #expect(head.header("Expires") == "Wed, 21 Oct 2037 07:28:00 GMT")
        #expect(head.header("x-amz-meta-color") == "green")
        #expect(head.header("x-amz-storage-class") == "STANDARD_IA")
        #expect(head.header("x-amz-tagging-count") == "1")
        let tags = h.call("GET", "/photos/props?tagging").xml
        #expect(tags?.child("TagSet")?.child("Tag")?.childText("Value") == "1 2")
    }

    @Test func filenameIsSubstitutedBeforeThePolicyIsChecked() throws {
        let h = try Self.harness()
        var form = h.signedForm(bucket: "photos", key: "in/${filename}",
                                conditions: [.array([.string("starts-with"), .string("$key"), .string("in/")])])
        form.filename = "C:\\Users\\me\\report.pdf"
        #expect(h.post(form, bucket: "photos").status == 204)
        #expect(h.call("GET", "/photos/in/report.pdf").status == 200)
        var literal = h.signedForm(bucket: "photos", key: "in/${filename}", conditions: [.object(["key": .string("in/${filename}")])])
        literal.filename = "x.txt"
        let r = h.post(literal, bucket: "photos")
        #expect(r.status == 403)
        #expect(r.xml?.childText("Message") == "Invalid according to Policy: Policy Condition failed: [\"eq\", \"$key\", \"in/${filename}\"]")
        #expect(r.header("x-hearth-diagnosis")?.contains("in/x.txt") == true)
    }

    @Test func fieldsAfterTheFileAreIgnored() throws {
        let h = try Self.harness()
        var form = h.signedForm(bucket: "photos", key: "first")
        form.afterFile = [("key", "other"), ("Content-Type", "text/html"), ("no-condition", "1")]
        #expect(h.post(form, bucket: "photos").status == 204)
        #expect(h.call("HEAD", "/photos/first").header("Content-Type") == "binary/octet-stream")
        #expect(h.call("HEAD", "/photos/other").status == 404)
    }

    @Test func aLargeFileStreamsIntoChunks() throws {
        let h = try Self.harness()
        let data = S3Harness.bytes(3 << 20 + 17)
        let r = h.post(h.signedForm(bucket: "photos", key: "big.bin", file: data), bucket: "photos", chunkSize: 65_536)
        #expect(r.status == 204)
        #expect(r.header("ETag") == ETag.quoted(md5: Digest.md5(data)))
        #expect(h.call("GET", "/photos/big.bin").body == data)
        let chunks = try h.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_chunks") }
        #expect(chunks == 4)
    }

    @Test func virtualHostedFormsAnswerTheHostsLocation() throws {
        let h = try S3Harness(host: "localhost:9000")
        h.makeBucket("photos")
        let r = h.post(h.signedForm(bucket: "photos", key: "a/b c", extra: [("success_action_status", "201")]), bucket: "photos",
                       virtualHosted: true)
        #expect(r.status == 201, "\(r.text)")
        #expect(r.header("Location") == "http://photos.localhost:9000/a%2Fb%20c")
        #expect(r.xml?.childText("Key") == "a/b c")
    }

    // MARK: Refusals

    /// Sends `form` and checks the error; nothing may be stored.
    @discardableResult
    static func refuse(_ h: S3Harness, _ form: PostFormBuilder, code: String, status: Int, message: String? = nil,
                       headers: [(String, String)] = [], sourceLocation: SourceLocation = #_sourceLocation) -> S3TestResponse {
        let r = h.post(form, bucket: "photos", headers: headers)
        #expect(r.status == status, "\(r.text)", sourceLocation: sourceLocation)
        #expect(r.errorCode == code, sourceLocation: sourceLocation)
        if let message { #expect(r.xml?.childText("Message") == message, sourceLocation: sourceLocation) }
        let objects = (try? h.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_objects") }) ?? -1
        #expect(objects == 0, sourceLocation: sourceLocation)
        let staged = (try? h.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_blobs") }) ?? -1
        #expect(staged == 0, "staged blobs left behind", sourceLocation: sourceLocation)
        return r
    }

    @Test(arguments: [
        ("application/x-www-form-urlencoded", 412, "PreconditionFailed"),
        ("multipart/mixed; boundary=----HearthFormBoundary7MA4YWxkTrZu0gW", 412, "PreconditionFailed"),
        ("multipart/form-data", 400, "MalformedPOSTRequest"),
    ])
    func contentTypes(contentType: String, status: Int, code: String) throws {
        let h = try Self.harness()
        let r = Self.refuse(h, h.signedForm(bucket: "photos", key: "k"), code: code, status: status, headers: [("Content-Type", contentType)])
        if status == 412 {
            #expect(r.xml?.childText("Condition") == "Bucket POST must be of the enclosure-type multipart/form-data")
            #expect(r.xml?.childText("Message") == "At least one of the pre-conditions you specified did not hold")
        }
    }

    @Test func bodiesThatAreNotForms() throws {
        let h = try Self.harness()
        for body in ["", "key=k&file=x", "--other\r\n"] {
            var headers = HTTPHeaders()
            headers.add("Host", h.host)
            headers.add("Content-Type", PostFormBuilder().contentType)
            headers.add("Content-Length", String(body.utf8.count))
            let r = h.send(Request(method: "POST", target: "/photos", headers: headers, body: Array(body.utf8)))
            #expect(r.status == 400)
            #expect(r.errorCode == "MalformedPOSTRequest")
            #expect(r.xml?.childText("Message") == "The body of your POST request is not well-formed multipart/form-data.")
        }
    }

    @Test func aTruncatedFileIsMalformedAndNotStored() throws {
        let h = try Self.harness()
        let form = h.signedForm(bucket: "photos", key: "cut", file: S3Harness.bytes(200_000))
        var body = form.body()
        body.removeLast(40)
        var headers = HTTPHeaders()
        headers.add("Host", h.host)
        headers.add("Content-Type", form.contentType)
        headers.add("Content-Length", String(body.count))
        let r = h.send(Request(method: "POST", target: "/photos", headers: headers, body: body), chunkSize: 10_000)
        #expect(r.errorCode == "MalformedPOSTRequest")
        #expect(r.header("x-hearth-diagnosis")?.contains("file part") == true)
        #expect(try h.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_blobs") } == 0)
    }

    @Test func anAbandonedUploadLeavesNothing() throws {
        let h = try Self.harness()
        let form = h.signedForm(bucket: "photos", key: "gone", file: S3Harness.bytes(3 << 20))
        let r = h.send(form.request(bucket: "photos", host: h.host), chunkSize: 100_000, abandonAfter: 2_500_000)
        #expect(r.status == 0)
        #expect(try h.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_blobs") } == 0)
        #expect(try h.database.read { c in try c.scalarInt("SELECT count(*) FROM s3_chunks") } == 0)
    }

    @Test func formsWithoutAFileOrAKey() throws {
        let h = try Self.harness()
        // No file part: the form ends before one.
        var noFile = h.signedForm(bucket: "photos", key: "k")
        noFile.fileFieldName = "upload"
        let r = Self.refuse(h, noFile, code: "InvalidArgument", status: 400, message: "POST requires exactly one file upload per request.")
        #expect(r.xml?.childText("ArgumentName") == "file")
        #expect(r.xml?.childText("ArgumentValue") == "0")
        // The key after the file does not count.
        var late = PostFormBuilder()
        late.fields = PostPolicySigner.signedFields([], bucket: "photos", date: h.clock.now().amzDate)
        late.afterFile = [("key", "k")]
        let m = Self.refuse(h, late, code: "InvalidArgument", status: 400,
                            message: "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.")
        #expect(m.xml?.childText("ArgumentName") == "key")
        #expect(m.header("x-hearth-diagnosis")?.contains("last field") == true)
        let empty = h.signedForm(bucket: "photos", key: "${filename}")
        var emptyForm = empty
        emptyForm.filename = nil
        Self.refuse(h, emptyForm, code: "InvalidArgument", status: 400, message: "User key must have a length greater than 0.")
    }

    @Test func fieldsBeforeTheFileAreLimitedTo20KB() throws {
        let h = try Self.harness()
        let r = Self.refuse(h, h.signedForm(bucket: "photos", key: "k", extra: [("x-ignore-pad", String(repeating: "a", count: 20_000))]),
                            code: "MaxPostPreDataLengthExceededError", status: 400,
                            message: "Your POST request fields preceding the upload file were too large.")
        #expect(r.xml?.childText("MaxPostPreDataLengthBytes") == "20480")
        // Just under the limit is fine.
        let fine = h.post(h.signedForm(bucket: "photos", key: "k", extra: [("x-ignore-pad", String(repeating: "a", count: 15_000))]),
                          bucket: "photos")
        #expect(fine.status == 204)
    }

    @Test func anUnsignedFormIsAnonymous() throws {
        let h = try Self.harness()
        var form = PostFormBuilder()
        form.fields = [("key", "k")]
        let r = Self.refuse(h, form, code: "AccessDenied", status: 403, message: "Access Denied")
        #expect(r.header("x-hearth-diagnosis")?.contains("generate_presigned_post") == true)
    }

    @Test func aRequestSignedInItsHeadersNeedsNoPolicy() throws {
        let h = try Self.harness()
        var form = PostFormBuilder()
        form.fields = [("key", "signed"), ("Content-Type", "text/x-test")]
        let body = form.body()
        let signed = h.request("POST", "/photos", headers: [("Content-Type", form.contentType)], body: body)
        let r = h.send(signed, chunkSize: 1_000)
        #expect(r.status == 204, "\(r.text)")
        #expect(h.call("HEAD", "/photos/signed").header("Content-Type") == "text/x-test")
        // The body is still checked against the signed payload hash.
        var tampered = h.request("POST", "/photos", headers: [("Content-Type", form.contentType)], body: body)
        tampered = Request(method: "POST", rawPath: tampered.rawPath, headers: tampered.headers,
                           body: body.map { $0 == UInt8(ascii: "h") ? UInt8(ascii: "j") : $0 })
        #expect(h.send(tampered).errorCode == "XAmzContentSHA256Mismatch")
    }

    @Test func anExpiredPolicy() throws {
        let h = try Self.harness()
        var form = PostFormBuilder()
        form.fields = PostPolicySigner.signedFields([("key", "k")], bucket: "photos", expiration: "2026-11-30T06:33:15Z",
                                                    date: h.clock.now().amzDate)
        #expect(h.post(form, bucket: "photos").status == 204)
        h.clock.advance(seconds: 2)
        h.call("DELETE", "/photos/k")
        let r = h.post(form, bucket: "photos")
        #expect(r.errorCode == "AccessDenied")
        #expect(r.xml?.childText("Message") == "Invalid according to Policy: Policy expired.")
        #expect(r.header("x-hearth-diagnosis")?.contains("2026-11-30T06:33:15Z") == true)
    }

    @Test(arguments: [
        ([JSON.object(["acl": .string("public-read")])], [("acl", "private")], "[\"eq\", \"$acl\", \"public-read\"]"),
        ([JSON.array([.string("starts-with"), .string("$Content-Type"), .string("image/")])], [("Content-Type", "text/html")],
         "[\"starts-with\", \"$Content-Type\", \"image/\"]"),
        ([JSON.object(["bucket": .string("other")])], [], "[\"eq\", \"$bucket\", \"other\"]"),
    ] as [([JSON], [(String, String)], String)])
    func failedConditions(conditions: [JSON], extra: [(String, String)], rendered: String) throws {
        let h = try Self.harness()
        Self.refuse(h, h.signedForm(bucket: "photos", key: "k", extra: extra, conditions: conditions), code: "AccessDenied", status: 403,
                    message: "Invalid according to Policy: Policy Condition failed: \(rendered)")
    }

    @Test func extraInputFields() throws {
        let h = try Self.harness()
        var form = h.signedForm(bucket: "photos", key: "k")
        form.fields.insert(("x-amz-meta-note", "uncovered"), at: 1)
        form.fields.insert(("X-Ignore-Submit", "fine"), at: 1)
        let r = Self.refuse(h, form, code: "AccessDenied", status: 403, message: "Invalid according to Policy: Extra input fields: x-amz-meta-note")
        #expect(r.header("x-hearth-diagnosis")?.contains("x-amz-meta-note") == true)
    }

    @Test(arguments: [
        (4, "EntityTooSmall", "ProposedSize", "4", "MinSizeAllowed", "5"),
        (11, "EntityTooLarge", "ProposedSize", "11", "MaxSizeAllowed", "10"),
    ])
    func contentLengthRange(size: Int, code: String, a: String, aValue: String, b: String, bValue: String) throws {
        let h = try Self.harness()
        let range = JSON.array([.string("content-length-range"), .int(5), .int(10)])
        let r = Self.refuse(h, h.signedForm(bucket: "photos", key: "k", conditions: [range], file: Array(repeating: 0x61, count: size)),
                            code: code, status: 400)
        #expect(r.xml?.childText(a) == aValue)
        #expect(r.xml?.childText(b) == bValue)
        for ok in [5, 10] {
            #expect(h.post(h.signedForm(bucket: "photos", key: "ok\(ok)", conditions: [range], file: Array(repeating: 0x61, count: ok)),
                           bucket: "photos").status == 204)
        }
    }

    @Test func aFileFarOverTheRangeIsCountedButNotKept() throws {
        let h = try Self.harness()
        let range = JSON.array([.string("content-length-range"), .int(0), .int(1000)])
        let r = Self.refuse(h, h.signedForm(bucket: "photos", key: "k", conditions: [range], file: S3Harness.bytes(2 << 20)),
                            code: "EntityTooLarge", status: 400)
        #expect(r.xml?.childText("ProposedSize") == String(2 << 20))
    }

    @Test func checksumsAndContentMD5Fields() throws {
        let h = try Self.harness()
        let file = Array("hello form".utf8)
        let sha = Data(Digest.sha256(file)).base64EncodedString()
        let ok = h.post(h.signedForm(bucket: "photos", key: "sum", extra: [("x-amz-checksum-sha256", sha), ("Content-MD5", S3Harness.base64MD5(file))]),
                        bucket: "photos")
        #expect(ok.status == 204, "\(ok.text)")
        #expect(ok.header("x-amz-checksum-sha256") == sha)
        let head = h.call("HEAD", "/photos/sum", headers: [("x-amz-checksum-mode", "ENABLED")])
        #expect(head.header("x-amz-checksum-sha256") == sha)
        let computed = h.post(h.signedForm(bucket: "photos", key: "crc", extra: [("x-amz-checksum-algorithm", "CRC32")]), bucket: "photos")
        #expect(computed.header("x-amz-checksum-crc32") != nil)
        h.call("DELETE", "/photos/sum")
        h.call("DELETE", "/photos/crc")
        Self.refuse(h, h.signedForm(bucket: "photos", key: "bad", extra: [("x-amz-checksum-sha256", Data(Digest.sha256([1])).base64EncodedString())]),
                    code: "BadDigest", status: 400, message: "The SHA256 you specified did not match the calculated checksum.")
        Self.refuse(h, h.signedForm(bucket: "photos", key: "bad", extra: [("Content-MD5", S3Harness.base64MD5([1]))]),
                    code: "BadDigest", status: 400)
        Self.refuse(h, h.signedForm(bucket: "photos", key: "bad", extra: [("x-amz-checksum-algorithm", "MD5")]), code: "InvalidRequest", status: 400)
        Self.refuse(h, h.signedForm(bucket: "photos", key: "bad", extra: [("x-amz-checksum-sha256", "sailor")]), code: "InvalidRequest", status: 400)
    }

    @Test func otherPropertyErrors() throws {
        let h = try Self.harness()
        Self.refuse(h, h.signedForm(bucket: "photos", key: "k", extra: [("x-amz-storage-class", "COLD")]), code: "InvalidStorageClass", status: 400)
        Self.refuse(h, h.signedForm(bucket: "photos", key: "k", extra: [("x-amz-meta-large", String(repeating: "a", count: 2048))]),
                    code: "MetadataTooLarge", status: 400)
        Self.refuse(h, h.signedForm(bucket: "photos", key: "k", extra: [("tagging", "a=1")]), code: "MalformedXML", status: 400)
        Self.refuse(h, h.signedForm(bucket: "photos", key: String(repeating: "k", count: 1025)), code: "KeyTooLongError", status: 400)
    }

    @Test func aMissingBucketAndAnOversizedBodyAreRefusedBeforeTheBody() throws {
        let h = try Self.harness()
        let form = h.signedForm(bucket: "nowhere", key: "k")
        guard case .respond(let missing) = h.service.dispose(form.request(bucket: "nowhere", host: h.host)) else {
            Issue.record("expected an answer before the body")
            return
        }
        #expect(S3TestResponse(missing).errorCode == "NoSuchBucket")
        let big = form.request(bucket: "photos", host: h.host, headers: [("Content-Length", String((5 << 30) + 1))])
        guard case .respond(let large) = h.service.dispose(big) else {
            Issue.record("expected an answer before the body")
            return
        }
        let r = S3TestResponse(large)
        #expect(r.errorCode == "EntityTooLarge")
        #expect(r.xml?.childText("ProposedSize") == String((5 << 30) + 1))
    }

    @Test func aWrongSignatureIsDiagnosed() throws {
        let h = try Self.harness()
        var form = PostFormBuilder()
        form.fields = PostPolicySigner.signedFields([("key", "k")], bucket: "photos", date: h.clock.now().amzDate, region: "eu-west-1")
        form.fields = form.fields.map { $0.0 == "x-amz-credential" ? ($0.0, $0.1.replacingOccurrences(of: "eu-west-1", with: "us-east-1")) : $0 }
        let r = Self.refuse(h, form, code: "SignatureDoesNotMatch", status: 403)
        #expect(r.xml?.childText("StringToSign") == form.fields.first { $0.0 == "policy" }?.1)
        #expect(r.header("x-hearth-diagnosis")?.contains("region 'eu-west-1'") == true)
        #expect(r.xml?.childText("Diagnosis")?.contains("eu-west-1") == true)
    }

    @Test func theRequestLogShowsTheFormsKeyAndOutcome() throws {
        let h = try Self.harness()
        _ = h.post(h.signedForm(bucket: "photos", key: "logged.txt"), bucket: "photos")
        var bad = h.signedForm(bucket: "photos", key: "k")
        bad.fields.append(("x-amz-meta-x", "1"))
        _ = h.post(bad, bucket: "photos")
        let entries = h.service.requestLog.recent(limit: 2)
        #expect(entries.map(\.operation) == ["PostObject", "PostObject"])
        #expect(entries.last?.key == "logged.txt")
        #expect(entries.last?.accessKey == "test")
        #expect(entries.first?.errorCode == "AccessDenied")
        #expect(entries.first?.diagnosis?.contains("x-amz-meta-x") == true)
    }
}
