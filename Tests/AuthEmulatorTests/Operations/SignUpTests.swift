import HearthCore
import Testing
@testable import AuthEmulator

@Suite struct SignUpTests {
    let it = AuthHarness.it

    @Test func emailPasswordSignUpReturnsTokens() throws {
        let h = try AuthHarness()
        let r = h.post("\(it)/accounts:signUp", .object(["email": "Alice@Example.com", "password": "secret123", "returnSecureToken": true]))
        #expect(r.status == 200)
        let j = r.json
        #expect(j["kind"] == "identitytoolkit#SignupNewUserResponse")
        #expect(j["email"] == "alice@example.com")
        #expect(j["localId"]?.stringValue?.count == 28)
        #expect(j["expiresIn"] == "3600")
        #expect(j["refreshToken"]?.stringValue?.isEmpty == false)
        let token = try #require(AuthHarness.decode(j["idToken"]?.stringValue ?? ""))
        #expect(token.header == JSONObject([("alg", "none"), ("typ", "JWT")]))
        #expect(token.signature.isEmpty)
        #expect(token.payload["firebase"]?["sign_in_provider"] == "password")
        #expect(j.objectValue?.keys == ["kind", "localId", "email", "idToken", "refreshToken", "expiresIn"])
    }

    @Test func emptyBodyCreatesAnonymousUser() throws {
        let h = try AuthHarness()
        let j = h.post("\(it)/accounts:signUp").json
        #expect(j["email"] == nil)
        let payload = try #require(AuthHarness.decode(j["idToken"]?.stringValue ?? "")).payload
        #expect(payload["provider_id"] == "anonymous")
        #expect(payload["firebase"]?["sign_in_provider"] == "anonymous")
        #expect(payload["firebase"]?["identities"] == .object([:]))
        #expect(payload["email"] == nil)
    }

    @Test(arguments: [
        (#"{"email":"a@b.com"}"#, "MISSING_PASSWORD"),
        (#"{"password":"secret123"}"#, "MISSING_EMAIL"),
        (#"{"email":"not-an-email","password":"secret123"}"#, "INVALID_EMAIL"),
        (#"{"email":"a@b.com","password":"12345"}"#, "WEAK_PASSWORD : Password should be at least 6 characters"),
        (#"{"email":"","password":""}"#, "INVALID_EMAIL"),
        (#"{"localId":"x"}"#, "UNEXPECTED_PARAMETER : User ID"),
    ])
    func signUpErrors(body: String, message: String) throws {
        let h = try AuthHarness()
        let r = h.send("POST", "\(it)/accounts:signUp?key=k", body: Array(body.utf8))
        #expect(r.status == 400)
        #expect(r.errorMessage == message)
        #expect(r.json["error"]?["errors"]?[0]?["reason"] == "invalid")
        #expect(r.json["error"]?["status"] == nil)
    }

    @Test func duplicateEmailIsRejectedCaseInsensitively() throws {
        let h = try AuthHarness()
        h.signUp("dup@example.com")
        let r = h.post("\(it)/accounts:signUp", .object(["email": "DUP@example.com", "password": "secret123"]))
        #expect(r.errorMessage == "EMAIL_EXISTS")
    }

    @Test func allowDuplicateEmailsConfigAllowsASecondAccount() throws {
        let h = try AuthHarness()
        h.signUp("dup@example.com")
        let patch = h.send("PATCH", "/emulator/v1/projects/demo-hearth/config", body: Array(#"{"signIn":{"allowDuplicateEmails":true}}"#.utf8))
        #expect(patch.json["signIn"]?["allowDuplicateEmails"] == true)
        let r = h.post("\(it)/accounts:signUp", .object(["email": "dup@example.com", "password": "secret123"]))
        #expect(r.status == 200)
    }

    @Test func anonymousUserUpgradesWithIdToken() throws {
        let h = try AuthHarness()
        let anon = h.post("\(it)/accounts:signUp").json
        let localId = try #require(anon["localId"]?.stringValue)
        let linked = h.post("\(it)/accounts:signUp", .object(["idToken": anon["idToken"]!, "email": "up@example.com", "password": "secret123"])).json
        #expect(linked["localId"]?.stringValue == localId)
        #expect(linked["email"] == "up@example.com")
        #expect(h.signIn("up@example.com").json["localId"]?.stringValue == localId)
    }

    @Test func adminCreateWithLocalIdAndProfile() throws {
        let h = try AuthHarness()
        let r = h.post("\(it)/projects/demo-hearth/accounts", .object([
            "localId": "custom-uid", "email": "admin@example.com", "password": "secret123", "displayName": "Ada",
            "photoUrl": "http://p/x.png", "emailVerified": true, "phoneNumber": "+15555550100", "disabled": true,
        ]), admin: true)
        #expect(r.status == 200)
        #expect(r.json["localId"] == "custom-uid")
        #expect(r.json["idToken"] == nil)
        let user = try #require(h.lookupAdmin("custom-uid"))
        #expect(user["displayName"] == "Ada")
        #expect(user["emailVerified"] == true)
        #expect(user["disabled"] == true)
        #expect(user["phoneNumber"] == "+15555550100")
        let providers = user["providerUserInfo"]?.arrayValue?.compactMap { $0["providerId"]?.stringValue }
        #expect(providers == ["password", "phone"])
        let again = h.post("\(it)/projects/demo-hearth/accounts", .object(["localId": "custom-uid"]), admin: true)
        #expect(again.errorMessage == "DUPLICATE_LOCAL_ID")
        let phone = h.post("\(it)/projects/demo-hearth/accounts", .object(["phoneNumber": "+15555550100"]), admin: true)
        #expect(phone.errorMessage == "PHONE_NUMBER_EXISTS")
        let badPhone = h.post("\(it)/projects/demo-hearth/accounts", .object(["phoneNumber": "555"]), admin: true)
        #expect(badPhone.errorMessage == "INVALID_PHONE_NUMBER : Invalid format.")
    }

    @Test func passwordIsStoredOnlyAsASaltedHash() throws {
        let h = try AuthHarness()
        let a = h.signUp("one@example.com", "same-password")
        let b = h.signUp("two@example.com", "same-password")
        let rows = try h.database.read { conn in
            try conn.rows("SELECT password_hash, salt, password_scheme FROM auth_users ORDER BY email") { ($0.blob(0), $0.blob(1), $0.text(2)) }
        }
        #expect(rows.count == 2)
        #expect(rows[0].0 != rows[1].0)
        #expect(rows[0].1 != rows[1].1)
        #expect(rows[0].1.count == 16)
        #expect(rows[0].2 == "pbkdf2-sha256:2")
        #expect(!rows[0].0.isEmpty && String(decoding: rows[0].0, as: UTF8.self) != "same-password")
        #expect(a["localId"] != b["localId"])
    }

    @Test func projectsAreIsolated() throws {
        let h = try AuthHarness()
        let created = h.post("\(it)/projects/other-project/accounts", .object(["email": "iso@example.com", "password": "secret123"]), admin: true)
        #expect(created.status == 200)
        #expect(h.signIn("iso@example.com").errorMessage == "EMAIL_NOT_FOUND")
        #expect(h.lookupAdmin(created.json["localId"]?.stringValue ?? "") == nil)
        #expect(h.lookupAdmin(created.json["localId"]?.stringValue ?? "", project: "other-project") != nil)
        // The same email may exist once per project.
        #expect(h.signUp("iso@example.com")["localId"] != nil)
    }
}
