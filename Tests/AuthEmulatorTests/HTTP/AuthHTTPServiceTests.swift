import HearthCore
import HearthHTTP
import Testing
@testable import AuthEmulator

@Suite struct AuthHTTPServiceTests {
    let it = AuthHarness.it

    @Test func rootReportsReady() throws {
        let h = try AuthHarness()
        let r = h.send("GET", "/")
        #expect(r.status == 200)
        #expect(r.json == .object(["authEmulator": .object(["ready": true, "docs": "https://firebase.google.com/docs/emulator-suite",
                                                             "apiSpec": "/emulator/openapi.json"])]))
        #expect(r.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(h.send("GET", "/emulator/openapi.json").json["openapi"] == "3.0.3")
    }

    @Test func credentialRules() throws {
        let h = try AuthHarness()
        let path = "\(it)/accounts:signUp"
        let none = h.send("POST", path)
        #expect(none.status == 403)
        #expect(none.json == .object(["error": .object([
            "code": 403, "message": "The request is missing a valid API key.",
            "errors": .array([.object(["message": "The request is missing a valid API key.", "reason": "forbidden", "domain": "global"])]),
            "status": "PERMISSION_DENIED",
        ])]))
        #expect(h.send("POST", path + "?key=").status == 403)
        #expect(h.send("POST", path + "?key=anything").status == 200)
        var header = HTTPHeaders()
        header.set("X-Goog-Api-Key", "anything")
        #expect(h.send("POST", path, headers: header).status == 200)
        for token in ["owner", "OWNER", "ya29.some-access-token"] {
            var bearer = HTTPHeaders()
            bearer.set("Authorization", "Bearer \(token)")
            #expect(h.send("POST", path, headers: bearer).status == 200)
        }
        var bad = HTTPHeaders()
        bad.set("Authorization", "Bearer not-a-real-token")
        let unauthenticated = h.send("POST", path + "?key=k", headers: bad)
        #expect(unauthenticated.status == 401)
        #expect(unauthenticated.json["error"]?["status"] == "UNAUTHENTICATED")
        #expect(unauthenticated.json["error"]?["errors"]?[0]?["reason"] == "authError")
    }

    @Test func projectPathNeedsAdminCredentials() throws {
        let h = try AuthHarness()
        let r = h.post("\(it)/projects/demo-hearth/accounts:lookup", .object(["localId": .array(["x"])]))
        #expect(r.errorMessage == "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.")
        let body = h.post("\(it)/accounts:lookup", .object(["targetProjectId": "p2", "localId": .array(["x"])]))
        #expect(body.errorMessage == "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.")
    }

    @Test(arguments: [
        ("{", "parseError"),
        ("[1,2]", "parseError"),
        (#"{"email":123,"password":{}}"#, "invalid"),
        (#"{"email":["a"]}"#, "invalid"),
        (#"{"returnSecureToken":"yes"}"#, "invalid"),
        ("\u{FF}\u{FE}", "parseError"),
    ])
    func malformedBodiesAreInvalidArgument(body: String, reason: String) throws {
        let h = try AuthHarness()
        let r = h.send("POST", "\(it)/accounts:signUp?key=k", body: Array(body.utf8))
        #expect(r.status == 400)
        #expect(r.json["error"]?["status"] == "INVALID_ARGUMENT")
        #expect(r.json["error"]?["errors"]?[0]?["reason"]?.stringValue == reason)
        #expect(r.errorMessage?.hasPrefix("Invalid JSON payload received.") == true)
    }

    @Test func hugeBodyIsRejectedWithoutReadingIt() throws {
        let h = try AuthHarness()
        let big = [UInt8](repeating: 0x20, count: AuthHTTPService.bodyLimit + 1)
        let r = h.send("POST", "\(it)/accounts:signUp?key=k", body: big)
        #expect(r.status == 400)
        #expect(r.json["error"]?["status"] == "INVALID_ARGUMENT")
        #expect(r.errorMessage == "Request payload size exceeds the limit: \(AuthHTTPService.bodyLimit) bytes.")
    }

    @Test func deeplyNestedJSONIsAnErrorNotACrash() throws {
        let h = try AuthHarness()
        let deep = String(repeating: "[", count: 100_000)
        let r = h.send("POST", "\(it)/accounts:signUp?key=k", body: Array(("{\"a\":" + deep).utf8))
        #expect(r.status == 400)
    }

    @Test func unknownPathsAreGoogleNotFound() throws {
        let h = try AuthHarness()
        let r = h.send("POST", "\(it)/accounts:nonsense?key=k")
        #expect(r.status == 404)
        #expect(r.json == .object(["error": .object(["code": 404, "message": "Not Found",
                                                      "errors": .array([.object(["message": "Not Found", "reason": "notFound"])]),
                                                      "status": "NOT_FOUND"])]))
        #expect(h.send("GET", "\(it)/accounts:signUp?key=k").status == 404)
        // Multi-tenancy and MFA are served now; unknown tenants and incomplete requests are 400s.
        #expect(h.post("\(it)/projects/demo-hearth/tenants/t1/accounts:lookup", admin: true).errorMessage == "TENANT_NOT_FOUND")
        #expect(h.post("/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start").errorMessage
                == "MISSING_MFA_PENDING_CREDENTIAL : Request does not have MFA pending credential.")
    }

    @Test func corsHeadersAndPreflight() throws {
        let h = try AuthHarness()
        var headers = HTTPHeaders()
        headers.set("Origin", "http://localhost:5173")
        let r = h.send("POST", "\(it)/accounts:signUp?key=k", headers: headers)
        #expect(r.headers["Access-Control-Allow-Origin"] == "http://localhost:5173")
        #expect(r.headers.values("Vary").contains("Origin"))
        let err = h.send("POST", "\(it)/accounts:signUp", headers: headers)
        #expect(err.status == 403)
        #expect(err.headers["Access-Control-Allow-Origin"] == "http://localhost:5173")
        var pre = HTTPHeaders()
        pre.set("Origin", "http://localhost:5173")
        pre.set("Access-Control-Request-Method", "POST")
        pre.set("Access-Control-Request-Headers", "content-type,x-client-version,x-firebase-gmpid")
        pre.set("Access-Control-Request-Private-Network", "true")
        let p = h.send("OPTIONS", "/anything/at/all", headers: pre)
        #expect(p.status == 204)
        #expect(p.headers["Access-Control-Allow-Origin"] == "http://localhost:5173")
        #expect(p.headers["Access-Control-Allow-Methods"] == "GET,HEAD,PUT,PATCH,POST,DELETE")
        #expect(p.headers["Access-Control-Allow-Headers"] == "content-type,x-client-version,x-firebase-gmpid")
        #expect(p.headers["Access-Control-Allow-Private-Network"] == "true")
        #expect(p.bytes.isEmpty)
    }

    @Test func legacyRelyingPartyPathsMapToV1() throws {
        let h = try AuthHarness()
        let legacy = "/www.googleapis.com/identitytoolkit/v3/relyingparty"
        let up = h.post("\(legacy)/signupNewUser", .object(["email": "old@b.com", "password": "secret123", "returnSecureToken": true]))
        #expect(up.json["kind"] == "identitytoolkit#SignupNewUserResponse")
        let login = h.post("\(legacy)/verifyPassword", .object(["email": "old@b.com", "password": "secret123"]))
        #expect(login.json["kind"] == "identitytoolkit#VerifyPasswordResponse")
        #expect(h.post("\(legacy)/getAccountInfo", .object(["idToken": login.json["idToken"]!])).json["users"]?[0]?["email"] == "old@b.com")
        let download = h.post("\(legacy)/downloadAccount", .object(["targetProjectId": "demo-hearth", "maxResults": 10]), admin: true)
        #expect(download.json["users"]?.arrayValue?.count == 1)
        #expect(h.post("\(legacy)/downloadAccount", .object(["maxResults": 10]), admin: true).errorMessage == "INSUFFICIENT_PERMISSION")
        #expect(h.post("\(legacy)/signOutUser").status == 501)
    }

    @Test func prettyPrintFalseIsCompact() throws {
        let h = try AuthHarness()
        #expect(h.send("GET", "/?prettyPrint=false").text == #"{"authEmulator":{"ready":true,"docs":"https://firebase.google.com/docs/emulator-suite","apiSpec":"/emulator/openapi.json"}}"#)
        #expect(h.send("GET", "/").text.contains("\n  "))
    }

    @Test func projectsAndRecaptchaParams() throws {
        let h = try AuthHarness()
        #expect(h.send("GET", "\(it)/projects?key=k").json == .object(["projectId": "12345", "authorizedDomains": .array(["localhost"])]))
        #expect(h.send("GET", "\(it)/recaptchaParams?key=k").json["kind"] == "identitytoolkit#GetRecaptchaParamResponse")
    }

    @Test func emulatorOnlyEndpoints() throws {
        let h = try AuthHarness()
        let up = h.signUp("wipe@b.com")
        _ = h.post("\(it)/accounts:sendOobCode", .object(["requestType": "PASSWORD_RESET", "email": "wipe@b.com"]))
        let other = h.post("\(it)/projects/keep/accounts", .object(["email": "k@b.com"]), admin: true)
        let wiped = h.send("DELETE", "/emulator/v1/projects/demo-hearth/accounts")
        #expect(wiped.status == 200)
        #expect(wiped.json == .object([:]))
        #expect(h.lookupAdmin(up["localId"]?.stringValue ?? "") == nil)
        #expect(h.refresh(up["refreshToken"]?.stringValue ?? "").errorMessage == "INVALID_REFRESH_TOKEN")
        #expect(h.lookupAdmin(other.json["localId"]?.stringValue ?? "", project: "keep") != nil)
        // OOB codes survive an account wipe, as in the Firebase emulator.
        #expect(h.get("/emulator/v1/projects/demo-hearth/oobCodes", admin: false).json["oobCodes"]?.arrayValue?.count == 1)
        #expect(h.get("/emulator/v1/projects/demo-hearth/verificationCodes", admin: false).json == .object(["verificationCodes": .array([])]))
        #expect(h.get("/emulator/v1/projects/demo-hearth/config", admin: false).json
                == .object(["signIn": .object(["allowDuplicateEmails": false]), "emailPrivacyConfig": .object(["enableImprovedEmailPrivacy": false])]))
    }

    @Test func resetWipesEverythingButKeys() throws {
        let h = try AuthHarness(signing: .rs256)
        let kid = h.send("GET", AuthRoutes.x509Path).json.objectValue?.keys
        h.signUp("r@b.com")
        _ = h.send("PATCH", "/emulator/v1/projects/demo-hearth/config", body: Array(#"{"signIn":{"allowDuplicateEmails":true}}"#.utf8))
        try h.service.reset()
        #expect(h.signIn("r@b.com").errorMessage == "EMAIL_NOT_FOUND")
        #expect(h.get("/emulator/v1/projects/demo-hearth/config", admin: false).json["signIn"]?["allowDuplicateEmails"] == false)
        #expect(h.send("GET", AuthRoutes.x509Path).json.objectValue?.keys == kid)
    }
}
