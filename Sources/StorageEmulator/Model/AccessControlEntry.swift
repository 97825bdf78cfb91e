import HearthCore

/// One entry of a legacy access control list: an entity (`allUsers`, `user-alice@example.com`,
/// `project-owners-0`, …) and its role.
///
/// Related: Cloud Storage's "Access control lists" page (entities, roles, predefined ACLs) and the
/// JSON API's `BucketAccessControls` / `ObjectAccessControls` resources.
struct AccessControlEntry: Sendable, Equatable {
    var entity: String
    var role: String

    /// Which resource an ACL belongs to: roles differ (buckets have WRITER, objects do not).
    enum Scope: Sendable {
        case bucket
        case object

        var roles: [String] { self == .bucket ? ["OWNER", "WRITER", "READER"] : ["OWNER", "READER"] }
    }

    /// Hearth's project number in ACL entities and IAM members (`projectNumber` is "0" on buckets).
    static let projectNumber = "0"

    /// An entry from a request (`{"entity", "role"}`), checked for `scope`.
    init(json: JSON, scope: Scope) throws(StorageError) {
        guard let entity = json["entity"]?.stringValue else { throw .required("Required field 'entity' is missing.") }
        guard let role = json["role"]?.stringValue else { throw .required("Required field 'role' is missing.") }
        try self.init(entity: entity, role: role, scope: scope)
    }

    init(entity: String, role: String, scope: Scope) throws(StorageError) {
        guard Self.isValidEntity(entity) else { throw .invalid("Invalid value for 'entity': '\(entity)'.") }
        guard scope.roles.contains(role) else { throw .invalid("Invalid value for 'role': '\(role)'.") }
        self.entity = Self.canonical(entity)
        self.role = role
    }

    /// An entry built by Hearth itself (predefined ACLs, defaults): never validated.
    init(trusted entity: String, _ role: String) {
        self.entity = entity
        self.role = role
    }

    /// Whether the entry grants everyone (`allUsers`) or every Google account (`allAuthenticatedUsers`).
    var isPublic: Bool { entity == "allUsers" || entity == "allAuthenticatedUsers" }

    /// A list's public grants as `"entity role"`, to tell which ones a change adds.
    static func publicGrants(_ list: [AccessControlEntry]?) -> Set<String> {
        Set((list ?? []).filter(\.isPublic).map { "\($0.entity) \($0.role)" })
    }

    /// The entity forms GCS accepts: `allUsers`, `allAuthenticatedUsers`, `user-…`, `group-…`,
    /// `domain-…`, `project-{owners,editors,viewers}-…`.
    static func isValidEntity(_ e: String) -> Bool {
        if e == "allUsers" || e == "allAuthenticatedUsers" { return true }
        for prefix in ["user-", "group-", "domain-", "project-owners-", "project-editors-", "project-viewers-"]
        where e.hasPrefix(prefix) && e.count > prefix.count {
            return true
        }
        return false
    }

    /// Emails and domains are case-insensitive; GCS answers them in lower case.
    static func canonical(_ e: String) -> String {
        e.hasPrefix("user-") || e.hasPrefix("group-") || e.hasPrefix("domain-") ? e.lowercased() : e
    }

    /// The fields GCS derives from the entity (`email`, `domain`, `projectTeam`).
    var derivedFields: [(String, JSON)] {
        if entity.hasPrefix("user-") || entity.hasPrefix("group-"), let dash = entity.firstIndex(of: "-") {
            let rest = String(entity[entity.index(after: dash)...])
            return rest.contains("@") ? [("email", .string(rest))] : [("entityId", .string(rest))]
        }
        if entity.hasPrefix("domain-") { return [("domain", .string(String(entity.dropFirst("domain-".count))))] }
        for team in ["owners", "editors", "viewers"] where entity.hasPrefix("project-\(team)-") {
            return [("projectTeam", .object(["projectNumber": .string(String(entity.dropFirst("project-\(team)-".count))),
                                             "team": .string(team)]))]
        }
        return []
    }

    // MARK: Stored form

    /// The stored form of a list: `[{"entity","role"}]` (also what an export carries).
    static func storedJSON(_ list: [AccessControlEntry]) -> JSON {
        .array(list.map { .object(["entity": .string($0.entity), "role": .string($0.role)]) })
    }

    static func serialize(_ list: [AccessControlEntry]) -> String { storedJSON(list).serialized() }

    /// A stored list back, or nil when the text is not one whose every entry is an entity and a
    /// role of the forms GCS accepts. The caller keeps such a list as unreadable, never as "none
    /// stored" (the bucket's default, which may be `publicRead`) nor with entries dropped.
    static func decode(_ text: String) -> [AccessControlEntry]? {
        guard case .array(let items)? = try? JSON.parse(text) else { return nil }
        var out: [AccessControlEntry] = []
        for item in items {
            guard let e = item["entity"]?.stringValue, isValidEntity(e), let r = item["role"]?.stringValue,
                  Scope.bucket.roles.contains(r) else { return nil }
            out.append(AccessControlEntry(trusted: e, r))
        }
        return out
    }

    /// A request's list (`acl`, `defaultObjectAcl`), every entry checked.
    static func list(json: JSON, scope: Scope, field: String) throws(StorageError) -> [AccessControlEntry] {
        guard let items = json.arrayValue else { throw .invalid("Invalid value for '\(field)': an array is required.") }
        var out: [AccessControlEntry] = []
        for item in items {
            let e = try AccessControlEntry(json: item, scope: scope)
            // One entry per entity: a repeated entity keeps its last role.
            out.removeAll { $0.entity == e.entity }
            out.append(e)
        }
        return out
    }

    // MARK: Defaults

    static let projectOwners = "project-owners-\(projectNumber)"
    static let projectEditors = "project-editors-\(projectNumber)"
    static let projectViewers = "project-viewers-\(projectNumber)"

    /// A new bucket's ACL (`projectPrivate`, GCS's default for buckets).
    static let defaultBucketACL = [
        AccessControlEntry(trusted: projectOwners, "OWNER"), AccessControlEntry(trusted: projectEditors, "OWNER"),
        AccessControlEntry(trusted: projectViewers, "READER"),
    ]

    /// A new bucket's default object ACL (`projectPrivate`, GCS's default).
    static let defaultObjectACL = [
        AccessControlEntry(trusted: projectOwners, "OWNER"), AccessControlEntry(trusted: projectEditors, "OWNER"),
        AccessControlEntry(trusted: projectViewers, "READER"),
    ]
}
