import HearthCore
import HearthCrypto
import Testing
@testable import AuthEmulator

@Suite struct IDTokenIssuerTests {
    @Test func payloadOrderMatchesTheFirebaseEmulator() throws {
        var user = UserRecord(localId: "uid1", createdAt: 0)
        user.displayName = "Ann"
        user.photoUrl = "http://p/a.png"
        user.email = "ann@b.com"
        user.emailVerified = true
        user.phoneNumber = "+1555"
        user.lastLoginAt = 1_700_000_000_999
        user.customAttributes = #"{"role":"admin","name":"Override"}"#
        user.providers = [ProviderUserInfo(providerId: "password", rawId: "ann@b.com"), ProviderUserInfo(providerId: "phone", rawId: "+1555"),
                          ProviderUserInfo(providerId: "google.com", rawId: "g1")]
        let claims = IDTokenIssuer.claims(user: user, projectID: "p1", provider: "password", extraClaims: ["extra": 1], issuedAt: 1_700_000_100)
        #expect(claims.keys == ["name", "picture", "role", "extra", "email", "email_verified", "phone_number", "auth_time", "user_id",
                                "firebase", "iat", "exp", "aud", "iss", "sub"])
        // A developer `name` replaces the profile name in place (JavaScript spread semantics).
        #expect(claims["name"] == "Override")
        #expect(claims["auth_time"] == 1_700_000_000)
        #expect(claims["exp"] == 1_700_003_700)
        #expect(claims["aud"] == "p1")
        #expect(claims["iss"] == "https://securetoken.google.com/p1")
        #expect(claims["sub"] == "uid1")
        #expect(claims["firebase"] == .object(["identities": .object(["email": .array(["ann@b.com"]), "phone": .array(["+1555"]),
                                                                       "google.com": .array(["g1"])]),
                                               "sign_in_provider": "password"]))
    }

    @Test func anonymousTokensCarryProviderId() throws {
        var user = UserRecord(localId: "anon", createdAt: 0)
        user.lastLoginAt = 5000
        let claims = IDTokenIssuer.claims(user: user, projectID: "p", provider: "anonymous", extraClaims: [:], issuedAt: 10)
        #expect(claims.keys == ["provider_id", "auth_time", "user_id", "firebase", "iat", "exp", "aud", "iss", "sub"])
        #expect(claims["provider_id"] == "anonymous")
        #expect(claims["auth_time"] == 5)
    }

    @Test func unsignedSerializationIsExactlyTheEmulators() throws {
        let token = JWT.unsigned(payload: ["sub": "x"])
        #expect(token == "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ4In0.")
    }

    @Test func jwtDecodingRejectsGarbage() throws {
        for text in ["", "a.b", "a.b.c.d", "!!!.e30.", "e30.!!!.", "bm90anNvbg.e30.", "e30.e30.***"] {
            #expect(throws: JWT.DecodeError.self) { try JWT(decoding: text) }
        }
        let ok = try JWT(decoding: "e30.e30.")
        #expect(ok.header.isEmpty && ok.payload.isEmpty && ok.signature.isEmpty)
    }

    @Test(arguments: CustomClaims.forbidden)
    func everyReservedClaimIsForbidden(name: String) throws {
        #expect(throws: AuthError.forbiddenClaim(name)) { try CustomClaims.validate(.object(JSONObject([(name, .int(1))]))) }
    }
}
