import Foundation
import HearthCore
import Testing
@testable import SecurityRules

/// Paths of the repository and the shared reference material, found from this file's location
/// (symlinks resolved, so the scratch package finds the same files as the main one).
enum Fixtures {
    static let testsDirectory = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
    static let repoRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
    static let corpusRoot = repoRoot.deletingLastPathComponent().appendingPathComponent("shared/reference/rules-corpus")

    /// Whether the reference corpus sits beside the checkout; a fresh clone has no `../shared`, and
    /// the tests that read it skip (with `corpusMissing` as the reason) instead of failing.
    static let hasCorpus = FileManager.default.fileExists(atPath: corpusRoot.path)
    static let corpusMissing: Comment = "needs ../shared/reference/rules-corpus beside the checkout (absent in a fresh clone)"

    static func read(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }

    /// Every `.rules` file of the corpus, relative to the corpus root.
    static var corpusFiles: [String] {
        guard let e = FileManager.default.enumerator(at: corpusRoot, includingPropertiesForKeys: nil) else { return [] }
        var out: [String] = []
        for case let url as URL in e where url.pathExtension == "rules" {
            out.append(String(url.path.dropFirst(corpusRoot.path.count + 1)))
        }
        return out.sorted()
    }

    static func corpus(_ relative: String) -> String { read(corpusRoot.appendingPathComponent(relative)) }
}

/// An in-memory document store for get()/exists().
struct MapLookup: RulesDocumentLookup {
    var documents: [String: [String: RulesValue]] = [:]
    var after: [String: [String: RulesValue]]? = nil

    func resource(_ path: [String], _ data: [String: RulesValue]?) -> RulesValue? {
        guard let data else { return nil }
        return .map(["data": .map(RulesMap(data)), "id": .string(path.last ?? ""), "__name__": .path(path)])
    }

    func get(_ path: [String]) -> RulesValue? { resource(path, documents[path.joined(separator: "/")]) }
    func getAfter(_ path: [String]) -> RulesValue? { resource(path, (after ?? documents)[path.joined(separator: "/")]) }
}

/// Builders for requests.
enum Req {
    static let time = RulesValue.timestamp(seconds: 1_767_225_600, nanos: 0)   // 2026-01-01T00:00:00Z

    static func path(_ p: String) -> [String] { ["databases", "(default)", "documents"] + p.split(separator: "/").map(String.init) }

    static func auth(_ uid: String?, _ claims: [String: RulesValue] = [:]) -> RulesValue? {
        guard let uid else { return nil }
        var token = claims
        token["sub"] = .string(uid)
        return .map(["uid": .string(uid), "token": .map(RulesMap(token))])
    }

    static func doc(_ p: String, _ data: [String: RulesValue]) -> RulesValue {
        let segs = path(p)
        return .map(["data": .map(RulesMap(data)), "id": .string(segs.last!), "__name__": .path(segs)])
    }

    static func make(_ method: RulesMethod, _ p: String, uid: String? = nil, claims: [String: RulesValue] = [:],
                     data: [String: RulesValue]? = nil, existing: [String: RulesValue]? = nil,
                     query: RulesValue? = nil, accessLimit: Int = 10) -> RulesRequest {
        RulesRequest(method: method, path: path(p), auth: auth(uid, claims), time: time,
                     requestResource: data.map { doc(p, $0) }, resource: existing.map { doc(p, $0) },
                     query: query, accessLimit: accessLimit)
    }
}

/// Compiles or fails loudly.
func compiled(_ source: String, _ name: String = "test.rules") -> Ruleset {
    let (r, issues) = Ruleset.compile(source, fileName: name)
    guard let r else { fatalError("did not compile: \(issues)") }
    return r
}

/// Wraps allow statements in the usual service/database blocks.
func rules(_ body: String, version: Int = 2) -> String {
    """
    rules_version = '\(version)';
    service cloud.firestore {
      match /databases/{database}/documents {
    \(body)
      }
    }
    """
}

/// Evaluates an expression; errors become "error: <message>".
func probe(_ expression: String, request: RulesRequest? = nil, lookup: (any RulesDocumentLookup)? = nil) -> RulesValue? {
    if case .success(let v) = Ruleset.probe(expression, request: request, lookup: lookup) { return v }
    return nil
}

func probeError(_ expression: String, request: RulesRequest? = nil) -> String? {
    if case .failure(let e) = Ruleset.probe(expression, request: request) { return e.message }
    return nil
}
