import HearthCore
import HearthHTTP
import Testing
@testable import AuthEmulator

@Suite struct SecureTokenTests {
    let it = AuthHarness.it
    let path = "/securetoken.googleapis.com/v1/token"

    @Test func formRefreshReturnsTheSecureTokenShape() throws {
        let h = try AuthHarness()
        let up = h.signUp("rt@b.com")
        h.clock.advance(seconds: 600)
        let r = h.refresh(up["refreshToken"]?.stringValue ?? "")
        #expect(r.status == 200)
        #expect(r.json.objectValue?.keys == ["id_token", "access_token", "expires_in", "refresh_token", "token_type", "user_id", "project_id"])
        #expect(r.json["access_token"] == r.json["id_token"])
        #expect(r.json["expires_in"] == "3600")
        #expect(r.json["token_type"] == "Bearer")
        #expect(r.json["user_id"] == up["localId"])
        #expect(r.json["refresh_token"] == up["refreshToken"])
        #expect(r.json["project_id"] == "12345")
        let payload = try #require(AuthHarness.decode(r.json["id_token"]?.stringValue ?? "")).payload
        #expect(payload["iat"] == .int(AuthHarness.start.unixSeconds + 600))
        #expect(payload["auth_time"] == .int(AuthHarness.start.unixSeconds))
        #expect(payload["firebase"]?["sign_in_provider"] == "password")
    }

    @Test func jsonBodyAndCamelCaseAndQueryParametersWork() throws {
        let h = try AuthHarness()
        let token = h.signUp("rt@b.com")["refreshToken"]?.stringValue ?? ""
        let snake = h.send("POST", "\(path)?key=k", body: Array(#"{"grant_type":"refresh_token","refresh_token":"\#(token)"}"#.utf8))
        #expect(snake.status == 200)
        let camel = h.send("POST", "\(path)?key=k", body: Array(#"{"grantType":"refresh_token","refreshToken":"\#(token)"}"#.utf8))
        #expect(camel.status == 200)
        let query = h.send("POST", "\(path)?key=k&grant_type=refresh_token&refresh_token=\(token)")
        #expect(query.status == 200)
    }

    @Test(arguments: [
        ("", "MISSING_GRANT_TYPE"),
        ("grant_type=password", "INVALID_GRANT_TYPE"),
        ("grant_type=refresh_token", "MISSING_REFRESH_TOKEN"),
        ("grant_type=refresh_token&refresh_token=unknown", "INVALID_REFRESH_TOKEN"),
    ])
    func errors(form: String, message: String) throws {
        let h = try AuthHarness()
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/x-www-form-urlencoded")
        let r = h.send("POST", "\(path)?key=k", body: Array(form.utf8), headers: headers)
        #expect(r.status == 400)
        #expect(r.errorMessage == message)
    }

    @Test func refreshTokensDieWithTheAccount() throws {
        let h = try AuthHarness()
        let disabled = h.signUp("dis@b.com")
        h.post("\(it)/projects/demo-hearth/accounts:update", .object(["localId": disabled["localId"]!, "disableUser": true]), admin: true)
        #expect(h.refresh(disabled["refreshToken"]?.stringValue ?? "").errorMessage == "USER_DISABLED")

        let deleted = h.signUp("del@b.com")
        h.post("\(it)/projects/demo-hearth/accounts:delete", .object(["localId": deleted["localId"]!]), admin: true)
        #expect(h.refresh(deleted["refreshToken"]?.stringValue ?? "").errorMessage == "USER_NOT_FOUND")

        let revoked = h.signUp("rev@b.com")
        h.post("\(it)/projects/demo-hearth/accounts:update", .object(["localId": revoked["localId"]!, "validSince": "1800000000"]), admin: true)
        #expect(h.refresh(revoked["refreshToken"]?.stringValue ?? "").errorMessage == "TOKEN_EXPIRED")
        let fresh = h.signIn("rev@b.com")
        #expect(h.refresh(fresh.json["refreshToken"]?.stringValue ?? "").status == 200)
    }

    @Test func refreshTokenWorksWhateverProjectTheKeyMapsTo() throws {
        let h = try AuthHarness()
        let created = h.post("\(it)/projects/proj-b/accounts:signUp", .object([:]), admin: true)
        #expect(created.status == 404)
        let ct = h.post("\(it)/accounts:signInWithCustomToken", .object(["token": #"{"uid":"cross"}"#, "targetProjectId": "proj-b"]), admin: true)
        let r = h.refresh(ct.json["refreshToken"]?.stringValue ?? "")
        #expect(r.status == 200)
        #expect(AuthHarness.decode(r.json["id_token"]?.stringValue ?? "")?.payload["aud"] == "proj-b")
    }
}
