import HearthCore
import HearthCrypto
import Testing
@testable import AuthEmulator

@Suite struct AppCheckTests {
    let path = "/v1/projects/demo-hearth/apps/1:123456:web:abcdef:exchangeDebugToken"

    @Test func debugTokenExchangeMintsVerifiableToken() throws {
        let h = try AuthHarness()
        let r = h.post(path, .object(["debugToken": "my-debug-token"]))
        #expect(r.status == 200)
        #expect(r.json["ttl"] == "3600s")
        let token = try #require(r.json["token"]?.stringValue)
        let parts = try #require(AuthHarness.decode(token))
        #expect(parts.header["alg"] == "RS256")
        #expect(parts.payload["sub"] == "1:123456:web:abcdef")
        #expect(parts.payload["aud"] == .array(["projects/demo-hearth"]))
        #expect(parts.payload["provider"] == "debug")
        #expect(parts.payload["iss"] == "https://firebaseappcheck.googleapis.com/demo-hearth")
        #expect(parts.payload["exp"] == .int(AuthHarness.start.unixSeconds + 3600))
        #expect(h.service.verifyAppCheckToken(token))
        // The JWKS publishes the signing key.
        let jwks = h.send("GET", "/v1/jwks").json
        #expect(jwks["keys"]?[0]?["kid"] == parts.header["kid"])
        #expect(h.send("GET", "/firebaseappcheck.googleapis.com/v1/jwks").json == jwks)
        // Expiry follows the emulator clock.
        h.clock.advance(seconds: 3600)
        #expect(!h.service.verifyAppCheckToken(token))
    }

    @Test func verifyRejectsForgeriesAndIdTokens() throws {
        let h = try AuthHarness(signing: .rs256)
        let token = try #require(h.post(path, .object(["debugToken": "t"])).json["token"]?.stringValue)
        let parts = token.split(separator: ".").map(String.init)
        let tampered = parts[0] + "." + Base64URL.encode(Array(#"{"aud":["projects/demo-hearth"],"exp":9999999999}"#.utf8)) + "." + parts[2]
        #expect(!h.service.verifyAppCheckToken(tampered))
        #expect(!h.service.verifyAppCheckToken(h.signUp("x@b.com")["idToken"]?.stringValue ?? ""))
        #expect(!h.service.verifyAppCheckToken("garbage"))
        let stranger = try JWT.rs256(payload: ["aud": .array(["projects/demo-hearth"]), "exp": 9_999_999_999,
                                               "iss": "https://firebaseappcheck.googleapis.com/x"],
                                     key: RSAKey.generate(bits: 1024), kid: AuthHarness.decode(token)?.header["kid"]?.stringValue ?? "")
        #expect(!h.service.verifyAppCheckToken(stranger))
    }

    @Test func exchangeErrors() throws {
        let configured = AuthConfiguration(passwordIterations: 2, appCheckDebugTokens: ["registered"])
        let h = try AuthHarness(configuration: configured)
        #expect(h.post(path, .object(["debugToken": "registered"])).status == 200)
        let denied = h.post(path, .object(["debugToken": "unknown"]))
        #expect(denied.status == 403)
        #expect(denied.json["error"]?["status"] == "PERMISSION_DENIED")
        #expect(denied.errorMessage == "App attestation failed.")
        let missing = h.post(path, .object([:]))
        #expect(missing.status == 400)
        #expect(missing.json["error"]?["status"] == "INVALID_ARGUMENT")
        #expect(h.post(path, .object(["debugToken": "registered"]), key: false).status == 403)
        #expect(h.post("/firebaseappcheck.googleapis.com\(path)", .object(["debugToken": "registered"])).status == 200)
    }
}
