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
}
