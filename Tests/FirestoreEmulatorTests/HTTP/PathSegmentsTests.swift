import HearthHTTP
import Testing
@testable import FirestoreEmulator

/// The byte-level path split agrees with `Request.pathSegments` on every path.
struct PathSegmentsTests {
    @Test(arguments: [
        "/v1/projects/p/databases/(default)/documents/users/u1",
        "/v1/projects/p/databases/%28default%29/documents/a%2Fb/c",
        "/v1/projects/p/databases/d/documents//top",
        "/",
        "",
        "//",
        "/a%zz/%41%42/%",
        "/caf%C3%A9/x",
        "/café/x",
        "/a/\u{301}b/c",  // a combining mark after a slash: the general split decides
        "/a%FF%FE/b",  // not UTF-8 once decoded: kept as sent
    ])
    func agreesWithTheRequest(path: String) {
        let request = Request(method: "GET", target: path, headers: HTTPHeaders(), body: [])
        #expect(FirestoreHTTPService.pathSegments(request) == request.pathSegments)
    }

    /// The API paths read from the bytes (`apiPath`) are exactly those the general split takes to
    /// `apiDocuments`, with the same database and remaining segments; every other path is left to it.
    @Test(arguments: [
        "/v1/projects/p/databases/(default)/documents:commit",
        "/v1beta1/projects/p/databases/(default)/documents:batchGet",
        "/v1/projects/p/databases/(default)/documents/users/u1/files/f0",
        "/v1/projects/p/databases/(default)/documents//top",
        "/v1/projects/p/databases/(default)/documents/",
        "/v1/projects/p/databases/(default)/",
        "/v1/projects/p/databases/(default)",
        "/v1/projects/p/databases/d/x/y:runQuery",
        "/v1/projects//databases/d/documents",
        "/v1/projects/p/databases//documents",
        "/v1/projects/p/databases",
        "/v1/projects/p",
        "/v1/projects/",
        "/v1/projects",
        "/v1/",
        "/v2/projects/p/databases/d/documents",
        "/v1/Projects/p/databases/d/documents",
        "v1/projects/p/databases/d/documents",
        "//v1/projects/p/databases/d/documents",
        "/v1/projects/p/databases/%28default%29/documents:commit",
        "/v1/projects/p%2Fq/databases/d/documents",
        "/v1/projects/pé/databases/d/documents",
        "/v1/projects/p/databases/d/documents/caf\u{301}",
        "/v1/projects/p/databases/d/documents/a\u{301}/b",
    ])
    func apiPathAgreesWithTheGeneralSplit(path: String) {
        let request = Request(method: "POST", target: path, headers: HTTPHeaders(), body: [])
        let segments = FirestoreHTTPService.pathSegments(request)
        var expected: (DatabaseID, [String])?
        if segments.count >= 6, segments[0] == "v1" || segments[0] == "v1beta1", segments[1] == "projects",
           !segments[2].isEmpty, segments[3] == "databases", !segments[4].isEmpty {
            expected = (DatabaseID(project: segments[2], database: segments[4]), Array(segments[5...]))
        }
        let fast = FirestoreHTTPService.apiPath(request)
        if let fast {
            // Taken only where the general split would take the API the same way.
            #expect(fast.0 == expected?.0 && fast.1 == expected?.1)
        } else {
            // Left to the general split: fine for any path, but every plain API path is taken.
            let plain = path.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "%") }
            #expect(!(plain && expected != nil))
        }
    }

    /// `databaseVerb` takes exactly the paths the general route would take to a database's own
    /// method (`apiPath`'s one segment `documents:{verb}`, split by `splitVerb`), with the same
    /// database and verb.
    @Test(arguments: [
        "/v1/projects/p/databases/(default)/documents:commit",
        "/v1beta1/projects/p/databases/(default)/documents:batchGet",
        "/v1/projects/demo-hearth/databases/(default)/documents:beginTransaction",
        "/v1/projects/p/databases/d/documents:rollback",
        "/v1/projects/p/databases/d/documents:runQuery",
        "/v1/projects/p/databases/d/documents:listen",
        "/v1/projects/p/databases/d/documents:nope",
        "/v1/projects/p/databases/d/documents:",
        "/v1/projects/p/databases/d/documents:commit:",
        "/v1/projects/p/databases/d/documents:x:commit",
        "/v1/projects/p/databases/d/documents:commit/x",
        "/v1/projects/p/databases/d/documents/x:commit",
        "/v1/projects/p/databases/d/documentss:commit",
        "/v1/projects/p/databases/d/document:commit",
        "/v1/projects/p/databases/d/Documents:commit",
        "/v1/projects/p/databases/d/documents",
        "/v1/projects/p/databases/d/x:commit",
        "/v1/projects/p/databases/d/:commit",
        "/v1/projects/p/databases//documents:commit",
        "/v1/projects//databases/d/documents:commit",
        "/v1/projects/p/databases/%28default%29/documents:commit",
        "/v1/projects/p/databases/d/documents:c%6Fmmit",
        "/v1/projects/pé/databases/d/documents:commit",
        "/v1/projects/p/databases/d/documents:commit\u{301}",
        "/v2/projects/p/databases/d/documents:commit",
    ])
    func databaseVerbAgreesWithTheGeneralRoute(path: String) {
        let request = Request(method: "POST", target: path, headers: HTTPHeaders(), body: [])
        var expected: (DatabaseID, String)?
        if let (database, rest) = FirestoreHTTPService.apiPath(request), rest.count == 1,
           let (name, verb) = FirestoreHTTPService.splitVerb(rest[0]), name == "documents" {
            expected = (database, verb)
        }
        let fast = FirestoreHTTPService.databaseVerb(request)
        #expect(fast?.0 == expected?.0 && fast?.1 == expected?.1, "\(path)")
    }

    /// `splitVerb` on bytes agrees with the Character-based split it replaces, ASCII or not.
    @Test(arguments: [
        "documents:commit", "documents:batchGet", "documents:nope", "documents", ":commit", "a:b:commit",
        "documents:commit:", "documents:Commit", "x:runQuery", "caf\u{E9}:commit", "a:\u{301}commit",
        "a\u{301}:commit", "documents:commit\u{301}", "",
    ])
    func verbSplitAgreesWithCharacters(segment: String) {
        var expected: (String, String)?
        if let colon = segment.utf8.lastIndex(of: UInt8(ascii: ":")) {
            let v = String(segment[segment.utf8.index(after: colon)...])
            if FirestoreHTTPService.verbs.contains(v) { expected = (String(segment[..<colon]), v) }
        }
        let split = FirestoreHTTPService.splitVerb(segment)
        #expect(split?.0 == expected?.0 && split?.1 == expected?.1)
    }

    /// `verb(named:)` knows every member of `verbs` (a verb added there must be added there too) and
    /// nothing else.
    @Test func verbLiteralsAreTheVerbs() {
        for v in FirestoreHTTPService.verbs {
            var bytes = Array(v.utf8)
            #expect(bytes.withUnsafeMutableBufferPointer { FirestoreHTTPService.verb(named: UnsafeBufferPointer($0)) } == v)
        }
        for other in ["", "Commit", "commits", "commi", "batchget", "list", "x"] {
            var bytes = Array(other.utf8)
            #expect(bytes.withUnsafeMutableBufferPointer { FirestoreHTTPService.verb(named: UnsafeBufferPointer($0)) } == nil)
        }
    }
}
