import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import HearthSQLite
import Testing
@testable import AuthEmulator

@Suite struct TenantTests {
    let it = AuthHarness.it
    let tenants = AuthHarness.tenants

    @Test func createGetListUpdateDelete() throws {
        let h = try AuthHarness()
        let created = h.admin("POST", tenants, .object(["displayName": "Acme-Corp", "enableEmailLinkSignin": true]))
        #expect(created.status == 200)
        let name = try #require(created.json["name"]?.stringValue)
        let id = try #require(name.split(separator: "/").last.map(String.init))
        #expect(name == "projects/demo-hearth/tenants/\(id)")
        // Production's ids: the display name in lower case, a hyphen, five random characters.
        #expect(id.hasPrefix("acme-corp-") && id.count == "acme-corp-".count + 5)
        #expect(id.dropFirst("acme-corp-".count).allSatisfy { $0.isLowercase || $0.isNumber })
        #expect(created.json == .object([
            "name": .string(name), "displayName": "Acme-Corp", "allowPasswordSignup": false, "enableEmailLinkSignin": true,
            "disableAuth": false, "enableAnonymousUser": false,
            "mfaConfig": .object(["state": "DISABLED", "enabledProviders": .array([])]),
        ]))
        #expect(h.admin("GET", "\(tenants)/\(id)").json == created.json)

        let patched = h.admin("PATCH", "\(tenants)/\(id)?updateMask=allowPasswordSignup,mfaConfig.state",
                              .object(["allowPasswordSignup": true, "displayName": "ignored-name", "mfaConfig": .object(["state": "ENABLED"])]))
        #expect(patched.json["allowPasswordSignup"] == true)
        #expect(patched.json["displayName"] == "Acme-Corp")
        #expect(patched.json["mfaConfig"] == .object(["state": "ENABLED", "enabledProviders": .array([])]))
        #expect(h.admin("GET", "\(tenants)/\(id)").json["allowPasswordSignup"] == true)

        #expect(h.admin("DELETE", "\(tenants)/\(id)").json == .object([:]))
        #expect(h.admin("GET", "\(tenants)/\(id)").errorMessage == "TENANT_NOT_FOUND")
        #expect(h.admin("DELETE", "\(tenants)/\(id)").errorMessage == "TENANT_NOT_FOUND")
        #expect(h.admin("PATCH", "\(tenants)/\(id)?updateMask=displayName", .object(["displayName": "abcd"])).errorMessage == "TENANT_NOT_FOUND")
    }

    @Test func listPagesInIdOrder() throws {
        let h = try AuthHarness()
        var ids: [String] = []
        for i in 0..<5 { ids.append(try h.createTenant("tenant-\(i)")) }
        ids.sort()
        let first = h.admin("GET", "\(tenants)?pageSize=2").json
        #expect(first["tenants"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ids.prefix(2).map { "projects/demo-hearth/tenants/\($0)" })
        #expect(first["nextPageToken"]?.stringValue == ids[1])
        let rest = h.admin("GET", "\(tenants)?pageSize=3&pageToken=\(ids[1])").json
        #expect(rest["tenants"]?.arrayValue?.count == 3)
        #expect(rest["nextPageToken"] == nil)
        #expect(h.admin("GET", tenants).json["tenants"]?.arrayValue?.count == 5)
        #expect(h.admin("GET", "\(tenants)?pageSize=x").status == 400)
        #expect(h.admin("GET", "/identitytoolkit.googleapis.com/v2/projects/other/tenants").json == .object(["tenants": .array([])]))
        // The Identity Platform reference's `admin/v2` path serves the same resource.
        #expect(h.admin("GET", "/identitytoolkit.googleapis.com/admin/v2/projects/demo-hearth/tenants").json["tenants"]?.arrayValue?.count == 5)
    }

    @Test(arguments: ["abc", "1abc", "ab_cd", "abcdefghijklmnopqrstu", "ab cd", "tënant"])
    func displayNamesProductionRefuses(_ name: String) throws {
        let h = try AuthHarness()
        let r = h.admin("POST", tenants, .object(["displayName": .string(name)]))
        #expect(r.status == 400)
        #expect(r.json["error"]?["status"] == "INVALID_ARGUMENT")
        #expect(r.errorMessage == "INVALID_DISPLAY_NAME : display_name should start with a letter and only consist of letters, digits and hyphens with 4-20 characters.")
    }

    @Test func displayNameIsRequiredAndRequestsAreTypeChecked() throws {
        let h = try AuthHarness()
        #expect(h.admin("POST", tenants, .object([:])).errorMessage == "MISSING_DISPLAY_NAME : Missing tenant with valid display_name.")
        let id = try h.createTenant("abcd")
        #expect(h.admin("PATCH", "\(tenants)/\(id)?updateMask=displayName", .object([:])).errorMessage
                == "MISSING_DISPLAY_NAME : Missing tenant with valid display_name.")
        #expect(h.admin("PATCH", "\(tenants)/\(id)", .object(["allowPasswordSignup": true])).errorMessage
                == "MISSING_DISPLAY_NAME : Missing tenant with valid display_name.")
        #expect(h.admin("POST", tenants, .object(["displayName": "abcd", "disableAuth": "maybe"])).json["error"]?["status"] == "INVALID_ARGUMENT")
        let badState = h.admin("POST", tenants, .object(["displayName": "abcd", "mfaConfig": .object(["state": "SOMETIMES"])]))
        #expect(badState.errorMessage?.hasPrefix("Invalid value at 'tenant.mfa_config.state'") == true)
        #expect(h.admin("POST", tenants, .object(["displayName": "abcd", "testPhoneNumbers": .object(["555": "123456"])])).errorMessage
                == "INVALID_TESTING_PHONE_NUMBER")
        // An API key is not enough to manage tenants.
        #expect(h.send("GET", "\(tenants)?key=k").errorMessage == "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.")
    }

    @Test func seededRunsReproduceTenantIds() throws {
        let a = try AuthHarness(seed: 42)
        let b = try AuthHarness(seed: 42)
        #expect(try a.createTenant("same-name") == b.createTenant("same-name"))
    }

    @Test func accountsAreIsolatedPerTenant() throws {
        let h = try AuthHarness()
        let t1 = try h.createTenant("tenant-one")
        let t2 = try h.createTenant("tenant-two")
        let inProject = h.signUp("same@b.com")
        let in1 = h.signUp("same@b.com", tenant: t1, "password-1")
        let in2 = h.signUp("same@b.com", tenant: t2, "password-2")
        #expect(in1.status == 200 && in2.status == 200)
        #expect(h.signUp("same@b.com", tenant: t1).errorMessage == "EMAIL_EXISTS")
        #expect(AuthHarness.claims(inProject["idToken"])["firebase"]?["tenant"] == nil)
        #expect(AuthHarness.claims(in1.json["idToken"])["firebase"]?["tenant"] == .string(t1))
        #expect(h.signIn("same@b.com", tenant: t1, "password-1").status == 200)
        #expect(h.signIn("same@b.com", tenant: t1, "password-2").errorMessage == "INVALID_PASSWORD")
        #expect(h.signIn("same@b.com", tenant: t2, "password-2").status == 200)

        // Admin lookups see one tenant each; the account says which.
        let admin1 = h.admin("POST", "\(it)/projects/demo-hearth/tenants/\(t1)/accounts:lookup", .object(["email": .array(["same@b.com"])]))
        #expect(admin1.json["users"]?[0]?["localId"] == in1.json["localId"])
        #expect(admin1.json["users"]?[0]?["tenantId"] == .string(t1))
        #expect(h.lookupAdmin(in1.json["localId"]?.stringValue ?? "") == nil)
        #expect(h.admin("GET", "\(it)/projects/demo-hearth/tenants/\(t2)/accounts:batchGet").json["users"]?.arrayValue?.count == 1)
        #expect(h.admin("GET", "\(it)/projects/demo-hearth/accounts:batchGet").json["users"]?.arrayValue?.count == 1)

        // The same localId may exist in two tenants.
        for tenant in [t1, t2] {
            #expect(h.admin("POST", "\(it)/projects/demo-hearth/tenants/\(tenant)/accounts", .object(["localId": "shared"])).status == 200)
        }

        // Client calls with the tenant's token find the tenant without repeating it; refresh keeps it.
        let lookup = h.post("\(it)/accounts:lookup", .object(["idToken": in1.json["idToken"]!]))
        #expect(lookup.json["users"]?[0]?["localId"] == in1.json["localId"])
        let refreshed = h.refresh(in1.json["refreshToken"]?.stringValue ?? "")
        #expect(AuthHarness.claims(refreshed.json["id_token"])["firebase"]?["tenant"] == .string(t1))
    }

    @Test func tokenVerifierFindsTenantAccounts() throws {
        let h = try AuthHarness()
        let t1 = try h.createTenant("tenant-one")
        let user = h.signUp("verify@b.com", tenant: t1).json
        let token = try #require(user["idToken"]?.stringValue)
        let verified = try h.service.tokenVerifier.verify(idToken: token, projectID: AuthHarness.project, checkRevoked: true)
        #expect(verified.uid == user["localId"]?.stringValue)
        #expect(verified.claims["firebase"]?["tenant"] == .string(t1))
        h.admin("POST", "\(it)/projects/demo-hearth/tenants/\(t1)/accounts:delete", .object(["localId": user["localId"]!]))
        #expect(throws: IDTokenError.userNotFound) {
            try h.service.tokenVerifier.verify(idToken: token, projectID: AuthHarness.project, checkRevoked: true)
        }
    }

    @Test func tenantMismatchesAndUnknownTenants() throws {
        let h = try AuthHarness()
        let t1 = try h.createTenant("tenant-one")
        let t2 = try h.createTenant("tenant-two")
        let user = h.signUp("who@b.com", tenant: t1).json
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": user["idToken"]!, "tenantId": .string(t2)])).errorMessage == "TENANT_ID_MISMATCH")
        #expect(h.admin("POST", "\(it)/projects/demo-hearth/tenants/\(t1)/accounts:lookup",
                        .object(["tenantId": .string(t2), "localId": .array([user["localId"]!])])).errorMessage == "TENANT_ID_MISMATCH")
        let projectUser = h.signUp("who@b.com")
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": projectUser["idToken"]!, "tenantId": .string(t1)])).errorMessage
                == "TENANT_ID_MISMATCH")
        #expect(h.signUp("x@b.com", tenant: "no-such-tenant").errorMessage == "INVALID_TENANT_ID")
        #expect(h.admin("POST", "\(it)/projects/demo-hearth/tenants/nope/accounts", .object([:])).errorMessage == "TENANT_NOT_FOUND")
        #expect(h.post("\(it)/projects/demo-hearth/tenants/\(t1):createSessionCookie", .object(["idToken": projectUser["idToken"]!]),
                       admin: true).errorMessage == "TENANT_ID_MISMATCH")
        let cookie = h.post("\(it)/projects/demo-hearth/tenants/\(t1):createSessionCookie", .object(["idToken": user["idToken"]!]), admin: true)
        #expect(AuthHarness.claims(cookie.json["sessionCookie"])["firebase"]?["tenant"] == .string(t1))
    }

    @Test func tenantSignInSwitches() throws {
        let h = try AuthHarness()
        let closed = try h.createTenant("closed", [])
        #expect(h.signUp("a@b.com", tenant: closed).errorMessage == "OPERATION_NOT_ALLOWED")
        #expect(h.post("\(it)/accounts:signUp", .object(["tenantId": .string(closed)])).errorMessage == "ADMIN_ONLY_OPERATION")
        // Admins still create accounts; their users cannot use a password.
        h.admin("POST", "\(it)/projects/demo-hearth/tenants/\(closed)/accounts", .object(["email": "a@b.com", "password": "secret123"]))
        #expect(h.signIn("a@b.com", tenant: closed).errorMessage == "PASSWORD_LOGIN_DISABLED")
        #expect(h.post("\(it)/accounts:sendOobCode", .object(["requestType": "EMAIL_SIGNIN", "email": "a@b.com", "tenantId": .string(closed)]))
                .errorMessage == "OPERATION_NOT_ALLOWED")

        let open = try h.createTenant("open", [("allowPasswordSignup", true), ("enableAnonymousUser", true)])
        let anon = h.post("\(it)/accounts:signUp", .object(["tenantId": .string(open)]))
        #expect(AuthHarness.claims(anon.json["idToken"])["firebase"]?["sign_in_provider"] == "anonymous")
        let user = h.signUp("b@b.com", tenant: open).json
        h.admin("PATCH", "\(AuthHarness.tenants)/\(open)?updateMask=disableAuth", .object(["disableAuth": true]))
        #expect(h.signIn("b@b.com", tenant: open).errorMessage == "PROJECT_DISABLED")
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": user["idToken"]!])).errorMessage == "PROJECT_DISABLED")
        #expect(h.refresh(user["refreshToken"]?.stringValue ?? "").errorMessage == "PROJECT_DISABLED")
        #expect(h.admin("GET", "\(it)/projects/demo-hearth/tenants/\(open)/accounts:batchGet").errorMessage == "PROJECT_DISABLED")
    }

    @Test func customTokensSignIntoTheirTenant() throws {
        let h = try AuthHarness()
        let t1 = try h.createTenant("tenant-one")
        func token(_ claims: JSONObject) -> String {
            var payload: JSONObject = ["aud": .string(AuthOperations.customTokenAudience), "uid": "custom-uid"]
            for (k, v) in claims { payload[k] = v }
            return AuthHarness.unsignedToken(header: ["alg": "none", "typ": "JWT"], payload: payload)
        }
        let url = "\(it)/accounts:signInWithCustomToken"
        let scoped = h.post(url, .object(["token": .string(token(["tenant_id": .string(t1)])), "tenantId": .string(t1)]))
        #expect(AuthHarness.claims(scoped.json["idToken"])["firebase"]?["tenant"] == .string(t1))
        // The claim alone picks the tenant.
        let inferred = h.post(url, .object(["token": .string(token(["tenant_id": .string(t1)]))]))
        #expect(inferred.json["isNewUser"] == false)
        #expect(AuthHarness.claims(inferred.json["idToken"])["firebase"]?["tenant"] == .string(t1))
        #expect(h.post(url, .object(["token": .string(token([:])), "tenantId": .string(t1)])).errorMessage == "TENANT_ID_MISMATCH")
        #expect(h.post(url, .object(["token": .string(token(["tenant_id": "other-tenant"])), "tenantId": .string(t1)])).errorMessage
                == "TENANT_ID_MISMATCH")
        #expect(h.post(url, .object(["token": .string(token(["tenant_id": "ghost-tenant"]))])).errorMessage == "INVALID_TENANT_ID")
        #expect(h.lookupAdmin("custom-uid") == nil)
    }

    @Test func emulatorEndpointsAndActionLinksPerTenant() throws {
        let h = try AuthHarness()
        let t1 = try h.createTenant("tenant-one")
        h.signUp("reset@b.com", tenant: t1)
        h.signUp("reset@b.com")
        let sent = h.post("\(it)/accounts:sendOobCode", .object(["requestType": "PASSWORD_RESET", "email": "reset@b.com", "tenantId": .string(t1)]))
        #expect(sent.status == 200)
        #expect(h.oobCodes().isEmpty)
        let record = try #require(h.oobCodes(tenant: t1).first)
        let link = try #require(record["oobLink"]?.stringValue)
        #expect(link.hasSuffix("&tenantId=\(t1)"))
        // Following the link resets the tenant's account, not the project's.
        let path = String(link.dropFirst("http://127.0.0.1:9099".count))
        #expect(h.send("GET", path + "&newPassword=changed-pass").status == 200)
        #expect(h.signIn("reset@b.com", tenant: t1, "changed-pass").status == 200)
        #expect(h.signIn("reset@b.com").status == 200)

        // Deleting a tenant's accounts leaves the project's; deleting the tenant removes its data.
        #expect(h.send("DELETE", "/emulator/v1/projects/demo-hearth/tenants/\(t1)/accounts").json == .object([:]))
        #expect(h.signIn("reset@b.com", tenant: t1).errorMessage == "EMAIL_NOT_FOUND")
        #expect(h.signIn("reset@b.com").status == 200)
        h.signUp("again@b.com", tenant: t1)
        h.admin("DELETE", "\(AuthHarness.tenants)/\(t1)")
        #expect(h.oobCodes(tenant: t1).isEmpty)
        #expect(h.get("/emulator/v1/projects/demo-hearth/tenants/\(t1)/oobCodes", admin: false).status == 200)
        let recreated = try h.createTenant("tenant-one")
        #expect(recreated != t1 || h.signIn("again@b.com", tenant: recreated).errorMessage == "EMAIL_NOT_FOUND")
    }

    @Test func importIntoATenant() throws {
        let h = try AuthHarness()
        let t1 = try h.createTenant("tenant-one")
        let r = h.admin("POST", "\(it)/projects/demo-hearth/tenants/\(t1)/accounts:batchCreate", .object(["users": .array([
            .object(["localId": "imported", "email": "imp@b.com", "rawPassword": "secret123"]),
            .object(["localId": "wrong", "tenantId": "other"]),
        ])]))
        #expect(r.json["error"] == .array([.object(["index": 1, "message": "Tenant id in userInfo does not match the tenant id in request."])]))
        #expect(h.signIn("imp@b.com", tenant: t1).json["localId"] == "imported")
        #expect(h.lookupAdmin("imported") == nil)
    }

    @Test func migrationKeepsExistingAccountsInTheProject() throws {
        let db = try Database(path: nil)
        try db.migrate(Array(AuthService.migrations.prefix(1)))
        try db.write { conn in
            try conn.run("INSERT INTO auth_users (project_id, local_id, email, created_at) VALUES (?, ?, ?, ?)", ["demo-hearth", "old-user", "old@b.com", 1])
            try conn.run("INSERT INTO auth_user_providers (project_id, provider_id, raw_id, local_id, email) VALUES (?, ?, ?, ?, ?)",
                         ["demo-hearth", "google.com", "g-1", "old-user", "old@b.com"])
        }
        let h = try AuthHarness(database: db)
        let found = h.lookupAdmin("old-user")
        #expect(found?["email"] == "old@b.com")
        #expect(found?["tenantId"] == nil)
        let byProvider = h.post("\(it)/projects/demo-hearth/accounts:lookup", .object(["federatedUserId": .array([
            .object(["providerId": "google.com", "rawId": "g-1"]),
        ])]), admin: true)
        #expect(byProvider.json["users"]?[0]?["localId"] == "old-user")
    }
}
