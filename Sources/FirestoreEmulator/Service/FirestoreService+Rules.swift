import HearthCore
import HearthSQLite
import SecurityRules

extension FirestoreService {
    /// The production message when rules deny without saying why.
    static let defaultDenial = "Missing or insufficient permissions."

    /// Judges one request with `project`'s rules; throws PERMISSION_DENIED with the rules'
    /// message (`false for 'create' @ L5` and the trace) when they deny.
    func authorize(_ request: RulesRequest, project: String, lookup: RulesLookup) throws(FirestoreError) {
        switch rules.active(for: project) {
        case .open:
            return
        case .broken(let why):
            throw .permissionDenied(why)
        case .ruleset(let ruleset, let coverage):
            let decision = ruleset.evaluate(request, lookup: lookup, coverage: coverage)
            if !decision.allowed {
                throw .permissionDenied(decision.message.isEmpty ? Self.defaultDenial : decision.message)
            }
        }
    }

    /// A lookup reading the committed state (reads have no pending writes).
    func readLookup(_ db: DatabaseID, space: Int64?, _ conn: Connection) -> RulesLookup {
        let fetch: (ResourcePath) -> StoredDocument? = { [storage] path in
            guard let space else { return nil }
            return try? storage.document(space: space, path: path, conn)
        }
        return RulesLookup(database: db, current: fetch, after: fetch)
    }

    /// `get` on one document (present or not).
    func authorizeGet(_ db: DatabaseID, path: ResourcePath, document: StoredDocument?, auth: RulesValue?,
                      lookup: RulesLookup, accessLimit: Int = 10) throws(FirestoreError) {
        let request = RulesRequest(
            method: .get, path: RulesConversion.path(db, path), auth: auth, time: RulesConversion.time(clock.now()),
            resource: document.map { RulesConversion.resource(db, path: $0.path, fields: $0.fields) },
            accessLimit: accessLimit)
        try authorize(request, project: db.project, lookup: lookup)
    }

    /// `list` for a query, decided from its constraints, never from the documents that exist.
    ///
    /// `resource` stands for every document the query could return: `resource.data` holds only
    /// the fields the query pins by equality (`==`, `IS_NULL`, `IS_NAN`, or an `in` value), and
    /// `resource.id`/`__name__` only when `__name__` is pinned. A condition reading anything
    /// else hits a missing key and denies. Each `in` value and each `OR` branch is judged
    /// separately and all must pass (up to 64 combinations; beyond that `in` fields stay unbound).
    func authorizeList(_ db: DatabaseID, query: Query, auth: RulesValue?, lookup: RulesLookup) throws(FirestoreError) {
        if case .open = rules.active(for: db.project) { return }
        let conjunctions = query.filter?.disjunctiveNormalForm(limit: 64) ?? [[]]
        var requestQuery = RulesMap()
        if let limit = query.limit { requestQuery["limit"] = .int(Int64(limit)) }
        if query.offset > 0 { requestQuery["offset"] = .int(Int64(query.offset)) }
        var orderBy = RulesMap()
        for o in query.explicitOrder { orderBy[o.field.canonical] = .string(o.descending ? "DESC" : "ASC") }
        requestQuery["orderBy"] = .map(orderBy)

        for bindings in listBindings(conjunctions, budget: 64) {
            var data: [String: FirestoreValue] = [:]
            var pinnedID: ResourcePath?
            for (field, value) in bindings {
                if field.isDocumentKey {
                    if case .reference(let name) = value, let (_, p) = try? ResourcePath.parseName(name) { pinnedID = p }
                } else {
                    DocumentFields.set(value, at: field, in: &data)
                }
            }
            var resource: RulesMap = ["data": RulesConversion.value(.map(data))]
            let path: [String]
            if let pinnedID {
                resource["id"] = .string(pinnedID.lastSegment)
                resource["__name__"] = .path(RulesConversion.path(db, pinnedID))
                path = RulesConversion.path(db, pinnedID)
            } else {
                path = listPath(db, query)
            }
            let request = RulesRequest(method: .list, path: path, auth: auth, time: RulesConversion.time(clock.now()),
                                       resource: .map(resource), query: .map(requestQuery), accessLimit: 10)
            try authorize(request, project: db.project, lookup: lookup)
        }
    }

    /// The path a list request is matched against: the collection plus a placeholder document id
    /// (reserved, so it never names a real document). A collection-group query adds a
    /// placeholder parent, so only recursive-wildcard rules (`/{path=**}/coll/{doc}`) cover it.
    func listPath(_ db: DatabaseID, _ query: Query) -> [String] {
        let placeholder = "__list__"
        if query.allDescendants {
            var segments = query.parent.segments + ["__group__", placeholder]
            if !query.collectionID.isEmpty { segments += [query.collectionID, placeholder] }
            return RulesConversion.path(db, ResourcePath(segments))
        }
        return RulesConversion.path(db, query.collectionPath.appending(placeholder))
    }

    /// Equality bindings per case to judge: one list per conjunction and `in` value combination.
    func listBindings(_ conjunctions: [[QueryFilter]], budget: Int) -> [[(FieldPath, FirestoreValue)]] {
        var out: [[(FieldPath, FirestoreValue)]] = []
        let perConjunction = max(1, budget / max(1, conjunctions.count))
        for conjunction in conjunctions {
            var fixed: [(FieldPath, FirestoreValue)] = []
            var choices: [(FieldPath, [FirestoreValue])] = []
            for leaf in conjunction {
                switch leaf {
                case .field(let f, .equal, let v): fixed.append((f, v))
                case .unary(let f, .isNull): fixed.append((f, .null))
                case .unary(let f, .isNaN): fixed.append((f, .double(.nan)))
                case .field(let f, .in, .array(let vs)):
                    if vs.count == 1 { fixed.append((f, vs[0])) } else { choices.append((f, vs)) }
                default: break
                }
            }
            var combos: [[(FieldPath, FirestoreValue)]] = [fixed]
            let total = choices.reduce(1) { $0 * $1.1.count }
            if total <= perConjunction {
                for (f, vs) in choices {
                    combos = combos.flatMap { c in vs.map { c + [(f, $0)] } }
                }
            }
            out.append(contentsOf: combos)
        }
        return out
    }
}
