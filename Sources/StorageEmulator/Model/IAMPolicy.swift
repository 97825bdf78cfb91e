import HearthCore

/// A bucket IAM policy from a `setIamPolicy` body, checked: each binding a role and members of
/// the forms IAM accepts; conditions only in a version 3 policy.
///
/// Related: the JSON API's `buckets/setIamPolicy` and IAM's "Policy" reference.
struct IAMPolicy: Sendable {
    var version: Int64
    var bindings: [JSON]
    /// The etag the client read the policy with (nil: not given, no check).
    var etag: String?

    /// The member prefixes IAM accepts (besides `allUsers` and `allAuthenticatedUsers`).
    static let memberPrefixes = [
        "user:", "serviceAccount:", "group:", "domain:", "projectOwner:", "projectEditor:", "projectViewer:",
        "principal://", "principalSet://", "deleted:",
    ]

    init(json: JSON) throws(StorageError) {
        guard json.objectValue != nil else { throw .invalid("The policy must be a JSON object.") }
        // An int32 as a number or its string; `1.5` or `"three"` is refused, never read as 1.
        let given = json["version"] ?? .null
        guard let v = given == .null ? 1 : (given.intValue ?? given.stringValue.flatMap({ Int64($0) })) else {
            throw .invalid("Invalid value for 'version': \(given) (1 or 3).")
        }
        version = v
        guard [1, 3].contains(version) else { throw .invalid("Invalid value for 'version': \(version) (1 or 3).") }
        etag = json["etag"]?.stringValue
        bindings = []
        for b in json["bindings"]?.arrayValue ?? [] {
            guard let role = b["role"]?.stringValue, role.hasPrefix("roles/") || role.hasPrefix("projects/") || role.hasPrefix("organizations/") else {
                throw .invalid("Invalid value for 'bindings[].role': \(b["role"]?.description ?? "missing").")
            }
            guard let members = b["members"]?.arrayValue, !members.isEmpty else {
                throw .required("Required field 'bindings[].members' is missing.")
            }
            for m in members {
                guard let s = m.stringValue,
                      s == "allUsers" || s == "allAuthenticatedUsers" || Self.memberPrefixes.contains(where: { s.hasPrefix($0) && s.count > $0.count })
                else { throw .invalid("Invalid value for 'bindings[].members': \(m).") }
            }
            if b["condition"] != nil && version < 3 {
                throw .invalid("A binding with a condition needs a version 3 policy.")
            }
            var kept: JSONObject = ["role": .string(role), "members": .array(members)]
            if let condition = b["condition"] { kept["condition"] = condition }
            bindings.append(.object(kept))
        }
    }

    /// What the bucket row keeps.
    var stored: JSON { .object(["version": .int(version), "bindings": .array(bindings)]) }

    /// The Cloud Storage permissions `testIamPermissions` knows (IAM's "Cloud Storage permissions" list).
    static let storagePermissions: Set<String> = [
        "storage.buckets.create", "storage.buckets.createTagBinding", "storage.buckets.delete", "storage.buckets.deleteTagBinding",
        "storage.buckets.enableObjectRetention", "storage.buckets.get", "storage.buckets.getIamPolicy",
        "storage.buckets.getIpFilter", "storage.buckets.getObjectInsights", "storage.buckets.list",
        "storage.buckets.listEffectiveTags", "storage.buckets.listTagBindings", "storage.buckets.restore",
        "storage.buckets.setIamPolicy", "storage.buckets.setIpFilter", "storage.buckets.update",
        "storage.objects.create", "storage.objects.delete", "storage.objects.get", "storage.objects.getIamPolicy",
        "storage.objects.list", "storage.objects.move", "storage.objects.overrideUnlockedRetention", "storage.objects.restore",
        "storage.objects.setIamPolicy", "storage.objects.setRetention", "storage.objects.update",
        "storage.multipartUploads.abort", "storage.multipartUploads.create", "storage.multipartUploads.list",
        "storage.multipartUploads.listParts", "storage.managedFolders.create", "storage.managedFolders.delete",
        "storage.managedFolders.get", "storage.managedFolders.getIamPolicy", "storage.managedFolders.list",
        "storage.managedFolders.setIamPolicy", "storage.folders.create", "storage.folders.delete", "storage.folders.get",
        "storage.folders.list", "storage.folders.rename", "storage.anywhereCaches.create", "storage.anywhereCaches.get",
        "storage.anywhereCaches.list", "storage.anywhereCaches.update",
    ]
}
