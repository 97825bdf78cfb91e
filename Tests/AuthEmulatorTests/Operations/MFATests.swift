import HearthCore
import HearthHTTP
import Testing
@testable import AuthEmulator

@Suite struct MFATests {
    let it = AuthHarness.it
    let v2 = "\(AuthHarness.v2)/accounts"

    /// A password user with a verified email, signed in: (localId, idToken).
    func verifiedUser(_ h: AuthHarness, _ email: String, tenant: String? = nil) throws -> (String, JSON) {
        let up = tenant.map { h.signUp(email, tenant: $0).json } ?? h.signUp(email)
        let localId = try #require(up["localId"]?.stringValue)
        let base = tenant.map { "\(it)/projects/demo-hearth/tenants/\($0)" } ?? "\(it)/projects/demo-hearth"
        h.admin("POST", "\(base)/accounts:update", .object(["localId": .string(localId), "emailVerified": true]))
        let signedIn = tenant.map { h.signIn(email, tenant: $0) } ?? h.signIn(email)
        return (localId, try #require(signedIn.json["idToken"]))
    }

    /// Enrolls `phone` for the account of `idToken`; returns the finalize reply.
    func enroll(_ h: AuthHarness, _ idToken: JSON, _ phone: String, tenant: String? = nil, name: String = "Work phone") throws -> AuthHarness.Reply {
        var start: JSONObject = ["idToken": idToken, "phoneEnrollmentInfo": .object(["phoneNumber": .string(phone)])]
        if let tenant { start["tenantId"] = .string(tenant) }
        let started = h.post("\(v2)/mfaEnrollment:start", .object(start))
        let sessionInfo = try #require(started.json["phoneSessionInfo"]?["sessionInfo"]?.stringValue, "\(started.text)")
        let sent = try #require(h.verificationCodes(tenant: tenant).first { $0["sessionInfo"]?.stringValue == sessionInfo })
        #expect(sent["phoneNumber"] == .string(phone))
        return h.post("\(v2)/mfaEnrollment:finalize", .object([
            "idToken": idToken, "displayName": .string(name),
            "phoneVerificationInfo": .object(["sessionInfo": .string(sessionInfo), "code": sent["code"]!]),
        ]))
    }

    /// Completes a pending sign-in with the SMS code sent to the factor.
    func completeSignIn(_ h: AuthHarness, _ pending: JSON, tenant: String? = nil) throws -> AuthHarness.Reply {
        let credential = try #require(pending["mfaPendingCredential"])
        let enrollmentId = try #require(pending["mfaInfo"]?[0]?["mfaEnrollmentId"])
        let started = h.post("\(v2)/mfaSignIn:start", .object(["mfaPendingCredential": credential, "mfaEnrollmentId": enrollmentId,
                                                                "phoneSignInInfo": .object([:])]))
        let sessionInfo = try #require(started.json["phoneResponseInfo"]?["sessionInfo"]?.stringValue, "\(started.text)")
        let code = try #require(h.verificationCodes(tenant: tenant).first { $0["sessionInfo"]?.stringValue == sessionInfo }?["code"])
        return h.post("\(v2)/mfaSignIn:finalize", .object(["mfaPendingCredential": credential,
                                                            "phoneVerificationInfo": .object(["sessionInfo": .string(sessionInfo), "code": code])]))
    }

    @Test func enrollThenSignInWithPhoneSecondFactor() throws {
        let h = try AuthHarness()
        let (localId, idToken) = try verifiedUser(h, "mfa@b.com")
        let enrolled = try enroll(h, idToken, "+15551234567")
        #expect(enrolled.json.objectValue?.keys == ["idToken", "refreshToken"])
        let enrolledClaims = AuthHarness.claims(enrolled.json["idToken"])
        #expect(enrolledClaims["firebase"]?["sign_in_second_factor"] == "phone")

        let stored = try #require(h.lookupAdmin(localId)?["mfaInfo"]?[0])
        let enrollmentId = try #require(stored["mfaEnrollmentId"]?.stringValue)
        #expect(enrollmentId.count == 28)
        #expect(stored == .object(["mfaEnrollmentId": .string(enrollmentId), "displayName": "Work phone", "phoneInfo": "+15551234567",
                                   "enrolledAt": .string(AuthHarness.start.rfc3339(fractionDigits: 3)), "unobfuscatedPhoneInfo": "+15551234567"]))
        #expect(enrolledClaims["firebase"]?["second_factor_identifier"] == .string(enrollmentId))

        // The password alone no longer signs in: a pending credential and masked hints instead.
        let first = h.signIn("mfa@b.com")
        #expect(first.status == 200)
        #expect(first.json["idToken"] == nil && first.json["refreshToken"] == nil)
        #expect(first.json["localId"] == .string(localId))
        #expect(first.json["mfaInfo"] == .array([.object(["mfaEnrollmentId": .string(enrollmentId), "displayName": "Work phone",
                                                         "phoneInfo": "+*******4567",
                                                         "enrolledAt": .string(AuthHarness.start.rfc3339(fractionDigits: 3))])]))
        let done = try completeSignIn(h, first.json)
        let claims = AuthHarness.claims(done.json["idToken"])
        #expect(claims["firebase"]?["sign_in_provider"] == "password")
        #expect(claims["firebase"]?["sign_in_second_factor"] == "phone")
        #expect(claims["firebase"]?["second_factor_identifier"] == .string(enrollmentId))
        #expect(claims["user_id"] == .string(localId))
        // Refreshes keep the second factor.
        let refreshed = h.refresh(done.json["refreshToken"]?.stringValue ?? "")
        #expect(AuthHarness.claims(refreshed.json["id_token"])["firebase"]?["second_factor_identifier"] == .string(enrollmentId))
        // A wrong code or a used session does not complete the sign-in.
        let again = h.signIn("mfa@b.com").json
        let started = h.post("\(v2)/mfaSignIn:start", .object(["mfaPendingCredential": again["mfaPendingCredential"]!,
                                                                "mfaEnrollmentId": .string(enrollmentId)]))
        let sessionInfo = try #require(started.json["phoneResponseInfo"]?["sessionInfo"])
        #expect(h.post("\(v2)/mfaSignIn:finalize", .object(["mfaPendingCredential": again["mfaPendingCredential"]!,
                                                             "phoneVerificationInfo": .object(["sessionInfo": sessionInfo, "code": "000000x"])]))
                .errorMessage == "INVALID_CODE")
    }

    @Test func enrollmentErrors() throws {
        let h = try AuthHarness()
        let unverified = h.signUp("unverified@b.com")
        let info: JSON = .object(["phoneNumber": "+15550001111"])
        #expect(h.post("\(v2)/mfaEnrollment:start", .object(["idToken": unverified["idToken"]!, "phoneEnrollmentInfo": info])).errorMessage
                == "UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors.")
        let anonymous = h.post("\(it)/accounts:signUp", .object([:])).json
        #expect(h.post("\(v2)/mfaEnrollment:start", .object(["idToken": anonymous["idToken"]!, "phoneEnrollmentInfo": info])).errorMessage
                == "UNSUPPORTED_FIRST_FACTOR : MFA is not available for the given first factor.")
        #expect(h.post("\(v2)/mfaEnrollment:start", .object(["phoneEnrollmentInfo": info])).errorMessage == "MISSING_ID_TOKEN")
        let (_, idToken) = try verifiedUser(h, "errors@b.com")
        #expect(h.post("\(v2)/mfaEnrollment:start", .object(["idToken": idToken, "phoneEnrollmentInfo": .object(["phoneNumber": "555"])]))
                .errorMessage == "INVALID_PHONE_NUMBER : Invalid format.")
        #expect(h.post("\(v2)/mfaEnrollment:start", .object(["idToken": idToken])).errorMessage
                == "INVALID_ARGUMENT : ((Missing phoneEnrollmentInfo.))")
        #expect(h.post("\(v2)/mfaEnrollment:finalize", .object(["idToken": idToken, "phoneVerificationInfo": .object(["sessionInfo": "x"])]))
                .errorMessage == "MISSING_CODE")
        #expect(h.post("\(v2)/mfaEnrollment:finalize", .object(["idToken": idToken, "phoneVerificationInfo": .object(["code": "1", "sessionInfo": "x"])]))
                .errorMessage == "INVALID_SESSION_INFO")
        #expect(try enroll(h, idToken, "+15550001111").status == 200)
        #expect(h.post("\(v2)/mfaEnrollment:start", .object(["idToken": idToken, "phoneEnrollmentInfo": info])).errorMessage
                == "SECOND_FACTOR_EXISTS : Phone number already enrolled as second factor for this account.")
        // Pending-credential errors.
        #expect(h.post("\(v2)/mfaSignIn:start", .object(["mfaPendingCredential": "nope", "mfaEnrollmentId": "x"])).errorMessage
                == "INVALID_MFA_PENDING_CREDENTIAL")
        #expect(h.post("\(v2)/mfaSignIn:start", .object(["mfaPendingCredential": "nope"])).errorMessage
                == "MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.")
        #expect(h.post("\(v2)/mfaSignIn:finalize", .object([:])).errorMessage == "MISSING_CREDENTIAL : Please set MFA Pending Credential.")
        let pending = h.signIn("errors@b.com").json
        #expect(h.post("\(v2)/mfaSignIn:start", .object(["mfaPendingCredential": pending["mfaPendingCredential"]!, "mfaEnrollmentId": "unknown"]))
                .errorMessage == "MFA_ENROLLMENT_NOT_FOUND")
        #expect(h.post("\(v2)/mfaSignIn:finalize", .object(["mfaPendingCredential": pending["mfaPendingCredential"]!])).errorMessage
                == "INVALID_ARGUMENT : MFA provider not supported!")
        // A number that is a second factor cannot sign in as a first factor.
        h.admin("POST", "\(it)/projects/demo-hearth/accounts:update", .object(["localId": pending["localId"]!, "phoneNumber": "+15550001111"]))
        #expect(h.post("\(it)/accounts:sendVerificationCode", .object(["phoneNumber": "+15550001111"])).errorMessage
                == "UNSUPPORTED_FIRST_FACTOR : A phone number cannot be set as a first factor on an SMS based MFA user.")
    }

    @Test func withdrawRemovesTheFactor() throws {
        let h = try AuthHarness()
        let (localId, idToken) = try verifiedUser(h, "withdraw@b.com")
        let enrolled = try enroll(h, idToken, "+15557654321")
        let enrollmentId = try #require(h.lookupAdmin(localId)?["mfaInfo"]?[0]?["mfaEnrollmentId"])
        #expect(h.post("\(v2)/mfaEnrollment:withdraw", .object(["idToken": enrolled.json["idToken"]!, "mfaEnrollmentId": "other"])).errorMessage
                == "MFA_ENROLLMENT_NOT_FOUND")
        let withdrawn = h.post("\(v2)/mfaEnrollment:withdraw", .object(["idToken": enrolled.json["idToken"]!, "mfaEnrollmentId": enrollmentId]))
        #expect(withdrawn.json["idToken"] != nil && withdrawn.json["refreshToken"] != nil)
        #expect(h.lookupAdmin(localId)?["mfaInfo"] == nil)
        #expect(h.signIn("withdraw@b.com").json["idToken"] != nil)
    }

    @Test func projectAndTenantMfaConfig() throws {
        let h = try AuthHarness()
        let (_, idToken) = try verifiedUser(h, "config@b.com")
        #expect(try enroll(h, idToken, "+15550002222").status == 200)
        // Turning MFA off for the project: no enrollment, and sign-ins no longer ask for the factor.
        let patched = h.admin("PATCH", "\(AuthHarness.v2)/projects/demo-hearth/config?updateMask=mfa.state", .object(["mfa": .object(["state": "DISABLED"])]))
        #expect(patched.json["mfa"] == .object(["state": "DISABLED"]))
        #expect(h.post("\(v2)/mfaEnrollment:start", .object(["idToken": idToken, "phoneEnrollmentInfo": .object(["phoneNumber": "+15550003333"])]))
                .errorMessage == "OPERATION_NOT_ALLOWED : SMS based MFA not enabled.")
        #expect(h.signIn("config@b.com").json["idToken"] != nil)
        #expect(h.admin("PATCH", "\(AuthHarness.v2)/projects/demo-hearth/config?updateMask=mfa", .object(["mfa": .object(["state": "OFF"])])).status == 400)
        h.admin("PATCH", "/identitytoolkit.googleapis.com/admin/v2/projects/demo-hearth/config?updateMask=mfa",
                .object(["mfa": .object(["state": "ENABLED", "enabledProviders": .array(["PHONE_SMS"])])]))
        #expect(h.signIn("config@b.com").json["mfaPendingCredential"] != nil)

        // A tenant starts with MFA off; enabling it there allows enrollment in that tenant only.
        let tenant = try h.createTenant("mfa-tenant")
        let (tenantUser, tenantToken) = try verifiedUser(h, "config@b.com", tenant: tenant)
        #expect(h.post("\(v2)/mfaEnrollment:start", .object(["idToken": tenantToken, "phoneEnrollmentInfo": .object(["phoneNumber": "+15550004444"])]))
                .errorMessage == "OPERATION_NOT_ALLOWED : SMS based MFA not enabled.")
        h.admin("PATCH", "\(AuthHarness.tenants)/\(tenant)?updateMask=mfaConfig",
                .object(["mfaConfig": .object(["state": "ENABLED", "enabledProviders": .array(["PHONE_SMS"])])]))
        #expect(try enroll(h, tenantToken, "+15550004444", tenant: tenant).status == 200)
        let pending = h.signIn("config@b.com", tenant: tenant).json
        #expect(pending["mfaPendingCredential"] != nil)
        // The pending credential carries the tenant, so the second step need not repeat it.
        let done = try completeSignIn(h, pending, tenant: tenant)
        let claims = AuthHarness.claims(done.json["idToken"])
        #expect(claims["firebase"]?["tenant"] == .string(tenant))
        #expect(claims["user_id"] == .string(tenantUser))
        #expect(claims["firebase"]?["sign_in_second_factor"] == "phone")
        #expect(h.verificationCodes().allSatisfy { $0["phoneNumber"] != "+15550004444" })
    }

    @Test func tenantTestPhoneNumbersHaveFixedCodes() throws {
        let h = try AuthHarness()
        let tenant = try h.createTenant("phones", [("testPhoneNumbers", .object(["+15555550100": "123456"]))])
        let sent = h.post("\(it)/accounts:sendVerificationCode", .object(["phoneNumber": "+15555550100", "tenantId": .string(tenant)]))
        let signedIn = h.post("\(it)/accounts:signInWithPhoneNumber", .object(["sessionInfo": sent.json["sessionInfo"]!, "code": "123456",
                                                                                 "tenantId": .string(tenant)]))
        #expect(AuthHarness.claims(signedIn.json["idToken"])["firebase"]?["tenant"] == .string(tenant))
        #expect(h.admin("GET", "\(AuthHarness.tenants)/\(tenant)").json["testPhoneNumbers"] == .object(["+15555550100": "123456"]))
    }

    @Test func adminManagesSecondFactors() throws {
        let h = try AuthHarness()
        let accounts = "\(it)/projects/demo-hearth/accounts"
        #expect(h.admin("POST", accounts, .object(["email": "nv@b.com", "mfaInfo": .array([.object(["phoneInfo": "+15550005555"])])])).errorMessage
                == "UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors.")
        let created = h.admin("POST", accounts, .object(["email": "admin-mfa@b.com", "emailVerified": true, "mfaInfo": .array([
            .object(["phoneInfo": "+15550005555", "displayName": "home", "mfaEnrollmentId": "ignored-on-create"]),
            .object(["phoneInfo": "+15550005555"]),
        ])]))
        let localId = try #require(created.json["localId"]?.stringValue)
        let factors = try #require(h.lookupAdmin(localId)?["mfaInfo"]?.arrayValue)
        #expect(factors.count == 1)
        #expect(factors[0]["mfaEnrollmentId"] != "ignored-on-create")
        #expect(factors[0]["displayName"] == "home")

        let update = "\(accounts):update"
        let replaced = h.admin("POST", update, .object(["localId": .string(localId), "mfa": .object(["enrollments": .array([
            .object(["mfaEnrollmentId": "kept-id", "phoneInfo": "+15550006666", "enrolledAt": "2020-01-02T03:04:05Z"]),
            .object(["phoneInfo": "+15550007777"]),
        ])])]))
        #expect(replaced.status == 200)
        let after = try #require(h.lookupAdmin(localId)?["mfaInfo"]?.arrayValue)
        #expect(after.compactMap { $0["phoneInfo"]?.stringValue } == ["+15550006666", "+15550007777"])
        #expect(after[0]["mfaEnrollmentId"] == "kept-id")
        #expect(after[0]["enrolledAt"] == "2020-01-02T03:04:05.000Z")
        #expect(h.admin("GET", "\(accounts):batchGet").json["users"]?[0]?["mfaInfo"]?.arrayValue?.count == 2)

        #expect(h.admin("POST", update, .object(["localId": .string(localId), "mfa": .object(["enrollments": .array([
            .object(["mfaEnrollmentId": "same", "phoneInfo": "+15550006666"]), .object(["mfaEnrollmentId": "same", "phoneInfo": "+15550007777"]),
        ])])])).errorMessage == "DUPLICATE_MFA_ENROLLMENT_ID")
        #expect(h.admin("POST", update, .object(["localId": .string(localId), "mfa": .object(["enrollments": .array([.object(["phoneInfo": "x"])])])]))
                .errorMessage == "INVALID_MFA_PHONE_NUMBER : Invalid format.")
        let six: [JSON] = (0..<6).map { .object(["phoneInfo": .string("+1555000880\($0)")]) }
        #expect(h.admin("POST", update, .object(["localId": .string(localId), "mfa": .object(["enrollments": .array(six)])])).errorMessage
                == "SECOND_FACTOR_LIMIT_EXCEEDED")
        h.admin("POST", update, .object(["localId": .string(localId), "mfa": .object([:])]))
        #expect(h.lookupAdmin(localId)?["mfaInfo"] == nil)

        let imported = h.admin("POST", "\(accounts):batchCreate", .object(["users": .array([
            .object(["localId": "imp-mfa", "email": "imp@b.com", "emailVerified": true,
                     "mfaInfo": .array([.object(["mfaEnrollmentId": "imp-factor", "phoneInfo": "+15550009999"])])]),
            .object(["localId": "imp-bad", "email": "bad@b.com", "mfaInfo": .array([.object(["phoneInfo": "+15550009998"])])]),
        ])]))
        #expect(imported.json["error"] == .array([.object(["index": 1, "message": "Second factor account requires email to be verified."])]))
        #expect(h.lookupAdmin("imp-mfa")?["mfaInfo"]?[0]?["mfaEnrollmentId"] == "imp-factor")
    }
}
