import Foundation
import HearthCore
import HearthHTTP

extension S3Service {
    /// A fresh version id.
    func newVersionID() -> String { VersionID.make(ids) }

    /// The `versionId` query parameter of an object request: nil when absent; `Version id cannot
    /// be the empty string` / `Invalid version id specified` (400 `InvalidArgument`) as S3 answers
    /// for a value it could not have issued.
    static func versionIDParameter(_ ctx: S3Context) -> Result<String?, S3Error> {
        guard let v = ctx.query("versionId") else { return .success(nil) }
        return checkVersionID(v, name: "versionId").map { $0 }
    }

    /// `null` or an id Hearth issued; else S3's `InvalidArgument` naming `name`.
    static func checkVersionID(_ v: String, name: String) -> Result<String, S3Error> {
        if v.isEmpty { return .failure(.invalidArgument(message: "Version id cannot be the empty string", name: name, value: "")) }
        guard v == "null" || VersionID.isWellFormed(v) else {
            return .failure(.invalidArgument(message: "Invalid version id specified", name: name, value: v))
        }
        return .success(v)
    }

    /// The errors S3 answers for a delete marker: `NoSuchKey` with the marker's headers when it is
    /// the current version, `MethodNotAllowed` when a request names it by its version id.
    static func deleteMarkerError(_ marker: ObjectRecord, key: String, namedByVersion: Bool, method: String) -> S3Error {
        namedByVersion
            ? .deleteMarkerNotAllowed(method: method, versionID: marker.versionName, lastModified: marker.lastModified.httpDate)
            : .deletedKey(key: key, versionID: marker.versionName)
    }

    // MARK: GetBucketVersioning / PutBucketVersioning

    /// `<VersioningConfiguration/>` for a bucket that never had versioning, else its `Status`.
    func getBucketVersioning(_ ctx: S3Context) -> Result<Response, S3Error> {
        requireBucket(ctx).map { bucket in
            var x = XMLWriter()
            if let status = bucket.versioning {
                x.group("VersioningConfiguration", namespace: true) { $0.element("Status", status) }
            } else {
                x.empty("VersioningConfiguration", namespace: true)
            }
            return S3Service.xmlResponse(x)
        }
    }

    /// Sets `Enabled` or `Suspended` (a bucket never goes back to unversioned, as in S3).
    func putBucketVersioning(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        if case .failure(let e) = requireBucket(ctx) { return .failure(e) }
        if let e = S3Service.verifyOptionalIntegrity(ctx, body: body) { return .failure(e) }
        guard let root = try? S3XMLParser.parse(body), root.name == "VersioningConfiguration",
              root.children.allSatisfy({ $0.name == "Status" || $0.name == "MfaDelete" }),
              root.children(named: "Status").count <= 1, root.children(named: "MfaDelete").count <= 1 else { return .failure(.malformedXML) }
        if let mfa = root.childText("MfaDelete") {
            switch mfa {
            case "Disabled": break
            // MFA delete needs an MFA device's code on every request; Hearth has none to check.
            case "Enabled": return .failure(.notImplemented(header: nil))
            default: return .failure(.malformedXML)
            }
        }
        guard let status = root.childText("Status") else { return .failure(.illegalVersioningConfiguration) }
        guard status == "Enabled" || status == "Suspended" else { return .failure(.malformedXML) }
        if status == "Suspended", case .success(.some) = attempt(ctx, { try store.setting(ctx.bucket, kind: S3Service.objectLockKind) }) {
            return .failure(.plain(.invalidBucketState(message: "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.")))
        }
        return attempt(ctx) {
            try store.setVersioning(ctx.bucket, status: status)
            return Response(status: 200)
        }
    }

    // MARK: ListObjectVersions

    /// One page of a version listing.
    struct VersionPage {
        var entries: [S3Store.ListedVersion] = []
        var commonPrefixes: [String] = []
        var isTruncated = false
        /// The last entry (key and version) or common prefix on the page.
        var lastKey: String?
        var lastVersionID: String?
    }

    /// ListObjectVersions: every version and delete marker, by key and newest first, with S3's
    /// paging (`key-marker`, `version-id-marker`), `prefix`, `delimiter`, `max-keys` (versions,
    /// markers and common prefixes all count) and `encoding-type`. Parameters are refused in S3's
    /// order: `max-keys` that is not a number, a version-id marker without a key marker or empty,
    /// then the bucket, then the version-id marker's value, `encoding-type`, a negative `max-keys`.
    func listObjectVersions(_ ctx: S3Context) -> Result<Response, S3Error> {
        var maxKeys = 1000
        if let m = ctx.query("max-keys") {
            guard let n = Int(m) ?? (m.isEmpty ? 1000 : nil) else {
                return .failure(.invalidArgument(message: "Provided max-keys not an integer or within integer range", name: "max-keys", value: m))
            }
            maxKeys = n
        }
        let keyMarker = ctx.query("key-marker").flatMap { $0.isEmpty ? nil : $0 }
        let versionIDMarker = ctx.query("version-id-marker")
        if let v = versionIDMarker {
            guard keyMarker != nil else {
                return .failure(.invalidArgument(message: "A version-id marker cannot be specified without a key marker.",
                                                 name: "version-id-marker", value: v))
            }
            if v.isEmpty {
                return .failure(.invalidArgument(message: "A version-id marker cannot be empty.", name: "version-id-marker", value: ""))
            }
        }
        let bucket: BucketRecord
        switch requireBucket(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let b): bucket = b
        }
        var markerOrdinal: Int64?
        if let keyMarker, let v = versionIDMarker {
            let invalid = S3Error.invalidArgument(message: "Invalid version id specified", name: "version-id-marker", value: v)
            guard v == "null" || VersionID.isWellFormed(v) else { return .failure(invalid) }
            switch attempt(ctx, { try store.versionOrdinal(bucket: bucket.name, key: keyMarker, versionID: v) }) {
            case .failure(let e): return .failure(e)
            case .success(nil): return .failure(invalid)
            case .success(let ordinal?): markerOrdinal = ordinal
            }
        }
        let urlEncoded: Bool
        switch S3Service.listingURLEncoding(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let u): urlEncoded = u
        }
        guard maxKeys >= 0 else { return .failure(.invalidArgument(message: "max-keys cannot be negative", name: "max-keys", value: nil)) }
        let restoreStatus: Bool
        switch S3Service.listingWantsRestoreStatus(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let wanted): restoreStatus = wanted
        }
        maxKeys = min(maxKeys, 1000)
        func encode(_ text: String) -> String { urlEncoded ? S3URLEncoding.listingEncode(text) : text }
        let prefix = ctx.query("prefix") ?? ""
        let delimiter = ctx.query("delimiter") ?? ""
        let pageResult = attempt(ctx) {
            try versionPage(bucket: bucket.name, prefix: prefix, delimiter: delimiter, keyMarker: keyMarker,
                            markerOrdinal: markerOrdinal, maxKeys: maxKeys)
        }
        guard case .success(let page) = pageResult else {
            if case .failure(let e) = pageResult { return .failure(e) }
            return .failure(.internalError)
        }
        var x = XMLWriter()
        x.group("ListVersionsResult", namespace: true) { x in
            x.element("Name", bucket.name)
            x.element("Prefix", encode(prefix))
            x.element("KeyMarker", encode(keyMarker ?? ""))
            x.element("VersionIdMarker", versionIDMarker ?? "")
            if page.isTruncated, let last = page.lastKey {
                x.element("NextKeyMarker", encode(last))
                // After a common prefix the next page starts past the whole prefix: no version id.
                if let v = page.lastVersionID { x.element("NextVersionIdMarker", v) }
            }
            x.element("MaxKeys", String(maxKeys))
            if !delimiter.isEmpty { x.element("Delimiter", encode(delimiter)) }
            if urlEncoded { x.element("EncodingType", "url") }
            x.element("IsTruncated", page.isTruncated ? "true" : "false")
            for listed in page.entries {
                let e = listed.entry
                let o = e.record
                x.group(e.isDeleteMarker ? "DeleteMarker" : "Version") { x in
                    x.element("Key", encode(o.key))
                    x.element("VersionId", o.versionName)
                    x.element("IsLatest", e.isLatest ? "true" : "false")
                    x.element("LastModified", o.lastModified.rfc3339(fractionDigits: 3))
                    if !e.isDeleteMarker {
                        x.element("ETag", o.etag)
                        if let c = o.checksum {
                            x.element("ChecksumAlgorithm", c.algorithm.displayName)
                            x.element("ChecksumType", c.type)
                        }
                        x.element("Size", String(o.size))
                    }
                    writeOwner(&x, o.owner)
                    if !e.isDeleteMarker {
                        x.element("StorageClass", o.metadata.storageClass ?? "STANDARD")
                        // A delete marker has no restore status (S3 leaves it out there too).
                        if restoreStatus { S3Service.writeRestoreStatus(&x, o.metadata.extra, now: ctx.now) }
                    }
                }
            }
            for p in page.commonPrefixes {
                x.group("CommonPrefixes") { $0.element("Prefix", encode(p)) }
            }
        }
        return .success(S3Service.xmlResponse(x))
    }

    /// One page of versions and delete markers after (`keyMarker`, `markerOrdinal`).
    func versionPage(bucket: String, prefix: String, delimiter: String, keyMarker: String?, markerOrdinal: Int64?,
                     maxKeys: Int) throws -> VersionPage {
        typealias Cursor = (key: [UInt8], ordinal: Int64?, inclusive: Bool)
        let markerBytes = keyMarker.map { Array($0.utf8) }
        let start: Cursor? = markerBytes.map { ($0, markerOrdinal, false) }
        func fetch(_ cursor: Cursor?, _ limit: Int) throws -> [S3Store.ListedVersion] {
            try store.versions(bucket: bucket, prefix: prefix, afterKey: cursor?.key, afterOrdinal: cursor?.ordinal,
                               inclusive: cursor?.inclusive ?? false, limit: limit)
        }
        var page = VersionPage()
        guard maxKeys > 0 else {
            // S3 answers `max-keys=0` with an empty page, truncated when there is anything to list.
            page.isTruncated = !(try fetch(start, 1)).isEmpty
            return page
        }
        let walked = try ListingWalk.walk(
            prefix: prefix, delimiter: delimiter, markerKey: markerBytes, maxKeys: maxKeys, start: start,
            key: { (v: S3Store.ListedVersion) in v.entry.record.key }, seek: { ($0, nil, true) },
            after: { (Array($0.entry.record.key.utf8), $0.ordinal, false) }, fetch: fetch)
        page.isTruncated = walked.isTruncated
        for item in walked.items {
            switch item {
            case .entry(let listed):
                page.entries.append(listed)
                page.lastKey = listed.entry.record.key
                page.lastVersionID = listed.entry.record.versionName
            case .commonPrefix(let p):
                page.commonPrefixes.append(p)
                page.lastKey = p
                page.lastVersionID = nil
            }
        }
        return page
    }
}
