import HearthCore
import HearthHTTP

/// The JSON API's legacy ACL resources: `bucketAccessControls` (`/b/{b}/acl`),
/// `defaultObjectAccessControls` (`/b/{b}/defaultObjectAcl`) and `objectAccessControls`
/// (`/b/{b}/o/{o}/acl`), each with list, insert, get, patch, update and delete. Every change
/// bumps its resource's metageneration, as GCS's do; on a bucket with uniform bucket-level
/// access each is refused with GCS's 400.
extension StorageService {
    func handleACLRequest(_ request: Request, route: StorageRoute) throws(StorageError) -> Response {
        let base = baseURL(request)
        switch route {
        case .objectACL(let bucket, let name, let entity):
            let view = ObjectAccessView(bucket: try existingBucket(bucket), owner: objectOwner)
            if request.method == "GET" {
                if view.uniform { throw .uniformObjectACL("get") }
                let o = try existing(request, bucket: bucket, name: name)
                return try answer(o.readableACL(view), entity: entity) { o.control($0, base: base) }
            }
            let verb = Self.aclVerb(request.method)
            let change = try aclChange(request, entity: entity, scope: .object)
            let touched = Box<AccessControlEntry?>(nil)
            let owner = objectOwner
            let newACL: (StoredBucket, StoredObject) throws(StorageError) -> [AccessControlEntry] = { b, current throws(StorageError) in
                if b.uniformAccess { throw StorageError.uniformObjectACL(verb) }
                let (next, entry) = try change(try current.readableACL(ObjectAccessView(bucket: b, owner: owner)))
                touched.value = entry
                return next
            }
            let o = try updateMetadata(bucket: bucket, name: name, conditions: try Preconditions(query: request.query), acl: newACL) { $0 }
            return touched.value.map { .json(o.control($0, base: base)) } ?? Response(status: 204)
        case .bucketACL(let bucket, let entity), .defaultObjectACL(let bucket, let entity):
            let isDefault: Bool = if case .defaultObjectACL = route { true } else { false }
            let refusal: (String) -> StorageError = { verb in
                isDefault ? StorageError.uniformDefaultObjectACL(verb) : StorageError.uniformBucketACL(verb)
            }
            let render: (StoredBucket, AccessControlEntry) -> JSON = { b, e in
                isDefault ? b.defaultObjectControl(e) : b.bucketControl(e, base: base)
            }
            if request.method == "GET" {
                let b = try existingBucket(bucket)
                if b.uniformAccess { throw refusal("get") }
                return try answer(try b.readableACL(isDefault ? .defaultObjectAcl : .acl), entity: entity, kind: isDefault ? .object : .bucket) {
                    render(b, $0)
                }
            }
            let verb = Self.aclVerb(request.method)
            let change = try aclChange(request, entity: entity, scope: isDefault ? .object : .bucket)
            let touched = Box<AccessControlEntry?>(nil)
            let b = try updateBucket(bucket, request: request) { (b: inout StoredBucket) throws(StorageError) in
                if b.uniformAccess { throw refusal(verb) }
                let (next, entry) = try change(try b.readableACL(isDefault ? .defaultObjectAcl : .acl))
                touched.value = entry
                if isDefault { b.defaultObjectAcl = next } else { b.acl = next }
            }
            return touched.value.map { .json(render(b, $0)) } ?? Response(status: 204)
        default:
            throw .notFoundRoute(method: request.method, path: request.path)
        }
    }

    /// GCS's verb for a method in its uniform-access refusals.
    private static func aclVerb(_ method: String) -> String {
        switch method {
        case "POST": "insert"
        case "DELETE": "delete"
        default: "update"
        }
    }

    /// A list (`storage#…AccessControls`) or, with `entity`, its one entry (404 when absent).
    private func answer(_ list: [AccessControlEntry], entity: String?, kind: AccessControlEntry.Scope = .object,
                        _ render: (AccessControlEntry) -> JSON) throws(StorageError) -> Response {
        if let entity {
            guard let e = list.first(where: { $0.entity == AccessControlEntry.canonical(entity) }) else { throw .noSuchACLEntry(entity) }
            return .json(render(e))
        }
        return .json(.object([
            "kind": .string(kind == .bucket ? "storage#bucketAccessControls" : "storage#objectAccessControls"),
            "items": .array(list.map(render)),
        ]))
    }

    /// The change a POST (insert: `{"entity", "role"}`; an entity already listed takes the new
    /// role), PUT/PATCH (the named entity's new role; 404 when absent) or DELETE (404 when absent)
    /// makes to a list: the new list and the entry to answer with (nil: 204).
    private func aclChange(_ request: Request, entity: String?, scope: AccessControlEntry.Scope) throws(StorageError)
        -> ([AccessControlEntry]) throws(StorageError) -> ([AccessControlEntry], AccessControlEntry?) {
        switch (request.method, entity) {
        case ("POST", nil):
            let entry = try AccessControlEntry(json: try parseJSON(request), scope: scope)
            return { list in
                var next = list
                if let i = next.firstIndex(where: { $0.entity == entry.entity }) { next[i] = entry } else { next.append(entry) }
                return (next, entry)
            }
        case ("PUT", let entity?), ("PATCH", let entity?):
            let body = try parseJSON(request)
            guard let role = body["role"]?.stringValue else { throw .required("Required field 'role' is missing.") }
            let entry = try AccessControlEntry(entity: entity, role: role, scope: scope)
            return { list throws(StorageError) in
                guard let i = list.firstIndex(where: { $0.entity == entry.entity }) else { throw .noSuchACLEntry(entity) }
                var next = list
                next[i] = entry
                return (next, entry)
            }
        case ("DELETE", let entity?):
            let canonical = AccessControlEntry.canonical(entity)
            return { list throws(StorageError) in
                guard list.contains(where: { $0.entity == canonical }) else { throw .noSuchACLEntry(entity) }
                return (list.filter { $0.entity != canonical }, nil)
            }
        default:
            throw .notFoundRoute(method: request.method, path: request.path)
        }
    }
}

/// The entry a change inside a transaction touched, carried out of its closure.
private final class Box<T> {
    var value: T
    init(_ value: T) { self.value = value }
}
