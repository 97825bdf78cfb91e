import HearthCore
import HearthSQLite
import SecurityRules

extension FirestoreService {
    /// The production message when rules deny without saying why.
    static let defaultDenial = "Missing or insufficient permissions."

    /// Judges one request with the rules of `database` of `project`; throws PERMISSION_DENIED with the rules'
    /// message (`false for 'create' @ L5` and the trace) when they deny.
    func authorize(_ request: RulesRequest, project: String, database: String, lookup: RulesLookup) throws(FirestoreError) {
        try authorize(request, in: rules.inForce(for: project, database: database), lookup: lookup)
    }

    /// The same, with the project's rules already looked up (`force`, borrowed: its ruleset and
    /// coverage are passed on without a retain of their own).
    func authorize(_ request: RulesRequest, in force: RulesInForce, lookup: some RulesRequestLookup) throws(FirestoreError) {
        guard let ruleset = force.ruleset else {
            if let why = force.broken { throw .permissionDenied(why) }
            return  // open
        }
        // The verdict alone: the decision's trace is never read here.
        let decision = ruleset.verdict(request, lookup: lookup, coverage: force.coverage)
        if let failure = lookup.failure {
            logger.error("firestore: a rules document lookup failed; denying", [("error", .string("\(failure)"))])
            throw .permissionDenied("evaluation error: a document read by the rules (get/exists) could not be loaded.")
        }
        if !decision.allowed {
            // Firestore's wording first; the rules' own account of the denial after it.
            throw .permissionDenied(Self.defaultDenial + "\n" + (decision.message.isEmpty ? "No matching allow statements" : decision.message))
        }
    }

    /// A lookup reading the committed state (reads have no pending writes).
    func readLookup(_ db: DatabaseID, space: Int64?, _ conn: Connection) -> RulesLookup {
        let fetch: (ResourcePath) throws -> StoredDocument? = { [storage] path in
            guard let space else { return nil }
            return try storage.document(space: space, path: path, conn)
        }
        return RulesLookup(database: db, current: fetch, after: fetch)
    }

    /// `get` on one document (present or not).
    func authorizeGet(_ db: DatabaseID, path: ResourcePath, document: StoredDocument?, auth: RulesValue?,
                      lookup: RulesLookup, accessLimit: Int = 10) throws(FirestoreError) {
        try authorizeGet(db, path: path, resource: document.map { RulesConversion.resource(db, path: $0.path, fields: $0.fields) },
                         auth: auth, lookup: lookup, accessLimit: accessLimit)
    }

    /// The same, with the document already as `resource` (nil: absent).
    func authorizeGet(_ db: DatabaseID, path: ResourcePath, resource: RulesValue?, auth: RulesValue?,
                      lookup: RulesLookup, accessLimit: Int = 10) throws(FirestoreError) {
        try authorizeGet(db, rulesPath: RulesConversion.path(db, path), resource: resource, auth: auth, lookup: lookup,
                         accessLimit: accessLimit)
    }

    /// The same, with the path already as the rules see it (`RulesConversion.path`), and `force`
    /// the project's rules when the caller has them already.
    func authorizeGet(_ db: DatabaseID, rulesPath: [String], resource: RulesValue?, auth: RulesValue?,
                      lookup: some RulesRequestLookup, accessLimit: Int = 10, in force: RulesInForce? = nil) throws(FirestoreError) {
        let force = force ?? rules.inForce(for: db.project, database: db.database)
        // A get the rules remember reads nothing but the request's auth, method and path
        // (`Ruleset.remembers`): it is not handed the clock's time (a `Clock.now`, ~0.2k
        // instructions), which it would never read.
        let time = force.ruleset?.remembers(.get) == true ? RulesValue.null : RulesConversion.time(clock.now())
        var request = RulesRequest(method: .get, path: rulesPath, auth: auth, time: time, resource: resource,
                                   accessLimit: accessLimit)
        request.methodShaped = true
        try authorize(request, in: force, lookup: lookup)
    }

    /// `list` for a query, decided from its constraints, never from the documents that exist.
    ///
    /// `resource` stands for every document the query could return (`ListCase`): `resource.data`
    /// holds what the filters say of each field they name (a fixed value, or a constraint the
    /// rules prove comparisons from), and `resource.id`/`__name__` are set only when `__name__` is
    /// pinned. A condition the filters do not prove is an error and denies. Each way to satisfy
    /// the filter (`OR` branches, `in` and `array-contains-any` values) is judged on its own and
    /// all must pass.
    /// `force`: the project's rules when the caller has them already.
    func authorizeList(_ db: DatabaseID, query: Query, auth: RulesValue?, lookup: some RulesRequestLookup,
                       in force: RulesInForce? = nil) throws(FirestoreError) {
        // Looked up once for the question and every way's decision.
        let force = force ?? rules.inForce(for: db.project, database: db.database)
        if force.isOpen { return }
        // As the official emulator gives it: `limit` null when the query has none, `offset` 0.
        var requestQuery = RulesMap()
        requestQuery["limit"] = query.limit.map { .int(Int64($0)) } ?? .null
        requestQuery["offset"] = .int(Int64(query.offset))
        var orderBy = RulesMap()
        for o in query.explicitOrder { orderBy[o.field.canonical] = .string(o.descending ? "DESC" : "ASC") }
        requestQuery["orderBy"] = .map(orderBy)

        for way in ListCase.cases(for: query.filter, budget: 64) {
            var resource: RulesMap = ["data": way.data()]
            let path: [String]
            var placeholder: String?
            if let pinned = way.pinned {
                resource["id"] = .string(pinned.lastSegment)
                resource["__name__"] = .path(RulesConversion.path(db, pinned))
                path = RulesConversion.path(db, pinned)
            } else {
                path = listPath(db, query)
                placeholder = Self.listPlaceholder
            }
            var request = RulesRequest(method: .list, path: path, auth: auth, time: RulesConversion.time(clock.now()),
                                       resource: .map(resource), query: .map(requestQuery), accessLimit: 10,
                                       listPlaceholder: placeholder)
            request.methodShaped = true
            try authorize(request, in: force, lookup: lookup)
        }
    }

    /// The document id of a list's path (reserved, so it never names a real document); a
    /// `{wildcard}` taking it holds an unknown string.
    static let listPlaceholder = "__list__"

    /// The path a list request is matched against: the collection plus a placeholder document id.
    /// A collection-group query adds a placeholder parent, so only recursive-wildcard rules
    /// (`/{path=**}/coll/{doc}`) cover it.
    func listPath(_ db: DatabaseID, _ query: Query) -> [String] {
        let placeholder = Self.listPlaceholder
        if query.allDescendants {
            var segments = query.parent.segments + ["__group__", placeholder]
            if !query.collectionID.isEmpty { segments += [query.collectionID, placeholder] }
            return RulesConversion.path(db, ResourcePath(segments))
        }
        return RulesConversion.path(db, query.collectionPath.appending(placeholder))
    }
}
