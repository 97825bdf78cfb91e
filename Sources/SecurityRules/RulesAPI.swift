// The contract between SecurityRules and its callers (FirestoreEmulator, the `hearth rules` CLI,
// the hub's `projects.test` endpoint). Everything public about the module is declared here or in
// the types it names; the lexer, parser, checker and evaluator behind it are internal.

import HearthCore

/// A rules value, as the rules language sees it.
public enum RulesValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case bytes([UInt8])
    /// Seconds and nanoseconds since the Unix epoch.
    case timestamp(seconds: Int64, nanos: Int32)
    /// Seconds and nanoseconds.
    case duration(seconds: Int64, nanos: Int32)
    case latlng(latitude: Double, longitude: Double)
    /// Path segments, unescaped (`["databases", "(default)", "documents", "users", "u1"]`), and
    /// for a path a template's `bind()` made, the segments its variables became (`p.x`; nil for
    /// every other path, and ignored by everything but `p.x`, `p['x']`, slices and interpolation).
    case path([String], names: RulesPathNames? = nil)
    case list([RulesValue])
    case map(RulesMap)
    case set([RulesValue])
    case mapDiff(left: RulesMap, right: RulesMap)
    /// A Firestore vector value: a type of its own to the rules (`is vector`), with equality only
    /// (no members, methods, indexing or ordering), as the official emulator's rules see it.
    case vector([Double])
    /// On a list request, a value the query constrains without fixing it (`RulesConstraint`).
    case constraint(RulesConstraint)
}

/// The service a rules file declares.
public enum RulesService: String, Sendable {
    case firestore = "cloud.firestore"
    case storage = "firebase.storage"

    static let names: Set<String> = [RulesService.firestore.rawValue, RulesService.storage.rawValue]
}

/// The method a request is judged for.
public enum RulesMethod: String, Sendable, CaseIterable {
    case get, list, create, update, delete
}

/// A problem found while compiling a rules file.
public struct RulesIssue: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable { case error = "ERROR", warning = "WARNING" }
    public let fileName: String
    /// 1-based line and column (0 and 0 for an empty source, as the emulator places that error).
    public let line: Int
    public let column: Int
    public let description: String
    public let severity: Severity

    public init(fileName: String, line: Int, column: Int, description: String, severity: Severity) {
        self.fileName = fileName
        self.line = line
        self.column = column
        self.description = description
        self.severity = severity
    }
}

/// Reads documents for `get()`, `exists()`, `getAfter()`, `existsAfter()`.
///
/// Paths are absolute document paths as segments (`databases/(default)/documents/users/u1`).
/// Returns the document as a rules `resource` map (`data`, `id`, `__name__`), or nil when absent.
public protocol RulesDocumentLookup {
    func get(_ path: [String]) -> RulesValue?
    /// The document as it will be if the request's writes succeed.
    func getAfter(_ path: [String]) -> RulesValue?
}

/// One request to judge.
public struct RulesRequest: Sendable {
    public var method: RulesMethod
    /// Absolute document path segments, `["databases", "(default)", "documents", "users", "u1"]`.
    public var path: [String]
    /// `request.auth`: nil when signed out, else a map `{uid, token}`.
    public var auth: RulesValue?
    /// `request.time`.
    public var time: RulesValue
    /// `request.resource` on create/update (the document after the write), else nil.
    public var requestResource: RulesValue?
    /// `resource`: the stored document, or nil when absent. On list, the stand-in for every
    /// document the query could return: `data` is then usually a `RulesConstraint` map of what the
    /// query's filters say (see `RulesConstraint`).
    public var resource: RulesValue?
    /// `request.query` on list (`{limit, offset, orderBy}`), else nil.
    public var query: RulesValue?
    /// The access-call limit: 10 for single-document requests, 20 for batches and transactions.
    public var accessLimit: Int
    /// On list, the path segment that stands for "any document of the collection": a `{wildcard}`
    /// taking it is a string about which nothing is known (no condition on it is proven), as the
    /// document a list reads is not one document. nil: every segment is what it says.
    public var listPlaceholder: String?
    /// Cloud Firestore's request map: `request.resource` only on writes (null on delete) and
    /// `request.query` only on list; reading either elsewhere is `Property resource is undefined
    /// on object.`, as on the official emulator. false (Storage rules, Rules API test cases): both
    /// are null when absent.
    public var methodShaped = false

    public init(method: RulesMethod, path: [String], auth: RulesValue?, time: RulesValue,
                requestResource: RulesValue? = nil, resource: RulesValue? = nil, query: RulesValue? = nil,
                accessLimit: Int = 10, listPlaceholder: String? = nil) {
        self.method = method
        self.path = path
        self.auth = auth
        self.time = time
        self.requestResource = requestResource
        self.resource = resource
        self.query = query
        self.accessLimit = accessLimit
        self.listPlaceholder = listPlaceholder
    }
}

/// Reads Firestore documents for Cloud Storage rules' `firestore.get()` / `firestore.exists()`:
/// the seam through which the Storage emulator reads Hearth's own Firestore (wired in `hearth`).
public protocol FirestoreRulesReader: Sendable {
    /// The document at `path` (`["databases", "(default)", "documents", "users", "u1"]`) of
    /// `projectID` as a rules `resource` map, nil when it does not exist.
    /// - Throws: when the read failed; the caller denies (a failed lookup is never "absent").
    func rulesResource(projectID: String, path: [String]) throws -> RulesValue?
}

extension RulesValue {
    /// `request.auth` from an ID token's verified claims: `{uid, token}` (plain JSON, no typed values).
    public static func auth(uid: String, claims: JSONObject) -> RulesValue {
        .map(["uid": .string(uid), "token": plain(.object(claims))])
    }

    /// Plain JSON as rules values: numbers stay ints or floats, objects become maps.
    public static func plain(_ j: JSON) -> RulesValue {
        switch j {
        case .null: .null
        case .bool(let b): .bool(b)
        case .int(let i): .int(i)
        case .double(let d): .float(d)
        case .string(let s): .string(s)
        case .array(let a): .list(a.map(plain))
        case .object(let o): .map(RulesMap(o.map { ($0.0, plain($0.1)) }))
        }
    }
}
