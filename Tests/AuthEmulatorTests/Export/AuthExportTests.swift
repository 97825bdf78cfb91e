import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import AuthEmulator

/// Hearth's own Auth export: a round trip into a fresh service changes nothing an API can see,
/// and passwords (Hearth's own hashes and imported algorithms alike) keep signing in.
struct AuthExportTests {
    @Test func aRoundTripKeepsAccountsTenantsConfigAndPasswords() throws {
        let a = try AuthHarness()
        let carol = a.signUp("carol@example.com", "carol-pass")["localId"]?.stringValue ?? ""
        // An account imported with another algorithm keeps that algorithm's hash.
        let imported = a.post("/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:batchCreate", .object([
            "hashAlgorithm": "HMAC_SHA256", "signerKey": .string(Data("key".utf8).base64EncodedString()),
            "users": .array([.object(["localId": "hmac-user", "email": "hmac@example.com",
                                       "passwordHash": .string(Data(HMACVector.hash).base64EncodedString()),
                                       "salt": .string(Data("salt".utf8).base64EncodedString())])]),
        ]), admin: true)
        #expect(imported.status == 200, "\(imported.text)")
        let tenant = try a.createTenant("team-a")
        #expect(a.signUp("erin@example.com", tenant: tenant, "tenant-pass").status == 200)
        let before = a.lookupAdmin(carol)

        let export = try a.service.exportAccounts()
        let b = try AuthHarness(seed: 99)
        #expect(try b.service.importAccounts(export) == 3)
        // Exporting the import again (before any sign-in touches it) gives the same document.
        #expect(try b.service.exportAccounts() == export)
        #expect(b.signIn("carol@example.com", "carol-pass").status == 200)
        #expect(b.signIn("carol@example.com", "wrong").status == 400)
        #expect(b.signIn("hmac@example.com", HMACVector.password).status == 200)
        #expect(b.signIn("erin@example.com", tenant: tenant, "tenant-pass").status == 200)
        #expect(b.lookupAdmin(carol) == before)
    }

    @Test func aRoundTripKeepsProviderConfigurations() throws {
        let a = try AuthHarness()
        let v2 = "/identitytoolkit.googleapis.com/v2/projects/demo-hearth"
        let tenant = try a.createTenant("team-b")
        let oidc = a.admin("POST", "\(v2)/oauthIdpConfigs?oauthIdpConfigId=oidc.acme",
                           .object(["clientId": "c", "issuer": "https://acme.example.com", "enabled": true]))
        let saml = a.admin("POST", "\(v2)/tenants/\(tenant)/inboundSamlConfigs?inboundSamlConfigId=saml.corp", .object([
            "idpConfig": .object(["idpEntityId": "idp", "ssoUrl": "https://idp.example.com",
                                  "idpCertificates": .array([.object(["x509Certificate": "PEM"])])]),
            "spConfig": .object(["spEntityId": "sp", "callbackUri": "https://sp.example.com/cb"]),
        ]))
        #expect(oidc.status == 200 && saml.status == 200, "\(oidc.text) \(saml.text)")

        let export = try a.service.exportAccounts()
        let configs = export["projects"]?.arrayValue?.first?["providerConfigs"]?.arrayValue ?? []
        #expect(configs.map { [$0["kind"], $0["providerId"], $0["tenantId"]] } == [["oidc", "oidc.acme", nil], ["saml", "saml.corp", .string(tenant)]])
        let b = try AuthHarness(seed: 99)
        try b.service.importAccounts(export)
        #expect(try b.service.exportAccounts() == export)
        #expect(b.admin("GET", "\(v2)/oauthIdpConfigs/oidc.acme").json == oidc.json)
        #expect(b.admin("GET", "\(v2)/tenants/\(tenant)/inboundSamlConfigs/saml.corp").json == saml.json)
        // A project without any exports no member for them.
        #expect(try AuthHarness().service.exportAccounts()["projects"]?.arrayValue?.contains { $0["providerConfigs"] != nil } == false)
    }

    @Test func aBrokenAccountIsRefusedWithItsPlace() throws {
        let a = try AuthHarness()
        let bad: JSON = .object(["projects": .array([.object(["projectId": "p", "accounts": .array([
            .object(["localId": "u1", "createdAt": "1", "passwordHash": "AAAA"]),
        ])])])])
        let error = #expect(throws: AuthService.ImportError.self) { try a.service.importAccounts(bad) }
        #expect(error?.description.contains("accounts[0]") == true && error?.description.contains("passwordScheme") == true)
    }
}

/// HMAC-SHA256(key "key", password + salt) for password "hunter2", salt "salt".
enum HMACVector {
    static let password = "hunter2"
    static var hash: [UInt8] {
        HMAC.sha256(key: Array("key".utf8), data: Array((password + "salt").utf8))
    }
}
