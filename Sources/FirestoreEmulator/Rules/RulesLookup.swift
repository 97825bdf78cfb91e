import SecurityRules

/// The `get()`/`exists()` and `getAfter()` reads of one request, cached per document.
///
/// One instance serves every evaluation of a request (all writes of a batch), so it also
/// counts distinct documents read against the request-wide access budget.
///
/// A read that fails (a storage error) is not "document absent": that could turn `!exists(…)`
/// into an allow. The failure is remembered and `authorize` denies the whole request after the
/// evaluation, whatever the rules decided (security checks fail closed).
final class RulesLookup: RulesRequestLookup {
    private let database: DatabaseID
    private let current: (ResourcePath) throws -> StoredDocument?
    private let after: (ResourcePath) throws -> StoredDocument?
    /// The first lookup failure of this request, if any.
    private(set) var failure: (any Error)?
    private var cache: [ResourcePath: RulesValue?] = [:]
    private var afterCache: [ResourcePath: RulesValue?] = [:]
    private var accessed = Set<ResourcePath>()

    init(database: DatabaseID, current: @escaping (ResourcePath) throws -> StoredDocument?,
         after: @escaping (ResourcePath) throws -> StoredDocument?) {
        self.database = database
        self.current = current
        self.after = after
    }

    /// Distinct documents read so far.
    var accessCount: Int { accessed.count }

    func get(_ path: [String]) -> RulesValue? {
        guard let p = documentPath(path) else { return nil }
        if let cached = cache[p] { return cached }
        accessed.insert(p)
        let v = load(current, p).map { RulesConversion.resource(database, path: $0.path, fields: $0.fields) }
        cache[p] = v
        return v
    }

    func getAfter(_ path: [String]) -> RulesValue? {
        guard let p = documentPath(path) else { return nil }
        if let cached = afterCache[p] { return cached }
        accessed.insert(p)
        let v = load(after, p).map { RulesConversion.resource(database, path: $0.path, fields: $0.fields) }
        afterCache[p] = v
        return v
    }

    /// The document `path` names in this request's database; nil, and the request denied, for
    /// any other path. The evaluator refuses those before asking (a `Service call error`), so
    /// this is the backstop: "absent" would turn `!exists(…)` into an allow.
    private func documentPath(_ path: [String]) -> ResourcePath? {
        if let p = RulesConversion.documentPath(path, in: database) { return p }
        if failure == nil { failure = NotADocumentOfThisDatabase(path: "/" + path.joined(separator: "/")) }
        return nil
    }

    /// What a lookup of a path outside the request's database reports (logged by `authorize`).
    struct NotADocumentOfThisDatabase: Error, CustomStringConvertible {
        let path: String
        var description: String { "not a document of the request's database: \(path)" }
    }

    private func load(_ read: (ResourcePath) throws -> StoredDocument?, _ p: ResourcePath) -> StoredDocument? {
        do {
            return try read(p)
        } catch {
            if failure == nil { failure = error }
            return nil
        }
    }
}
