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

    /// The object the request names, or NoSuchKey.
    private func requireObject(_ ctx: S3Context) -> Result<ObjectRecord, S3Error> {
        if let v = ctx.query("versionId"), v != "null" {
            return .failure(.invalidArgument(message: "Invalid version id specified", name: "versionId", value: v))
        }
        return requireBucket(ctx).flatMap { _ in
            attempt(ctx) { try store.object(bucket: ctx.bucket, key: ctx.key) }.flatMap { o in
                o.map { .success($0) } ?? .failure(.noSuchKey(key: ctx.key))
            }
        }
    }

    /// GetObjectTagging.
    func getObjectTagging(_ ctx: S3Context) -> Result<Response, S3Error> {
        requireObject(ctx).map { object in
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
            return S3Service.xmlResponse(x)
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
            guard (1...128).contains(key.count), value.count <= 256 else {
                return .failure(.invalidRequest(message: "The TagKey you have provided is too long, max 128") )
            }
            if pairs.contains(where: { $0.0 == key }) {
                return .failure(.invalidRequest(message: "Cannot provide multiple Tags with the same key"))
            }
            pairs.append((key, value))
        }
        if pairs.count > S3Service.maxObjectTags {
            return .failure(.invalidRequest(message: "Object tags cannot be greater than 10"))
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
        requireObject(ctx).flatMap { _ in
            attempt(ctx) {
                try database.write { c in
                    try c.run("UPDATE s3_objects SET tagging = ? WHERE bucket = ? AND key = ?", [tagging, ctx.bucket, ctx.key])
                    if c.changes == 0 { throw S3Error.noSuchKey(key: ctx.key) }
                }
                return Response(status: status)
            }
        }
    }
}
