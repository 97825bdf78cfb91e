import Foundation
import HearthBlobs
import HearthCore
import HearthHTTP

extension S3Service {
    /// Largest key, in UTF-8 bytes.
    static let maxKeyLength = 1024

    /// Checks the key length (KeyTooLongError).
    static func checkKey(_ key: String) -> S3Error? {
        key.utf8.count > maxKeyLength ? .keyTooLong(size: key.utf8.count) : nil
    }

    /// The write condition of `If-None-Match` / `If-Match` on PutObject and CompleteMultipartUpload.
    static func writeCondition(_ ctx: S3Context) -> Result<S3Store.WriteCondition, S3Error> {
        var condition = S3Store.WriteCondition()
        if let inm = ctx.header("If-None-Match") {
            // Conditional writes only know `*` ("only if absent").
            guard inm.trimmingCharacters(in: .whitespaces) == "*" else { return .failure(.notImplemented(header: "If-None-Match")) }
            condition.mustNotExist = true
        }
        if let im = ctx.header("If-Match") { condition.ifMatch = im }
        return .success(condition)
    }

    /// PutObject: validates the headers, then streams the body into a staging blob.
    func putObject(_ ctx: S3Context) -> RequestDisposition {
        if let e = S3Service.checkKey(ctx.key) { return .respond(complete(ctx, .failure(e))) }
        let headers: UploadHeaders
        switch UploadHeaders.parse(ctx, maxSize: configuration.maxObjectSize) {
        case .failure(let e): return .respond(complete(ctx, .failure(e)))
        case .success(let h): headers = h
        }
        let condition: S3Store.WriteCondition
        switch S3Service.writeCondition(ctx) {
        case .failure(let e): return .respond(complete(ctx, .failure(e)))
        case .success(let c): condition = c
        }
        // Refuse before the body is sent (the client may be waiting on `Expect: 100-continue`).
        // Authorization has just read the bucket when it found one; the commit checks it again.
        let bucketSeen = ctx.bucketAccess?.bucket.name == ctx.bucket
        let precheck = attempt(ctx) { () throws -> S3Error? in
            if bucketSeen && !condition.mustNotExist && condition.ifMatch == nil { return nil }
            return try database.read { c in
                guard try S3Store.bucket(c, ctx.bucket) != nil else { return .noSuchBucket(bucket: ctx.bucket) }
                guard condition.mustNotExist || condition.ifMatch != nil else { return nil }
                let existing = try S3Store.object(c, bucket: ctx.bucket, key: ctx.key)
                if condition.mustNotExist, existing != nil { return .preconditionFailed(condition: "If-None-Match") }
                if let im = condition.ifMatch {
                    guard let existing else { return .noSuchKey(key: ctx.key) }
                    if !ETag.matches(im, existing.etag) { return .preconditionFailed(condition: "If-Match") }
                }
                return nil
            }
        }
        switch precheck {
        case .failure(let e), .success(let e?): return .respond(complete(ctx, .failure(e)))
        case .success(nil): break
        }
        var metadata = headers.metadata
        let owner: String
        switch newObjectSettings(ctx, &metadata) {
        case .failure(let e): return .respond(complete(ctx, .failure(e)))
        case .success(let o): owner = o
        }
        let dataKey: BlobDataKey?
        switch sealNew(&metadata.extra, customerKey: S3Service.customerKey(ctx)) {
        case .failure(let e): return .respond(complete(ctx, .failure(e)))
        case .success(let k): dataKey = k
        }
        let algorithm = headers.checksumAlgorithm
        let sealed = metadata
        let consumer = UploadConsumer(service: self, ctx: ctx, headers: headers, checksums: algorithm.map { [$0] } ?? [],
                                      maxSize: configuration.maxObjectSize, dataKey: dataKey) { [self] writer, body in
            let metadata = sealed
            let now = Instant(unixSeconds: clock.now().unixSeconds)
            let etag = S3Service.etag(md5: body.md5, extra: metadata.extra, dataKey: dataKey)
            let checksum = algorithm.flatMap { a in
                body.checksums[a].map { ObjectChecksum(algorithm: a, value: Data($0).base64EncodedString(), type: "FULL_OBJECT") }
            }
            // Every check comes before the first write (the blob's rows), so a PUT that shares a
            // transaction with others needs no savepoint, whose sub-journal copy of each page it
            // first changed (16 KiB) cost about what sharing the COMMIT saved (docs/benchmarks.md).
            let versionID = try commits.perform(savepoint: false) { c in
                let target = try S3Store.storeTarget(c, bucket: ctx.bucket, key: ctx.key, condition: condition)
                let blob = try writer.commit(c)
                let record = ObjectRecord(bucket: ctx.bucket, key: ctx.key, blobID: blob, size: body.size, etag: etag,
                                          lastModified: now, metadata: metadata, checksum: checksum, partSizes: nil,
                                          owner: owner)
                return try S3Store.storeObject(c, record, into: target, newVersionID: newVersionID)
            }
            var h = S3Service.storedObjectHeaders(etag: etag, checksum: checksum, extra: metadata.extra)
            if let versionID { h.add("x-amz-version-id", versionID) }
            let stored = ObjectRecord(bucket: ctx.bucket, key: ctx.key, blobID: 0, size: body.size, etag: etag, lastModified: now,
                                      metadata: metadata, checksum: nil, partSizes: nil, owner: owner)
            if let expiration = expirationHeader(stored) { h.add("x-amz-expiration", expiration) }
            return Response(status: 200, headers: h, body: .empty)
        }
        return .stream(consumer)
    }

    /// The headers of an answer that stored an object: ETag, its checksum, the encryption S3 applies.
    static func storedObjectHeaders(etag: String, checksum: ObjectChecksum?, extra: ObjectExtra = ObjectExtra()) -> HTTPHeaders {
        var h = HTTPHeaders()
        h.add("ETag", etag)
        if let checksum {
            h.add(checksum.algorithm.headerName, checksum.value)
            h.add("x-amz-checksum-type", checksum.type)
        }
        addEncryptionHeaders(&h, extra)
        return h
    }

    /// `x-amz-server-side-encryption` and its companions for an object stored with `extra`.
    static func addEncryptionHeaders(_ h: inout HTTPHeaders, _ extra: ObjectExtra) {
        if let md5 = extra.customerKeyMD5 {
            h.add("x-amz-server-side-encryption-customer-algorithm", "AES256")
            h.add("x-amz-server-side-encryption-customer-key-MD5", md5)
            return
        }
        h.add("x-amz-server-side-encryption", extra.sse ?? "AES256")
        if let key = extra.kmsKeyID { h.add("x-amz-server-side-encryption-aws-kms-key-id", key) }
        if extra.bucketKeyEnabled { h.add("x-amz-server-side-encryption-bucket-key-enabled", "true") }
    }

    // MARK: DeleteObject

    /// DeleteObject's conditions (`If-Match`, `x-amz-if-match-last-modified-time`,
    /// `x-amz-if-match-size`): S3's conditional deletes.
    static func deleteCondition(_ ctx: S3Context) -> S3Store.DeleteCondition {
        S3Store.DeleteCondition(ifMatch: ctx.header("If-Match"),
                                lastModified: ctx.header("x-amz-if-match-last-modified-time").flatMap { HTTPDate.parse($0) ?? Instant(rfc3339: $0) },
                                size: ctx.header("x-amz-if-match-size").flatMap { Int64($0) })
    }

    /// `x-amz-bypass-governance-retention: true`.
    static func bypassGovernance(_ ctx: S3Context) -> Bool {
        ctx.header("x-amz-bypass-governance-retention")?.lowercased() == "true"
    }

    /// DeleteObject: 204 always (a missing key or version is no error). In a versioned bucket the
    /// answer names the version removed or the delete marker made (`x-amz-version-id`,
    /// `x-amz-delete-marker`).
    func deleteObject(_ ctx: S3Context) -> Result<Response, S3Error> {
        S3Service.versionIDParameter(ctx).flatMap { versionID in
            attempt(ctx) {
                let outcome = try store.deleteObject(bucket: ctx.bucket, key: ctx.key, versionID: versionID,
                                                     owner: ctx.ownerKey ?? defaultOwner,
                                                     condition: S3Service.deleteCondition(ctx),
                                                     bypassGovernance: S3Service.bypassGovernance(ctx),
                                                     now: Instant(unixSeconds: clock.now().unixSeconds), lockTime: clock.now(),
                                                     newVersionID: newVersionID)
                var h = HTTPHeaders()
                if outcome.deleteMarker { h.add("x-amz-delete-marker", "true") }
                if let v = outcome.versionID { h.add("x-amz-version-id", v) }
                return Response(status: 204, headers: h, body: .empty)
            }
        }
    }
}
