import HearthCore
import HearthHTTP
import Testing
@testable import AuthEmulator

@Suite struct OobTests {
    let it = AuthHarness.it

    func codes(_ h: AuthHarness) -> [JSON] {
        h.get("/emulator/v1/projects/demo-hearth/oobCodes", admin: false).json["oobCodes"]?.arrayValue ?? []
    }

    @Test func passwordResetFlow() throws {
        let h = try AuthHarness()
        let up = h.signUp("reset@b.com", "old-password")
        var headers = HTTPHeaders()
        headers.set("Host", "localhost:9099")
        let sent = h.send("POST", "\(it)/accounts:sendOobCode?key=k", body: Array(#"{"requestType":"PASSWORD_RESET","email":"Reset@b.com"}"#.utf8),
                          headers: headers)
        #expect(sent.json == .object(["kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": "reset@b.com"]))
        let record = try #require(codes(h).last)
        #expect(record["requestType"] == "PASSWORD_RESET")
        let code = try #require(record["oobCode"]?.stringValue)
        #expect(record["oobLink"]?.stringValue == "http://localhost:9099/emulator/action?mode=resetPassword&lang=en&oobCode=\(code)&apiKey=fake-api-key")
        let check = h.post("\(it)/accounts:resetPassword", .object(["oobCode": .string(code)]))
        #expect(check.json == .object(["kind": "identitytoolkit#ResetPasswordResponse", "requestType": "PASSWORD_RESET", "email": "reset@b.com"]))
        #expect(h.post("\(it)/accounts:resetPassword", .object(["oobCode": .string(code), "newPassword": "abc"])).errorMessage
                == "WEAK_PASSWORD : Password should be at least 6 characters")
        let done = h.post("\(it)/accounts:resetPassword", .object(["oobCode": .string(code), "newPassword": "new-password"]))
        #expect(done.status == 200)
        #expect(h.signIn("reset@b.com", "new-password").status == 200)
        #expect(h.signIn("reset@b.com", "old-password").errorMessage == "INVALID_PASSWORD")
        #expect(h.refresh(up["refreshToken"]?.stringValue ?? "").errorMessage == "TOKEN_EXPIRED")
        #expect(h.lookupAdmin(up["localId"]?.stringValue ?? "")?["emailVerified"] == true)
        #expect(h.post("\(it)/accounts:resetPassword", .object(["oobCode": .string(code), "newPassword": "again-pass"])).errorMessage == "INVALID_OOB_CODE")
        #expect(h.post("\(it)/accounts:resetPassword", .object([:])).errorMessage == "MISSING_OOB_CODE")
    }

    @Test func passwordResetForUnknownEmail() throws {
        let h = try AuthHarness()
        let body: JSON = .object(["requestType": "PASSWORD_RESET", "email": "ghost@b.com"])
        #expect(h.post("\(it)/accounts:sendOobCode", body).errorMessage == "EMAIL_NOT_FOUND")
        _ = h.send("PATCH", "/emulator/v1/projects/demo-hearth/config", body: Array(#"{"emailPrivacyConfig":{"enableImprovedEmailPrivacy":true}}"#.utf8))
        let silent = h.post("\(it)/accounts:sendOobCode", body)
        #expect(silent.status == 200)
        #expect(codes(h).isEmpty)
    }

    @Test func verifyEmailByIdTokenAndApplyCode() throws {
        let h = try AuthHarness()
        let up = h.signUp("verify@b.com")
        let sent = h.post("\(it)/accounts:sendOobCode", .object(["requestType": "VERIFY_EMAIL", "idToken": up["idToken"]!]))
        #expect(sent.json["email"] == "verify@b.com")
        let code = try #require(codes(h).last?["oobCode"])
        let applied = h.post("\(it)/accounts:update", .object(["oobCode": code]))
        #expect(applied.json["emailVerified"] == true)
        #expect(h.post("\(it)/accounts:update", .object(["oobCode": code])).errorMessage == "INVALID_OOB_CODE")
    }

    @Test func adminGeneratesLinkWithReturnOobLink() throws {
        let h = try AuthHarness()
        h.signUp("link@b.com")
        let r = h.post("\(it)/projects/demo-hearth/accounts:sendOobCode", .object([
            "requestType": "VERIFY_EMAIL", "email": "link@b.com", "returnOobLink": true, "continueUrl": "https://app.example.com/done?x=1&y=2",
        ]), admin: true)
        let link = try #require(r.json["oobLink"]?.stringValue)
        #expect(r.json["oobCode"] != nil)
        #expect(link.hasSuffix("&continueUrl=https%3A%2F%2Fapp.example.com%2Fdone%3Fx%3D1%26y%3D2"))
        #expect(h.post("\(it)/accounts:sendOobCode", .object(["requestType": "VERIFY_EMAIL", "email": "link@b.com", "returnOobLink": true]))
            .errorMessage == "INSUFFICIENT_PERMISSION")
        #expect(h.post("\(it)/projects/demo-hearth/accounts:sendOobCode", .object(["requestType": "VERIFY_EMAIL", "email": "none@b.com", "returnOobLink": true]),
                       admin: true).errorMessage == "USER_NOT_FOUND")
    }

    @Test(arguments: [
        (#"{}"#, "MISSING_REQ_TYPE"),
        (#"{"requestType":"PASSWORD_RESET"}"#, "MISSING_EMAIL"),
        (#"{"requestType":"EMAIL_SIGNIN","email":"a@b.com","continueUrl":"not a url"}"#,
         "INVALID_CONTINUE_URI : ((expected an absolute URI with valid scheme and host))"),
        (#"{"requestType":"VERIFY_EMAIL"}"#, "INVALID_ID_TOKEN"),
        (#"{"requestType":"VERIFY_AND_CHANGE_EMAIL","idToken":"x"}"#, "MISSING_NEW_EMAIL"),
    ])
    func sendOobCodeErrors(body: String, message: String) throws {
        let h = try AuthHarness()
        #expect(h.send("POST", "\(it)/accounts:sendOobCode?key=k", body: Array(body.utf8)).errorMessage == message)
    }

    @Test func verifyAndChangeEmail() throws {
        let h = try AuthHarness()
        let up = h.signUp("old@b.com")
        let r = h.post("\(it)/accounts:sendOobCode", .object(["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": up["idToken"]!, "newEmail": "New@b.com"]))
        #expect(r.status == 200)
        let record = try #require(codes(h).last)
        #expect(record["newEmail"] == "new@b.com")
        let applied = h.post("\(it)/accounts:update", .object(["oobCode": record["oobCode"]!]))
        #expect(applied.json["email"] == "new@b.com")
        #expect(applied.json["newEmail"] == "new@b.com")
    }

    @Test func createAuthUriReportsSignInMethods() throws {
        let h = try AuthHarness()
        h.signUp("methods@b.com")
        let r = h.post("\(it)/accounts:createAuthUri", .object(["identifier": "Methods@b.com", "continueUri": "http://localhost"]))
        #expect(r.json["registered"] == true)
        #expect(r.json["allProviders"] == .array(["password"]))
        #expect(r.json["signinMethods"] == .array(["password"]))
        #expect(r.json["sessionId"]?.stringValue?.count == 27)
        let unknown = h.post("\(it)/accounts:createAuthUri", .object(["identifier": "nobody@b.com", "continueUri": "http://localhost"]))
        #expect(unknown.json["registered"] == false)
        #expect(h.post("\(it)/accounts:createAuthUri", .object(["continueUri": "http://localhost"])).errorMessage == "MISSING_IDENTIFIER")
        #expect(h.post("\(it)/accounts:createAuthUri", .object(["identifier": "a@b.com"])).errorMessage == "MISSING_CONTINUE_URI")
        #expect(h.post("\(it)/accounts:createAuthUri", .object(["identifier": "nope", "continueUri": "http://x"])).errorMessage == "INVALID_IDENTIFIER")
        #expect(h.post("\(it)/accounts:createAuthUri", .object(["identifier": "a@b.com", "continueUri": "nope"])).errorMessage == "INVALID_CONTINUE_URI")
        _ = h.send("PATCH", "/emulator/v1/projects/demo-hearth/config", body: Array(#"{"emailPrivacyConfig":{"enableImprovedEmailPrivacy":true}}"#.utf8))
        let hidden = h.post("\(it)/accounts:createAuthUri", .object(["identifier": "methods@b.com", "continueUri": "http://localhost"]))
        #expect(hidden.json.objectValue?.keys == ["kind", "sessionId"])
    }

    @Test func followingEmulatorActionLinks() throws {
        let h = try AuthHarness()
        h.signUp("act@b.com", "old-password")
        _ = h.post("\(it)/accounts:sendOobCode", .object(["requestType": "PASSWORD_RESET", "email": "act@b.com"]))
        let link = try #require(codes(h).last?["oobLink"]?.stringValue)
        let path = String(link.dropFirst("http://127.0.0.1:9099".count))
        let missing = h.send("GET", path)
        #expect(missing.status == 400)
        #expect(missing.json["authEmulator"]?["error"] == "missing newPassword query parameter")
        let done = h.send("GET", path + "&newPassword=brand-new-1")
        #expect(done.status == 200)
        #expect(done.json["authEmulator"]?["success"] == "The password has been successfully updated.")
        #expect(h.signIn("act@b.com", "brand-new-1").status == 200)
        let used = h.send("GET", path + "&newPassword=brand-new-2")
        #expect(used.status == 400)

        let up = h.signUp("v@b.com")
        _ = h.post("\(it)/accounts:sendOobCode", .object(["requestType": "VERIFY_EMAIL", "idToken": up["idToken"]!, "continueUrl": "https://app/ok"]))
        let verifyLink = try #require(codes(h).last?["oobLink"]?.stringValue)
        let verified = h.send("GET", String(verifyLink.dropFirst("http://127.0.0.1:9099".count)))
        #expect(verified.status == 303)
        #expect(verified.headers["Location"] == "https://app/ok")
        #expect(h.lookupAdmin(up["localId"]?.stringValue ?? "")?["emailVerified"] == true)
        #expect(h.send("GET", "/emulator/action?mode=verifyEmail&oobCode=x").json["authEmulator"]?["error"] == "missing apiKey query parameter")
    }
}
