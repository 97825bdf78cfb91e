import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import AuthEmulator

@Suite struct ProviderConfigTests {
    static let v2 = "/identitytoolkit.googleapis.com/v2/projects/demo-hearth"

    @Test func oidcCreateAnswersTheResourceAndAMaskChangesOnlyItsPaths() throws {
        let h = try AuthHarness()
        let created = h.admin("POST", "\(Self.v2)/oauthIdpConfigs?oauthIdpConfigId=oidc.acme", .object([
            "issuer": "https://acme.example.com", "clientId": "client-1", "enabled": true, "unknownMember": 5,
            "responseType": .object(["idToken": true]),
        ]))
        // The reference's member order; the unknown member dropped.
        #expect(created.json == .object([
            "name": "projects/demo-hearth/oauthIdpConfigs/oidc.acme", "clientId": "client-1", "issuer": "https://acme.example.com",
            "enabled": true, "responseType": .object(["idToken": true]),
        ]))
        #expect(created.json.objectValue?.map(\.0) == ["name", "clientId", "issuer", "enabled", "responseType"])

        let patched = h.admin("PATCH", "\(Self.v2)/oauthIdpConfigs/oidc.acme?updateMask=responseType.code,responseType.idToken,clientSecret,display_name",
                              .object(["responseType": .object(["code": true, "idToken": false]), "clientSecret": "s3cret",
                                       "displayName": "Acme", "clientId": "not-in-the-mask"]))
        #expect(patched.json == .object([
            "name": "projects/demo-hearth/oauthIdpConfigs/oidc.acme", "clientId": "client-1", "issuer": "https://acme.example.com",
            "displayName": "Acme", "enabled": true, "clientSecret": "s3cret", "responseType": .object(["idToken": false, "code": true]),
        ]))
        #expect(h.admin("GET", "\(Self.v2)/oauthIdpConfigs/oidc.acme").json == patched.json)
        // The Identity Platform reference's admin/v2 path serves the same resource.
        #expect(h.admin("GET", "/identitytoolkit.googleapis.com/admin/v2/projects/demo-hearth/oauthIdpConfigs/oidc.acme").json == patched.json)
    }

    @Test(arguments: [
        ("oauthIdpConfigs?oauthIdpConfigId=oidc.x", JSON.object(["clientId": "c"]), "MISSING_ISSUER"),
        ("oauthIdpConfigs?oauthIdpConfigId=oidc.x", JSON.object(["issuer": "https://i.example.com"]), "MISSING_OAUTH_CLIENT_ID"),
        ("oauthIdpConfigs?oauthIdpConfigId=oidc.", JSON.object(["clientId": "c", "issuer": "https://i.example.com"]), "INVALID_CONFIG_ID"),
        ("oauthIdpConfigs", JSON.object(["clientId": "c", "issuer": "https://i.example.com"]), "MISSING_CONFIG_ID"),
        ("oauthIdpConfigs?oauthIdpConfigId=oidc.x", JSON.object(["clientId": "c", "issuer": "https:///path"]), "INVALID_CONFIG"),
        ("inboundSamlConfigs?inboundSamlConfigId=oidc.x", JSON.object([:]), "INVALID_CONFIG_ID"),
        ("inboundSamlConfigs?inboundSamlConfigId=saml.x", JSON.object([:]), "MISSING_CONFIG"),
        ("inboundSamlConfigs?inboundSamlConfigId=saml.x",
         JSON.object(["idpConfig": .object(["idpEntityId": "i", "ssoUrl": "https://s.example.com",
                                            "idpCertificates": .array([.object(["x509Certificate": "PEM"])])])]),
         "MISSING_SAML_RELYING_PARTY_CONFIG"),
        ("inboundSamlConfigs?inboundSamlConfigId=saml.x",
         JSON.object(["idpConfig": .object(["idpEntityId": "i", "ssoUrl": "https://s.example.com",
                                            "idpCertificates": .array([.object(["x509Certificate": ""])])]),
                      "spConfig": .object(["spEntityId": "sp", "callbackUri": "https://c.example.com"])]),
         "INVALID_CONFIG"),
    ])
    func incompleteConfigurationsAreRefused(path: String, body: JSON, code: String) throws {
        let h = try AuthHarness()
        let reply = h.admin("POST", "\(Self.v2)/\(path)", body)
        #expect(reply.status == 400)
        #expect(reply.errorMessage?.components(separatedBy: " : ").first == code)
        #expect(h.admin("GET", "\(Self.v2)/oauthIdpConfigs").json == .object(["oauthIdpConfigs": .array([])]))
        #expect(h.admin("GET", "\(Self.v2)/inboundSamlConfigs").json == .object(["inboundSamlConfigs": .array([])]))
    }

    @Test func deletingATenantDeletesItsConfigurations() throws {
        let h = try AuthHarness()
        let tenant = try h.createTenant()
        let body = JSON.object(["clientId": "c", "issuer": "https://i.example.com"])
        #expect(h.admin("POST", "\(Self.v2)/tenants/\(tenant)/oauthIdpConfigs?oauthIdpConfigId=oidc.t", body).status == 200)
        #expect(h.admin("POST", "\(Self.v2)/oauthIdpConfigs?oauthIdpConfigId=oidc.t", body).status == 200)
        let count = { () throws -> Int64? in
            try h.database.read { conn in try conn.scalarInt("SELECT COUNT(*) FROM auth_provider_configs WHERE tenant_id = ?", [tenant]) }
        }
        #expect(try count() == 1)
        #expect(h.admin("DELETE", "\(Self.v2)/tenants/\(tenant)").status == 200)
        #expect(try count() == 0)
        // The project's own configuration with the same id stays.
        #expect(h.admin("GET", "\(Self.v2)/oauthIdpConfigs/oidc.t").json["name"] == "projects/demo-hearth/oauthIdpConfigs/oidc.t")
        #expect(h.admin("GET", "\(Self.v2)/tenants/\(tenant)/oauthIdpConfigs").errorMessage == "TENANT_NOT_FOUND")
    }
}
