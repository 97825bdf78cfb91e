import HearthCore

/// The headers S3 stores with an object and returns on GET/HEAD.
struct ObjectMetadata: Sendable, Equatable {
    var contentType: String?
    var contentDisposition: String?
    var contentEncoding: String?
    var contentLanguage: String?
    var cacheControl: String?
    var expires: String?
    /// `x-amz-meta-*` names (lower-cased, without the prefix) and values, in the order sent.
    var userMetadata: [Pair] = []
    /// nil means STANDARD.
    var storageClass: String?
    var websiteRedirect: String?
    /// The `x-amz-tagging` query string, as sent.
    var tagging: String?
    /// Settings kept in the `extra` column: ACL, object lock, server-side encryption.
    var extra = ObjectExtra()

    /// One user metadata entry.
    struct Pair: Sendable, Equatable {
        var name: String
        var value: String
    }

    /// The stored JSON form of `userMetadata`: `[["name","value"],…]`.
    var userMetadataJSON: String {
        JSON.array(userMetadata.map { JSON.array([.string($0.name), .string($0.value)]) }).serialized()
    }

    /// Reads `userMetadataJSON` back.
    static func parseUserMetadata(_ text: String) -> [Pair] {
        guard let json = try? JSON.parse(text), let items = json.arrayValue else { return [] }
        return items.compactMap { item in
            guard let pair = item.arrayValue, pair.count == 2, let n = pair[0].stringValue, let v = pair[1].stringValue else { return nil }
            return Pair(name: n, value: v)
        }
    }

    /// The whole metadata as JSON (for multipart uploads, which apply it at completion).
    var json: JSON {
        var o = JSONObject()
        func put(_ k: String, _ v: String?) { if let v { o[k] = .string(v) } }
        put("contentType", contentType)
        put("contentDisposition", contentDisposition)
        put("contentEncoding", contentEncoding)
        put("contentLanguage", contentLanguage)
        put("cacheControl", cacheControl)
        put("expires", expires)
        put("storageClass", storageClass)
        put("websiteRedirect", websiteRedirect)
        put("tagging", tagging)
        o["userMetadata"] = .array(userMetadata.map { JSON.array([.string($0.name), .string($0.value)]) })
        if !extra.isEmpty { o["extra"] = .string(extra.serialized) }
        return .object(o)
    }

    /// Reads `json` back.
    init(json: JSON) {
        contentType = json["contentType"]?.stringValue
        contentDisposition = json["contentDisposition"]?.stringValue
        contentEncoding = json["contentEncoding"]?.stringValue
        contentLanguage = json["contentLanguage"]?.stringValue
        cacheControl = json["cacheControl"]?.stringValue
        expires = json["expires"]?.stringValue
        storageClass = json["storageClass"]?.stringValue
        websiteRedirect = json["websiteRedirect"]?.stringValue
        tagging = json["tagging"]?.stringValue
        userMetadata = ObjectMetadata.parseUserMetadata(json["userMetadata"]?.serialized() ?? "[]")
        extra = ObjectExtra(json["extra"]?.stringValue)
    }

    init() {}
}

/// An object's additional checksum as S3 reports it.
struct ObjectChecksum: Sendable, Equatable {
    var algorithm: ChecksumAlgorithm
    /// Base64, with `-N` for a composite multipart checksum.
    var value: String
    /// `FULL_OBJECT` or `COMPOSITE`.
    var type: String
}

/// One stored object.
struct ObjectRecord: Sendable, Equatable {
    var bucket: String
    var key: String
    var blobID: Int64
    var size: Int64
    /// Quoted, as sent in the `ETag` header.
    var etag: String
    var lastModified: Instant
    var metadata: ObjectMetadata
    var checksum: ObjectChecksum?
    /// Part sizes for an object made by a multipart upload (for `partNumber` reads).
    var partSizes: [Int64]?
    /// The access key that wrote it.
    var owner: String
    /// Its version id; nil for the null version (every object of a bucket that never had versioning).
    var versionID: String? = nil

    /// The version id S3 names it by (`null` for the null version).
    var versionName: String { versionID ?? "null" }

    /// The `Content-Type` S3 answers with (`binary/octet-stream` when none was stored).
    var effectiveContentType: String { metadata.contentType ?? "binary/octet-stream" }
}

/// One bucket.
struct BucketRecord: Sendable, Equatable {
    var name: String
    var region: String
    var owner: String
    var createdAt: Instant
    /// `Enabled`, `Suspended`, or nil for a bucket that never had versioning.
    var versioning: String? = nil
}

/// An in-progress multipart upload.
struct UploadRecord: Sendable, Equatable {
    var uploadID: String
    var bucket: String
    var key: String
    var initiated: Instant
    var owner: String
    var metadata: ObjectMetadata
    var checksumAlgorithm: ChecksumAlgorithm?
    var checksumType: String?
}

/// One uploaded part.
struct PartRecord: Sendable, Equatable {
    var partNumber: Int
    var blobID: Int64
    var size: Int64
    var etag: String
    var lastModified: Instant
    var checksumValue: String?
}
