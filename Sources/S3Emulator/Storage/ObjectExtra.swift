import HearthCore

/// The per-object settings beyond S3's stored headers, kept together as JSON in the `extra`
/// column (one column, so a new setting needs no migration): the object's ACL grants, its Object
/// Lock retention and legal hold, and how it is encrypted at rest.
struct ObjectExtra: Sendable, Equatable {
    /// The grants beyond the owner's (`AccessControlList.serialized`); nil: private.
    var acl: String?
    /// `GOVERNANCE` or `COMPLIANCE`.
    var lockMode: String?
    /// Until when the retention holds (RFC 3339).
    var lockRetainUntil: String?
    /// Whether a legal hold is on.
    var legalHold = false
    /// `AES256`, `aws:kms`, `aws:kms:dsse`, or nil (the bucket default applies when answering).
    var sse: String?
    /// The KMS key id of `aws:kms`.
    var kmsKeyID: String?
    /// Whether the object's bytes are encrypted with a customer key (SSE-C), and that key's MD5.
    var customerKeyMD5: String?
    /// The object's data key, wrapped (base64 of an AES-256-GCM box) under the key its
    /// encryption names; nil: the bytes are stored as sent.
    var dataKey: String?
    /// Whether an SSE-KMS object uses an S3 Bucket Key (`x-amz-server-side-encryption-bucket-key-enabled`);
    /// recorded and answered, as the key ring has no per-request KMS cost to save.
    var bucketKeyEnabled = false
    /// A multipart object's part checksums (base64, in the upload's algorithm; "" for a part
    /// without one), answered for `partNumber` reads and by GetObjectAttributes.
    var partChecksums: [String]?
    /// When the restored copy of an archived object expires (unix seconds); nil: never restored.
    var restoreExpiry: Int64?
    /// When a restore under way completes (unix seconds) and the tier it was asked at; nil: the
    /// restore completed when accepted (`--s3-restore-time instant`, the default).
    var restoreReadyAt: Int64?
    var restoreTier: String?
    /// Why the stored form could not be read whole (nil: it could). The Object Lock settings
    /// protect data, so an object whose form does not parse, or whose lock settings are not what
    /// Hearth writes, has an unknown protection, never none: it is kept as locked
    /// (`ObjectLock.checkDeletable`, the lifecycle runner) and its settings are not rewritten
    /// (`S3Store.updateExtra`), which would store the defaults in place of what was unreadable.
    var unreadable: String?

    init() {}

    var isEmpty: Bool { self == ObjectExtra() }

    /// The stored form.
    var serialized: String {
        var o = JSONObject()
        func put(_ k: String, _ v: String?) { if let v { o[k] = .string(v) } }
        put("acl", acl)
        put("lockMode", lockMode)
        put("lockRetainUntil", lockRetainUntil)
        if legalHold { o["legalHold"] = .bool(true) }
        put("sse", sse)
        put("kmsKeyID", kmsKeyID)
        put("customerKeyMD5", customerKeyMD5)
        put("dataKey", dataKey)
        if bucketKeyEnabled { o["bucketKeyEnabled"] = .bool(true) }
        if let partChecksums { o["partChecksums"] = .array(partChecksums.map(JSON.string)) }
        if let restoreExpiry { o["restoreExpiry"] = .int(restoreExpiry) }
        if let restoreReadyAt { o["restoreReadyAt"] = .int(restoreReadyAt) }
        put("restoreTier", restoreTier)
        return JSON.object(o).serialized()
    }

    /// Reads `serialized` back (nil: nothing set; unreadable: `unreadable` says why).
    init(_ text: String?) {
        guard let text else { return }
        guard let json = try? JSON.parse(text), json.objectValue != nil else {
            unreadable = "the stored settings are not a JSON object"
            return
        }
        acl = json["acl"]?.stringValue
        // Each lock member looked up once, for its value and for whether it reads whole.
        let mode = json["lockMode"], until = json["lockRetainUntil"], hold = json["legalHold"]
        lockMode = mode?.stringValue
        lockRetainUntil = until?.stringValue
        legalHold = hold?.boolValue ?? false
        sse = json["sse"]?.stringValue
        kmsKeyID = json["kmsKeyID"]?.stringValue
        customerKeyMD5 = json["customerKeyMD5"]?.stringValue
        dataKey = json["dataKey"]?.stringValue
        bucketKeyEnabled = json["bucketKeyEnabled"]?.boolValue ?? false
        partChecksums = json["partChecksums"]?.arrayValue?.compactMap(\.stringValue)
        restoreExpiry = json["restoreExpiry"]?.intValue
        restoreReadyAt = json["restoreReadyAt"]?.intValue
        restoreTier = json["restoreTier"]?.stringValue
        if mode != nil || until != nil || hold != nil { unreadable = Self.unreadableLock(mode, until, hold) }
    }

    /// What is wrong with the Object Lock settings of a stored form, if anything: a mode other
    /// than S3's two, a date that does not parse, one of mode and date without the other (Hearth
    /// writes both or neither), a legal hold that is not a boolean.
    private static func unreadableLock(_ mode: JSON?, _ until: JSON?, _ hold: JSON?) -> String? {
        if let mode, mode.stringValue != "GOVERNANCE" && mode.stringValue != "COMPLIANCE" {
            return "lockMode \(mode.serialized())"
        }
        if let until, until.stringValue.flatMap(ObjectLock.parseDate) == nil { return "lockRetainUntil \(until.serialized())" }
        if (mode == nil) != (until == nil) { return "lockMode and lockRetainUntil: one without the other" }
        if let hold, hold.boolValue == nil { return "legalHold \(hold.serialized())" }
        return nil
    }
}
