import HearthCore
import HearthCrypto
import Testing
@testable import AuthEmulator

@Suite struct AuthTokenVerifierTests {
    let it = AuthHarness.it

    /// The mock token `@firebase/rules-unit-testing` makes for `authenticatedContext("alice")`.
    static func mockToken(project: String = "demo-hearth", sub: String = "alice") -> String {
        AuthHarness.unsignedToken(header: ["alg": "none", "type": "JWT"], payload: [
            "iss": .string("https://securetoken.google.com/\(project)"), "aud": .string(project), "iat": 0, "exp": 3600, "auth_time": 0,
            "sub": .string(sub), "user_id": .string(sub), "firebase": .object(["sign_in_provider": "custom", "identities": .object([:])]),
        ])
    }

    @Test func noneModeAcceptsHearthTokensAndEnforcesExp() throws {
        let h = try AuthHarness()
        let up = h.signUp("v@b.com")
        let token = try #require(up["idToken"]?.stringValue)
        let verified = try h.service.tokenVerifier.verify(idToken: token, projectID: "demo-hearth", checkRevoked: true)
        #expect(verified.uid == up["localId"]?.stringValue)
        #expect(verified.isSigned == false)
        #expect(verified.claims["email"] == "v@b.com")
        h.clock.advance(seconds: 3600)
        #expect(throws: IDTokenError.expired) { try h.service.tokenVerifier.verify(idToken: token, projectID: "demo-hearth", checkRevoked: false) }
    }

    @Test func noneModeAcceptsRulesUnitTestingMockTokensDespite1970Exp() throws {
        let h = try AuthHarness()
        let verified = try h.service.tokenVerifier.verify(idToken: Self.mockToken(), projectID: "demo-hearth", checkRevoked: false)
        #expect(verified.uid == "alice")
        #expect(throws: IDTokenError.userNotFound) {
            try h.service.tokenVerifier.verify(idToken: Self.mockToken(), projectID: "demo-hearth", checkRevoked: true)
        }
    }

    @Test func wrongProjectAndGarbageAreRejected() throws {
        let h = try AuthHarness()
        #expect(throws: IDTokenError.self) { try h.service.tokenVerifier.verify(idToken: "nope", projectID: "demo-hearth", checkRevoked: false) }
        do {
            _ = try h.service.tokenVerifier.verify(idToken: Self.mockToken(project: "other"), projectID: "demo-hearth", checkRevoked: false)
            Issue.record("accepted another project's token")
        } catch {
            guard case .wrongProject = error else { Issue.record("unexpected \(error)"); return }
        }
        let noSub = AuthHarness.unsignedToken(header: ["alg": "none", "type": "JWT"],
                                              payload: ["iss": "https://securetoken.google.com/demo-hearth", "aud": "demo-hearth"])
        #expect(throws: IDTokenError.malformed("missing or invalid \"sub\" claim")) {
            try h.service.tokenVerifier.verify(idToken: noSub, projectID: "demo-hearth", checkRevoked: false)
        }
    }

    @Test func checkRevokedSeesDisabledDeletedAndRevokedUsers() throws {
        let h = try AuthHarness()
        let verifier = h.service.tokenVerifier
        let a = h.signUp("a@b.com")
        h.clock.advance(seconds: 10)
        h.post("\(it)/projects/demo-hearth/accounts:update", .object(["localId": a["localId"]!, "validSince": .int(AuthHarness.start.unixSeconds + 5)]), admin: true)
        #expect(throws: IDTokenError.revoked) { try verifier.verify(idToken: a["idToken"]?.stringValue ?? "", projectID: "demo-hearth", checkRevoked: true) }
        // Without the lookup a revoked token still verifies (as firebase-admin without check_revoked).
        #expect(throws: Never.self) { try verifier.verify(idToken: a["idToken"]?.stringValue ?? "", projectID: "demo-hearth", checkRevoked: false) }

        let b = h.signUp("b@b.com")
        h.post("\(it)/projects/demo-hearth/accounts:update", .object(["localId": b["localId"]!, "disableUser": true]), admin: true)
        #expect(throws: IDTokenError.disabled) { try verifier.verify(idToken: b["idToken"]?.stringValue ?? "", projectID: "demo-hearth", checkRevoked: true) }

        let c = h.signUp("c@b.com")
        h.post("\(it)/projects/demo-hearth/accounts:delete", .object(["localId": c["localId"]!]), admin: true)
        #expect(throws: IDTokenError.userNotFound) { try verifier.verify(idToken: c["idToken"]?.stringValue ?? "", projectID: "demo-hearth", checkRevoked: true) }
    }

    /// A token without `iat` cannot show it was issued after a revocation: with `checkRevoked`
    /// it is revoked once the account has a `validSince` (sign-up sets one), as the refresh path
    /// judges it — not taken as issued after it. (Signed with Hearth's own key: every token
    /// Hearth issues has an `iat`.)
    @Test func aTokenWithoutIssuedAtIsRevokedOnceValidSinceIsSet() throws {
        let h = try AuthHarness(signing: .rs256)
        let verifier = h.service.tokenVerifier
        let up = h.signUp("n@b.com")
        let issued = try #require(up["idToken"]?.stringValue)
        var payload = try #require(AuthHarness.decode(issued)).payload
        #expect(payload["iat"] != nil)
        payload["iat"] = nil
        // The key Hearth signed the sign-up's token with, read from the same database.
        let ring = SigningKeyRing(store: AuthStore(database: h.database), clock: h.clock, ids: IDGenerator(seed: 1))
        let key = try #require(try ring.keys(.idToken).last)
        let token = try JWT.rs256(payload: payload, key: key.key, kid: key.kid)
        #expect(throws: Never.self) { try verifier.verify(idToken: issued, projectID: "demo-hearth", checkRevoked: true) }
        #expect(throws: Never.self) { try verifier.verify(idToken: token, projectID: "demo-hearth", checkRevoked: false) }
        #expect(throws: IDTokenError.revoked) { try verifier.verify(idToken: token, projectID: "demo-hearth", checkRevoked: true) }
    }

    @Test func rs256ModeAcceptsOnlyValidSignatures() throws {
        let h = try AuthHarness(signing: .rs256)
        let verifier = h.service.tokenVerifier
        let up = h.signUp("s@b.com")
        let token = try #require(up["idToken"]?.stringValue)
        let parts = try #require(AuthHarness.decode(token))
        #expect(parts.header.keys == ["alg", "kid", "typ"])
        #expect(parts.header["alg"] == "RS256")
        let verified = try verifier.verify(idToken: token, projectID: "demo-hearth", checkRevoked: true)
        #expect(verified.isSigned)
        // Altering the payload breaks the signature.
        var payload = parts.payload
        payload["sub"] = "someone-else"
        let segments = token.split(separator: ".").map(String.init)
        let forged = segments[0] + "." + Base64URL.encode(Array(JSON.object(payload).serialized().utf8)) + "." + segments[2]
        #expect(throws: IDTokenError.malformed("invalid signature")) { try verifier.verify(idToken: forged, projectID: "demo-hearth", checkRevoked: false) }
        // Unsigned tokens, including the mocks, are refused.
        #expect(throws: IDTokenError.self) { try verifier.verify(idToken: Self.mockToken(), projectID: "demo-hearth", checkRevoked: false) }
        // A token signed by some other key is refused.
        let stranger = try JWT.rs256(payload: parts.payload, key: RSAKey.generate(bits: 1024), kid: parts.header["kid"]?.stringValue ?? "")
        #expect(throws: IDTokenError.malformed("invalid signature")) { try verifier.verify(idToken: stranger, projectID: "demo-hearth", checkRevoked: false) }
        h.clock.advance(seconds: 3600)
        #expect(throws: IDTokenError.expired) { try verifier.verify(idToken: token, projectID: "demo-hearth", checkRevoked: false) }
    }

    @Test func rs256ClientEndpointsCheckSignatureAndExpiry() throws {
        let h = try AuthHarness(signing: .rs256)
        let up = h.signUp("e@b.com")
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": up["idToken"]!])).status == 200)
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": .string(Self.mockToken())])).errorMessage == "INVALID_ID_TOKEN")
        h.clock.advance(seconds: 3601)
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": up["idToken"]!])).errorMessage == "INVALID_ID_TOKEN")
        // Refreshing mints a token that verifies on the advanced clock.
        let refreshed = h.refresh(up["refreshToken"]?.stringValue ?? "").json["id_token"]?.stringValue ?? ""
        #expect(throws: Never.self) { try h.service.tokenVerifier.verify(idToken: refreshed, projectID: "demo-hearth", checkRevoked: true) }
    }

    /// A token issued after "now" (the clock was moved back) is refused in both modes, by the
    /// verifier Firestore and the uploads API use and by Auth's own endpoints.
    @Test(arguments: [AuthConfiguration.TokenSigning.none, .rs256])
    func tokensIssuedInTheFutureAreRejected(_ signing: AuthConfiguration.TokenSigning) throws {
        let h = try AuthHarness(signing: signing)
        let up = h.signUp("future@b.com")
        let token = try #require(up["idToken"]?.stringValue)
        h.clock.advance(seconds: -1)
        #expect(throws: IDTokenError.issuedInFuture) {
            try h.service.tokenVerifier.verify(idToken: token, projectID: "demo-hearth", checkRevoked: false)
        }
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": .string(token)])).errorMessage == "INVALID_ID_TOKEN")
        // At the instant it was issued it is good again: the check is iat > now, no more.
        h.clock.advance(seconds: 1)
        #expect(throws: Never.self) { try h.service.tokenVerifier.verify(idToken: token, projectID: "demo-hearth", checkRevoked: false) }
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": .string(token)])).status == 200)
    }

    @Test func noneModeClientEndpointsIgnoreExpAsTheEmulatorDoes() throws {
        let h = try AuthHarness()
        let up = h.signUp("ne@b.com")
        h.clock.advance(seconds: 7200)
        #expect(h.post("\(it)/accounts:lookup", .object(["idToken": up["idToken"]!])).status == 200)
    }
}
