import HearthHTTP
import Testing
@testable import S3Emulator

@Suite struct RoutingTests {
    static let hosts = ["localhost", "s3.localhost", "127.0.0.1.nip.io"]

    @Test(arguments: [
        ("127.0.0.1:9000", "/", nil, nil, false),
        ("127.0.0.1:9000", "/bkt", "bkt", nil, false),
        ("127.0.0.1:9000", "/bkt/", "bkt", nil, false),
        ("127.0.0.1:9000", "/bkt/a/b%20c", "bkt", "a/b c", false),
        ("127.0.0.1:9000", "/bkt//double", "bkt", "/double", false),
        ("127.0.0.1:9000", "/bkt/a%2Fb", "bkt", "a/b", false),
        ("localhost:9000", "/bkt/k", "bkt", "k", false),
        ("s3.localhost:9000", "/bkt/k", "bkt", "k", false),
        ("photos.localhost:9000", "/k/x", "photos", "k/x", true),
        ("photos.s3.localhost", "/", "photos", nil, true),
        ("my.dotted.bucket.s3.localhost:9000", "/k", "my.dotted.bucket", "k", true),
        ("Photos.LocalHost:9000", "/k", "photos", "k", true),
        ("bkt.127.0.0.1.nip.io:9000", "/k", "bkt", "k", true),
        ("[::1]:9000", "/bkt/k", "bkt", "k", false),
        ("example.com", "/bkt/k", "bkt", "k", false),
        // The path splits at its first `/` byte, also next to raw UTF-8 and a combining mark.
        ("127.0.0.1:9000", "/bkt/caf\u{E9}/\u{301}x", "bkt", "caf\u{E9}/\u{301}x", false),
        ("127.0.0.1:9000", "/b%C3%A9/\u{301}", "b\u{E9}", "\u{301}", false),
        ("127.0.0.1:9000", "/bkt/\u{301}", "bkt", "\u{301}", false),
    ] as [(String, String, String?, String?, Bool)])
    func targets(host: String, path: String, bucket: String?, key: String?, virtual: Bool) throws {
        let request = Request(method: "GET", rawPath: path, headers: ["Host": host])
        let target = try S3Target.resolve(request, endpointHosts: Self.hosts)
        #expect(target == S3Target(bucket: bucket, key: key, virtualHosted: virtual))
        // The service prepares the host names once; in any configured order and case they match alike.
        let prepared = S3Target.matchOrder(Self.hosts.reversed().map { $0.uppercased() })
        #expect(try S3Target.resolve(request, matchingHosts: prepared) == target)
    }

    @Test func matchOrderPutsLongerNamesFirstLowerCased() {
        #expect(S3Target.matchOrder(["LocalHost", "S3.localhost", "a.s3.localhost"]) == ["a.s3.localhost", "s3.localhost", "localhost"])
        // `b.s3.localhost` is bucket `b` of `s3.localhost`, not bucket `b.s3` of `localhost`.
        #expect(S3Target.virtualHostBucket("B.S3.localhost:9000", matchingHosts: S3Target.matchOrder(["localhost", "s3.localhost"])) == "b")
    }

    @Test(arguments: ["/bkt/%zz", "/bkt/%C3", "/bkt/a%00b", "no-slash"])
    func invalidURIs(path: String) {
        let request = Request(method: "GET", rawPath: path, headers: ["Host": "127.0.0.1"])
        #expect(throws: S3Target.Failure.invalidURI) { try S3Target.resolve(request, endpointHosts: Self.hosts) }
    }

    @Test(arguments: [
        ("GET", "/", "", S3Operation.listBuckets),
        ("PUT", "/b", "", .createBucket),
        ("HEAD", "/b", "", .headBucket),
        ("DELETE", "/b", "", .deleteBucket),
        ("GET", "/b", "", .listObjectsV1),
        ("GET", "/b", "list-type=2&prefix=a", .listObjectsV2),
        ("GET", "/b", "location", .getBucketLocation),
        ("GET", "/b", "uploads", .listMultipartUploads),
        ("GET", "/b", "versions", .listObjectVersions),
        ("GET", "/b", "versioning", .getBucketVersioning),
        ("POST", "/b", "delete", .deleteObjects),
        ("PUT", "/b/k", "", .putObject),
        ("GET", "/b/k", "", .getObject),
        ("GET", "/b/k", "X-Amz-Signature=abc&response-content-type=x", .getObject),
        ("HEAD", "/b/k", "partNumber=1", .headObject),
        ("DELETE", "/b/k", "", .deleteObject),
        ("POST", "/b/k", "uploads", .createMultipartUpload),
        ("PUT", "/b/k", "partNumber=1&uploadId=u", .uploadPart),
        ("POST", "/b/k", "uploadId=u", .completeMultipartUpload),
        ("DELETE", "/b/k", "uploadId=u", .abortMultipartUpload),
        ("GET", "/b/k", "uploadId=u", .listParts),
        ("GET", "/b/k", "acl", .getObjectACL),
        ("POST", "/b/k", "restore", .restoreObject),
    ] as [(String, String, String, S3Operation)])
    func operations(method: String, path: String, query: String, expected: S3Operation) throws {
        let request = Request(method: method, rawPath: path, rawQuery: query, headers: ["Host": "127.0.0.1"])
        let target = try S3Target.resolve(request, endpointHosts: Self.hosts)
        #expect(try S3Operation.resolve(request, target: target).get() == expected)
    }

    @Test func copyHeaderSelectsCopyOperations() throws {
        let request = Request(method: "PUT", rawPath: "/b/k", headers: ["Host": "h", "x-amz-copy-source": "/a/b"])
        let target = try S3Target.resolve(request, endpointHosts: [])
        #expect(try S3Operation.resolve(request, target: target).get() == .copyObject)
        let part = Request(method: "PUT", rawPath: "/b/k", rawQuery: "partNumber=2&uploadId=x", headers: ["Host": "h", "x-amz-copy-source": "/a/b"])
        #expect(try S3Operation.resolve(part, target: target).get() == .uploadPartCopy)
    }

    @Test(arguments: [("PUT", "/b/k", "renameObject"), ("GET", "/b/k", "restore"), ("PUT", "/b", "replication"), ("GET", "/b/k", "torrent")])
    func unsupportedSubresources(method: String, path: String, query: String) throws {
        let request = Request(method: method, rawPath: path, rawQuery: query, headers: ["Host": "h"])
        let target = try S3Target.resolve(request, endpointHosts: [])
        guard case .failure(let e) = S3Operation.resolve(request, target: target) else {
            Issue.record("expected an error")
            return
        }
        #expect(e.code == "NotImplemented")
    }
}

@Suite struct SubresourceFilterTests {
    /// The cheap pre-check never rules out a real sub-resource, and rules out the presigned
    /// URL's parameters it exists for.
    @Test func passesEverySubresourceAndRulesOutSigningParameters() {
        for name in S3Operation.subresources { #expect(S3Operation.mayBeSubresource(name), "\(name)") }
        for name in ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
                     "X-Amz-Signature", "", "a", "Acl", "1acl"] {
            #expect(!S3Operation.mayBeSubresource(name), "\(name)")
        }
    }
}
