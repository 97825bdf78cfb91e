import HearthCore
import HearthHTTP
import Testing
@testable import UploadsAPI

@Suite struct UploadsErrorTests {
    static let all: [UploadsError] = [
        .invalidJSON("x"), .missingField("f"), .wrongType(field: "f", expected: "a string", got: "number"),
        .contentTypeNotAllowed("text/html", allowed: ["image/png"]), .invalidFileExt(".x", reason: "r"),
        .expiresOutOfRange(field: "expiresSeconds", value: "0", max: 3600), .invalidFileID("__x__", reason: "r"),
        .invalidKey(field: "key", key: "k", reason: "r"), .invalidValue(field: "originalName", reason: "r"), .unusableUID("a/b"),
        .missingIDToken, .malformedAuthorization, .idToken(.expired), .idToken(.revoked), .idToken(.disabled),
        .idToken(.userNotFound), .idToken(.wrongProject("p")), .idToken(.malformed("m")), .appCheckMissing, .appCheckInvalid,
        .notOwner(field: "key", key: "k", uid: "u"), .objectNotFound(key: "k", bucket: "b"),
        .objectArchived(field: "s3Key", key: "k", storageClass: "GLACIER"), .noRoute(method: "GET", path: "/x"),
        .methodNotAllowed(method: "GET", path: "/x"), .bodyTooLarge(limit: 10), .backend("b"),
    ]

    @Test(arguments: all)
    func everyErrorRendersGoogleShapedJSON(_ error: UploadsError) throws {
        let r = error.render()
        #expect(r.status == error.httpStatus)
        #expect(r.headers["Content-Type"] == "application/json; charset=utf-8")
        let body = try JSON.parse(r.bodyBytes ?? [])
        #expect(body["error"]?["code"] == .int(Int64(error.httpStatus)))
        #expect(body["error"]?["status"]?.stringValue?.isEmpty == false)
        #expect(body["error"]?["reason"] == .string(error.reason))
        #expect(body["error"]?["message"]?.stringValue?.isEmpty == false)
        #expect(body["error"]?["field"]?.stringValue == error.field)
        if error.httpStatus == 401 { #expect(r.headers["WWW-Authenticate"]?.hasPrefix("Bearer realm=") == true) }
    }

    @Test func reasonsAreDistinct() {
        let reasons = Self.all.map(\.reason)
        #expect(Set(reasons).count == reasons.count)
    }

    @Test(arguments: zip([400, 401, 403, 404, 405, 413, 500],
                         ["INVALID_ARGUMENT", "UNAUTHENTICATED", "PERMISSION_DENIED", "NOT_FOUND", "METHOD_NOT_ALLOWED", "RESOURCE_EXHAUSTED", "INTERNAL"]))
    func statusNamesFollowGoogleCanonicalCodes(_ code: Int, _ status: String) {
        let matching = Self.all.filter { $0.httpStatus == code }
        #expect(!matching.isEmpty)
        for e in matching { #expect(e.status == status) }
    }

    @Test func quotesInMessagesCannotBreakTheAuthenticateHeader() {
        let r = UploadsError.idToken(.malformed(#"bad "quote""#)).render()
        let header = r.headers["WWW-Authenticate"] ?? ""
        #expect(header.filter { $0 == "\"" }.count % 2 == 0)
    }
}
