import HearthCore
import HearthHTTP

/// The JSON API's bucket resources: `/b` (list, insert), `/b/{b}` (get, patch, update, delete)
/// and its IAM policy (`/b/{b}/iam`, `/b/{b}/iam/testPermissions`).
extension StorageService {
    func handleBucketRequest(_ request: Request, route: StorageRoute) throws(StorageError) -> Response {
        switch (request.method, route) {
        case ("GET", .buckets): return try listBuckets(request)
        case ("POST", .buckets): return try createBucket(request)
        case ("GET", .bucket(let b)): return try getBucket(request, b)
        case ("PATCH", .bucket(let b)), ("PUT", .bucket(let b)): return try changeBucket(request, b, replace: request.method == "PUT")
        case ("DELETE", .bucket(let b)): return try deleteBucket(request, b)
        case ("GET", .iam(let b)): return try getIAMPolicy(b)
        case ("PUT", .iam(let b)): return try setIAMPolicy(request, b)
        case ("GET", .iamTest(let b)): return try testIAMPermissions(request, b)
        default: throw .notFoundRoute(method: request.method, path: request.path)
        }
    }

    /// Whether the answer shows access control (`projection=full`), `otherwise` when the request does not say.
    static func fullProjection(_ request: Request, otherwise: Bool) -> Bool {
        switch request.query("projection") {
        case "full"?: true
        case "noAcl"?: false
        default: otherwise
        }
    }

    /// The bucket, or 404.
    func existingBucket(_ name: String) throws(StorageError) -> StoredBucket {
        guard let b = try read({ c in try StorageStore.bucket(c, name) }) else { throw .noSuchBucket(name) }
        return b
    }

    /// A bucket's `ifMetagenerationMatch` / `ifMetagenerationNotMatch` (412 when one fails; 304 on a read).
    static func checkBucketConditions(_ request: Request, _ b: StoredBucket) throws(StorageError) {
        let p = try Preconditions(query: request.query)
        if let m = p.metagenerationMatch, m != b.metageneration { throw .preconditionFailed }
        if let m = p.metagenerationNotMatch, m == b.metageneration {
            throw request.method == "GET" ? .notModified : .preconditionFailed
        }
    }

    private func listBuckets(_ request: Request) throws(StorageError) -> Response {
        let buckets = try read { c in try StorageStore.buckets(c) }
        let base = baseURL(request)
        let full = Self.fullProjection(request, otherwise: false)
        return .json(.object(["kind": .string("storage#buckets"), "items": .array(buckets.map { $0.gcsResource(base: base, full: full) })]))
    }

    private func createBucket(_ request: Request) throws(StorageError) -> Response {
        let body = try parseJSON(request)
        guard let name = body["name"]?.stringValue else { throw .required("Required field 'name' is missing.") }
        guard ObjectName.isValidBucket(name) else { throw .invalidBucketName(name) }
        let now = clock.now()
        var bucket = StoredBucket(name: name, created: now, updated: now, metageneration: 1, settings: JSONObject(),
                                  acl: nil, defaultObjectAcl: nil, iamPolicy: nil)
        let change = try BucketChange(json: body)
        try change.apply(to: &bucket, replace: true, now: now)
        try applyPredefined(request, to: &bucket)
        try bucket.refuseNewPublicGrants(since: nil)
        let created = try write { c in
            guard try StorageStore.createBucket(c, name, now: now) else { return false }
            try StorageStore.updateBucket(c, bucket)
            return true
        }
        guard created else { throw .bucketExists(name) }
        // As GCS: noAcl unless the resource named an ACL.
        let full = Self.fullProjection(request, otherwise: change.acl != nil || change.defaultObjectAcl != nil)
        return .json(bucket.gcsResource(base: baseURL(request), full: full))
    }

    /// `predefinedAcl` and `predefinedDefaultObjectAcl` (insert, patch, update); refused under uniform access.
    private func applyPredefined(_ request: Request, to bucket: inout StoredBucket) throws(StorageError) {
        if let p = try PredefinedACL(query: "predefinedAcl", of: request.query, scope: .bucket) {
            if bucket.uniformAccess { throw .uniformBucketACL("update") }
            bucket.acl = p.bucketEntries
        }
        if let p = try PredefinedACL(query: "predefinedDefaultObjectAcl", of: request.query, scope: .object) {
            if bucket.uniformAccess { throw .uniformDefaultObjectACL("update") }
            bucket.defaultObjectAcl = p.defaultObjectEntries
        }
    }

    private func getBucket(_ request: Request, _ name: String) throws(StorageError) -> Response {
        let b = try existingBucket(name)
        try Self.checkBucketConditions(request, b)
        return .json(b.gcsResource(base: baseURL(request), full: Self.fullProjection(request, otherwise: false)))
    }

    /// PATCH (merge) or PUT (replace) of a bucket's configuration and ACLs.
    private func changeBucket(_ request: Request, _ name: String, replace: Bool) throws(StorageError) -> Response {
        let change = try BucketChange(json: try parseJSON(request))
        let now = clock.now()
        let updated = try updateBucket(name, request: request) { (b: inout StoredBucket) throws(StorageError) in
            try change.apply(to: &b, replace: replace, now: now)
            try self.applyPredefined(request, to: &b)
        }
        return .json(updated.gcsResource(base: baseURL(request), full: Self.fullProjection(request, otherwise: true)))
    }

    /// Changes a bucket in one transaction (metageneration + 1), honouring its preconditions.
    func updateBucket(_ name: String, request: Request,
                      _ change: @escaping (inout StoredBucket) throws(StorageError) -> Void) throws(StorageError) -> StoredBucket {
        let now = clock.now()
        return try write { c in
            guard var b = try StorageStore.bucket(c, name) else { throw StorageError.noSuchBucket(name) }
            try Self.checkBucketConditions(request, b)
            let old = b
            try change(&b)
            try b.refuseNewPublicGrants(since: old)
            b.metageneration += 1
            b.updated = now
            try StorageStore.updateBucket(c, b)
            return b
        }
    }

    private func deleteBucket(_ request: Request, _ name: String) throws(StorageError) -> Response {
        try write { c in
            guard let b = try StorageStore.bucket(c, name) else { throw StorageError.noSuchBucket(name) }
            try Self.checkBucketConditions(request, b)
            guard try StorageStore.objects(c, bucket: name, prefix: "", after: nil, limit: 1).isEmpty else {
                throw StorageError.bucketNotEmpty(name)
            }
            try c.run("DELETE FROM storage_buckets WHERE name = ?", [name])
        }
        return Response(status: 204)
    }

    // MARK: IAM

    /// The policy; a stored one that does not decode is 500, never the default (a `setIamPolicy` replaces it).
    private func getIAMPolicy(_ name: String) throws(StorageError) -> Response {
        let b = try existingBucket(name)
        if b.unreadable[.iamPolicy] != nil { throw .unreadableStoredState(bucket: name, what: "IAM policy") }
        return .json(b.iamPolicyJSON(projectID: configuration.projectID))
    }

    /// Replaces the bucket's policy. An `etag` in the body must be the current one (412 otherwise),
    /// as GCS's read-modify-write of policies asks.
    private func setIAMPolicy(_ request: Request, _ name: String) throws(StorageError) -> Response {
        let policy = try IAMPolicy(json: try parseJSON(request))
        let updated = try updateBucket(name, request: request) { (b: inout StoredBucket) throws(StorageError) in
            if let etag = policy.etag, etag != b.etag { throw .preconditionFailed }
            b.iamPolicy = policy.stored
        }
        return .json(updated.iamPolicyJSON(projectID: configuration.projectID))
    }

    /// The permissions of those asked that the caller holds: the JSON API's caller is privileged
    /// (a service account with the project's roles), so every Cloud Storage permission; a name that
    /// is not one is 400.
    private func testIAMPermissions(_ request: Request, _ name: String) throws(StorageError) -> Response {
        _ = try existingBucket(name)
        let asked = request.queryItems.filter { $0.name == "permissions" }.compactMap(\.value)
        guard !asked.isEmpty else { throw .required("Required parameter 'permissions' is missing.") }
        for p in asked where !IAMPolicy.storagePermissions.contains(p) {
            throw .invalid("Permission '\(p)' is not a valid Cloud Storage permission.")
        }
        var m: [(String, JSON)] = [("kind", .string("storage#testIamPermissionsResponse"))]
        m.append(("permissions", .array(asked.map { .string($0) })))
        return .json(.object(JSONObject(m)))
    }
}
