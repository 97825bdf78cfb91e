import HearthCore
import HearthHTTP
@testable import AuthEmulator

/// Shortcuts for the tenant and second-factor suites.
extension AuthHarness {
    static let v2 = "/identitytoolkit.googleapis.com/v2"
    static let tenants = "\(v2)/projects/demo-hearth/tenants"

    /// Sends JSON with admin credentials.
    @discardableResult
    func admin(_ method: String, _ path: String, _ body: JSON? = nil) -> Reply {
        var h = HTTPHeaders()
        h.set("Authorization", "Bearer owner")
        if body != nil { h.set("Content-Type", "application/json") }
        return send(method, path, body: body.map { Array($0.serialized().utf8) } ?? [], headers: h)
    }

    /// Creates a tenant (password sign-up on unless `extra` says otherwise) and returns its id.
    func createTenant(_ displayName: String = "tenant-one", _ extra: [(String, JSON)] = [("allowPasswordSignup", true)]) throws -> String {
        var body = JSONObject([("displayName", .string(displayName))])
        for (k, v) in extra { body[k] = v }
        let r = admin("POST", Self.tenants, .object(body))
        guard let name = r.json["name"]?.stringValue, let id = name.split(separator: "/").last else {
            throw HarnessError.unexpected(r.text)
        }
        return String(id)
    }

    /// Signs up in a tenant through the client API.
    @discardableResult
    func signUp(_ email: String, tenant: String, _ password: String = "secret123") -> Reply {
        post("\(Self.it)/accounts:signUp", .object(["email": .string(email), "password": .string(password), "tenantId": .string(tenant),
                                                     "returnSecureToken": true]))
    }

    /// Signs in with a password in a tenant.
    func signIn(_ email: String, tenant: String, _ password: String = "secret123") -> Reply {
        post("\(Self.it)/accounts:signInWithPassword", .object(["email": .string(email), "password": .string(password),
                                                                  "tenantId": .string(tenant), "returnSecureToken": true]))
    }

    /// The emulator's recorded SMS codes, for the project or a tenant.
    func verificationCodes(tenant: String? = nil) -> [JSON] {
        let path = tenant.map { "/emulator/v1/projects/demo-hearth/tenants/\($0)/verificationCodes" }
            ?? "/emulator/v1/projects/demo-hearth/verificationCodes"
        return get(path, admin: false).json["verificationCodes"]?.arrayValue ?? []
    }

    /// The emulator's recorded out-of-band codes, for the project or a tenant.
    func oobCodes(tenant: String? = nil) -> [JSON] {
        let path = tenant.map { "/emulator/v1/projects/demo-hearth/tenants/\($0)/oobCodes" } ?? "/emulator/v1/projects/demo-hearth/oobCodes"
        return get(path, admin: false).json["oobCodes"]?.arrayValue ?? []
    }

    /// The payload of an ID token.
    static func claims(_ token: JSON?) -> JSONObject {
        token?.stringValue.flatMap { decode($0)?.payload } ?? JSONObject()
    }
}

enum HarnessError: Error {
    case unexpected(String)
}
