import HearthCore
import HearthHTTP
import Testing
@testable import UploadsAPI

@Suite struct CallerAuthenticatorTests {
    static let routes: [(String, String)] = [
        ("/v1/uploads/presign", #"{"contentType": "image/png", "fileExt": "png"}"#),
        ("/v1/files/f1/complete", #"{"key": "users/alice/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.png"}"#),
        ("/v1/files/presign-download", #"{"s3Key": "users/alice/uploads/0e8a5d0c-7d5e-4c3a-9d2e-0b5f8f1e2a3b.png"}"#),
    ]

    @Test(arguments: [
        ("expired", IDTokenError.expired, "ID_TOKEN_EXPIRED"),
        ("revoked", .revoked, "ID_TOKEN_REVOKED"),
        ("disabled", .disabled, "USER_DISABLED"),
        ("deleted", .userNotFound, "USER_NOT_FOUND"),
        ("wrong project", .wrongProject("aud is other-project"), "INVALID_ID_TOKEN_AUDIENCE"),
        ("malformed", .malformed("not a JWT"), "INVALID_ID_TOKEN"),
    ])
    func refusedTokensAre401OnEveryEndpoint(_ name: String, _ error: IDTokenError, _ reason: String) throws {
        let f = try Fixture()
        f.verifier.refuse("bad", error)
        for (path, body) in Self.routes {
            let r = f.send("POST", path, token: "bad", json: body)
            #expect(r.status == 401, "\(name) \(path)")
            #expect(r.json["error"]?["status"] == .string("UNAUTHENTICATED"))
            #expect(r.reason == reason, "\(name) \(path)")
            #expect(r.json["error"]?["message"] == .string(error.message))
            #expect(r.headers["WWW-Authenticate"]?.hasPrefix(#"Bearer realm="hearth-uploads", error="invalid_token""#) == true)
        }
        #expect(f.objects.presigns.isEmpty)
        #expect(f.documents.writes.isEmpty)
    }

    @Test(arguments: [
        ("absent", nil, "MISSING_ID_TOKEN"),
        ("empty", "", "MISSING_ID_TOKEN"),
        ("bearer without token", "Bearer ", "MISSING_ID_TOKEN"),
        ("basic", "Basic YWxpY2U6cHc=", "MALFORMED_AUTHORIZATION"),
        ("token without scheme", "alice-token", "MALFORMED_AUTHORIZATION"),
    ] as [(String, String?, String)])
    func missingOrMalformedAuthorizationIs401(_ name: String, _ header: String?, _ reason: String) throws {
        let f = try Fixture()
        let r = f.send("POST", "/v1/uploads/presign", token: nil, json: #"{"contentType": "image/png", "fileExt": "png"}"#,
                       headers: header.map { [("Authorization", $0)] } ?? [])
        #expect(r.status == 401, "\(name)")
        #expect(r.reason == reason, "\(name)")
        #expect(r.headers["WWW-Authenticate"]?.hasPrefix("Bearer ") == true)
    }

    @Test(arguments: ["bearer alice-token", "BEARER alice-token", "Bearer   alice-token  "])
    func theSchemeIsCaseInsensitive(_ header: String) throws {
        let f = try Fixture()
        let r = f.send("POST", "/v1/uploads/presign", token: nil, json: #"{"contentType": "image/png", "fileExt": "png"}"#,
                       headers: [("Authorization", header)])
        #expect(r.status == 200)
    }

    @Test func authenticationComesBeforeValidation() throws {
        let f = try Fixture()
        let r = f.send("POST", "/v1/uploads/presign", token: nil, json: "not json")
        #expect(r.status == 401)
    }

    @Test func appCheckIsIgnoredWhenNotRequired() throws {
        let f = try Fixture(appCheckTokens: ["good"])
        let body = #"{"contentType": "image/png", "fileExt": "png"}"#
        #expect(f.send("POST", "/v1/uploads/presign", json: body).status == 200)
        #expect(f.send("POST", "/v1/uploads/presign", json: body, headers: [("X-Firebase-AppCheck", "junk")]).status == 200)
    }

    @Test func requiredAppCheckMustVerifyOnEveryEndpoint() throws {
        let f = try Fixture(configuration: UploadsConfiguration(requireAppCheck: true), appCheckTokens: ["good"])
        for (path, body) in Self.routes {
            let missing = f.send("POST", path, json: body)
            #expect(missing.status == 401)
            #expect(missing.reason == "APP_CHECK_TOKEN_MISSING")
            let bad = f.send("POST", path, json: body, headers: [("X-Firebase-AppCheck", "junk")])
            #expect(bad.status == 401)
            #expect(bad.reason == "APP_CHECK_TOKEN_INVALID")
        }
        let ok = f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/png", "fileExt": "png"}"#,
                        headers: [("X-Firebase-AppCheck", "good")])
        #expect(ok.status == 200)
        // A good App Check token does not stand in for the user.
        let noUser = f.send("POST", "/v1/uploads/presign", token: nil, json: #"{"contentType": "image/png", "fileExt": "png"}"#,
                            headers: [("X-Firebase-AppCheck", "good")])
        #expect(noUser.reason == "MISSING_ID_TOKEN")
    }

    @Test func requiredAppCheckWithoutAVerifierRefusesEverything() throws {
        let f = try Fixture(configuration: UploadsConfiguration(requireAppCheck: true), appCheckTokens: nil)
        let r = f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/png", "fileExt": "png"}"#,
                       headers: [("X-Firebase-AppCheck", "anything")])
        #expect(r.status == 401)
        #expect(r.reason == "APP_CHECK_TOKEN_INVALID")
    }

    @Test func tokensAreVerifiedForTheConfiguredProject() throws {
        let f = try Fixture(configuration: UploadsConfiguration(projectID: "my-app"))
        _ = f.send("POST", "/v1/uploads/presign", json: #"{"contentType": "image/png", "fileExt": "png"}"#)
        #expect(f.verifier.calls.map(\.projectID) == ["my-app"])
    }
}
