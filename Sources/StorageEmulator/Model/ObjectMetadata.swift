import Foundation
import HearthCore

/// Writable object fields from a request body (GCS object resource or Firebase metadata JSON).
struct ObjectMetadata: Sendable {
    var contentType: String?
    var contentEncoding: String?
    var contentDisposition: String?
    var contentLanguage: String?
    var cacheControl: String?
    /// `customTime` (RFC 3339); `apply` refuses to remove it or move it earlier.
    var customTime: Instant?
    /// nil: not given. Values null in a PATCH remove the key (`removals`).
    var metadata: [(String, String)]?
    var removals: [String] = []
    /// `"metadata": null`: a PATCH removes every custom key (as GCS's JSON API does).
    var clearsMetadata = false
    /// Whether clearing keeps the Firebase download tokens (the Firebase API, whose clients never see them as metadata).
    var keepsDownloadTokens = false
    var md5Hash: String?
    var crc32c: String?
    var name: String?
    /// The resource's `acl` (nil: not given).
    var acl: [AccessControlEntry]?

    /// GCS's limit on custom metadata (keys and values together).
    static let maxCustomMetadataBytes = 8 * 1024

    init() {}

    init(json: JSON) throws(StorageError) {
        guard case .object(let o) = json else {
            if json == .null { return }
            throw .invalid("The object metadata must be a JSON object.")
        }
        func text(_ key: String) throws(StorageError) -> String? {
            guard let v = o[key], v != .null else { return nil }
            guard let s = v.stringValue else { throw .invalid("Invalid value for '\(key)': a string is required.") }
            return s
        }
        contentType = try text("contentType")
        contentEncoding = try text("contentEncoding")
        contentDisposition = try text("contentDisposition")
        contentLanguage = try text("contentLanguage")
        cacheControl = try text("cacheControl")
        if let t = try text("customTime") {
            guard let instant = Instant(rfc3339: t) else { throw .invalid("Invalid value for 'customTime': '\(t)' is not an RFC 3339 date-time.") }
            customTime = instant
        }
        md5Hash = try text("md5Hash")
        crc32c = try text("crc32c")
        name = try text("name")
        if let list = o["acl"], list != .null { acl = try AccessControlEntry.list(json: list, scope: .object, field: "acl") }
        if case .null? = o["metadata"] { clearsMetadata = true }
        if let m = o["metadata"], m != .null {
            guard case .object(let custom) = m else { throw .invalid("Invalid value for 'metadata': an object is required.") }
            var pairs: [(String, String)] = []
            var bytes = 0
            for (k, v) in custom {
                switch v {
                case .null: removals.append(k)
                case .string(let s): pairs.append((k, s)); bytes += k.utf8.count + s.utf8.count
                case .int(let i): pairs.append((k, String(i))); bytes += k.utf8.count + String(i).utf8.count
                case .bool(let b): pairs.append((k, String(b))); bytes += k.utf8.count + 5
                default: throw .invalid("Invalid value for metadata key '\(k)': a string is required.")
                }
            }
            if bytes > Self.maxCustomMetadataBytes { throw .metadataTooLarge }
            metadata = pairs
        }
    }

    /// Writes the given fields onto `object` (a PATCH merges custom metadata, an upload replaces it).
    func apply(to object: inout StoredObject, mergeMetadata: Bool) {
        if let contentType { object.contentType = contentType }
        if let contentEncoding { object.contentEncoding = contentEncoding }
        if let contentDisposition { object.contentDisposition = contentDisposition }
        if let contentLanguage { object.contentLanguage = contentLanguage }
        if let cacheControl { object.cacheControl = cacheControl }
        if let customTime { object.customTime = customTime }
        if mergeMetadata {
            if clearsMetadata {
                object.metadata = keepsDownloadTokens ? object.metadata.filter { $0.0 == StoredObject.downloadTokensKey } : []
            }
            var merged = object.metadata.filter { k in !removals.contains(k.0) && !(metadata ?? []).contains { $0.0 == k.0 } }
            merged += metadata ?? []
            object.metadata = merged
        } else if let metadata {
            object.metadata = metadata
        }
    }

    /// GCS's rule for `customTime` on a metadata change of one generation: once set, it can be
    /// neither removed nor moved earlier (400 `invalid`).
    static func checkCustomTime(from current: StoredObject, to next: StoredObject) throws(StorageError) {
        guard let old = current.customTime else { return }
        guard let new = next.customTime else { throw .invalid("customTime cannot be removed once set.") }
        guard new >= old else { throw .invalid("customTime cannot be decreased: it is \(old.rfc3339(fractionDigits: 3)).") }
    }

    /// Checks the client's declared hashes against what was received.
    func verify(md5: [UInt8], crc32c crc: UInt32) throws(StorageError) {
        if let md5Hash, md5Hash != Data(md5).base64EncodedString() {
            throw .invalid("Provided MD5 hash \"\(md5Hash)\" doesn't match calculated MD5 hash \"\(Data(md5).base64EncodedString())\".")
        }
        let crcText = StoredObject.base64(crc32c: crc)
        if let crc32c, crc32c != crcText {
            throw .invalid("Provided CRC32C \"\(crc32c)\" doesn't match calculated CRC32C \"\(crcText)\".")
        }
    }
}

/// GCS's preconditions (`ifGenerationMatch`, `ifGenerationNotMatch`, `ifMetagenerationMatch`,
/// `ifMetagenerationNotMatch`); a failed one is 412 `conditionNotMet`.
struct Preconditions: Sendable {
    var generationMatch: Int64?
    var generationNotMatch: Int64?
    var metagenerationMatch: Int64?
    var metagenerationNotMatch: Int64?

    /// Reads them from the query (`prefix` "ifSource" for a copy's source object).
    init(query: (String) -> String?, prefix: String = "if") throws(StorageError) {
        func number(_ name: String) throws(StorageError) -> Int64? {
            guard let raw = query(prefix + name) else { return nil }
            guard let n = Int64(raw), n >= 0 else { throw .invalid("Invalid value for \(prefix + name): \(raw)") }
            return n
        }
        generationMatch = try number("GenerationMatch")
        generationNotMatch = try number("GenerationNotMatch")
        metagenerationMatch = try number("MetagenerationMatch")
        metagenerationNotMatch = try number("MetagenerationNotMatch")
    }

    init(json: JSON) {
        generationMatch = json["ifGenerationMatch"]?.intValue
        generationNotMatch = json["ifGenerationNotMatch"]?.intValue
        metagenerationMatch = json["ifMetagenerationMatch"]?.intValue
        metagenerationNotMatch = json["ifMetagenerationNotMatch"]?.intValue
    }

    var json: JSON {
        var m: [(String, JSON)] = []
        if let generationMatch { m.append(("ifGenerationMatch", .int(generationMatch))) }
        if let generationNotMatch { m.append(("ifGenerationNotMatch", .int(generationNotMatch))) }
        if let metagenerationMatch { m.append(("ifMetagenerationMatch", .int(metagenerationMatch))) }
        if let metagenerationNotMatch { m.append(("ifMetagenerationNotMatch", .int(metagenerationNotMatch))) }
        return .object(JSONObject(m))
    }

    /// Throws 412 unless every condition holds for `current` (nil: the object does not exist). On a
    /// read (`GET` of metadata or bytes) a failed `…NotMatch` is 304 Not Modified instead, as HTTP's
    /// `If-None-Match` is and as GCS (and its testbench) answer it.
    func check(_ current: StoredObject?, read: Bool = false) throws(StorageError) {
        let generation = current?.generation ?? 0
        if let generationMatch, generation != generationMatch { throw .preconditionFailed }
        if let metagenerationMatch, current?.metageneration != metagenerationMatch { throw .preconditionFailed }
        let notMatchFailed: StorageError = read ? .notModified : .preconditionFailed
        if let generationNotMatch, generation == generationNotMatch { throw notMatchFailed }
        if let metagenerationNotMatch, let current, current.metageneration == metagenerationNotMatch { throw notMatchFailed }
    }
}
