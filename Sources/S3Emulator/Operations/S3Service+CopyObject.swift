import Foundation
import HearthBlobs
import HearthCore
import HearthCrypto
import HearthHTTP
import HearthSQLite

extension S3Service {
    /// A parsed `x-amz-copy-source`.
    struct CopySource {
        var bucket: String
        var key: String
        /// `?versionId=`: the version to copy (nil: the current one).
        var versionID: String?
    }

    /// Parses `x-amz-copy-source` (`bucket/key` or `/bucket/key`, URL-encoded, optional
    /// `?versionId=`). A version id S3 could not have issued is `InvalidRequest` "Invalid Request"
    /// for CopyObject and `InvalidArgument` for UploadPartCopy, as S3 answers them.
    static func copySource(_ ctx: S3Context, forPart: Bool = false) -> Result<CopySource, S3Error> {
        let raw = ctx.header("x-amz-copy-source") ?? ""
        let invalid = S3Error.invalidArgument(message: "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
                                              name: "x-amz-copy-source", value: raw)
        var text = raw.trimmingCharacters(in: .whitespaces)
        var versionID: String?
        if let q = text.range(of: "?versionId=") {
            let version = String(text[q.upperBound...])
            text = String(text[..<q.lowerBound])
            if version.isEmpty {
                return .failure(.invalidArgument(message: "Version id cannot be the empty string", name: "x-amz-copy-source", value: ""))
            }
            guard version == "null" || VersionID.isWellFormed(version) else {
                return .failure(forPart ? .invalidArgument(message: "Invalid version id specified", name: "x-amz-copy-source", value: raw)
                                        : .invalidRequest(message: "Invalid Request"))
            }
            versionID = version
        }
        if text.hasPrefix("/") { text.removeFirst() }
        guard let decoded = try? S3Target.decode(text), let slash = decoded.firstIndex(of: "/") else { return .failure(invalid) }
        let bucket = String(decoded[..<slash])
        let key = String(decoded[decoded.index(after: slash)...])
        guard !bucket.isEmpty, !key.isEmpty else { return .failure(invalid) }
        return .success(CopySource(bucket: bucket, key: key, versionID: versionID))
    }

    /// A copy source found, and whether its bucket has had versioning (for
    /// `x-amz-copy-source-version-id`).
    struct FoundSource {
        var record: ObjectRecord
        var versioned: Bool

        /// `x-amz-copy-source-version-id`, answered when the source bucket has had versioning.
        func addHeader(to h: inout HTTPHeaders) {
            if versioned { h.add("x-amz-copy-source-version-id", record.versionName) }
        }
    }

    /// The copy source's record, after its bucket and key (or version) exist and its
    /// `x-amz-copy-source-if-*` conditions hold (CopyObject and UploadPartCopy alike). A source
    /// whose current version is a delete marker is `NoSuchKey` with the marker's headers; one
    /// named as a delete marker by its version id is `InvalidRequest`, as in S3.
    func copySourceRecord(_ ctx: S3Context, _ source: CopySource) -> Result<FoundSource, S3Error> {
        let lookup = attempt(ctx, { () throws -> FoundSource in
            let found = try store.entry(bucket: source.bucket, key: source.key, versionID: source.versionID)
            guard let entry = found.entry else {
                throw source.versionID.map { S3Error.noSuchVersion(key: source.key, versionID: $0) } ?? S3Error.noSuchKey(key: source.key)
            }
            if entry.isDeleteMarker {
                guard source.versionID == nil else {
                    throw S3Error.invalidRequest(message: "The source of a copy request may not specifically refer to a delete marker by version id.")
                }
                throw S3Error.deletedKey(key: source.key, versionID: entry.record.versionName)
            }
            return FoundSource(record: entry.record, versioned: found.versioned)
        })
        guard case .success(let found) = lookup else { return lookup }
        if let archived = S3Service.archivedClass(found.record, now: ctx.now) {
            return .failure(.invalidObjectState(message: "Operation is not valid for the source object's storage class", storageClass: archived))
        }
        if let e = S3Service.copySourceCondition(ctx, found.record) { return .failure(e) }
        return .success(found)
    }

    /// Inside a write transaction: the source version's record as it is now (to check it did not
    /// change since its digest was computed).
    static func currentSource(_ c: Connection, _ source: CopySource) throws -> ObjectRecord? {
        if let versionID = source.versionID {
            guard let entry = try S3Store.version(c, bucket: source.bucket, key: source.key, versionID: versionID), !entry.isDeleteMarker else {
                return nil
            }
            return entry.record
        }
        return try S3Store.object(c, bucket: source.bucket, key: source.key)
    }

    /// The `x-amz-copy-source-if-*` conditions (412 with the header's name when one fails).
    static func copySourceCondition(_ ctx: S3Context, _ source: ObjectRecord) -> S3Error? {
        let seconds = source.lastModified.unixSeconds
        if let im = ctx.header("x-amz-copy-source-if-match") {
            if !ETag.matches(im, source.etag) { return .preconditionFailed(condition: "x-amz-copy-source-If-Match") }
        } else if let d = ctx.header("x-amz-copy-source-if-unmodified-since").flatMap(HTTPDate.parse), seconds > d.unixSeconds {
            return .preconditionFailed(condition: "x-amz-copy-source-If-Unmodified-Since")
        }
        if let inm = ctx.header("x-amz-copy-source-if-none-match") {
            if ETag.matches(inm, source.etag) { return .preconditionFailed(condition: "x-amz-copy-source-If-None-Match") }
        } else if let d = ctx.header("x-amz-copy-source-if-modified-since").flatMap(HTTPDate.parse), seconds <= d.unixSeconds {
            return .preconditionFailed(condition: "x-amz-copy-source-If-Modified-Since")
        }
        return nil
    }

    /// Reads bytes `start..<end` of a blob once, computing its MD5 and optionally one checksum
    /// (copies of multipart objects and part ranges need digests of bytes they do not move).
    func digestBlob(_ blobID: Int64, start: Int64, end: Int64, checksum: ChecksumAlgorithm?,
                    dataKey: BlobDataKey? = nil) throws -> (md5: [UInt8], checksum: [UInt8]?) {
        let segments = try database.read { c in try BlobStore.segments(c, blobID: blobID, start: start, end: end) }
        let source = BlobBodySource(database: database, segments: segments, start: start, end: end, dataKey: dataKey)
        defer { source.close() }
        let md5 = StreamingDigest(.md5)
        let sum = checksum.map(RunningChecksum.init)
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            buffer.withUnsafeBytes { raw in
                let slice = UnsafeRawBufferPointer(rebasing: raw[0..<n])
                md5.update(slice)
                sum?.update(slice)
            }
        }
        return (md5.finalize(), sum?.finalize())
    }

    /// Thrown inside a copy transaction when the source changed after its digest was computed.
    struct SourceChanged: Error {}

    /// CopyObject.
    func copyObject(_ ctx: S3Context) -> Result<Response, S3Error> {
        if let e = S3Service.checkKey(ctx.key) { return .failure(e) }
        let source: CopySource
        switch S3Service.copySource(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let s): source = s
        }
        let directive = (ctx.header("x-amz-metadata-directive") ?? "COPY").uppercased()
        guard directive == "COPY" || directive == "REPLACE" else {
            return .failure(.invalidArgument(message: "Unknown metadata directive.", name: "x-amz-metadata-directive", value: directive))
        }
        let taggingDirective = (ctx.header("x-amz-tagging-directive") ?? "COPY").uppercased()
        guard taggingDirective == "COPY" || taggingDirective == "REPLACE" else {
            return .failure(.invalidArgument(message: "Unknown tagging directive.", name: "x-amz-tagging-directive", value: taggingDirective))
        }
        var requestedAlgorithm: ChecksumAlgorithm?
        if let a = ctx.header("x-amz-checksum-algorithm") {
            guard let algorithm = ChecksumAlgorithm(name: a) else { return .failure(S3Service.unsupportedChecksumAlgorithm) }
            requestedAlgorithm = algorithm
        }
        let requested: ObjectMetadata
        switch UploadHeaders.metadata(from: ctx.request.headers.fields) {
        case .failure(let e): return .failure(e)
        case .success(let m): requested = m
        }
        let condition: S3Store.WriteCondition
        switch S3Service.writeCondition(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let c): condition = c
        }
        if case .failure(let e) = requireBucket(ctx) { return .failure(e) }
        for _ in 0..<3 {
            let sourceRecord: ObjectRecord
            let foundSource: FoundSource
            switch copySourceRecord(ctx, source) {
            case .failure(let e): return .failure(e)
            case .success(let found): (foundSource, sourceRecord) = (found, found.record)
            }
            if sourceRecord.size > configuration.maxObjectSize {
                return .failure(.invalidRequest(message:
                    "The specified copy source is larger than the maximum allowable size for a copy source: \(configuration.maxObjectSize)"))
            }
            let changesSomething = directive == "REPLACE" || ctx.header("x-amz-storage-class") != nil
                || ctx.header("x-amz-website-redirect-location") != nil || ctx.header("x-amz-server-side-encryption") != nil
                || ctx.header("x-amz-server-side-encryption-customer-algorithm") != nil
                || (requestedAlgorithm != nil && requestedAlgorithm != sourceRecord.checksum?.algorithm)
            // Copying an older version onto its own key restores it, which is a change.
            if source.bucket == ctx.bucket && source.key == ctx.key && source.versionID == nil && !changesSomething {
                return .failure(.invalidRequest(message:
                    "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes."))
            }
            var metadata = directive == "REPLACE" ? requested : sourceRecord.metadata
            if directive == "COPY" {
                if ctx.header("x-amz-storage-class") != nil { metadata.storageClass = requested.storageClass }
                if ctx.header("x-amz-website-redirect-location") != nil { metadata.websiteRedirect = requested.websiteRedirect }
            }
            metadata.tagging = taggingDirective == "REPLACE" ? requested.tagging : sourceRecord.metadata.tagging
            // The copy's ACL, lock and encryption come from this request and the destination bucket.
            metadata.extra = ObjectExtra()
            let sourceCustomerKey: SSECustomerKey?
            switch SSECustomerKey.forRead({ ctx.header($0) }, prefix: "x-amz-copy-source-server-side-encryption-customer-",
                                          stored: sourceRecord.metadata.extra.customerKeyMD5) {
            case .failure(let e): return .failure(e)
            case .success(let key): sourceCustomerKey = key
            }
            let owner: String
            switch newObjectSettings(ctx, &metadata) {
            case .failure(let e): return .failure(e)
            case .success(let o): owner = o
            }
            // Encrypted to encrypted keeps the source's data key, wrapped anew under the
            // destination's key, so the chunks are shared as for plain copies; plain to encrypted
            // or back rewrites the bytes once.
            let sourceDataKey: BlobDataKey?
            switch dataKey(of: sourceRecord.metadata.extra, customerKey: sourceCustomerKey) {
            case .failure(let e): return .failure(e)
            case .success(let k): sourceDataKey = k
            }
            let destinationKey: BlobDataKey?
            switch sealNew(&metadata.extra, customerKey: S3Service.customerKey(ctx), reuse: sourceDataKey) {
            case .failure(let e): return .failure(e)
            case .success(let k): destinationKey = k
            }
            let finalMetadata = metadata
            if (sourceDataKey == nil) != (destinationKey == nil) {
                let rewritten = copyRewritten(ctx, source: source, found: foundSource, metadata: finalMetadata, owner: owner,
                                              keys: (sourceDataKey, destinationKey),
                                              checksum: requestedAlgorithm ?? sourceRecord.checksum?.algorithm, condition: condition)
                guard let rewritten else { continue }
                return rewritten
            }
            // A multipart source gets a plain MD5 ETag when copied, and a checksum of the new
            // algorithm needs the bytes: read them once, without holding the writer.
            var etag = sourceRecord.etag
            var checksum = sourceRecord.checksum?.type == "FULL_OBJECT" ? sourceRecord.checksum : nil
            let wantAlgorithm = requestedAlgorithm ?? sourceRecord.checksum?.algorithm
            let needChecksum = wantAlgorithm != nil && checksum?.algorithm != wantAlgorithm
            // An SSE-C or SSE-KMS ETag is no MD5 of the bytes, so either side having one needs the bytes' MD5.
            let derivedETag = S3Service.hasDerivedETag(sourceRecord.metadata.extra) || S3Service.hasDerivedETag(finalMetadata.extra)
            if sourceRecord.partSizes != nil || needChecksum || derivedETag {
                let digest = attempt(ctx) {
                    try digestBlob(sourceRecord.blobID, start: 0, end: sourceRecord.size, checksum: needChecksum ? wantAlgorithm : nil,
                                   dataKey: sourceDataKey)
                }
                switch digest {
                case .failure(let e): return .failure(e)
                case .success(let d):
                    etag = S3Service.etag(md5: d.md5, extra: finalMetadata.extra, dataKey: destinationKey)
                    if let a = wantAlgorithm, let sum = d.checksum {
                        checksum = ObjectChecksum(algorithm: a, value: Data(sum).base64EncodedString(), type: "FULL_OBJECT")
                    }
                }
            }
            let now = Instant(unixSeconds: clock.now().unixSeconds)
            let finalChecksum = checksum
            let finalEtag = etag
            let result = attempt(ctx) { () throws -> String?? in
                do {
                    return try database.write { c in
                        guard let current = try S3Service.currentSource(c, source), current.blobID == sourceRecord.blobID else {
                            throw SourceChanged()
                        }
                        let blob = try BlobStore.copyRange(c, from: current.blobID, start: 0, length: current.size, now: now)
                        let record = ObjectRecord(bucket: ctx.bucket, key: ctx.key, blobID: blob, size: current.size, etag: finalEtag,
                                                  lastModified: now, metadata: finalMetadata, checksum: finalChecksum, partSizes: nil,
                                                  owner: owner)
                        return .some(try S3Store.storeObject(c, record, condition: condition, newVersionID: newVersionID))
                    }
                } catch is SourceChanged {
                    return .none
                }
            }
            let versionID: String?
            switch result {
            case .failure(let e): return .failure(e)
            case .success(.none): continue
            case .success(.some(let v)): versionID = v
            }
            return .success(copyObjectResponse(now: now, etag: finalEtag, checksum: finalChecksum, found: foundSource,
                                               versionID: versionID, extra: finalMetadata.extra))
        }
        return .failure(.internalError)
    }

    /// CopyObject's answer.
    func copyObjectResponse(now: Instant, etag: String, checksum: ObjectChecksum?, found: FoundSource, versionID: String?, extra: ObjectExtra) -> Response {
        var x = XMLWriter()
        x.group("CopyObjectResult", namespace: true) { x in
            x.element("LastModified", now.rfc3339(fractionDigits: 3))
            x.element("ETag", etag)
            if let c = checksum {
                x.element(c.algorithm.xmlName, c.value)
                x.element("ChecksumType", c.type)
            }
        }
        var h = HTTPHeaders()
        found.addHeader(to: &h)
        if let versionID { h.add("x-amz-version-id", versionID) }
        S3Service.addEncryptionHeaders(&h, extra)
        return S3Service.xmlResponse(x, headers: h)
    }

    /// The error S3 gives for an unknown `x-amz-checksum-algorithm`.
    static let unsupportedChecksumAlgorithm = S3Error.invalidRequest(message:
        "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]")
}
