import Foundation
import HearthCore
import HearthCrypto
import HearthSQLite
import Testing
@testable import AuthEmulator

@Suite struct SigningKeyTests {
    @Test func x509AndJWKSPublishTheSigningKey() throws {
        let h = try AuthHarness(signing: .rs256)
        let token = try #require(h.signUp("k@b.com")["idToken"]?.stringValue)
        let header = try #require(AuthHarness.decode(token)).header
        let kid = try #require(header["kid"]?.stringValue)
        #expect(kid.count == 40)
        for prefix in ["", "/www.googleapis.com"] {
            let certs = h.send("GET", prefix + AuthRoutes.x509Path)
            #expect(certs.status == 200)
            #expect(certs.headers["Cache-Control"] == "public, max-age=3600, must-revalidate, no-transform")
            #expect(certs.headers["Expires"] == AuthHarness.start.adding(seconds: 3600).httpDate)
            let pem = try #require(certs.json[kid]?.stringValue)
            #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
            let key = try RSAKey(publicKeyPEM: pem)
            let parts = token.split(separator: ".").map(String.init)
            #expect(key.verifyRS256(Array((parts[0] + "." + parts[1]).utf8), signature: [UInt8](Base64URL.decode(parts[2]) ?? Data())))
        }
        let jwks = h.send("GET", AuthRoutes.jwksPath).json
        let jwk = try #require(jwks["keys"]?[0])
        #expect(jwk["kid"]?.stringValue == kid)
        #expect(jwk["kty"] == "RSA" && jwk["alg"] == "RS256" && jwk["use"] == "sig" && jwk["e"] == "AQAB")
        #expect((Base64URL.decode(jwk["n"]?.stringValue ?? "")?.count ?? 0) == 256)
        #expect(h.send("GET", AuthRoutes.sessionCookieKeysPath).json[kid] != nil)
    }

    @Test func noneModePublishesNoKeys() throws {
        let h = try AuthHarness()
        #expect(h.send("GET", AuthRoutes.x509Path).json == .object([:]))
        #expect(h.send("GET", AuthRoutes.jwksPath).json == .object(["keys": .array([])]))
    }

    @Test func keyIsGeneratedOncePerDataDirectory() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("auth-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("hearth.sqlite").path
        let first = try AuthHarness(signing: .rs256, seed: 1, database: Database(path: path))
        let kid1 = first.send("GET", AuthRoutes.x509Path).json.objectValue?.keys
        let token = try #require(first.signUp("persist@b.com")["idToken"]?.stringValue)
        let second = try AuthHarness(signing: .rs256, seed: 2, database: Database(path: path))
        #expect(second.send("GET", AuthRoutes.x509Path).json.objectValue?.keys == kid1)
        #expect(throws: Never.self) { try second.service.tokenVerifier.verify(idToken: token, projectID: "demo-hearth", checkRevoked: true) }
    }
}
