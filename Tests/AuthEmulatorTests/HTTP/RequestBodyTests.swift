import HearthCore
import Testing
@testable import AuthEmulator

@Suite struct RequestBodyTests {
    @Test(arguments: [
        ("return_secure_token", "returnSecureToken"), ("refresh_token", "refreshToken"), ("localId", "localId"),
        ("grant-type", "grantType"), ("_private", "private"), ("a__b", "aB"),
    ])
    func camelCase(input: String, expected: String) {
        #expect(RequestBody.camelCase(input) == expected)
    }

    @Test func nestedKeysAreCamelCased() throws {
        let body = try RequestBody.parse(Array(#"{"sign_in":{"allow_duplicate_emails":true},"users":[{"local_id":"x"}]}"#.utf8))
        #expect(try body.object("signIn")?.bool("allowDuplicateEmails") == true)
        #expect(try body.objects("users")?.first?.string("localId") == "x")
    }

    @Test func typedAccessors() throws {
        let body = try RequestBody.parse(Array(#"{"s":"x","n":12,"d":3.0,"b":true,"bs":"false","arr":["a",1],"o":{},"nul":null}"#.utf8))
        #expect(try body.string("s") == "x")
        #expect(try body.string("n") == "12")
        #expect(try body.int64("n") == 12)
        #expect(try body.int64("d") == 3)
        #expect(throws: AuthError.self) { try body.int64("s") }
        #expect(try body.bool("b") == true)
        #expect(try body.bool("bs") == false)
        #expect(try body.strings("arr") == ["a", "1"])
        #expect(try body.string("nul") == nil)
        #expect(try body.string("missing") == nil)
        #expect(body.has("o") && !body.has("nul"))
        #expect(throws: AuthError.self) { try body.string("o") }
        #expect(throws: AuthError.self) { try body.bool("n") }
        #expect(throws: AuthError.self) { try body.strings("s") }
        #expect(throws: AuthError.self) { try body.object("arr") }
    }

    @Test func wrongTypeErrorNamesTheField() throws {
        let body = try RequestBody.parse(Array(#"{"users":[{"email":{}}]}"#.utf8))
        let user = try #require(try body.objects("users")?.first)
        #expect(throws: AuthError.invalidArgument("Invalid JSON payload received. /users/0/email should be string", reason: "invalid")) {
            try user.string("email")
        }
    }

    /// A number past a double's range is refused with the whole body, as Google's front end does:
    /// read as infinity, a string field took the text "inf" (`displayName: 1e400`).
    @Test(arguments: [(#"{"displayName": 1e400}"#, 16), (#"{"validSince": -1e999}"#, 15), (#"{"users": [{"createdAt": 2e308}]}"#, 25)])
    func numbersPastADoublesRangeAreRefused(text: String, offset: Int) {
        #expect(throws: AuthError.invalidArgument(
            "Invalid JSON payload received. Number exceeds the range of double. at byte \(offset).", reason: "parseError")) {
            try RequestBody.parse(Array(text.utf8))
        }
    }

    @Test func emptyAndWhitespaceBodiesAreEmptyObjects() throws {
        #expect(try RequestBody.parse([]).object.isEmpty)
        #expect(try RequestBody.parse(Array(" \n".utf8)).object.isEmpty)
    }

    @Test func formBodies() {
        let body = RequestBody.form("grant_type=refresh_token&refresh_token=a%2Bb+c")
        #expect(body["grantType"] == "refresh_token")
        #expect(body["refreshToken"] == "a+b c")
    }
}
