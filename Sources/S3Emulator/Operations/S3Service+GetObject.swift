import Foundation
import HearthBlobs
import HearthCore
import HearthHTTP

extension S3Service {
    /// The presigned `response-*` parameters and the headers they override.
    static let responseOverrides: [(query: String, header: String)] = [
        ("response-content-type", "Content-Type"), ("response-content-language", "Content-Language"),
        ("response-expires", "Expires"), ("response-cache-control", "Cache-Control"),
        ("response-content-disposition", "Content-Disposition"), ("response-content-encoding", "Content-Encoding"),
    ]

    /// Whether the query has a parameter named `response-…` (decoded names, so exactly the
    /// names `ctx.query` would find): one pass instead of six lookups on every read.
    static func mayOverrideResponse(_ request: Request) -> Bool {
        request.queryItems.contains { item in
            let name = item.name.utf8
            guard name.count > 9 else { return false }
            // On the contiguous bytes: the generic `starts(with:)` walked both UTF-8 views (~0.15k
            // instructions a parameter, six on a presigned request).
            let prefix: StaticString = "response-"
            return name.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, prefix.utf8Start, 9) == 0 }
                ?? name.starts(with: "response-".utf8)
        }
    }

    /// GetObject and HeadObject.
    func getObject(_ ctx: S3Context) -> Result<Response, S3Error> {
        let isHead = ctx.request.method == "HEAD"
        // Reads take no encryption settings (the object's own apply); S3 refuses them.
        if let sse = ctx.header("x-amz-server-side-encryption") {
            return .failure(.invalidArgument(message: "x-amz-server-side-encryption header is not supported for this operation.",
                                             name: "x-amz-server-side-encryption", value: sse))
        }
        let versionID: String?
        switch S3Service.versionIDParameter(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let v): versionID = v
        }
        var partNumber: Int?
        if let p = ctx.query("partNumber") {
            guard let n = Int(p), (1...10_000).contains(n) else {
                return .failure(.invalidArgument(message: "Part number must be an integer between 1 and 10000, inclusive", name: "partNumber", value: p))
            }
            if ctx.header("Range") != nil {
                return .failure(.invalidRequest(message: "Cannot specify both Range header and partNumber query parameter"))
            }
            partNumber = n
        }
        enum Plan {
            case whole, partial(Int64, Int64), notModified, precondition(String), badRange(Int64), badPart(Int)
        }
        var plan = Plan.whole
        let read = attempt(ctx) {
            try store.objectForRead(bucket: ctx.bucket, key: ctx.key, versionID: versionID) { record -> (Int64, Int64)? in
                switch ReadConditions.evaluate(ifMatch: ctx.header("If-Match"), ifUnmodifiedSince: ctx.header("If-Unmodified-Since"),
                                               ifNoneMatch: ctx.header("If-None-Match"), ifModifiedSince: ctx.header("If-Modified-Since"),
                                               etag: record.etag, lastModified: record.lastModified) {
                case .preconditionFailed(let c): plan = .precondition(c); return nil
                case .notModified: plan = .notModified; return nil
                case .proceed: break
                }
                if let n = partNumber {
                    let sizes = record.partSizes ?? [record.size]
                    guard n <= sizes.count else { plan = .badPart(sizes.count); return nil }
                    let start = sizes[..<(n - 1)].reduce(0, +)
                    plan = .partial(start, start + sizes[n - 1] - 1)
                } else {
                    switch ReadConditions.range(ctx.header("Range"), size: record.size) {
                    case .whole: plan = .whole
                    case .partial(let s, let e): plan = .partial(s, e)
                    case .unsatisfiable: plan = .badRange(record.size); return nil
                    }
                }
                if isHead { return nil }
                switch plan {
                case .whole: return (0, record.size)
                case .partial(let s, let e): return (s, e + 1)
                default: return nil
                }
            }
        }
        // The record comes by the found object's reference (as a struct in the outcome it was
        // copied out of the cache, every string retained, and destroyed at the end).
        let found: S3Store.FoundObject
        let body: S3Store.BodyPlan
        switch read {
        case .failure(let e): return .failure(e)
        case .success(.missing):
            if let e = anonymousMissingObjectError(ctx) { return .failure(e) }
            return .failure(versionID.map { .noSuchVersion(key: ctx.key, versionID: $0) } ?? .noSuchKey(key: ctx.key))
        case .success(.deleted(let marker)):
            return .failure(S3Service.deleteMarkerError(marker, key: ctx.key, namedByVersion: false, method: ctx.request.method))
        case .success(.deleteMarker(let marker)):
            return .failure(S3Service.deleteMarkerError(marker, key: ctx.key, namedByVersion: true, method: ctx.request.method))
        case .success(.found(let f, let b)): (found, body) = (f, b)
        }
        let record = found.record, versioned = found.versioned
        // An archived object's bytes are not there to read until it is restored; HEAD still answers.
        if !isHead, let archived = S3Service.archivedClass(record, now: ctx.now) {
            return .failure(.invalidObjectState(message: "The operation is not valid for the object's storage class", storageClass: archived))
        }
        let customerKey: SSECustomerKey?
        let customerPrefix = "x-amz-server-side-encryption-customer-"
        let storedKeyMD5 = record.metadata.extra.customerKeyMD5
        // Most reads carry no SSE-C header: one pass over the names rules them out before
        // `forRead` builds four header names and looks each up.
        let sentKey: Result<SSECustomerKey?, S3Error>
        if ctx.mayHaveHeader(prefix: customerPrefix) {
            sentKey = SSECustomerKey.forRead({ ctx.header($0) }, prefix: customerPrefix, stored: storedKeyMD5)
        } else {
            sentKey = SSECustomerKey.checkRead(stored: storedKeyMD5, sent: nil).map { .failure($0) } ?? .success(nil)
        }
        switch sentKey {
        case .failure(let e): return .failure(e)
        case .success(let key): customerKey = key
        }
        switch plan {
        case .precondition(let c): return .failure(.preconditionFailed(condition: c))
        case .badRange(let size): return .failure(.invalidRange(requested: ctx.header("Range") ?? "", actualSize: size))
        case .badPart(let count): return .failure(.invalidPartNumber(partNumberRequested: partNumber ?? 0, actualPartCount: count))
        case .notModified:
            var h = HTTPHeaders()
            h.add("Last-Modified", record.lastModified.httpDate)
            h.add("ETag", record.etag)
            if versioned { h.add("x-amz-version-id", record.versionName) }
            return .success(Response(status: 304, headers: h, body: .empty))
        case .whole, .partial: break
        }
        var h = objectHeaders(record, ctx: ctx, includeChecksum: partNumber == nil && { if case .whole = plan { true } else { false } }())
        if partNumber != nil, let sizes = record.partSizes {
            h.add("x-amz-mp-parts-count", String(sizes.count))
        }
        // A part read answers that part's checksum.
        if let n = partNumber, let c = record.checksum, let sums = record.metadata.extra.partChecksums, n <= sums.count, !sums[n - 1].isEmpty,
           ctx.header("x-amz-checksum-mode")?.uppercased() == "ENABLED" {
            h.add(c.algorithm.headerName, sums[n - 1])
            h.add("x-amz-checksum-type", c.type)
        }
        h.add("Accept-Ranges", "bytes")
        // A bucket that has (or had) versioning names the version it answered with.
        if versioned { h.add("x-amz-version-id", record.versionName) }
        var status = 200
        var length = record.size
        var rangeStart: Int64 = 0
        if case .partial(let s, let e) = plan {
            status = 206
            length = e - s + 1
            rangeStart = s
            h.add("Content-Range", "bytes \(s)-\(e)/\(record.size)")
        }
        var contentType = record.effectiveContentType
        // Six lookups in the query for every read; only a query naming a `response-` parameter can have any.
        if S3Service.mayOverrideResponse(ctx.request) {
            for (query, header) in S3Service.responseOverrides {
                guard let v = ctx.query(query) else { continue }
                if header == "Content-Type" { contentType = v } else { h.set(header, v) }
            }
        }
        h.add("Content-Type", contentType)
        let responseBody: Response.Body
        switch body {
        case .none: responseBody = .stream(length: length, source: EmptyBodySource())
        case .inline(let bytes): responseBody = .bytes(bytes)
        case .segments(let segments):
            let dataKey: BlobDataKey?
            switch self.dataKey(of: record.metadata.extra, customerKey: customerKey) {
            case .failure(let e): return .failure(e)
            case .success(let k): dataKey = k
            }
            responseBody = .stream(length: length, source: BlobBodySource(database: database, segments: segments,
                                                                          start: rangeStart, end: rangeStart + length, dataKey: dataKey))
        }
        return .success(Response(status: status, headers: h, body: responseBody))
    }

    /// The stored headers of an object as GetObject/HeadObject return them (without
    /// Content-Type, Content-Length and range headers).
    func objectHeaders(_ record: ObjectRecord, ctx: S3Context, includeChecksum: Bool) -> HTTPHeaders {
        var h = HTTPHeaders()
        // Last-Modified, ETag, Accept-Ranges and Content-Type at least, and room for a few more.
        h.reserveCapacity(8 + record.metadata.userMetadata.count)
        h.add("Last-Modified", lastModifiedHeader.value(for: record.lastModified))
        h.add("ETag", record.etag)
        if includeChecksum, let c = record.checksum, ctx.header("x-amz-checksum-mode")?.uppercased() == "ENABLED" {
            h.add(c.algorithm.headerName, c.value)
            h.add("x-amz-checksum-type", c.type)
        }
        let m = record.metadata
        S3Service.addEncryptionHeaders(&h, m.extra)
        if let mode = m.extra.lockMode, let until = m.extra.lockRetainUntil {
            h.add("x-amz-object-lock-mode", mode)
            h.add("x-amz-object-lock-retain-until-date", until)
        }
        if m.extra.legalHold { h.add("x-amz-object-lock-legal-hold", "ON") }
        if let expiration = expirationHeader(record) { h.add("x-amz-expiration", expiration) }
        for pair in m.userMetadata { h.add("x-amz-meta-" + pair.name, MIMEEncodedWord.encode(pair.value)) }
        if let v = m.cacheControl { h.add("Cache-Control", v) }
        if let v = m.contentDisposition { h.add("Content-Disposition", v) }
        if let v = m.contentEncoding { h.add("Content-Encoding", v) }
        if let v = m.contentLanguage { h.add("Content-Language", v) }
        if let v = m.expires { h.add("Expires", v) }
        if let v = m.websiteRedirect { h.add("x-amz-website-redirect-location", v) }
        if let v = m.storageClass { h.add("x-amz-storage-class", v) }
        if let restore = S3Service.restoreHeader(m.extra, now: ctx.now) { h.add("x-amz-restore", restore) }
        if let t = m.tagging {
            let count = t.split(separator: "&").filter { !$0.isEmpty }.count
            if count > 0 { h.add("x-amz-tagging-count", String(count)) }
        }
        return h
    }
}
