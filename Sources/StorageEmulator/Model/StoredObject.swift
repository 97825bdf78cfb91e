import Foundation
import HearthCore

/// One object's live generation, as stored.
struct StoredObject: Sendable, Equatable {
    var bucket: String
    var name: String
    var generation: Int64
    var metageneration: Int64
    var blobID: Int64
    var size: Int64
    var md5: [UInt8]
    var crc32c: UInt32
    var contentType: String?
    var contentEncoding: String?
    var contentDisposition: String?
    var contentLanguage: String?
    var cacheControl: String?
    /// Custom metadata (GCS `metadata`), including `firebaseStorageDownloadTokens`.
    var metadata: [(String, String)]
    var timeCreated: Instant
    var updated: Instant
    /// GCS's `customTime` (the user's own date for lifecycle rules): once set, never removed nor moved earlier.
    var customTime: Instant? = nil
    /// A composite object's number of components (`componentCount`); nil for any other object.
    /// Composite objects have no MD5 (`md5` is empty), only a CRC32C, as in GCS.
    var componentCount: Int64? = nil
    /// The object's legacy ACL; nil for an object stored before ACLs were (its bucket's default
    /// applies, as it did when it was made).
    var acl: [AccessControlEntry]? = nil { didSet { unreadableACL = nil } }
    /// The stored ACL's text when it does not decode (`acl` is then nil): whoever decides by the
    /// ACL denies, and a write of the object puts the text back, until a whole new ACL replaces it.
    var unreadableACL: String? = nil

    static func == (a: StoredObject, b: StoredObject) -> Bool {
        a.bucket == b.bucket && a.name == b.name && a.generation == b.generation && a.metageneration == b.metageneration
    }

    /// The custom metadata key under which Firebase keeps download tokens (comma-separated).
    static let downloadTokensKey = "firebaseStorageDownloadTokens"

    var md5Base64: String { Data(md5).base64EncodedString() }

    var crc32cBase64: String { Self.base64(crc32c: crc32c) }

    /// A CRC32C as GCS prints it: base64 of the four big-endian bytes.
    static func base64(crc32c: UInt32) -> String {
        Data([UInt8(crc32c >> 24), UInt8((crc32c >> 16) & 0xff), UInt8((crc32c >> 8) & 0xff), UInt8(crc32c & 0xff)]).base64EncodedString()
    }

    /// GCS's etag: base64 of the protobuf encoding of (generation, metageneration).
    var etag: String {
        var bytes: [UInt8] = [0x08]
        bytes += Self.varint(UInt64(generation))
        bytes.append(0x10)
        bytes += Self.varint(UInt64(metageneration))
        return Data(bytes).base64EncodedString()
    }

    static func varint(_ v: UInt64) -> [UInt8] {
        var v = v, out: [UInt8] = []
        while v >= 0x80 {
            out.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
        return out
    }

    /// The download tokens Firebase issued for this object.
    var downloadTokens: [String] { tokenFields.map { String(Substring($0)) } }

    /// Whether `token` is one of the object's download tokens (a download URL's check, on every
    /// request): the comma-separated fields compared as bytes in place, as `tokenFields` splits them
    /// (empty fields are no token). Through `tokenFields` and `elementsEqual` it cost ~7k
    /// instructions a download (an array of views, the generic byte-by-byte comparison); in place
    /// it is a scan of the entry's bytes.
    func hasDownloadToken(_ token: String) -> Bool {
        guard !token.isEmpty, let raw = metadata.first(where: { $0.0 == Self.downloadTokensKey })?.1 else { return false }
        let found = raw.utf8.withContiguousStorageIfAvailable { fields in
            token.utf8.withContiguousStorageIfAvailable { t in Self.commaFields(fields, include: t) }
        }
        // Strings that are not stored contiguously (bridged ones, never here) take the general path.
        return (found ?? nil) ?? tokenFields.contains { $0.elementsEqual(token.utf8) }
    }

    /// Whether one of the ','-separated fields of `fields` is exactly the bytes of `token` (not empty).
    private static func commaFields(_ fields: UnsafeBufferPointer<UInt8>, include token: UnsafeBufferPointer<UInt8>) -> Bool {
        var start = 0
        while start <= fields.count {
            var end = start
            while end < fields.count && fields[end] != UInt8(ascii: ",") { end += 1 }
            if end - start == token.count && memcmp(fields.baseAddress! + start, token.baseAddress!, token.count) == 0 { return true }
            start = end + 1
        }
        return false
    }

    /// The comma-separated fields of the tokens entry, split on the byte as Firebase splits it
    /// (splitting by Characters costs ~15k instructions per download).
    private var tokenFields: [Substring.UTF8View] {
        guard let raw = metadata.first(where: { $0.0 == Self.downloadTokensKey })?.1 else { return [] }
        return Substring(raw).utf8.split(separator: UInt8(ascii: ","))
    }

    /// `x-goog-hash`, as GCS sends it with object bytes (a composite object has no MD5 to name).
    var googHash: String { md5.isEmpty ? "crc32c=\(crc32cBase64)" : "crc32c=\(crc32cBase64),md5=\(md5Base64)" }

    /// Bytes of custom metadata keys and values, as GCS counts them against its 8 KiB limit.
    var customMetadataBytes: Int { metadata.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count } }

    /// The custom metadata as a JSON object.
    var metadataJSON: JSON { .object(JSONObject(metadata.map { ($0.0, JSON.string($0.1)) })) }
}
