import SecurityRules

/// The `get()`/`exists()` and `getAfter()` reads of one request, cached per document.
///
/// One instance serves every evaluation of a request (all writes of a batch), so it also
/// counts distinct documents read against the request-wide access budget.
final class RulesLookup: RulesDocumentLookup {
    private let database: DatabaseID
    private let current: (ResourcePath) -> StoredDocument?
    private let after: (ResourcePath) -> StoredDocument?
    private var cache: [ResourcePath: RulesValue?] = [:]
    private var afterCache: [ResourcePath: RulesValue?] = [:]
    private var accessed = Set<ResourcePath>()

    init(database: DatabaseID, current: @escaping (ResourcePath) -> StoredDocument?,
         after: @escaping (ResourcePath) -> StoredDocument?) {
        self.database = database
        self.current = current
        self.after = after
    }

    /// Distinct documents read so far.
    var accessCount: Int { accessed.count }

    func get(_ path: [String]) -> RulesValue? {
        guard let p = RulesConversion.documentPath(path, in: database) else { return nil }
        if let cached = cache[p] { return cached }
        accessed.insert(p)
        let v = current(p).map { RulesConversion.resource(database, path: $0.path, fields: $0.fields) }
        cache[p] = v
        return v
    }

    func getAfter(_ path: [String]) -> RulesValue? {
        guard let p = RulesConversion.documentPath(path, in: database) else { return nil }
        if let cached = afterCache[p] { return cached }
        accessed.insert(p)
        let v = after(p).map { RulesConversion.resource(database, path: $0.path, fields: $0.fields) }
        afterCache[p] = v
        return v
    }
}
