import HearthCore
import HearthHTTP
import Testing
@testable import FirestoreEmulator

/// A REST get the shortcut takes (`FirestoreHTTPService.knownDocument`) is answered exactly as the
/// router answers it — the same status, headers and bytes, rules decisions and errors included —
/// and the shortcut takes only plain gets of cached names.
struct KnownDocumentTests {
    /// Owners read their files; `granted/*` is read by whoever has a `grants/{uid}` document (a rule
    /// that reads the store, so a cached entry is not judged on its own).
    static let rules = DocumentCacheTests.rules

    /// One request: the target after `/v1/{root}` (or a whole target when it starts with `//`), who
    /// sends it, and whether the shortcut should take it.
    struct Case: CustomTestStringConvertible, Sendable {
        let label: String
        let method: String
        let target: String
        let who: Who
        let shortcut: Bool
        var testDescription: String { label }

        init(_ label: String, _ target: String, _ who: Who, method: String = "GET", shortcut: Bool) {
            self.label = label
            self.method = method
            self.target = target
            self.who = who
            self.shortcut = shortcut
        }
    }

    enum Who: Sendable { case owner, alice, bob, anonymous, header(String) }

    static let cases: [Case] = [
        Case("the owner's own file", "/users/alice/files/f1", .alice, shortcut: true),
        Case("another user's file: denied", "/users/alice/files/f1", .bob, shortcut: true),
        Case("signed out: denied", "/users/alice/files/f1", .anonymous, shortcut: true),
        Case("the admin", "/users/alice/files/f1", .owner, shortcut: true),
        Case("not a JWT", "/users/alice/files/f1", .header("Bearer not-a-jwt"), shortcut: true),
        Case("not a bearer", "/users/alice/files/f1", .header("Basic YWxpY2U6eA=="), shortcut: true),
        Case("a missing document (cached absence)", "/users/alice/files/missing", .alice, shortcut: true),
        Case("a missing document, denied", "/users/alice/files/missing", .bob, shortcut: true),
        Case("rules that read documents: allowed", "/granted/g1", .alice, shortcut: true),
        Case("rules that read documents: denied", "/granted/g1", .bob, shortcut: true),
        Case("a document never read (not cached)", "/users/alice/files/f2", .alice, shortcut: false),
        Case("HEAD", "/users/alice/files/f1", .alice, method: "HEAD", shortcut: false),
        Case("POST", "/users/alice/files/f1", .alice, method: "POST", shortcut: false),
        Case("a mask", "/users/alice/files/f1?mask.fieldPaths=n", .alice, shortcut: false),
        Case("prettyPrint", "/users/alice/files/f1?prettyPrint=true", .alice, shortcut: false),
        Case("an empty query", "/users/alice/files/f1?", .alice, shortcut: false),
        Case("an unknown parameter", "/users/alice/files/f1?x=1", .alice, shortcut: false),
        Case("percent-encoded id", "/users/alice/files/%66%31", .alice, shortcut: false),
        Case("percent-encoded slash", "/users/alice%2Ffiles/f1", .alice, shortcut: false),
        Case("trailing slash", "/users/alice/files/f1/", .alice, shortcut: false),
        Case("double slash", "/users/alice/files//f1", .alice, shortcut: false),
        Case("discovery's leading empty segment", "//users/alice/files/f1", .alice, shortcut: false),
        Case("the collection", "/users/alice/files", .alice, shortcut: false),
        Case("a subcollection of the document", "/users/alice/files/f1/sub", .alice, shortcut: false),
        Case("v1beta1", "//v1beta1/projects/demo-test/databases/(default)/documents/users/alice/files/f1", .alice, shortcut: false),
        Case("database percent-encoded", "//v1/projects/demo-test/databases/%28default%29/documents/users/alice/files/f1", .alice, shortcut: false),
        Case("another project", "//v1/projects/other/databases/(default)/documents/users/alice/files/f1", .alice, shortcut: false),
        Case("non-ASCII", "/users/alice/files/f\u{301}1", .alice, shortcut: false),
        Case("a reserved id", "/users/alice/files/__x__", .alice, shortcut: false),
        Case("no v1", "//projects/demo-test/databases/(default)/documents/users/alice/files/f1", .alice, shortcut: false),
    ]

    static func request(_ h: TestHarness, _ c: Case) -> Request {
        var headers = HTTPHeaders()
        switch c.who {
        case .owner: headers.add("Authorization", "Bearer owner")
        case .alice: headers.add("Authorization", "Bearer " + TestHarness.token("alice"))
        case .bob: headers.add("Authorization", "Bearer " + TestHarness.token("bob"))
        case .anonymous: break
        case .header(let value): headers.add("Authorization", value)
        }
        let target = c.target.hasPrefix("//") ? String(c.target.dropFirst()) : h.api(c.target)
        return Request(method: c.method, target: target, headers: headers, body: [])
    }

    /// A harness whose read cache holds f1, a missing document and granted/g1 (read once each by
    /// the owner through the router), as a client's repeated gets find it.
    static func harness() throws -> TestHarness {
        let h = try TestHarness(rules: rules)
        h.put("users/alice/files/f1", ["name": str("a \"quoted\" é"), "n": int(7)])
        h.put("users/alice/files/f2", ["n": int(2)])
        h.put("granted/g1", ["n": int(1)])
        h.put("grants/alice", ["ok": bool(true)])
        let http = FirestoreHTTPService(service: h.service)
        for p in ["users/alice/files/f1", "users/alice/files/missing", "granted/g1"] {
            _ = http.routed(Request(method: "GET", target: h.api("/" + p), headers: HTTPHeaders([("Authorization", "Bearer owner")])))
            #expect(h.service.storage.readCache.entry(h.root + "/" + p) != nil, "\(p) is cached")
        }
        return h
    }

    @Test(arguments: cases)
    func answersAsTheRouterDoes(_ c: Case) throws {
        let h = try Self.harness()
        let http = FirestoreHTTPService(service: h.service)
        let request = Self.request(h, c)
        #expect((http.knownDocument(request) != nil) == c.shortcut)
        let routed = http.routed(request)
        let handled = http.handle(request)
        #expect(handled.status == routed.status)
        #expect(handled.headers.fields.map { "\($0.name): \($0.value)" } == routed.headers.fields.map { "\($0.name): \($0.value)" })
        #expect(handled.bodyBytes == routed.bodyBytes)
        // Asked twice (the second time with whatever the first put in the cache), still the same.
        #expect(http.handle(request).bodyBytes == routed.bodyBytes)
    }

    @Test func aWriteEndsTheShortcutUntilTheNextRead() throws {
        let h = try Self.harness()
        let http = FirestoreHTTPService(service: h.service)
        let request = Self.request(h, Case("", "/users/alice/files/f1", .alice, shortcut: true))
        #expect(http.knownDocument(request) != nil)
        h.put("users/alice/files/f1", ["n": int(8)])
        #expect(http.knownDocument(request) == nil)
        let first = http.handle(request)
        #expect(first.status == 200)
        #expect(http.knownDocument(request) != nil)
        let second = http.handle(request)
        #expect(second.bodyBytes == first.bodyBytes)
        #expect((try? JSON.parse(second.bodyBytes ?? []))?["fields"]?["n"] == int(8))
    }
}
