import HearthCore
import HearthCrypto
import Testing
@testable import AuthEmulator

@Suite struct SignInTests {
    let it = AuthHarness.it

    @Test func passwordSignIn() throws {
        let h = try AuthHarness()
        let up = h.signUp("Pat@Example.com")
        h.clock.advance(seconds: 60)
        let r = h.signIn("PAT@example.com")
        #expect(r.status == 200)
        #expect(r.json["kind"] == "identitytoolkit#VerifyPasswordResponse")
        #expect(r.json["registered"] == true)
        #expect(r.json["localId"] == up["localId"])
        #expect(r.json["email"] == "pat@example.com")
        let payload = try #require(AuthHarness.decode(r.json["idToken"]?.stringValue ?? "")).payload
        #expect(payload["auth_time"] == .int(AuthHarness.start.unixSeconds + 60))
        #expect(payload["iat"] == .int(AuthHarness.start.unixSeconds + 60))
        let user = try #require(h.lookupAdmin(up["localId"]?.stringValue ?? ""))
        #expect(user["lastLoginAt"] == .string(String((AuthHarness.start.unixSeconds + 60) * 1000)))
        #expect(user["lastRefreshAt"] == "2027-01-15T08:01:00.000Z")
    }

    @Test(arguments: [
        (#"{"password":"x"}"#, "MISSING_EMAIL"),
        (#"{"email":"bad","password":"x"}"#, "INVALID_EMAIL"),
        (#"{"email":"a@b.com"}"#, "MISSING_PASSWORD"),
        (#"{"email":"nobody@b.com","password":"secret123"}"#, "EMAIL_NOT_FOUND"),
        (#"{"email":"known@b.com","password":"wrong-one"}"#, "INVALID_PASSWORD"),
    ])
    func passwordSignInErrors(body: String, message: String) throws {
        let h = try AuthHarness()
        h.signUp("known@b.com")
        let r = h.send("POST", "\(it)/accounts:signInWithPassword?key=k", body: Array(body.utf8))
        #expect(r.status == 400)
        #expect(r.errorMessage == message)
    }

    @Test func improvedEmailPrivacyHidesWhichCredentialWasWrong() throws {
        let h = try AuthHarness()
        h.signUp("known@b.com")
        _ = h.send("PATCH", "/emulator/v1/projects/demo-hearth/config", body: Array(#"{"emailPrivacyConfig":{"enableImprovedEmailPrivacy":true}}"#.utf8))
        #expect(h.signIn("known@b.com", "wrong-one").errorMessage == "INVALID_LOGIN_CREDENTIALS")
        #expect(h.signIn("nobody@b.com").errorMessage == "INVALID_LOGIN_CREDENTIALS")
        #expect(h.signIn("known@b.com").status == 200)
    }

    @Test func disabledUserCannotSignIn() throws {
        let h = try AuthHarness()
        let up = h.signUp("off@b.com")
        h.post("\(it)/projects/demo-hearth/accounts:update", .object(["localId": up["localId"]!, "disableUser": true]), admin: true)
        #expect(h.signIn("off@b.com").errorMessage == "USER_DISABLED")
    }

    @Test func passwordlessAccountReportsInvalidPassword() throws {
        let h = try AuthHarness()
        h.post("\(it)/projects/demo-hearth/accounts", .object(["email": "nopw@b.com"]), admin: true)
        #expect(h.signIn("nopw@b.com").errorMessage == "INVALID_PASSWORD")
    }

    // MARK: Custom tokens

    static let audience = AuthOperations.customTokenAudience

    @Test func unsignedCustomTokenSignsInAndCarriesClaims() throws {
        let h = try AuthHarness()
        let token = AuthHarness.unsignedToken(header: ["alg": "none", "typ": "JWT"], payload: [
            "iss": "firebase-auth-emulator@example.com", "aud": .string(Self.audience), "iat": 1, "exp": 2,
            "sub": "firebase-auth-emulator@example.com", "uid": "ct-user", "claims": .object(["role": "editor"]),
        ])
        let r = h.post("\(it)/accounts:signInWithCustomToken", .object(["token": .string(token), "returnSecureToken": true]))
        #expect(r.status == 200)
        #expect(r.json["kind"] == "identitytoolkit#VerifyCustomTokenResponse")
        #expect(r.json["isNewUser"] == true)
        let payload = try #require(AuthHarness.decode(r.json["idToken"]?.stringValue ?? "")).payload
        #expect(payload["role"] == "editor")
        #expect(payload["user_id"] == "ct-user")
        #expect(payload["firebase"]?["sign_in_provider"] == "custom")
        let again = h.post("\(it)/accounts:signInWithCustomToken", .object(["token": .string(token)]))
        #expect(again.json["isNewUser"] == false)
        // The claims survive a refresh.
        let refreshed = h.refresh(r.json["refreshToken"]?.stringValue ?? "")
        let refreshedPayload = try #require(AuthHarness.decode(refreshed.json["id_token"]?.stringValue ?? "")).payload
        #expect(refreshedPayload["role"] == "editor")
    }

    @Test func signedCustomTokenIsAcceptedWithoutVerification() throws {
        let h = try AuthHarness()
        let key = try RSAKey.generate(bits: 1024)
        let token = try JWT.rs256(payload: ["aud": .string(Self.audience), "uid": .int(42)], key: key, kid: "sa-key")
        let r = h.post("\(it)/accounts:signInWithCustomToken", .object(["token": .string(token)]))
        #expect(r.status == 200)
        #expect(AuthHarness.decode(r.json["idToken"]?.stringValue ?? "")?.payload["user_id"] == "42")
    }

    @Test func jsonCustomTokenIsAccepted() throws {
        let h = try AuthHarness()
        let r = h.post("\(it)/accounts:signInWithCustomToken", .object(["token": #"{"uid":"json-user"}"#]))
        #expect(r.status == 200)
    }

    @Test(arguments: [
        ("", "MISSING_CUSTOM_TOKEN"),
        ("not a jwt", "INVALID_CUSTOM_TOKEN : Invalid assertion format"),
        ("{bad json", "INVALID_CUSTOM_TOKEN : ((Auth Emulator only accepts strict JSON or JWTs as fake custom tokens.))"),
        (#"{"claims":{}}"#, "MISSING_IDENTIFIER"),
        (#"{"uid":"u","claims":{"sub":"x"}}"#, "FORBIDDEN_CLAIM : sub"),
        (#"{"uid":"u","claims":[1]}"#, "INVALID_CLAIMS"),
    ])
    func customTokenErrors(token: String, message: String) throws {
        let h = try AuthHarness()
        let r = h.post("\(it)/accounts:signInWithCustomToken", .object(["token": .string(token)]))
        #expect(r.errorMessage == message)
    }

    @Test func idTokenUsedAsCustomTokenIsRejected() throws {
        let h = try AuthHarness()
        let id = h.signUp("x@b.com")["idToken"]?.stringValue ?? ""
        let r = h.post("\(it)/accounts:signInWithCustomToken", .object(["token": .string(id)]))
        #expect(r.errorMessage?.hasPrefix("INVALID_CUSTOM_TOKEN : ((Invalid aud (audience): demo-hearth") == true)
    }

    @Test func disabledCustomUserIsRejected() throws {
        let h = try AuthHarness()
        h.post("\(it)/projects/demo-hearth/accounts", .object(["localId": "blocked", "disabled": true]), admin: true)
        let r = h.post("\(it)/accounts:signInWithCustomToken", .object(["token": #"{"uid":"blocked"}"#]))
        #expect(r.errorMessage == "USER_DISABLED")
    }

    // MARK: Email link

    @Test func emailLinkSignInCreatesVerifiedUser() throws {
        let h = try AuthHarness()
        let sent = h.post("\(it)/accounts:sendOobCode", .object(["requestType": "EMAIL_SIGNIN", "email": "Link@b.com",
                                                                 "continueUrl": "https://app.example.com/finish"]))
        #expect(sent.json["email"] == "link@b.com")
        let codes = h.get("/emulator/v1/projects/demo-hearth/oobCodes", admin: false).json["oobCodes"]?.arrayValue ?? []
        let code = try #require(codes.last?["oobCode"]?.stringValue)
        #expect(codes.last?["requestType"] == "EMAIL_SIGNIN")
        let wrong = h.post("\(it)/accounts:signInWithEmailLink", .object(["email": "other@b.com", "oobCode": .string(code)]))
        #expect(wrong.errorMessage == "INVALID_EMAIL : The email provided does not match the sign-in email address.")
        let r = h.post("\(it)/accounts:signInWithEmailLink", .object(["email": "link@b.com", "oobCode": .string(code)]))
        #expect(r.json["kind"] == "identitytoolkit#EmailLinkSigninResponse")
        #expect(r.json["isNewUser"] == true)
        #expect(r.json["idToken"] != nil)
        let reused = h.post("\(it)/accounts:signInWithEmailLink", .object(["email": "link@b.com", "oobCode": .string(code)]))
        #expect(reused.errorMessage == "INVALID_OOB_CODE")
        let user = try #require(h.lookupAdmin(r.json["localId"]?.stringValue ?? ""))
        #expect(user["emailVerified"] == true)
        #expect(user["emailLinkSignin"] == true)
        let missing = h.post("\(it)/accounts:signInWithEmailLink", .object(["email": "link@b.com"]))
        #expect(missing.errorMessage == "MISSING_OOB_CODE")
    }

    // MARK: Identity providers

    @Test func idpSignInWithFakeGoogleIdToken() throws {
        let h = try AuthHarness()
        let claims = #"{"sub":"g-123","email":"G@Example.com","email_verified":true,"name":"Gee","picture":"http://p/g.png"}"#
        let body: JSON = .object(["requestUri": "http://localhost", "postBody": .string("id_token=\(AuthOperations.formEscape(claims))&providerId=google.com"),
                                  "returnSecureToken": true, "returnIdpCredential": true])
        let r = h.post("\(it)/accounts:signInWithIdp", body)
        #expect(r.status == 200)
        #expect(r.json["kind"] == "identitytoolkit#VerifyAssertionResponse")
        #expect(r.json["providerId"] == "google.com")
        #expect(r.json["isNewUser"] == true)
        #expect(r.json["email"] == "g@example.com")
        #expect(r.json["federatedId"] == "https://accounts.google.com/g-123")
        #expect(r.json["oauthAccessToken"] == "FirebaseAuthEmulatorFakeAccessToken_google.com")
        let payload = try #require(AuthHarness.decode(r.json["idToken"]?.stringValue ?? "")).payload
        #expect(payload["firebase"]?["sign_in_provider"] == "google.com")
        #expect(payload["firebase"]?["identities"]?["google.com"] == .array(["g-123"]))
        #expect(payload["name"] == "Gee")
        let again = h.post("\(it)/accounts:signInWithIdp", body)
        #expect(again.json["isNewUser"] == nil)
        #expect(again.json["localId"] == r.json["localId"])
    }

    @Test func idpUnsignedJWTAndLinking() throws {
        let h = try AuthHarness()
        let owner = h.signUp("gh@b.com")
        let jwt = AuthHarness.unsignedToken(header: ["alg": "none"], payload: ["sub": "gh-7", "email": "gh@b.com", "screen_name": "octo"])
        let r = h.post("\(it)/accounts:signInWithIdp", .object([
            "requestUri": "http://localhost", "postBody": .string("id_token=\(jwt)&providerId=github.com"), "idToken": owner["idToken"]!,
        ]))
        #expect(r.status == 200)
        #expect(r.json["localId"] == owner["localId"])
        let user = try #require(h.lookupAdmin(owner["localId"]?.stringValue ?? ""))
        let ids = user["providerUserInfo"]?.arrayValue?.compactMap { $0["providerId"]?.stringValue } ?? []
        #expect(ids.contains("github.com"))
        let lookup = h.post("\(it)/projects/demo-hearth/accounts:lookup",
                            .object(["federatedUserId": .array([.object(["providerId": "github.com", "rawId": "gh-7"])])]), admin: true)
        #expect(lookup.json["users"]?[0]?["localId"] == owner["localId"])
        // The identity cannot be linked to a second account.
        let other = h.signUp("other@b.com")
        let dup = h.post("\(it)/accounts:signInWithIdp", .object([
            "requestUri": "http://localhost", "postBody": .string("id_token=\(jwt)&providerId=github.com"), "idToken": other["idToken"]!,
        ]))
        #expect(dup.errorMessage == "FEDERATED_USER_ID_ALREADY_LINKED")
    }

    @Test func idpUnverifiedEmailOfExistingAccountNeedsConfirmation() throws {
        let h = try AuthHarness()
        let owner = h.signUp("taken@b.com")
        let r = h.post("\(it)/accounts:signInWithIdp", .object([
            "requestUri": "http://localhost?providerId=apple.com&id_token=%7B%22sub%22%3A%22ap1%22%2C%22email%22%3A%22taken%40b.com%22%7D",
        ]))
        #expect(r.json["needConfirmation"] == true)
        #expect(r.json["localId"] == owner["localId"])
        #expect(r.json["idToken"] == nil)
    }

    @Test(arguments: [
        (#"{"postBody":"id_token={}&providerId=google.com"}"#, "MISSING_REQUEST_URI"),
        (#"{"requestUri":"nope","postBody":"providerId=google.com"}"#, "INVALID_REQUEST_URI"),
        (#"{"requestUri":"http://localhost","postBody":"id_token=%7B%7D"}"#, "INVALID_CREDENTIAL_OR_PROVIDER_ID : Invalid IdP response/credential: http://localhost?id_token=%7B%7D"),
        (#"{"requestUri":"http://localhost","postBody":"id_token=%7B%7D&providerId=google.com"}"#,
         #"INVALID_IDP_RESPONSE : Invalid Idp Response: id_token missing required fields. ((Missing "sub" field. This field is required and must be a unique identifier.))"#),
    ])
    func idpErrors(body: String, message: String) throws {
        let h = try AuthHarness()
        let r = h.send("POST", "\(it)/accounts:signInWithIdp?key=k", body: Array(body.utf8))
        #expect(r.errorMessage == message)
    }

    @Test func idpAccessTokenForGoogleIsNotImplemented() throws {
        let h = try AuthHarness()
        let r = h.post("\(it)/accounts:signInWithIdp", .object(["requestUri": "http://localhost", "postBody": "access_token=abc&providerId=google.com"]))
        #expect(r.status == 501)
        #expect(r.json["error"]?["status"] == "NOT_IMPLEMENTED")
    }

    // MARK: Phone

    @Test func phoneSignInWithRecordedCode() throws {
        let h = try AuthHarness()
        let sent = h.post("\(it)/accounts:sendVerificationCode", .object(["phoneNumber": "+15555550123", "recaptchaToken": "x"]))
        let session = try #require(sent.json["sessionInfo"]?.stringValue)
        let codes = h.get("/emulator/v1/projects/demo-hearth/verificationCodes", admin: false).json["verificationCodes"]?.arrayValue ?? []
        #expect(codes.count == 1)
        #expect(codes[0]["phoneNumber"] == "+15555550123")
        let code = try #require(codes[0]["code"]?.stringValue)
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        let wrong = h.post("\(it)/accounts:signInWithPhoneNumber", .object(["sessionInfo": .string(session), "code": "nope"]))
        #expect(wrong.errorMessage == "INVALID_CODE")
        let r = h.post("\(it)/accounts:signInWithPhoneNumber", .object(["sessionInfo": .string(session), "code": .string(code)]))
        #expect(r.json["isNewUser"] == true)
        #expect(r.json["phoneNumber"] == "+15555550123")
        let payload = try #require(AuthHarness.decode(r.json["idToken"]?.stringValue ?? "")).payload
        #expect(payload["phone_number"] == "+15555550123")
        #expect(payload["firebase"]?["identities"]?["phone"] == .array(["+15555550123"]))
        let reused = h.post("\(it)/accounts:signInWithPhoneNumber", .object(["sessionInfo": .string(session), "code": .string(code)]))
        #expect(reused.errorMessage == "INVALID_SESSION_INFO")
        #expect(h.post("\(it)/accounts:sendVerificationCode", .object(["phoneNumber": "5555"])).errorMessage == "INVALID_PHONE_NUMBER : Invalid format.")
    }
}
