import Foundation
import Testing
@testable import HearthClient

@Suite struct GoogleAPIErrorTests {
    @Test func identityToolkitErrors() throws {
        let body = #"{"error":{"code":400,"message":"WEAK_PASSWORD : Password should be at least 6 characters","errors":[{"message":"WEAK_PASSWORD : Password should be at least 6 characters","domain":"global","reason":"invalid"}]}}"#
        let e = try #require(GoogleAPIError(status: 400, body: Data(body.utf8)))
        #expect(e.code == 400)
        #expect(e.status == nil)
        #expect(e.authErrorCode == "WEAK_PASSWORD")
        #expect(e.reason == "invalid")
        #expect(e.rawBody == body)
    }

    @Test func firestoreRulesDenialKeepsTheMessage() throws {
        let body = #"{"error":{"code":403,"message":"\nfalse for 'create' @ L12, evaluation trace …","status":"PERMISSION_DENIED"}}"#
        let e = try #require(GoogleAPIError(status: 403, body: Data(body.utf8)))
        #expect(e.status == "PERMISSION_DENIED")
        #expect(e.message.contains("false for 'create' @ L12"))
    }

    @Test func streamedMethodErrorsComeInAnArray() throws {
        let body = #"[{"error":{"code":403,"message":"Null value error. for 'list' @ L11","status":"PERMISSION_DENIED"}}]"#
        let e = try #require(GoogleAPIError(status: 403, body: Data(body.utf8)))
        #expect(e.status == "PERMISSION_DENIED")
        #expect(e.message == "Null value error. for 'list' @ L11")
    }

    @Test func uploadsAPIErrorsNameTheField() throws {
        let body = #"{"error":{"code":400,"status":"INVALID_ARGUMENT","reason":"INVALID_FILE_EXT","message":"fileExt '.jpg' is invalid","field":"fileExt"}}"#
        let e = try #require(GoogleAPIError(status: 400, body: Data(body.utf8)))
        #expect(e.field == "fileExt")
        #expect(e.reason == "INVALID_FILE_EXT")
        let viaDetails = #"{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"contentType","description":"d"}]}]}}"#
        #expect(GoogleAPIError(status: 400, body: Data(viaDetails.utf8))?.field == "contentType")
    }

    @Test(arguments: ["", "[]", "{}", #"{"error": "string"}"#, "<Error/>"])
    func otherBodiesAreNotGoogleErrors(_ body: String) {
        #expect(GoogleAPIError(status: 500, body: Data(body.utf8)) == nil)
    }
}
