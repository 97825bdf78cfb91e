import HearthBlobs
/// What a browser form upload will store and answer, decided from the fields before its file —
/// before a byte of the file is kept.
struct PostObjectPlan {
    /// The object key (after `${filename}`).
    let key: String
    /// The access key that signed the form (or the request); it owns the object.
    let owner: String?
    /// Content-Type, Cache-Control, …, `x-amz-meta-*`, storage class and tags from the fields.
    let metadata: ObjectMetadata
    /// Seals the file's chunks (the form asked for encryption, or the bucket's default does).
    let dataKey: BlobDataKey?
    /// An `x-amz-checksum-<algorithm>` field to verify against the file.
    let declaredChecksum: (algorithm: ChecksumAlgorithm, digest: [UInt8])?
    /// The algorithm whose checksum is stored with the object (declared, or asked for with
    /// `x-amz-checksum-algorithm`).
    let checksumAlgorithm: ChecksumAlgorithm?
    /// A `Content-MD5` field to verify against the file.
    let contentMD5: (text: String, digest: [UInt8])?
    /// The policy's `content-length-range` conditions.
    let lengthRanges: [(min: Int64, max: Int64)]
    /// Where to send the browser afterwards (`success_action_redirect`, or the older `redirect`),
    /// when it is an absolute http(s) URL; S3 ignores a value it cannot interpret.
    let redirect: String?
    /// The status of a successful answer without redirect: 200, 201 (with a `PostResponse`
    /// document) or 204, the default for anything else.
    let status: Int

    /// The redirect target of a form field value, or nil when S3 would ignore it.
    static func redirectTarget(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        let lower = value.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return nil }
        let rest = value.drop { $0 != ":" }.dropFirst(3)
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty, !value.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" }) else { return nil }
        return value
    }

    /// The status `success_action_status` asks for.
    static func successStatus(_ value: String?) -> Int {
        switch value?.trimmingCharacters(in: .whitespaces) {
        case "200": 200
        case "201": 201
        default: 204
        }
    }
}
