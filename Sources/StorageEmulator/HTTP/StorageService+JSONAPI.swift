import Foundation
import HearthCore
import HearthHTTP

/// The Cloud Storage JSON API (`/storage/v1/…`) for server libraries: privileged, no rules.
extension StorageService {
    func handleJSONAPI(_ request: Request, route: StorageRoute) -> Response {
        do throws(StorageError) {
            switch (request.method, route) {
            case (_, .buckets), (_, .bucket), (_, .iam), (_, .iamTest): return try handleBucketRequest(request, route: route)
            case (_, .bucketACL), (_, .defaultObjectACL), (_, .objectACL): return try handleACLRequest(request, route: route)
            case ("GET", .objects(let b)): return try listObjects(request, bucket: b)
            case ("GET", .object(let b, let n)), ("GET", .download(let b, let n)):
                if request.query("alt") == "media" || route == .download(bucket: b, name: n) {
                    return try download(request, bucket: b, name: n, api: .gcs)
                }
                return try getObject(request, bucket: b, name: n)
            case ("PATCH", .object(let b, let n)), ("PUT", .object(let b, let n)):
                return try patchObject(request, bucket: b, name: n, replace: request.method == "PUT")
            case ("DELETE", .object(let b, let n)): return try deleteObject(request, bucket: b, name: n)
            case ("POST", .copy(let verb, let b, let n, let tb, let tn)):
                return try copyObject(request, verb: verb, bucket: b, name: n, toBucket: tb, toName: tn)
            case ("POST", .compose(let b, let n)): return try composeObject(request, bucket: b, name: n)
            case ("POST", .restore(let b, let n)):
                // Hearth keeps no soft-deleted generation (as a bucket whose soft delete is off), so none can come back.
                _ = try existingBucket(b)
                throw .noSuchObject(bucket: b, name: n)
            default:
                return StorageError.notFoundRoute(method: request.method, path: request.path).gcsResponse
            }
        } catch {
            return error.gcsResponse
        }
    }

    // MARK: Objects

    func parseJSON(_ request: Request) throws(StorageError) -> JSON {
        if request.body.isEmpty { return .object([:]) }
        do { return try JSON.parse(request.body) } catch {
            throw .invalid("Invalid JSON payload received. \(error)")
        }
    }

    /// An integer query parameter (`generation`, `sourceGeneration`), nil when absent. Text that is
    /// no integer is a 400: `generation=abc` read as absent made a delete take the live object.
    static func int64(query request: Request, _ name: String) throws(StorageError) -> Int64? {
        guard let raw = request.query(name) else { return nil }
        guard let n = Int64(raw) else { throw .invalid("Invalid value for \(name): \(raw)") }
        return n
    }

    /// `maxResults`: 1000 when absent, at most 1000 and at least 1 (GCS caps a larger page); text
    /// that is no unsigned 32-bit integer (`abc`, `1e3`, `-1`) is a 400, never the default.
    static func maxResults(_ request: Request) throws(StorageError) -> Int {
        guard let raw = request.query("maxResults") else { return 1000 }
        guard let n = UInt32(raw) else { throw .invalid("Invalid value for maxResults: \(raw)") }
        return Int(min(max(n, 1), 1000))
    }

    /// An int64 member of a request body: a JSON integer or its decimal string (proto JSON's form),
    /// nil when absent or null. Anything else is refused: read as "absent", a source's generation
    /// or `ifGenerationMatch` of `1.5` or `"latest"` dropped its condition and composed anyway.
    static func int64(_ v: JSON?, _ name: String) throws(StorageError) -> Int64? {
        guard let v, v != .null else { return nil }
        if let i = v.intValue ?? v.stringValue.flatMap({ Int64($0) }) { return i }
        throw .invalid("Invalid value for '\(name)': \(v).")
    }

    /// The live object, honouring `generation=` (only the live generation is kept) and preconditions.
    func existing(_ request: Request, bucket: String, name: String) throws(StorageError) -> StoredObject {
        let found = try read { c -> StoredObject? in
            guard try StorageStore.bucketExists(c, bucket) else { throw StorageError.noSuchBucket(bucket) }
            return try StorageStore.object(c, bucket: bucket, name: name)
        }
        guard let o = found else { throw .noSuchObject(bucket: bucket, name: name) }
        if let g = try Self.int64(query: request, "generation"), g != o.generation { throw .noSuchObject(bucket: bucket, name: name) }
        try Preconditions(query: request.query).check(o, read: request.method == "GET")
        if request.method == "GET" { try Self.checkETag(request, o) }
        return o
    }

    /// HTTP's ETag preconditions on a read, as GCS answers them: `If-Match` naming none of the
    /// object's ETag is 412, `If-None-Match` naming it is 304 (`*` names any). google-cloud-storage
    /// sends them for `if_etag_match`/`if_etag_not_match` (bare values, comma-separated).
    static func checkETag(_ request: Request, _ o: StoredObject) throws(StorageError) {
        func names(_ header: String) -> Bool {
            header.split(separator: ",").contains { item in
                var v = item.trimmingCharacters(in: .whitespaces)
                if v == "*" { return true }
                if v.hasPrefix("W/") { v.removeFirst(2) }
                return v.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == o.etag
            }
        }
        if let h = request.headers["If-Match"], !names(h) { throw .preconditionFailed }
        if let h = request.headers["If-None-Match"], names(h) { throw .notModified }
    }

    private func getObject(_ request: Request, bucket: String, name: String) throws(StorageError) -> Response {
        if Self.softDeleted(request) {
            _ = try existingBucket(bucket)
            throw .noSuchObject(bucket: bucket, name: name)
        }
        let o = try existing(request, bucket: bucket, name: name)
        return .json(o.gcsResource(base: baseURL(request), access: try accessView(request, bucket: bucket, otherwise: false)))
    }

    /// `softDeleted=true`: the request is about soft-deleted generations, of which Hearth keeps none
    /// (deletes are final, as in a bucket whose soft delete policy is off).
    static func softDeleted(_ request: Request) -> Bool { request.query("softDeleted")?.lowercased() == "true" }

    /// What a `projection=full` answer shows of access control (nil: `noAcl`), `otherwise` when the request does not say.
    func accessView(_ request: Request, bucket: String, otherwise: Bool) throws(StorageError) -> ObjectAccessView? {
        guard Self.fullProjection(request, otherwise: otherwise) else { return nil }
        return ObjectAccessView(bucket: try existingBucket(bucket), owner: objectOwner)
    }

    private func listObjects(_ request: Request, bucket: String) throws(StorageError) -> Response {
        var q = ObjectListing.Query()
        q.prefix = request.query("prefix") ?? ""
        q.delimiter = request.query("delimiter") ?? ""
        q.pageToken = request.query("pageToken")
        q.maxResults = try Self.maxResults(request)
        q.startOffset = request.query("startOffset").flatMap { $0.isEmpty ? nil : $0 }
        q.endOffset = request.query("endOffset").flatMap { $0.isEmpty ? nil : $0 }
        if let glob = request.query("matchGlob"), !glob.isEmpty { q.glob = try NameGlob(glob) }
        // google-cloud-storage sends Python's `True`; Google's APIs read booleans case-insensitively.
        q.includeTrailingDelimiter = request.query("includeTrailingDelimiter")?.lowercased() == "true"
        // `versions=true` lists noncurrent generations too; buckets here never keep any (no
        // object versioning, as a GCS bucket without it), so the live objects are the answer.
        let softDeleted = Self.softDeleted(request)
        let listing = try read { c -> ObjectListing in
            guard try StorageStore.bucketExists(c, bucket) else { throw StorageError.noSuchBucket(bucket) }
            return softDeleted ? ObjectListing() : try ObjectListing.list(c, bucket: bucket, q)
        }
        let base = baseURL(request)
        let access = try accessView(request, bucket: bucket, otherwise: false)
        var m: [(String, JSON)] = [("kind", .string("storage#objects"))]
        if let token = listing.nextPageToken { m.append(("nextPageToken", .string(token))) }
        if !listing.prefixes.isEmpty { m.append(("prefixes", .array(listing.prefixes.map { .string($0) }))) }
        m.append(("items", .array(listing.items.map { $0.gcsResource(base: base, access: access) })))
        return .json(.object(JSONObject(m)))
    }

    private func patchObject(_ request: Request, bucket: String, name: String, replace: Bool) throws(StorageError) -> Response {
        let meta = try ObjectMetadata(json: try parseJSON(request))
        let conditions = try Preconditions(query: request.query)
        let choice = try ObjectACLChoice(query: request.query, acl: meta.acl)
        let owner = objectOwner
        // An ACL named by the body or `predefinedAcl` replaces the object's (refused under uniform access).
        let aclChange: ((StoredBucket, StoredObject) throws(StorageError) -> [AccessControlEntry])? = choice.isLegacyACL
            ? { (b, _) throws(StorageError) in
                if b.uniformAccess { throw .uniformObjectACL("update") }
                return choice.entries(defaultObjectACL: b.defaultObjectACL, owner: owner)
            } : nil
        let updated = try updateMetadata(bucket: bucket, name: name, conditions: conditions, acl: aclChange) { o in
            if replace {
                var fresh = o
                fresh.contentType = nil; fresh.contentEncoding = nil; fresh.contentDisposition = nil
                fresh.contentLanguage = nil; fresh.cacheControl = nil; fresh.metadata = []; fresh.customTime = nil
                meta.apply(to: &fresh, mergeMetadata: false)
                return fresh
            }
            var o = o
            meta.apply(to: &o, mergeMetadata: true)
            return o
        }
        // objects.patch and objects.update answer with projection=full unless told otherwise.
        return .json(updated.gcsResource(base: baseURL(request), access: try accessView(request, bucket: bucket, otherwise: true)))
    }

    /// Changes an object's metadata in one transaction (metageneration + 1). `acl`, when given,
    /// computes the new ACL from the bucket and the object as it is (it throws to refuse).
    func updateMetadata(bucket: String, name: String, conditions: Preconditions,
                        authorize: ((StoredObject, StoredObject) throws(StorageError) -> Void)? = nil,
                        acl: ((StoredBucket, StoredObject) throws(StorageError) -> [AccessControlEntry])? = nil,
                        _ change: @escaping (StoredObject) -> StoredObject) throws(StorageError) -> StoredObject {
        let now = clock.now()
        if let authorize {
            guard let current = try read({ c in try StorageStore.object(c, bucket: bucket, name: name) }) else {
                throw .noSuchObject(bucket: bucket, name: name)
            }
            var next = change(current)
            next.metageneration += 1
            next.updated = now
            try authorize(next, current)
        }
        return try write { c in
            guard let current = try StorageStore.object(c, bucket: bucket, name: name) else {
                throw StorageError.noSuchObject(bucket: bucket, name: name)
            }
            try conditions.check(current)
            var next = change(current)
            try ObjectMetadata.checkCustomTime(from: current, to: next)
            // A PATCH merges keys into those the object has: the limit is on the merged total.
            guard next.customMetadataBytes <= ObjectMetadata.maxCustomMetadataBytes else { throw StorageError.metadataTooLarge }
            if let acl {
                guard let b = try StorageStore.bucket(c, bucket) else { throw StorageError.noSuchBucket(bucket) }
                let changed = try acl(b, current)
                if b.enforcesPublicAccessPrevention,
                   !AccessControlEntry.publicGrants(changed).isSubset(of: AccessControlEntry.publicGrants(current.acl)) {
                    throw StorageError.publicAccessPrevented
                }
                next.acl = changed
            }
            next.metageneration = current.metageneration + 1
            next.updated = now
            try StorageStore.write(c, next)
            return next
        }
    }

    private func deleteObject(_ request: Request, bucket: String, name: String) throws(StorageError) -> Response {
        let conditions = try Preconditions(query: request.query)
        let generation = try Self.int64(query: request, "generation")
        try write { c in
            guard try StorageStore.bucketExists(c, bucket) else { throw StorageError.noSuchBucket(bucket) }
            guard let o = try StorageStore.object(c, bucket: bucket, name: name), generation == nil || generation == o.generation else {
                throw StorageError.noSuchObject(bucket: bucket, name: name)
            }
            try conditions.check(o)
            try StorageStore.delete(c, o)
        }
        return Response(status: 204)
    }

    private func copyObject(_ request: Request, verb: String, bucket: String, name: String, toBucket: String, toName: String) throws(StorageError) -> Response {
        try checkNames(bucket: toBucket, name: toName)
        let source = try read { c in try StorageStore.object(c, bucket: bucket, name: name) }
        guard let source else { throw .noSuchObject(bucket: bucket, name: name) }
        if let g = try Self.int64(query: request, "sourceGeneration"), g != source.generation { throw .noSuchObject(bucket: bucket, name: name) }
        try Preconditions(query: request.query, prefix: "ifSource").check(source)
        let meta = try ObjectMetadata(json: try parseJSON(request))
        var draft = source
        draft.bucket = toBucket
        draft.name = toName
        // A destination resource in the body replaces the source's metadata, as GCS does.
        if request.body.count > 2 {
            draft.contentType = nil; draft.contentEncoding = nil; draft.contentDisposition = nil
            draft.contentLanguage = nil; draft.cacheControl = nil; draft.metadata = []; draft.customTime = nil
            meta.apply(to: &draft, mergeMetadata: false)
            if draft.contentType == nil { draft.contentType = source.contentType }
        }
        // The copy gets the destination bucket's default object ACL unless the request names one.
        let acl = try ObjectACLChoice(query: request.query, parameter: "destinationPredefinedAcl", acl: meta.acl)
        let stored = try store(draft, body: .copy(blobID: source.blobID, size: source.size), conditions: try Preconditions(query: request.query), acl: acl)
        let resource = stored.gcsResource(base: baseURL(request), access: try accessView(request, bucket: toBucket, otherwise: meta.acl != nil))
        guard verb == "rewriteTo" else { return .json(resource) }
        return .json(.object([
            "kind": .string("storage#rewriteResponse"), "totalBytesRewritten": .string(String(stored.size)),
            "objectSize": .string(String(stored.size)), "done": .bool(true), "resource": resource,
        ]))
    }

    private func composeObject(_ request: Request, bucket: String, name: String) throws(StorageError) -> Response {
        try checkNames(bucket: bucket, name: name)
        let body = try parseJSON(request)
        guard let sources = body["sourceObjects"]?.arrayValue, !sources.isEmpty else {
            throw .required("Required field 'sourceObjects' is missing.")
        }
        guard sources.count <= 32 else { throw .invalid("The number of source components provided (\(sources.count)) exceeds the maximum (32).") }
        var parts: [StoredObject] = []
        for s in sources {
            guard let n = s["name"]?.stringValue else { throw .required("Required field 'sourceObjects[].name' is missing.") }
            guard let o = try read({ c in try StorageStore.object(c, bucket: bucket, name: n) }) else {
                throw .noSuchObject(bucket: bucket, name: n)
            }
            if let g = try Self.int64(s["generation"], "sourceObjects[].generation"), g != o.generation {
                throw .noSuchObject(bucket: bucket, name: n)
            }
            if let g = try Self.int64(s["objectPreconditions"]?["ifGenerationMatch"], "sourceObjects[].objectPreconditions.ifGenerationMatch"),
               g != o.generation { throw .preconditionFailed }
            parts.append(o)
        }
        let pieces = parts.map { (blobID: $0.blobID, size: $0.size) }
        let d = try digests(of: pieces)
        let meta = try ObjectMetadata(json: body["destination"] ?? .null)
        // A composite object has a CRC32C but no MD5 (GCS: "composite objects do not have an MD5 hash").
        var draft = draft(bucket: bucket, name: name, metadata: meta, size: pieces.reduce(0) { $0 + $1.size }, md5: [], crc32c: d.crc32c)
        draft.componentCount = parts.reduce(0) { $0 + ($1.componentCount ?? 1) }
        if draft.contentType == nil { draft.contentType = parts[0].contentType }
        let acl = try ObjectACLChoice(query: request.query, parameter: "destinationPredefinedAcl", acl: meta.acl)
        let stored = try store(draft, body: .pieces(pieces), conditions: try Preconditions(query: request.query), acl: acl)
        return .json(stored.gcsResource(base: baseURL(request), access: try accessView(request, bucket: bucket, otherwise: meta.acl != nil)))
    }
}
