import HearthCore

extension StoredObject {
    /// The GCS JSON API object resource (`storage#object`); `base` is `http://host:port`.
    /// `access` (`projection=full`) adds `owner` and, unless the bucket has uniform access, `acl`.
    func gcsResource(base: String, access: ObjectAccessView? = nil) -> JSON {
        let path = "b/\(StorageURL.encode(bucket))/o/\(StorageURL.encode(name))"
        var m: [(String, JSON)] = [
            ("kind", .string("storage#object")),
            ("id", .string("\(bucket)/\(name)/\(generation)")),
            ("selfLink", .string("\(base)/storage/v1/\(path)")),
            ("mediaLink", .string("\(base)/download/storage/v1/\(path)?generation=\(generation)&alt=media")),
            ("name", .string(name)),
            ("bucket", .string(bucket)),
            ("generation", .string(String(generation))),
            ("metageneration", .string(String(metageneration))),
            ("contentType", .string(contentType ?? "application/octet-stream")),
            ("storageClass", .string("STANDARD")),
            ("size", .string(String(size))),
        ]
        if !md5.isEmpty { m.append(("md5Hash", .string(md5Base64))) }
        m += [
            ("crc32c", .string(crc32cBase64)),
            ("etag", .string(etag)),
            ("timeCreated", .string(timeCreated.rfc3339(fractionDigits: 3))),
            ("updated", .string(updated.rfc3339(fractionDigits: 3))),
            ("timeStorageClassUpdated", .string(timeCreated.rfc3339(fractionDigits: 3))),
        ]
        if let contentEncoding { m.append(("contentEncoding", .string(contentEncoding))) }
        if let contentDisposition { m.append(("contentDisposition", .string(contentDisposition))) }
        if let contentLanguage { m.append(("contentLanguage", .string(contentLanguage))) }
        if let cacheControl { m.append(("cacheControl", .string(cacheControl))) }
        // GCS gives back the microseconds a client set (google-cloud-storage sends them); a whole
        // millisecond keeps the three digits of GCS's other times.
        if let customTime {
            let digits = customTime.unixMicros % 1000 == 0 ? 3 : 6
            m.append(("customTime", .string(customTime.rfc3339(fractionDigits: digits))))
        }
        if let componentCount { m.append(("componentCount", .int(componentCount))) }
        if !metadata.isEmpty { m.append(("metadata", metadataJSON)) }
        if let access {
            m.append(("owner", .object(["entity": .string(access.owner)])))
            // An ACL that does not decode is left out rather than shown as a default it is not.
            if !access.uniform, let acl = try? readableACL(access) { m.append(("acl", .array(acl.map { control($0, base: base) }))) }
        }
        return .object(JSONObject(m))
    }

    /// The ACL in force: the stored one, else (an object older than ACLs) the owner and the bucket's default.
    func objectACL(_ access: ObjectAccessView) -> [AccessControlEntry] {
        acl ?? ObjectACLChoice.bucketDefault.entries(defaultObjectACL: access.defaultObjectACL, owner: access.owner)
    }

    /// The ACL in force, to show or change; 500 when it (or the bucket default it falls back on) does not decode.
    func readableACL(_ access: ObjectAccessView) throws(StorageError) -> [AccessControlEntry] {
        if unreadableACL != nil { throw .unreadableStoredState(bucket: bucket, what: "ACL of object \(name)") }
        if acl == nil && access.defaultObjectACLUnreadable { throw .unreadableStoredState(bucket: bucket, what: "default object ACL") }
        return objectACL(access)
    }

    /// A `storage#objectAccessControl` of this object.
    func control(_ e: AccessControlEntry, base: String) -> JSON {
        let path = "b/\(StorageURL.encode(bucket))/o/\(StorageURL.encode(name))/acl/\(StorageURL.encode(e.entity))"
        var m: [(String, JSON)] = [
            ("kind", .string("storage#objectAccessControl")), ("id", .string("\(bucket)/\(name)/\(generation)/\(e.entity)")),
            ("selfLink", .string("\(base)/storage/v1/\(path)")), ("bucket", .string(bucket)), ("object", .string(name)),
            ("generation", .string(String(generation))), ("entity", .string(e.entity)), ("role", .string(e.role)),
        ]
        m += e.derivedFields
        m.append(("etag", .string(etag)))
        return .object(JSONObject(m))
    }

    /// The Firebase Storage REST API metadata (what the SDKs' `StorageMetadata` decodes):
    /// numbers as strings, `downloadTokens` comma-separated, the tokens left out of `metadata`.
    var firebaseMetadata: JSON {
        var m: [(String, JSON)] = [
            ("name", .string(name)),
            ("bucket", .string(bucket)),
            ("generation", .string(String(generation))),
            ("metageneration", .string(String(metageneration))),
            ("contentType", .string(contentType ?? "application/octet-stream")),
            ("timeCreated", .string(timeCreated.rfc3339(fractionDigits: 3))),
            ("updated", .string(updated.rfc3339(fractionDigits: 3))),
            ("storageClass", .string("STANDARD")),
            ("size", .string(String(size))),
        ]
        if !md5.isEmpty { m.append(("md5Hash", .string(md5Base64))) }
        m += [
            ("contentEncoding", .string(contentEncoding ?? "identity")),
            ("contentDisposition", .string(contentDisposition ?? "inline")),
            ("crc32c", .string(crc32cBase64)),
            ("etag", .string(etag)),
            ("downloadTokens", .string(downloadTokens.joined(separator: ","))),
        ]
        if let contentLanguage { m.append(("contentLanguage", .string(contentLanguage))) }
        if let cacheControl { m.append(("cacheControl", .string(cacheControl))) }
        let custom = metadata.filter { $0.0 != Self.downloadTokensKey }
        if !custom.isEmpty { m.append(("metadata", .object(JSONObject(custom.map { ($0.0, JSON.string($0.1)) })))) }
        return .object(JSONObject(m))
    }
}

/// Percent-encoding of bucket and object names in URLs (everything but RFC 3986 unreserved characters).
enum StorageURL {
    static func encode(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "%" + String(b, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return out
    }
}

private extension String {
    func leftPadded(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
