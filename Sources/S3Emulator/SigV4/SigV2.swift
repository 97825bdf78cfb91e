import Foundation
import HearthCrypto

/// Signature Version 2, for the `--s3-allow-sigv2` mode (by default Hearth refuses SigV2 as S3 does
/// for buckets created since 2020).
///
/// ```
/// StringToSign = METHOD\n Content-MD5\n Content-Type\n Date|Expires\n CanonicalizedAmzHeaders CanonicalizedResource
/// Signature    = Base64(HMAC-SHA1(secret, StringToSign))
/// ```
/// Related: "Signing and Authenticating REST Requests" (S3 API reference, SigV2).
enum SigV2 {
    /// The query parameters that are part of the canonicalized resource (the S3 sub-resources and
    /// response overrides), as S3 and botocore list them.
    static let subresources: Set<String> = [
        "accelerate", "acl", "analytics", "cors", "defaultObjectAcl", "delete", "encryption", "intelligent-tiering",
        "inventory", "legal-hold", "lifecycle", "location", "logging", "metrics", "notification", "object-lock",
        "ownershipControls", "partNumber", "policy", "policyStatus", "publicAccessBlock", "replication",
        "requestPayment", "response-cache-control", "response-content-disposition", "response-content-encoding",
        "response-content-language", "response-content-type", "response-expires", "restore", "retention", "select",
        "select-type", "storageClass", "tagging", "torrent", "uploadId", "uploads", "versionId", "versioning",
        "versions", "website",
    ]

    /// The string to sign.
    /// - Parameters:
    ///   - headers: lower-cased header names with values.
    ///   - resourceBucket: the bucket when it is addressed by host name (virtual-hosted style), which
    ///     SigV2 puts in front of the path.
    ///   - expires: the presigned `Expires` value, which takes the Date line's place.
    static func stringToSign(method: String, rawPath: String, query: QueryParameters, headers: [(name: String, value: String)],
                             resourceBucket: String?, expires: String?) -> String {
        func header(_ name: String) -> String? {
            let values = headers.filter { $0.name == name }.map { CanonicalRequest.trimmed($0.value) }
            return values.isEmpty ? nil : values.joined(separator: ",")
        }
        // For query authentication botocore moves Content-Type/MD5 and x-amz-* headers into the
        // URL; an actual header, when sent, is what S3 reads.
        func headerOrQuery(_ name: String) -> String {
            if let value = header(name) { return value }
            if expires != nil, let value = query.items.first(where: { $0.name.lowercased() == name })?.value { return value }
            return ""
        }
        var out = method + "\n"
        out += headerOrQuery("content-md5") + "\n"
        out += headerOrQuery("content-type") + "\n"
        if let expires {
            out += expires + "\n"
        } else if header("x-amz-date") != nil {
            out += "\n"
        } else {
            out += (header("date") ?? "") + "\n"
        }
        var amz: [String: String] = [:]
        for field in headers where field.name.hasPrefix("x-amz-") {
            let value = CanonicalRequest.trimmed(field.value)
            amz[field.name] = amz[field.name].map { $0 + "," + value } ?? value
        }
        if expires != nil {
            for item in query.items {
                let name = item.name.lowercased()
                if name.hasPrefix("x-amz-") && amz[name] == nil { amz[name] = item.value }
            }
        }
        for name in amz.keys.sorted() { out += "\(name):\(amz[name] ?? "")\n" }
        out += canonicalizedResource(rawPath: rawPath, query: query, resourceBucket: resourceBucket)
        return out
    }

    /// `/bucket/key?sub=resources`: the path as sent (after the bucket when virtual-hosted; a bare
    /// bucket gets its trailing slash), then the sub-resources sorted by name with decoded values.
    static func canonicalizedResource(rawPath: String, query: QueryParameters, resourceBucket: String?) -> String {
        var resource = ""
        if let resourceBucket { resource = "/" + resourceBucket }
        resource += rawPath.isEmpty ? "/" : rawPath
        // A bucket without a key is `/bucket/`, path-style too (botocore signs it so, and S3 agrees).
        if resource.count > 1, !resource.dropFirst().contains("/") { resource += "/" }
        let subs = query.items.filter { subresources.contains($0.name) }
            .map { item -> (String, String) in
                guard let raw = item.rawValue else { return (item.name, item.name) }
                return (item.name, item.name + "=" + SigV4Encoding.decode(raw, plusAsSpace: false))
            }
            .sorted { $0.0 < $1.0 }
        if !subs.isEmpty { resource += "?" + subs.map(\.1).joined(separator: "&") }
        return resource
    }

    /// Base64 HMAC-SHA1 of `stringToSign` under `secret`.
    static func signature(secret: String, stringToSign: String) -> String {
        Data(HMAC.sha1(key: Array(secret.utf8), data: Array(stringToSign.utf8))).base64EncodedString()
    }

    /// Whether `provided` is the signature, compared in constant time.
    static func matches(expected: String, provided: String) -> Bool {
        ConstantTime.equals(expected, provided)
    }
}
