import Foundation
import HearthCore
import HearthHTTP

extension S3Service {
    /// Which listing API a request uses.
    enum ListingVersion { case v1, v2 }

    /// One page of a listing: keys and common prefixes interleaved in key order.
    struct ListingPage {
        var objects: [ObjectRecord] = []
        var commonPrefixes: [String] = []
        var isTruncated = false
        /// The last key or common prefix in the page (NextMarker / the continuation point).
        var last: String?
        /// Whether `last` is a common prefix.
        var lastIsPrefix = false
    }

    /// One page of current objects after `marker` (a common prefix when `markerIsPrefix`).
    func listPage(bucket: String, prefix: String, delimiter: String, marker: String?, markerIsPrefix: Bool, maxKeys: Int) throws -> ListingPage {
        let markerBytes = marker.map { Array($0.utf8) }
        var start: (bytes: [UInt8], inclusive: Bool)?
        if let markerBytes {
            if markerIsPrefix, let next = S3Store.successor(ofPrefix: markerBytes) {
                start = (next, true)
            } else {
                start = (markerBytes, false)
            }
        }
        let walked = try ListingWalk.walk(
            prefix: prefix, delimiter: delimiter, markerKey: markerBytes, maxKeys: maxKeys, start: start,
            key: { (o: ObjectRecord) in o.key }, seek: { ($0, true) }, after: { (Array($0.key.utf8), false) },
            fetch: { cursor, limit in
                try store.objects(bucket: bucket, prefix: prefix, after: cursor?.bytes, inclusive: cursor?.inclusive ?? false, limit: limit)
            })
        var page = ListingPage(isTruncated: walked.isTruncated)
        for item in walked.items {
            switch item {
            case .entry(let o):
                page.objects.append(o)
                page.last = o.key
                page.lastIsPrefix = false
            case .commonPrefix(let p):
                page.commonPrefixes.append(p)
                page.last = p
                page.lastIsPrefix = true
            }
        }
        return page
    }

    /// `encoding-type` of a listing: true for `url`; any other value is S3's InvalidArgument.
    static func listingURLEncoding(_ ctx: S3Context) -> Result<Bool, S3Error> {
        guard let e = ctx.query("encoding-type") else { return .success(false) }
        guard e == "url" else {
            return .failure(.invalidArgument(message: "Invalid Encoding Method specified in Request", name: "encoding-type", value: e))
        }
        return .success(true)
    }

    /// A listing's page size parameter (`max-keys`, `max-uploads`, `max-parts`): 1000 by default and
    /// at most; not a non-negative integer is S3's InvalidArgument naming the parameter.
    static func pageSize(_ ctx: S3Context, _ name: String) -> Result<Int, S3Error> {
        guard let m = ctx.query(name) else { return .success(1000) }
        guard let n = Int(m), n >= 0 else {
            return .failure(.invalidArgument(message: "Provided \(name) not an integer or within integer range", name: name, value: m))
        }
        return .success(min(n, 1000))
    }

    /// ListObjects (v1) and ListObjectsV2 (the current version of each key).
    func listObjects(_ ctx: S3Context, version: ListingVersion) -> Result<Response, S3Error> {
        let urlEncoded: Bool
        switch S3Service.listingURLEncoding(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let u): urlEncoded = u
        }
        func encode(_ text: String) -> String { urlEncoded ? S3URLEncoding.listingEncode(text) : text }
        let maxKeys: Int
        switch S3Service.pageSize(ctx, "max-keys") {
        case .failure(let e): return .failure(e)
        case .success(let n): maxKeys = n
        }
        let restoreStatus: Bool
        switch S3Service.listingWantsRestoreStatus(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let wanted): restoreStatus = wanted
        }
        let prefix = ctx.query("prefix") ?? ""
        let delimiter = ctx.query("delimiter") ?? ""
        var marker: String?
        var markerIsPrefix = false
        switch version {
        case .v1:
            marker = ctx.query("marker").flatMap { $0.isEmpty ? nil : $0 }
        case .v2:
            if let token = ctx.query("continuation-token"), !token.isEmpty {
                guard let decoded = S3Service.decodeContinuationToken(token) else {
                    return .failure(.invalidArgument(message: "The continuation token provided is incorrect", name: "continuation-token", value: token))
                }
                (marker, markerIsPrefix) = decoded
            } else if let sa = ctx.query("start-after"), !sa.isEmpty {
                marker = sa
            }
        }
        guard case .success(let bucket) = requireBucket(ctx) else { return .failure(.noSuchBucket(bucket: ctx.bucket)) }
        let result = attempt(ctx) {
            try listPage(bucket: bucket.name, prefix: prefix, delimiter: delimiter, marker: marker, markerIsPrefix: markerIsPrefix, maxKeys: maxKeys)
        }
        guard case .success(let page) = result else {
            if case .failure(let e) = result { return .failure(e) }
            return .failure(.internalError)
        }
        let fetchOwner = version != .v2 || ctx.query("fetch-owner") == "true"
        var x = XMLWriter()
        x.group("ListBucketResult", namespace: true) { x in
            x.element("Name", bucket.name)
            // ListObjects (v1) answers its Prefix as sent even with encoding-type=url (botocore
            // decodes it only for v2), as ceph/s3-tests' `test_bucket_list_prefix_unreadable` expects.
            x.element("Prefix", version == .v1 ? prefix : encode(prefix))
            switch version {
            case .v1:
                x.element("Marker", encode(ctx.query("marker") ?? ""))
                if page.isTruncated, !delimiter.isEmpty, let last = page.last { x.element("NextMarker", encode(last)) }
            case .v2:
                if let token = ctx.query("continuation-token") { x.element("ContinuationToken", token) }
                if page.isTruncated, let last = page.last {
                    x.element("NextContinuationToken", S3Service.continuationToken(last, isPrefix: page.lastIsPrefix))
                }
                x.element("KeyCount", String(page.objects.count + page.commonPrefixes.count))
                if let sa = ctx.query("start-after") { x.element("StartAfter", encode(sa)) }
            }
            x.element("MaxKeys", String(maxKeys))
            if !delimiter.isEmpty { x.element("Delimiter", encode(delimiter)) }
            if urlEncoded { x.element("EncodingType", "url") }
            x.element("IsTruncated", page.isTruncated ? "true" : "false")
            for o in page.objects {
                x.group("Contents") { x in
                    x.element("Key", encode(o.key))
                    x.element("LastModified", o.lastModified.rfc3339(fractionDigits: 3))
                    x.element("ETag", o.etag)
                    if let c = o.checksum {
                        x.element("ChecksumAlgorithm", c.algorithm.displayName)
                        x.element("ChecksumType", c.type)
                    }
                    x.element("Size", String(o.size))
                    if fetchOwner { writeOwner(&x, o.owner) }
                    x.element("StorageClass", o.metadata.storageClass ?? "STANDARD")
                    if restoreStatus { S3Service.writeRestoreStatus(&x, o.metadata.extra, now: ctx.now) }
                }
            }
            for p in page.commonPrefixes {
                x.group("CommonPrefixes") { $0.element("Prefix", encode(p)) }
            }
        }
        return .success(S3Service.xmlResponse(x))
    }

    /// An opaque V2 continuation token: where the next page starts.
    static func continuationToken(_ last: String, isPrefix: Bool) -> String {
        Data(((isPrefix ? "P" : "K") + last).utf8).base64EncodedString()
    }

    static func decodeContinuationToken(_ token: String) -> (String, Bool)? {
        guard let data = Data(base64Encoded: token), let text = String(data: data, encoding: .utf8), let kind = text.first,
              kind == "P" || kind == "K" else { return nil }
        return (String(text.dropFirst()), kind == "P")
    }
}
