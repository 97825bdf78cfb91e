import HearthCore

/// The writable fields of a bucket resource in a create, PATCH or PUT body, checked, and how
/// they change a bucket.
///
/// A PATCH merges as Google's JSON APIs do (RFC 7396: objects member by member, `null` removes,
/// arrays and scalars replace), so `{"labels": {"a": null}}` removes one label; a PUT (and a
/// create) replaces every setting with what the body names.
struct BucketChange: Sendable {
    var settings: [(String, JSON)] = []
    var acl: [AccessControlEntry]?
    var defaultObjectAcl: [AccessControlEntry]?

    /// Uniform bucket-level access can be turned off again for 90 days after it is turned on.
    static let uniformAccessLockDays: Int64 = 90

    init(json: JSON) throws(StorageError) {
        guard let body = json.objectValue else { throw .invalid("The bucket resource must be a JSON object.") }
        for (k, v) in body where StoredBucket.settingKeys.contains(k) { settings.append((k, v)) }
        if let list = body["acl"], list != .null { acl = try AccessControlEntry.list(json: list, scope: .bucket, field: "acl") }
        if let list = body["defaultObjectAcl"], list != .null {
            defaultObjectAcl = try AccessControlEntry.list(json: list, scope: .object, field: "defaultObjectAcl")
        }
    }

    /// Applies the change to `bucket` (not its metageneration), checking the result.
    func apply(to bucket: inout StoredBucket, replace: Bool, now: Instant) throws(StorageError) {
        // A merge into settings that do not decode would write their default over what the row
        // says (public access prevention, a locked uniform access); a PUT replaces them whole.
        if !replace && bucket.unreadable[.settings] != nil { throw .unreadableStoredState(bucket: bucket.name, what: "settings") }
        let before = bucket.settings
        var next = replace ? JSONObject() : bucket.settings
        for (k, v) in settings where k != "iamConfiguration" {
            if replace {
                if v != .null { next[k] = v }
            } else {
                next[k] = Self.mergePatch(next[k], v)
            }
        }
        let iam = settings.first { $0.0 == "iamConfiguration" }?.1
        next["iamConfiguration"] = try Self.iamConfiguration(old: before["iamConfiguration"], given: iam, replace: replace, now: now)
        try Self.check(next)
        bucket.settings = next
        if let acl { bucket.acl = acl }
        if let defaultObjectAcl { bucket.defaultObjectAcl = defaultObjectAcl }
        if bucket.uniformAccess {
            if acl != nil { throw .uniformBucketACL("update") }
            if defaultObjectAcl != nil { throw .uniformDefaultObjectACL("update") }
        }
    }

    /// RFC 7396's merge of `patch` into `target` (nil: remove the member).
    static func mergePatch(_ target: JSON?, _ patch: JSON) -> JSON? {
        guard case .object(let p) = patch else { return patch == .null ? nil : patch }
        var out = target?.objectValue ?? JSONObject()
        for (k, v) in p { out[k] = mergePatch(out[k], v) }
        return .object(out)
    }

    /// The stored `iamConfiguration` after a change: uniform access (given as
    /// `uniformBucketLevelAccess`, or its old name `bucketPolicyOnly`) with the time it locks,
    /// and public access prevention.
    static func iamConfiguration(old: JSON?, given: JSON?, replace: Bool, now: Instant) throws(StorageError) -> JSON? {
        let wasOn = old?["uniformBucketLevelAccess"]?["enabled"]?.boolValue == true
        if given == nil && !replace { return old }
        if let given, given != .null, given.objectValue == nil { throw .invalid("Invalid value for 'iamConfiguration': an object is required.") }
        let requested = given?["uniformBucketLevelAccess"]?["enabled"] ?? given?["bucketPolicyOnly"]?["enabled"]
        if let requested, requested.boolValue == nil { throw .invalid("Invalid value for 'iamConfiguration.uniformBucketLevelAccess.enabled'.") }
        let on = requested?.boolValue ?? (replace ? false : wasOn)
        var ubla: JSONObject = ["enabled": .bool(on)]
        if on {
            ubla["lockedTime"] = wasOn ? old?["uniformBucketLevelAccess"]?["lockedTime"]
                : .string(Instant(unixMicros: now.unixMicros + uniformAccessLockDays * 86_400_000_000).rfc3339(fractionDigits: 3))
        } else if wasOn, let locked = old?["uniformBucketLevelAccess"]?["lockedTime"]?.stringValue.flatMap(Instant.init(rfc3339:)),
                  now >= locked {
            throw .invalid("Uniform bucket-level access cannot be disabled: it was locked at \(locked.rfc3339(fractionDigits: 3)).")
        }
        var prevention = old?["publicAccessPrevention"] ?? .string("inherited")
        if replace { prevention = .string("inherited") }
        if let p = given?["publicAccessPrevention"], p != .null {
            switch p.stringValue {
            case "inherited"?, "unspecified"?: prevention = .string("inherited")
            case "enforced"?: prevention = .string("enforced")
            default: throw .invalid("Invalid value for 'iamConfiguration.publicAccessPrevention': \(p).")
            }
        }
        return .object(["uniformBucketLevelAccess": .object(ubla), "publicAccessPrevention": prevention])
    }

    /// The checks GCS documents for the fields Hearth reads: labels (at most 64; keys of 1–63
    /// lowercase letters, digits, `_` and `-` starting with a letter; values of up to 63 of the
    /// same), `versioning.enabled` a boolean, lifecycle rules with a known action, CORS entries objects.
    static func check(_ s: JSONObject) throws(StorageError) {
        if let labels = s["labels"] {
            guard let pairs = labels.objectValue else { throw .invalid("Invalid value for 'labels': an object is required.") }
            guard pairs.count <= 64 else { throw .invalid("Too many labels: \(pairs.count) (at most 64).") }
            for (k, v) in pairs {
                guard let value = v.stringValue else { throw .invalid("Invalid value for label '\(k)': a string is required.") }
                guard let first = k.first, first.isLetter, !first.isUppercase, k.count <= 63, k.allSatisfy(labelCharacter),
                      value.count <= 63, value.allSatisfy(labelCharacter) else {
                    throw .invalid("Invalid label: '\(k)': '\(value)'. Keys and values are lowercase letters, digits, '_' and '-', at most 63 characters; keys start with a letter.")
                }
            }
        }
        if let v = s["versioning"], v["enabled"].map({ $0.boolValue == nil }) ?? (v.objectValue == nil) {
            throw .invalid("Invalid value for 'versioning': {\"enabled\": true|false} is required.")
        }
        if let lifecycle = s["lifecycle"] {
            guard lifecycle.objectValue != nil, let rules = (lifecycle["rule"] ?? .array([])).arrayValue else {
                throw .invalid("Invalid value for 'lifecycle': {\"rule\": [...]} is required.")
            }
            guard rules.count <= 100 else { throw .invalid("Too many lifecycle rules: \(rules.count) (at most 100).") }
            for rule in rules {
                let type = rule["action"]?["type"]?.stringValue
                guard ["Delete", "SetStorageClass", "AbortIncompleteMultipartUpload"].contains(type ?? "") else {
                    throw .invalid("Invalid lifecycle rule action type: '\(type ?? "")'.")
                }
                if type == "SetStorageClass", rule["action"]?["storageClass"]?.stringValue == nil {
                    throw .required("Required field 'lifecycle.rule[].action.storageClass' is missing.")
                }
                guard rule["condition"]?.objectValue != nil else { throw .required("Required field 'lifecycle.rule[].condition' is missing.") }
            }
        }
        if let cors = s["cors"] {
            guard let entries = cors.arrayValue, entries.allSatisfy({ $0.objectValue != nil }) else {
                throw .invalid("Invalid value for 'cors': an array of objects is required.")
            }
        }
    }

    private static func labelCharacter(_ c: Character) -> Bool {
        (c.isLetter && !c.isUppercase) || c.isNumber || c == "_" || c == "-"
    }
}
