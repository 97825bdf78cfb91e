import Foundation
import HearthCore

/// One bucket, as stored: its configuration (the JSON API's writable bucket fields), legacy ACLs
/// and IAM policy.
struct StoredBucket: Sendable {
    var name: String
    var created: Instant
    var updated: Instant
    var metageneration: Int64
    /// The writable fields of the bucket resource that Hearth keeps as given (`labels`, `cors`,
    /// `lifecycle`, `versioning`, `website`, …), plus `iamConfiguration` in its normalised form.
    var settings: JSONObject { didSet { unreadable[.settings] = nil } }
    /// nil: never set (the `projectPrivate` default).
    var acl: [AccessControlEntry]? { didSet { unreadable[.acl] = nil } }
    var defaultObjectAcl: [AccessControlEntry]? { didSet { unreadable[.defaultObjectAcl] = nil } }
    /// `{"version", "bindings"}` once set; nil: the default policy.
    var iamPolicy: JSON? { didSet { unreadable[.iamPolicy] = nil } }
    /// The columns whose stored text did not decode, with that text; the property of each holds
    /// its default meanwhile. Such a row is damaged (or was written under looser checks than
    /// today's), and the default is not what it says: it may have enforced public access
    /// prevention or kept `allUsers` out. So every access decision that needs an unreadable
    /// column denies (`PublicAccess`), the JSON API refuses to answer or merge into one, and a
    /// write of the bucket puts the text back unchanged — only setting the whole property anew
    /// (a PUT of the bucket, `setIamPolicy`, a predefined or whole ACL) replaces it.
    var unreadable: [Column: String] = [:]

    /// A stored column decoded with checks of its own.
    enum Column: String, Sendable {
        case settings
        case acl
        case defaultObjectAcl = "default_object_acl"
        case iamPolicy = "iam_policy"
    }

    /// The bucket fields a create, PATCH or PUT writes into `settings` (ACLs and IAM have their own columns).
    static let settingKeys: Set<String> = [
        "labels", "cors", "lifecycle", "versioning", "website", "logging", "billing", "defaultEventBasedHold",
        "iamConfiguration", "storageClass", "autoclass", "softDeletePolicy", "encryption", "rpo", "retentionPolicy",
    ]

    var bucketACL: [AccessControlEntry] { acl ?? AccessControlEntry.defaultBucketACL }
    var defaultObjectACL: [AccessControlEntry] { defaultObjectAcl ?? AccessControlEntry.defaultObjectACL }

    /// The stored list of `column` (`.acl`, `.defaultObjectAcl`) or its default, to show or
    /// change; 500 when the stored text does not decode.
    func readableACL(_ column: Column) throws(StorageError) -> [AccessControlEntry] {
        let what = column == .acl ? "ACL" : "default object ACL"
        if unreadable[column] != nil { throw .unreadableStoredState(bucket: name, what: what) }
        return column == .acl ? bucketACL : defaultObjectACL
    }

    /// Whether uniform bucket-level access is on: legacy ACLs are then refused and not enforced.
    var uniformAccess: Bool { settings["iamConfiguration"]?["uniformBucketLevelAccess"]?["enabled"]?.boolValue == true }

    /// Whether object versioning is enabled (the flag only: Hearth keeps no noncurrent generations).
    var versioningEnabled: Bool { settings["versioning"]?["enabled"]?.boolValue == true }

    /// GCS's bucket etag (and IAM policy etag): base64 of the protobuf encoding of the metageneration.
    var etag: String { Data([0x08] + StoredObject.varint(UInt64(metageneration))).base64EncodedString() }

    /// The JSON API's bucket resource (`storage#bucket`); `full` adds `acl`, `defaultObjectAcl`
    /// and `owner` (`projection=full`), which a bucket with uniform access does not show.
    func gcsResource(base: String, full: Bool) -> JSON {
        var m: [(String, JSON)] = [
            ("kind", .string("storage#bucket")), ("id", .string(name)), ("name", .string(name)),
            ("selfLink", .string("\(base)/storage/v1/b/\(StorageURL.encode(name))")),
            ("projectNumber", .string(AccessControlEntry.projectNumber)), ("metageneration", .string(String(metageneration))),
            ("location", .string("US")), ("storageClass", .string(settings["storageClass"]?.stringValue ?? "STANDARD")),
            ("etag", .string(etag)),
            ("timeCreated", .string(created.rfc3339(fractionDigits: 3))), ("updated", .string(updated.rfc3339(fractionDigits: 3))),
            ("locationType", .string("multi-region")),
        ]
        for (k, v) in settings where k != "storageClass" && k != "iamConfiguration" { m.append((k, v)) }
        // Hearth keeps no soft-deleted objects: a bucket says so (retention 0 is GCS's "off") unless it was told otherwise.
        if settings["softDeletePolicy"] == nil { m.append(("softDeletePolicy", .object(["retentionDurationSeconds": .string("0")]))) }
        m.append(("iamConfiguration", iamConfigurationJSON))
        if full {
            m.append(("owner", .object(["entity": .string(AccessControlEntry.projectOwners)])))
            // A list that does not decode is left out rather than shown as a default it is not.
            if !uniformAccess {
                if unreadable[.acl] == nil { m.append(("acl", .array(bucketACL.map { bucketControl($0, base: base) }))) }
                if unreadable[.defaultObjectAcl] == nil {
                    m.append(("defaultObjectAcl", .array(defaultObjectACL.map { defaultObjectControl($0) })))
                }
            }
        }
        return .object(JSONObject(m))
    }

    /// `iamConfiguration` as GCS always answers it: uniform access (and its old name
    /// `bucketPolicyOnly`) with its lock time when enabled, and public access prevention.
    var iamConfigurationJSON: JSON {
        let stored = settings["iamConfiguration"]
        var ubla: JSONObject = ["enabled": .bool(uniformAccess)]
        if uniformAccess, let locked = stored?["uniformBucketLevelAccess"]?["lockedTime"] { ubla["lockedTime"] = locked }
        return .object([
            "bucketPolicyOnly": .object(ubla), "uniformBucketLevelAccess": .object(ubla),
            "publicAccessPrevention": stored?["publicAccessPrevention"] ?? .string("inherited"),
        ])
    }

    /// A `storage#bucketAccessControl`.
    func bucketControl(_ e: AccessControlEntry, base: String) -> JSON {
        var m: [(String, JSON)] = [
            ("kind", .string("storage#bucketAccessControl")), ("id", .string("\(name)/\(e.entity)")),
            ("selfLink", .string("\(base)/storage/v1/b/\(StorageURL.encode(name))/acl/\(StorageURL.encode(e.entity))")),
            ("bucket", .string(name)), ("entity", .string(e.entity)), ("role", .string(e.role)),
        ]
        m += e.derivedFields
        m.append(("etag", .string(etag)))
        return .object(JSONObject(m))
    }

    /// A `storage#objectAccessControl` of the default object ACL.
    func defaultObjectControl(_ e: AccessControlEntry) -> JSON {
        var m: [(String, JSON)] = [
            ("kind", .string("storage#objectAccessControl")), ("entity", .string(e.entity)), ("role", .string(e.role)),
        ]
        m += e.derivedFields
        m.append(("etag", .string(etag)))
        return .object(JSONObject(m))
    }

    // MARK: Stored form

    /// The stored `settings` back, or nil when the text is not what Hearth writes: a JSON object
    /// whose `iamConfiguration`, if there, is an object with a boolean uniform access and a
    /// public access prevention GCS knows — a value read any other way could let `allUsers` in.
    static func decodeSettings(_ text: String) -> JSONObject? {
        guard case .object(let settings)? = try? JSON.parse(text) else { return nil }
        if let iam = settings["iamConfiguration"] {
            guard iam.objectValue != nil else { return nil }
            if let prevention = iam["publicAccessPrevention"], !["inherited", "enforced"].contains(prevention.stringValue ?? "") { return nil }
            if let ubla = iam["uniformBucketLevelAccess"] {
                guard ubla.objectValue != nil, ubla["enabled"].map({ $0.boolValue != nil }) ?? true else { return nil }
            }
        }
        return settings
    }

    /// The stored IAM policy back, or nil when it is not `{"version", "bindings": [{"role",
    /// "members": [...]}]}`, the form `IAMPolicy.stored` writes.
    static func decodeIAMPolicy(_ text: String) -> JSON? {
        guard let policy = try? JSON.parse(text), policy.objectValue != nil, let bindings = policy["bindings"]?.arrayValue,
              policy["version"].map({ $0.intValue != nil }) ?? true else { return nil }
        for b in bindings {
            guard b["role"]?.stringValue != nil, let members = b["members"]?.arrayValue,
                  members.allSatisfy({ $0.stringValue != nil }) else { return nil }
        }
        return policy
    }

    // MARK: IAM

    /// The bucket's IAM policy (`storage#policy`): the one set, else GCS's default for a new
    /// bucket (the project's owners and editors as legacy bucket owners, its viewers as readers).
    func iamPolicyJSON(projectID: String) -> JSON {
        let bindings = iamPolicy?["bindings"] ?? .array([
            .object(["role": .string("roles/storage.legacyBucketOwner"),
                     "members": .array([.string("projectEditor:\(projectID)"), .string("projectOwner:\(projectID)")])]),
            .object(["role": .string("roles/storage.legacyBucketReader"), "members": .array([.string("projectViewer:\(projectID)")])]),
        ])
        return .object([
            "kind": .string("storage#policy"), "resourceId": .string("projects/_/buckets/\(name)"),
            "version": iamPolicy?["version"] ?? .int(1), "etag": .string(etag), "bindings": bindings,
        ])
    }

    /// Whether public access prevention is enforced on the bucket.
    var enforcesPublicAccessPrevention: Bool {
        settings["iamConfiguration"]?["publicAccessPrevention"]?.stringValue == "enforced"
    }

    /// The public grants of the bucket's own ACL, default object ACL and IAM policy (`allUsers`,
    /// `allAuthenticatedUsers`), each named with where it is.
    private var publicGrants: Set<String> {
        var out = Set(AccessControlEntry.publicGrants(acl).map { "acl " + $0 })
        out.formUnion(AccessControlEntry.publicGrants(defaultObjectAcl).map { "defaultObjectAcl " + $0 })
        for b in iamPolicy?["bindings"]?.arrayValue ?? [] {
            let role = b["role"]?.stringValue ?? ""
            for m in b["members"]?.arrayValue ?? [] {
                if let m = m.stringValue, m == "allUsers" || m == "allAuthenticatedUsers" { out.insert("iam \(role) \(m)") }
            }
        }
        return out
    }

    /// GCS refuses a request that grants `allUsers` or `allAuthenticatedUsers` on a bucket that
    /// enforces public access prevention (412): a public ACL entry, default object ACL entry or IAM
    /// member this change adds. Grants the bucket had before stay, as GCS keeps them (overridden,
    /// not removed), so a PATCH of other settings is not refused for them.
    func refuseNewPublicGrants(since old: StoredBucket?) throws(StorageError) {
        guard enforcesPublicAccessPrevention else { return }
        if !publicGrants.subtracting(old?.publicGrants ?? []).isEmpty { throw .publicAccessPrevented }
    }

    /// Whether the IAM policy lets anyone read objects (`allUsers` in a role that has `storage.objects.get`).
    var iamGrantsPublicRead: Bool {
        guard let bindings = iamPolicy?["bindings"]?.arrayValue else { return false }
        let readers: Set<String> = ["roles/storage.objectViewer", "roles/storage.legacyObjectReader", "roles/storage.objectAdmin",
                                    "roles/storage.admin", "roles/storage.legacyObjectOwner", "roles/storage.objectUser"]
        return bindings.contains { b in
            guard let role = b["role"]?.stringValue, readers.contains(role), b["condition"] == nil else { return false }
            return b["members"]?.arrayValue?.contains(.string("allUsers")) == true
        }
    }
}
