import Foundation
import HearthCore
import HearthHTTP

extension S3Service {
    /// Most tags an object may carry.
    static let maxObjectTags = 10

    /// The tag pairs of an `x-amz-tagging`-style query string (`a=1&b=2`).
    static func tags(_ tagging: String?) -> [(String, String)] {
        guard let tagging, !tagging.isEmpty else { return [] }
        return Request.parseQuery(tagging, plusAsSpace: true).map { ($0.name, $0.value ?? "") }
    }

    /// The object version a request names (`versionId`, else the current one) and whether its
    /// bucket is versioned; S3's errors for a missing key or version and for a delete marker.
    func requireObject(_ ctx: S3Context) -> Result<(record: ObjectRecord, versioned: Bool), S3Error> {
        S3Service.versionIDParameter(ctx).flatMap { versionID in
            attempt(ctx) { try store.entry(bucket: ctx.bucket, key: ctx.key, versionID: versionID) }.flatMap { found in
                guard let entry = found.entry else {
                    return .failure(versionID.map { .noSuchVersion(key: ctx.key, versionID: $0) } ?? .noSuchKey(key: ctx.key))
                }
                if entry.isDeleteMarker {
                    return .failure(S3Service.deleteMarkerError(entry.record, key: ctx.key, namedByVersion: versionID != nil,
                                                                method: ctx.request.method))
                }
                return .success((entry.record, found.versioned))
            }
        }
    }

    /// `x-amz-version-id` for an answer about `record` (only in a bucket that has had versioning).
    static func versionHeader(_ record: ObjectRecord, versioned: Bool) -> HTTPHeaders {
        var h = HTTPHeaders()
        if versioned { h.add("x-amz-version-id", record.versionName) }
        return h
    }

    /// GetObjectTagging.
    func getObjectTagging(_ ctx: S3Context) -> Result<Response, S3Error> {
        requireObject(ctx).map { found in
            let object = found.record
            var x = XMLWriter()
            x.group("Tagging", namespace: true) { x in
                x.group("TagSet") { x in
                    for (key, value) in S3Service.tags(object.metadata.tagging) {
                        x.group("Tag") { x in
                            x.element("Key", key)
                            x.element("Value", value)
                        }
                    }
                }
            }
            return S3Service.xmlResponse(x, headers: S3Service.versionHeader(object, versioned: found.versioned))
        }
    }

    /// PutObjectTagging: replaces the tag set.
    func putObjectTagging(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        S3Service.taggingQuery(fromXML: body).flatMap { encoded in setTagging(ctx, encoded, status: 200) }
    }

    /// A `<Tagging><TagSet>…` document (PutObjectTagging's body, POST Object's `tagging` field) as
    /// the `x-amz-tagging` query string objects store; nil for an empty tag set.
    static func taggingQuery(fromXML body: [UInt8]) -> Result<String?, S3Error> {
        guard let root = try? S3XMLParser.parse(body), root.name == "Tagging", let set = root.child("TagSet") else {
            return .failure(.malformedXML)
        }
        var pairs: [(String, String)] = []
        for tag in set.children(named: "Tag") {
            guard let key = tag.childText("Key"), let value = tag.childText("Value") else { return .failure(.malformedXML) }
            // S3 answers `InvalidTag` for each of these (as ceph/s3-tests' tagging tests expect).
            guard (1...128).contains(key.count) else { return .failure(.invalidTag(message: "The TagKey you have provided is too long, max 128")) }
            guard value.count <= 256 else { return .failure(.invalidTag(message: "The TagValue you have provided is too long, max 256")) }
            if pairs.contains(where: { $0.0 == key }) {
                return .failure(.invalidTag(message: "Cannot provide multiple Tags with the same key"))
            }
            pairs.append((key, value))
        }
        if pairs.count > S3Service.maxObjectTags {
            return .failure(.invalidTag(message: "Object tags cannot be greater than 10"))
        }
        let encoded = pairs.map { S3URLEncoding.pathEncode($0.0).replacingOccurrences(of: "/", with: "%2F") + "="
            + S3URLEncoding.pathEncode($0.1).replacingOccurrences(of: "/", with: "%2F") }.joined(separator: "&")
        return .success(encoded.isEmpty ? nil : encoded)
    }

    /// DeleteObjectTagging.
    func deleteObjectTagging(_ ctx: S3Context) -> Result<Response, S3Error> {
        setTagging(ctx, nil, status: 204)
    }

    private func setTagging(_ ctx: S3Context, _ tagging: String?, status: Int) -> Result<Response, S3Error> {
        requireObject(ctx).flatMap { found in
            attempt(ctx) {
                try database.write { c in
                    try S3Store.setTagging(c, bucket: ctx.bucket, key: ctx.key, versionID: found.record.versionID ?? "null", tagging: tagging)
                }
                return Response(status: status, headers: S3Service.versionHeader(found.record, versioned: found.versioned), body: .empty)
            }
        }
    }
}
