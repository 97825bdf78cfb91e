import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import S3Emulator

/// Versioning with S3's semantics: version ids, delete markers, the null version, version listings.
@Suite struct VersioningTests {
    func versioned(_ status: String = "Enabled", bucket: String = "ver") throws -> S3Harness {
        let s3 = try S3Harness()
        s3.makeBucket(bucket)
        setVersioning(s3, status, bucket: bucket)
        return s3
    }

    func setVersioning(_ s3: S3Harness, _ status: String, bucket: String = "ver") {
        let body = Array("<VersioningConfiguration><Status>\(status)</Status></VersioningConfiguration>".utf8)
        let r = s3.call("PUT", "/\(bucket)?versioning", headers: [("Content-MD5", S3Harness.base64MD5(body))], body: body)
        precondition(r.status == 200, r.text)
    }

    /// PutObject, returning the version id answered.
    func put(_ s3: S3Harness, _ key: String, _ text: String, bucket: String = "ver") -> String? {
        let r = s3.put(bucket, key, Array(text.utf8))
        #expect(r.status == 200)
        return r.header("x-amz-version-id")
    }

    /// (kind, key, version, latest) of each ListObjectVersions entry, in document order.
    func listing(_ s3: S3Harness, _ query: String = "", bucket: String = "ver") -> [String] {
        let root = s3.call("GET", "/\(bucket)?versions\(query)").xml
        return (root?.children ?? []).filter { $0.name == "Version" || $0.name == "DeleteMarker" }.map {
            "\($0.name == "Version" ? "V" : "D") \($0.childText("Key") ?? "") \($0.childText("VersionId") ?? "") \($0.childText("IsLatest") ?? "")"
        }
    }

    @Test func bucketVersioningStatus() throws {
        let s3 = try S3Harness()
        s3.makeBucket("ver")
        let never = s3.call("GET", "/ver?versioning")
        #expect(never.text.hasSuffix(#"<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>"#))
        setVersioning(s3, "Suspended")
        #expect(s3.call("GET", "/ver?versioning").xml?.childText("Status") == "Suspended")
        setVersioning(s3, "Enabled")
        #expect(s3.call("GET", "/ver?versioning").xml?.childText("Status") == "Enabled")
        for (body, code) in [("<VersioningConfiguration><Status>On</Status></VersioningConfiguration>", "MalformedXML"),
                             ("<VersioningConfiguration/>", "IllegalVersioningConfigurationException"),
                             ("<Versioning><Status>Enabled</Status></Versioning>", "MalformedXML"),
                             ("<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>", "NotImplemented")] {
            #expect(s3.call("PUT", "/ver?versioning", body: Array(body.utf8)).errorCode == code, "\(body)")
        }
        #expect(s3.call("PUT", "/nope?versioning", body: Array("<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>".utf8)).errorCode == "NoSuchBucket")
    }

    @Test func versionIDsLookLikeS3sAndCheckThemselves() {
        let ids = IDGenerator(seed: 3)
        let made = (0..<50).map { _ in VersionID.make(ids) }
        #expect(Set(made).count == 50)
        for id in made {
            #expect(id.utf8.count == 32)
            #expect(VersionID.isWellFormed(id))
            var tampered = Array(id.utf8)
            tampered[3] = tampered[3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(!VersionID.isWellFormed(String(decoding: tampered, as: UTF8.self)))
        }
        #expect(!VersionID.isWellFormed("Eyn7lxdGE1WU1SU6QTbW1X6cbSIIRY0R"))
        #expect(!VersionID.isWellFormed("null"))
    }

    @Test func eachWriteIsAVersionAndTheNewestIsCurrent() throws {
        let s3 = try S3Harness()
        s3.makeBucket("ver")
        #expect(put(s3, "k", "before") == nil)
        setVersioning(s3, "Enabled")
        let v1 = try #require(put(s3, "k", "one"))
        let v2 = try #require(put(s3, "k", "two"))
        #expect(v1 != v2)
        let current = s3.call("GET", "/ver/k")
        #expect(current.text == "two")
        #expect(current.header("x-amz-version-id") == v2)
        #expect(s3.call("GET", "/ver/k?versionId=\(v1)").text == "one")
        #expect(s3.call("GET", "/ver/k?versionId=\(v1)").header("x-amz-version-id") == v1)
        let null = s3.call("GET", "/ver/k?versionId=null")
        #expect(null.text == "before")
        #expect(null.header("x-amz-version-id") == "null")
        let head = s3.call("HEAD", "/ver/k?versionId=\(v1)")
        #expect(head.status == 200)
        #expect(head.declaredLength == 3)
        #expect(listing(s3) == ["V k \(v2) true", "V k \(v1) false", "V k null false"])
        // Listings of the current objects see one object.
        #expect(s3.call("GET", "/ver?list-type=2").xml?.children(named: "Contents").count == 1)
    }

    @Test func deleteMarkers() throws {
        let s3 = try versioned()
        let v1 = try #require(put(s3, "k", "one"))
        let deleted = s3.call("DELETE", "/ver/k")
        #expect(deleted.status == 204)
        #expect(deleted.header("x-amz-delete-marker") == "true")
        let marker = try #require(deleted.header("x-amz-version-id"))
        #expect(VersionID.isWellFormed(marker))

        let get = s3.call("GET", "/ver/k")
        #expect(get.status == 404)
        #expect(get.errorCode == "NoSuchKey")
        #expect(get.header("x-amz-delete-marker") == "true")
        #expect(get.header("x-amz-version-id") == marker)
        let head = s3.call("HEAD", "/ver/k")
        #expect(head.status == 404)
        #expect(head.body.isEmpty)
        #expect(head.header("x-amz-delete-marker") == "true")

        let byID = s3.call("GET", "/ver/k?versionId=\(marker)")
        #expect(byID.status == 405)
        #expect(byID.errorCode == "MethodNotAllowed")
        #expect(byID.xml?.childText("ResourceType") == "DeleteMarker")
        #expect(byID.xml?.childText("Method") == "GET")
        #expect(byID.header("Allow") == "DELETE")
        #expect(byID.header("Last-Modified") == S3Harness.start.httpDate)
        #expect(byID.header("x-amz-delete-marker") == "true")
        #expect(s3.call("HEAD", "/ver/k?versionId=\(marker)").status == 405)

        #expect(s3.call("GET", "/ver?list-type=2").xml?.children(named: "Contents").isEmpty == true)
        let never = try #require(s3.call("DELETE", "/ver/never").header("x-amz-version-id"))
        #expect(listing(s3) == ["D k \(marker) true", "V k \(v1) false", "D never \(never) true"])
        let markerEntry = s3.call("GET", "/ver?versions").xml?.child("DeleteMarker")
        #expect(markerEntry?.child("Owner")?.childText("ID")?.count == 64)
        #expect(markerEntry?.child("ETag") == nil)

        // Removing the marker brings the object back.
        let undelete = s3.call("DELETE", "/ver/k?versionId=\(marker)")
        #expect(undelete.status == 204)
        #expect(undelete.header("x-amz-delete-marker") == "true")
        #expect(undelete.header("x-amz-version-id") == marker)
        #expect(s3.call("GET", "/ver/k").text == "one")
        #expect(listing(s3) == ["V k \(v1) true", "D never \(never) true"])
    }

    @Test func deletingAVersionIsPermanent() throws {
        let s3 = try versioned()
        let v1 = try #require(put(s3, "k", "one"))
        let v2 = try #require(put(s3, "k", "two"))
        let r = s3.call("DELETE", "/ver/k?versionId=\(v2)")
        #expect(r.status == 204)
        #expect(r.header("x-amz-version-id") == v2)
        #expect(r.header("x-amz-delete-marker") == nil)
        #expect(s3.call("GET", "/ver/k").text == "one")
        let gone = s3.call("GET", "/ver/k?versionId=\(v2)")
        #expect(gone.status == 404)
        #expect(gone.errorCode == "NoSuchVersion")
        #expect(gone.xml?.childText("VersionId") == v2)
        // Deleting it again, or a version that never was, is not an error.
        #expect(s3.call("DELETE", "/ver/k?versionId=\(v2)").status == 204)
        #expect(s3.call("DELETE", "/ver/k?versionId=\(v1)").status == 204)
        #expect(s3.call("GET", "/ver/k").errorCode == "NoSuchKey")
        #expect(listing(s3).isEmpty)
        #expect(s3.call("DELETE", "/ver").status == 204)
    }

    @Test func suspendedVersioningWritesTheNullVersion() throws {
        let s3 = try versioned()
        let kept = try #require(put(s3, "k", "kept"))
        setVersioning(s3, "Suspended")
        #expect(put(s3, "k", "first") == "null")
        #expect(put(s3, "k", "second") == "null")
        #expect(listing(s3) == ["V k null true", "V k \(kept) false"])
        let deleted = s3.call("DELETE", "/ver/k")
        #expect(deleted.header("x-amz-version-id") == "null")
        #expect(deleted.header("x-amz-delete-marker") == "true")
        #expect(listing(s3) == ["D k null true", "V k \(kept) false"])
        #expect(s3.call("GET", "/ver/k?versionId=\(kept)").text == "kept")
        #expect(put(s3, "k", "again") == "null")
        #expect(listing(s3) == ["V k null true", "V k \(kept) false"])
        #expect(s3.call("DELETE", "/ver/k?versionId=null").header("x-amz-version-id") == "null")
        #expect(s3.call("GET", "/ver/k").text == "kept")
        setVersioning(s3, "Enabled")
        let added = try #require(put(s3, "k", "new"))
        #expect(listing(s3) == ["V k \(added) true", "V k \(kept) false"])
    }

    @Test func versionIDParameters() throws {
        let s3 = try versioned()
        let v1 = try #require(put(s3, "k", "one"))
        for bad in ["abc", "NULL", "Eyn7lxdGE1WU1SU6QTbW1X6cbSIIRY0R", v1 + "A"] {
            let r = s3.call("GET", "/ver/k?versionId=\(bad)")
            #expect(r.status == 400)
            #expect(r.errorCode == "InvalidArgument")
            #expect(r.xml?.childText("Message") == "Invalid version id specified")
            #expect(r.xml?.childText("ArgumentValue") == bad)
            #expect(s3.call("DELETE", "/ver/k?versionId=\(bad)").errorCode == "InvalidArgument")
        }
        #expect(s3.call("GET", "/ver/k?versionId=").xml?.childText("Message") == "Version id cannot be the empty string")
        #expect(s3.call("GET", "/ver/missing?versionId=null").errorCode == "NoSuchVersion")
        // A bucket that never had versioning gives the same answers and names no version.
        s3.makeBucket("plain")
        s3.put("plain", "k", Array("p".utf8))
        #expect(s3.call("GET", "/plain/k?versionId=abc").errorCode == "InvalidArgument")
        #expect(s3.call("GET", "/plain/k?versionId=\(v1)").errorCode == "NoSuchVersion")
        #expect(s3.call("GET", "/plain/k").header("x-amz-version-id") == nil)
        let plainDelete = s3.call("DELETE", "/plain/k?versionId=null")
        #expect(plainDelete.status == 204)
        #expect(plainDelete.header("x-amz-version-id") == nil)
        #expect(s3.call("GET", "/plain/k").errorCode == "NoSuchKey")
    }

    @Test func listingPagesThroughVersionsAndPrefixes() throws {
        let s3 = try versioned()
        var ids: [String: [String]] = [:]
        for key in ["a", "b/1", "b/2", "c"] {
            for n in 0..<2 { ids[key, default: []].append(try #require(put(s3, key, "\(key)\(n)"))) }
        }
        _ = s3.call("DELETE", "/ver/c")
        let all = listing(s3)
        #expect(all.count == 9)
        #expect(all.first == "V a \(ids["a"]![1]) true")
        // One entry a page, following NextKeyMarker / NextVersionIdMarker, gives the same list.
        var paged: [String] = []
        var query = "&max-keys=1"
        for _ in 0..<20 {
            let root = try #require(s3.call("GET", "/ver?versions\(query)").xml)
            paged += listingEntries(root)
            guard root.childText("IsTruncated") == "true" else { break }
            let key = try #require(root.childText("NextKeyMarker"))
            let version = try #require(root.childText("NextVersionIdMarker"))
            query = "&max-keys=1&key-marker=\(S3Harness.encode(key))&version-id-marker=\(version)"
        }
        #expect(paged == all)
        // A delimiter rolls b/ into one common prefix, counted once.
        let rolled = try #require(s3.call("GET", "/ver?versions&delimiter=/&max-keys=3").xml)
        #expect(rolled.children(named: "CommonPrefixes").compactMap { $0.childText("Prefix") } == ["b/"])
        #expect(listingEntries(rolled).count == 2)
        #expect(rolled.childText("IsTruncated") == "true")
        #expect(rolled.childText("NextKeyMarker") == "b/")
        #expect(rolled.child("NextVersionIdMarker") == nil)
        let next = try #require(s3.call("GET", "/ver?versions&delimiter=/&key-marker=b/").xml)
        #expect(listingEntries(next).map { $0.split(separator: " ")[1] } == ["c", "c", "c"])
        #expect(listing(s3, "&prefix=b/").count == 4)
        let zero = try #require(s3.call("GET", "/ver?versions&max-keys=0").xml)
        #expect(zero.childText("IsTruncated") == "true")
        #expect(listingEntries(zero).isEmpty)
    }

    func listingEntries(_ root: XMLElement) -> [String] {
        root.children.filter { $0.name == "Version" || $0.name == "DeleteMarker" }.map {
            "\($0.name == "Version" ? "V" : "D") \($0.childText("Key") ?? "") \($0.childText("VersionId") ?? "") \($0.childText("IsLatest") ?? "")"
        }
    }

    @Test(arguments: [
        ("&version-id-marker=x", "A version-id marker cannot be specified without a key marker."),
        ("&key-marker=a&version-id-marker=", "A version-id marker cannot be empty."),
        ("&key-marker=a&version-id-marker=x", "Invalid version id specified"),
        ("&key-marker=a&version-id-marker=null", "Invalid version id specified"),
        ("&max-keys=abc", "Provided max-keys not an integer or within integer range"),
        ("&max-keys=-1", "max-keys cannot be negative"),
        ("&encoding-type=xml", "Invalid Encoding Method specified in Request"),
    ])
    func listingParameterRefusals(query: String, message: String) throws {
        let s3 = try versioned()
        _ = put(s3, "b", "x")
        let r = s3.call("GET", "/ver?versions\(query)")
        #expect(r.status == 400)
        #expect(r.errorCode == "InvalidArgument")
        #expect(r.xml?.childText("Message") == message)
    }

    @Test func deleteObjectsWithVersions() throws {
        let s3 = try versioned()
        let v1 = try #require(put(s3, "k", "one"))
        _ = put(s3, "k", "two")
        let body = Array("""
            <Delete><Object><Key>k</Key></Object><Object><Key>k</Key><VersionId>\(v1)</VersionId></Object>\
            <Object><Key>k</Key><VersionId>not-an-id</VersionId></Object></Delete>
            """.utf8)
        let r = s3.call("POST", "/ver?delete", headers: [("Content-MD5", S3Harness.base64MD5(body))], body: body)
        #expect(r.status == 200)
        let deleted = try #require(r.xml).children(named: "Deleted")
        #expect(deleted.count == 2)
        #expect(deleted[0].childText("DeleteMarker") == "true")
        let marker = try #require(deleted[0].childText("DeleteMarkerVersionId"))
        #expect(deleted[1].childText("VersionId") == v1)
        #expect(deleted[1].child("DeleteMarker") == nil)
        #expect(r.xml?.child("Error")?.childText("Code") == "NoSuchVersion")
        let undo = Array("<Delete><Object><Key>k</Key><VersionId>\(marker)</VersionId></Object></Delete>".utf8)
        let again = s3.call("POST", "/ver?delete", headers: [("Content-MD5", S3Harness.base64MD5(undo))], body: undo)
        let entry = again.xml?.child("Deleted")
        #expect(entry?.childText("DeleteMarker") == "true")
        #expect(entry?.childText("DeleteMarkerVersionId") == marker)
        #expect(s3.call("GET", "/ver/k").text == "two")
    }

    @Test func copiesAndVersions() throws {
        let s3 = try versioned()
        let v1 = try #require(put(s3, "src", "one"))
        _ = put(s3, "src", "two")
        let copy = s3.call("PUT", "/ver/dst", headers: [("x-amz-copy-source", "ver/src?versionId=\(v1)")])
        #expect(copy.status == 200)
        #expect(copy.header("x-amz-copy-source-version-id") == v1)
        #expect(copy.header("x-amz-version-id").map(VersionID.isWellFormed) == true)
        #expect(s3.call("GET", "/ver/dst").text == "one")
        // Copying an older version onto its own key makes it current again.
        #expect(s3.call("PUT", "/ver/src", headers: [("x-amz-copy-source", "ver/src?versionId=\(v1)")]).status == 200)
        #expect(s3.call("GET", "/ver/src").text == "one")
        let marker = try #require(s3.call("DELETE", "/ver/src").header("x-amz-version-id"))
        let fromMarker = s3.call("PUT", "/ver/x", headers: [("x-amz-copy-source", "ver/src?versionId=\(marker)")])
        #expect(fromMarker.errorCode == "InvalidRequest")
        #expect(fromMarker.xml?.childText("Message") == "The source of a copy request may not specifically refer to a delete marker by version id.")
        let fromDeleted = s3.call("PUT", "/ver/x", headers: [("x-amz-copy-source", "ver/src")])
        #expect(fromDeleted.errorCode == "NoSuchKey")
        #expect(fromDeleted.header("x-amz-delete-marker") == "true")
        #expect(s3.call("PUT", "/ver/x", headers: [("x-amz-copy-source", "ver/src?versionId=abc")]).errorCode == "InvalidRequest")
        #expect(s3.call("PUT", "/ver/x", headers: [("x-amz-copy-source", "ver/src?versionId=")]).errorCode == "InvalidArgument")
    }

    @Test func multipartCompletionMakesAVersion() throws {
        let s3 = try versioned()
        _ = put(s3, "big", "old")
        let created = s3.call("POST", "/ver/big?uploads")
        let upload = try #require(created.xml?.childText("UploadId"))
        let part = s3.call("PUT", "/ver/big?partNumber=1&uploadId=\(upload)", body: Array("new".utf8))
        let etag = try #require(part.header("ETag"))
        let done = s3.call("POST", "/ver/big?uploadId=\(upload)",
                           body: Array("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\(etag)</ETag></Part></CompleteMultipartUpload>".utf8))
        #expect(done.status == 200)
        #expect(done.header("x-amz-version-id").map(VersionID.isWellFormed) == true)
        #expect(s3.call("GET", "/ver/big").text == "new")
        #expect(listing(s3).count == 2)
    }

    @Test func taggingAVersion() throws {
        let s3 = try versioned()
        let v1 = try #require(put(s3, "k", "one"))
        let v2 = try #require(put(s3, "k", "two"))
        let tags = Array("<Tagging><TagSet><Tag><Key>old</Key><Value>1</Value></Tag></TagSet></Tagging>".utf8)
        let r = s3.call("PUT", "/ver/k?tagging&versionId=\(v1)", body: tags)
        #expect(r.status == 200)
        #expect(r.header("x-amz-version-id") == v1)
        #expect(s3.call("GET", "/ver/k?tagging&versionId=\(v1)").xml?.child("TagSet")?.child("Tag")?.childText("Key") == "old")
        let current = s3.call("GET", "/ver/k?tagging")
        #expect(current.header("x-amz-version-id") == v2)
        #expect(current.xml?.child("TagSet")?.children.isEmpty == true)
        #expect(s3.call("GET", "/ver/k?versionId=\(v1)").header("x-amz-tagging-count") == "1")
    }

    @Test func aNonEmptyHistoryKeepsTheBucket() throws {
        let s3 = try versioned()
        _ = put(s3, "k", "one")
        _ = s3.call("DELETE", "/ver/k")
        let r = s3.call("DELETE", "/ver")
        #expect(r.status == 409)
        #expect(r.errorCode == "BucketNotEmpty")
    }

    @Test func aFailedUploadLeavesTheHistoryAlone() throws {
        let s3 = try versioned()
        let v1 = try #require(put(s3, "k", "original"))
        let r = s3.chunkedPut("/ver/k", payload: S3Harness.bytes(2 << 20), chunkSize: 64 << 10) { body in body[body.count - 70_000] ^= 0xFF }
        #expect(r.status == 403)
        #expect(s3.call("GET", "/ver/k").text == "original")
        #expect(listing(s3) == ["V k \(v1) true"])
    }

    @Test func versionsSurviveAReopenedDatabase() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-versions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("s3.db").path
        var ids: [String] = []
        do {
            let s3 = try S3Harness(database: try HearthSQLite.Database(path: path))
            s3.makeBucket("ver")
            setVersioning(s3, "Enabled")
            ids.append(try #require(put(s3, "k", "one")))
            ids.append(try #require(put(s3, "k", "two")))
        }
        let reopened = try S3Harness(database: try HearthSQLite.Database(path: path))
        #expect(listing(reopened) == ["V k \(ids[1]) true", "V k \(ids[0]) false"])
        #expect(reopened.call("GET", "/ver/k?versionId=\(ids[0])").text == "one")
    }
}
