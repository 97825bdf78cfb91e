import HearthCore
import HearthHTTP
import Testing
@testable import AuthEmulator

@Suite struct AccountTests {
    let it = AuthHarness.it

    @Test func lookupByIdTokenRedactsThePassword() throws {
        let h = try AuthHarness()
        let up = h.signUp("me@b.com")
        let r = h.post("\(it)/accounts:lookup", .object(["idToken": up["idToken"]!]))
        #expect(r.json["kind"] == "identitytoolkit#GetAccountInfoResponse")
        let user = try #require(r.json["users"]?[0])
        #expect(user["localId"] == up["localId"])
        #expect(user["email"] == "me@b.com")
        #expect(user["emailVerified"] == false)
        #expect(user["passwordHash"] == "UkVEQUNURUQ=")
        #expect(user["salt"] == nil)
        #expect(user["validSince"] == .string(String(AuthHarness.start.unixSeconds)))
        #expect(user["createdAt"] == .string(String(AuthHarness.start.unixMillis)))
        #expect(user["passwordUpdatedAt"] == .int(AuthHarness.start.unixMillis))
        let provider = try #require(user["providerUserInfo"]?[0])
        #expect(provider == .object(["providerId": "password", "federatedId": "me@b.com", "email": "me@b.com", "rawId": "me@b.com"]))
    }

    @Test func adminLookupByEveryKeyAndMissingUsersOmitted() throws {
        let h = try AuthHarness()
        let a = h.signUp("a@b.com")
        h.post("\(it)/projects/demo-hearth/accounts", .object(["localId": "p1", "phoneNumber": "+15550001"]), admin: true)
        let r = h.post("\(it)/accounts:lookup", .object([
            "localId": .array([a["localId"]!, "missing"]), "email": .array(["A@B.COM"]), "phoneNumber": .array(["+15550001"]),
        ]), admin: true)
        let ids = r.json["users"]?.arrayValue?.compactMap { $0["localId"]?.stringValue }
        #expect(ids == [a["localId"]?.stringValue ?? "", "p1"])
        let none = h.post("\(it)/accounts:lookup", .object(["localId": .array(["missing"])]), admin: true)
        #expect(none.json == .object(["kind": "identitytoolkit#GetAccountInfoResponse"]))
    }

    @Test(arguments: [
        (#"{}"#, "MISSING_ID_TOKEN"),
        (#"{"idToken":"garbage"}"#, "INVALID_ID_TOKEN"),
    ])
    func lookupErrors(body: String, message: String) throws {
        let h = try AuthHarness()
        #expect(h.send("POST", "\(it)/accounts:lookup?key=k", body: Array(body.utf8)).errorMessage == message)
    }

    @Test func lookupOfDeletedUsersTokenIsUserNotFound() throws {
        let h = try AuthHarness()
        let up = h.signUp("gone@b.com")
        #expect(h.post("\(it)/accounts:delete", .object(["idToken": up["idToken"]!])).json["kind"] == "identitytoolkit#DeleteAccountResponse")
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": up["idToken"]!])).errorMessage == "USER_NOT_FOUND")
    }

    @Test func updateProfileAndDeleteAttributes() throws {
        let h = try AuthHarness()
        let up = h.signUp("prof@b.com")
        let r = h.post("\(it)/accounts:update", .object(["idToken": up["idToken"]!, "displayName": "Pro", "photoUrl": "http://p/1.png",
                                                         "returnSecureToken": true]))
        #expect(r.json["kind"] == "identitytoolkit#SetAccountInfoResponse")
        #expect(r.json["displayName"] == "Pro")
        #expect(r.json["photoUrl"] == "http://p/1.png")
        #expect(r.json["idToken"] == nil)
        #expect(r.json["providerUserInfo"]?[0]?["displayName"] == "Pro")
        let cleared = h.post("\(it)/accounts:update", .object(["idToken": up["idToken"]!, "deleteAttribute": .array(["DISPLAY_NAME", "PHOTO_URL"])]))
        #expect(cleared.json["displayName"] == nil)
        #expect(cleared.json["photoUrl"] == nil)
        let unsupported = h.post("\(it)/accounts:update", .object(["idToken": up["idToken"]!, "deleteAttribute": .array(["PROVIDER"])]))
        #expect(unsupported.status == 501)
    }

    @Test func passwordChangeIssuesNewTokensAndRevokesOldRefreshTokens() throws {
        let h = try AuthHarness()
        let up = h.signUp("pw@b.com", "old-password")
        h.clock.advance(seconds: 5)
        let r = h.post("\(it)/accounts:update", .object(["idToken": up["idToken"]!, "password": "new-password", "returnSecureToken": true]))
        #expect(r.status == 200)
        #expect(r.json["idToken"] != nil)
        #expect(r.json["passwordHash"] == "UkVEQUNURUQ=")
        #expect(h.signIn("pw@b.com", "old-password").errorMessage == "INVALID_PASSWORD")
        #expect(h.signIn("pw@b.com", "new-password").status == 200)
        #expect(h.refresh(up["refreshToken"]?.stringValue ?? "").errorMessage == "TOKEN_EXPIRED")
        #expect(h.refresh(r.json["refreshToken"]?.stringValue ?? "").status == 200)
        // The old ID token predates validSince: revoked for client endpoints.
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": up["idToken"]!])).errorMessage == "TOKEN_EXPIRED")
        #expect(h.post("\(it)/accounts:update", .object(["idToken": r.json["idToken"]!, "password": "123"])).errorMessage
                == "WEAK_PASSWORD : Password should be at least 6 characters")
    }

    @Test func emailChangeSendsRecoveryCodeAndRevokes() throws {
        let h = try AuthHarness()
        let up = h.signUp("first@b.com")
        let other = h.signUp("taken@b.com")
        #expect(h.post("\(it)/accounts:update", .object(["idToken": up["idToken"]!, "email": "taken@b.com"])).errorMessage == "EMAIL_EXISTS")
        #expect(h.post("\(it)/accounts:update", .object(["idToken": up["idToken"]!, "email": "bad"])).errorMessage == "INVALID_EMAIL")
        let r = h.post("\(it)/accounts:update", .object(["idToken": up["idToken"]!, "email": "Second@b.com"]))
        #expect(r.json["email"] == "second@b.com")
        #expect(r.json["emailVerified"] == false)
        #expect(r.json["idToken"] != nil)
        let codes = h.get("/emulator/v1/projects/demo-hearth/oobCodes", admin: false).json["oobCodes"]?.arrayValue ?? []
        #expect(codes.last?["requestType"] == "RECOVER_EMAIL")
        #expect(codes.last?["email"] == "first@b.com")
        // Applying the recovery code restores the first address.
        let recovered = h.post("\(it)/accounts:update", .object(["oobCode": codes.last!["oobCode"]!]))
        #expect(recovered.json["email"] == "first@b.com")
        #expect(other["localId"] != nil)
    }

    @Test func adminUpdateCustomClaimsDisableAndValidSince() throws {
        let h = try AuthHarness()
        let up = h.signUp("adm@b.com")
        let id = try #require(up["localId"])
        let r = h.post("\(it)/projects/demo-hearth/accounts:update", .object([
            "localId": id, "customAttributes": #"{"admin":true,"tier":2}"#, "emailVerified": true, "validSince": 1_800_000_100,
            "phoneNumber": "+15550002",
        ]), admin: true)
        #expect(r.status == 200)
        let user = try #require(h.lookupAdmin(id.stringValue ?? ""))
        #expect(user["customAttributes"] == #"{"admin":true,"tier":2}"#)
        #expect(user["emailVerified"] == true)
        #expect(user["validSince"] == "1800000100")
        #expect(user["phoneNumber"] == "+15550002")
        h.clock.advance(seconds: 200)
        let token = h.signIn("adm@b.com").json["idToken"]?.stringValue ?? ""
        let payload = try #require(AuthHarness.decode(token)).payload
        #expect(payload["admin"] == true)
        #expect(payload["tier"] == 2)
        let off = h.post("\(it)/projects/demo-hearth/accounts:update", .object(["localId": id, "disableUser": true]), admin: true)
        #expect(off.status == 200)
        #expect(h.lookupAdmin(id.stringValue ?? "")?["disabled"] == true)
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": .string(token)])).errorMessage == "USER_DISABLED")
    }

    @Test(arguments: [
        (#"{"admin":true,"sub":"x"}"#, "FORBIDDEN_CLAIM : sub"),
        (#"{"firebase":{}}"#, "FORBIDDEN_CLAIM : firebase"),
        (#"{"auth_time":1}"#, "FORBIDDEN_CLAIM : auth_time"),
        (#"[1,2]"#, "INVALID_CLAIMS"),
        (#"{not json"#, "INVALID_CLAIMS"),
        ("{\"k\":\"" + String(repeating: "x", count: 995) + "\"}", "CLAIMS_TOO_LARGE"),
    ])
    func customClaimsValidation(attributes: String, message: String) throws {
        let h = try AuthHarness()
        let id = h.signUp("claims@b.com")["localId"]!
        let r = h.post("\(it)/projects/demo-hearth/accounts:update", .object(["localId": id, "customAttributes": .string(attributes)]), admin: true)
        #expect(r.status == 400)
        #expect(r.errorMessage == message)
    }

    @Test func exactlyOneThousandCharactersOfClaimsIsAllowed() throws {
        let h = try AuthHarness()
        let id = h.signUp("claims@b.com")["localId"]!
        let attributes = "{\"k\":\"" + String(repeating: "x", count: 992) + "\"}"
        #expect(attributes.count == 1000)
        #expect(h.post("\(it)/projects/demo-hearth/accounts:update", .object(["localId": id, "customAttributes": .string(attributes)]), admin: true).status == 200)
    }

    @Test func endUserUpdateRules() throws {
        let h = try AuthHarness()
        let up = h.signUp("eu@b.com")
        #expect(h.post("\(it)/accounts:update", .object(["displayName": "x"])).errorMessage == "INVALID_REQ_TYPE : Unsupported request parameters.")
        #expect(h.post("\(it)/accounts:update", .object(["idToken": up["idToken"]!, "customAttributes": "{}"])).errorMessage == "INSUFFICIENT_PERMISSION")
        #expect(h.post("\(it)/accounts:update", .object(["localId": up["localId"]!]), admin: false).errorMessage == "INVALID_REQ_TYPE : Unsupported request parameters.")
        #expect(h.post("\(it)/accounts:update", .object(["displayName": "x"]), admin: true).errorMessage == "MISSING_LOCAL_ID")
        #expect(h.post("\(it)/accounts:update", .object(["localId": "nobody"]), admin: true).errorMessage == "USER_NOT_FOUND")
    }

    @Test func deleteProviderPasswordRemovesEmailAndPassword() throws {
        let h = try AuthHarness()
        let up = h.signUp("dp@b.com")
        let r = h.post("\(it)/accounts:update", .object(["idToken": up["idToken"]!, "deleteProvider": .array(["password"])]))
        #expect(r.json["email"] == nil)
        #expect(r.json["providerUserInfo"] == .array([]))
        #expect(h.signIn("dp@b.com").errorMessage == "EMAIL_NOT_FOUND")
    }

    @Test func adminDelete() throws {
        let h = try AuthHarness()
        let up = h.signUp("del@b.com")
        #expect(h.post("\(it)/projects/demo-hearth/accounts:delete", .object(["localId": up["localId"]!]), admin: true).status == 200)
        #expect(h.lookupAdmin(up["localId"]?.stringValue ?? "") == nil)
        #expect(h.post("\(it)/projects/demo-hearth/accounts:delete", .object(["localId": up["localId"]!]), admin: true).errorMessage == "USER_NOT_FOUND")
        #expect(h.post("\(it)/projects/demo-hearth/accounts:delete", .object([:]), admin: true).errorMessage == "MISSING_LOCAL_ID")
        #expect(h.post("\(it)/accounts:delete", .object([:])).errorMessage == "MISSING_ID_TOKEN")
    }
}

extension AccountTests {
    /// `displayName: 1e400` was stored as the text "inf" (a number where the API wants a string is
    /// taken as its text); the body is now refused whole and the account keeps its name.
    @Test func anUpdateWithANumberPastADoublesRangeChangesNothing() throws {
        let h = try AuthHarness()
        let up = h.signUp("n@b.com", extra: [("displayName", "Kept")])
        let token = try #require(up["idToken"]?.stringValue)
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/json")
        let r = h.send("POST", "\(AuthHarness.it)/accounts:update?key=fake-api-key",
                       body: Array(#"{"idToken": "\#(token)", "displayName": 1e400}"#.utf8), headers: headers)
        #expect(r.status == 400)
        #expect(r.errorMessage?.hasPrefix("Invalid JSON payload received. Number exceeds the range of double.") == true)
        #expect(h.lookupAdmin(try #require(up["localId"]?.stringValue))?["displayName"] == "Kept")
    }
}
