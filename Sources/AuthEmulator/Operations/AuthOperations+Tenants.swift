import HearthCore
import HearthHTTP

extension AuthOperations {
    /// The tenant `tenantID` of `project`, nil when there is none.
    func tenant(project: String, _ tenantID: String) throws(AuthError) -> Tenant? {
        try store.read { tx in try tx.tenant(project, tenantID) }
    }

    /// Production's rule for tenant display names: 4 to 20 characters, a letter first, then
    /// letters, digits and hyphens (it becomes the readable part of the tenant id).
    static func isValidTenantDisplayName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (4...20).contains(bytes.count), let first = bytes.first, isASCIILetter(first) else { return false }
        return bytes.allSatisfy { isASCIILetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "-") }
    }

    private static func isASCIILetter(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
    }

    /// Type-checks the members of a `Tenant` in a request, as the API's proto parser does, and the
    /// display name (INVALID_DISPLAY_NAME) and test phone numbers (INVALID_TESTING_PHONE_NUMBER)
    /// as production does.
    private func validateTenant(_ body: RequestBody) throws(AuthError) {
        if let name = try body.string("displayName"), !Self.isValidTenantDisplayName(name) { throw .invalidDisplayName }
        for flag in Tenant.switches + ["autodeleteAnonymousUsers"] { _ = try body.bool(flag) }
        if let mfa = try body.object("mfaConfig") { try MfaConfig.validate(mfa, field: "tenant.mfa_config") }
        if let numbers = try body.object("testPhoneNumbers") {
            // Production allows ten test numbers, each with a six-digit code.
            guard numbers.object.count <= 10 else { throw .invalidTestingPhoneNumber }
            for (phone, code) in numbers.object {
                guard Self.isValidPhoneNumber(phone), phone.dropFirst().allSatisfy({ $0.isASCII && ($0.isNumber || $0 == " " || $0 == "-") }),
                      let digits = code.stringValue, digits.utf8.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    throw .invalidTestingPhoneNumber
                }
            }
        }
        for member in Tenant.members where !Tenant.switches.contains(member)
            && !["displayName", "mfaConfig", "testPhoneNumbers", "autodeleteAnonymousUsers"].contains(member) {
            _ = try body.object(member)
        }
    }

    /// A new tenant id as production makes them: the display name in lower case, a hyphen and
    /// five random lower-case letters and digits (`mytenant-x7k2q`).
    private func newTenantID(_ tx: AuthTransaction, project: String, displayName: String) throws -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for _ in 0..<10 {
            var suffix: [UInt8] = []
            while suffix.count < 5 {
                // 252 = 36 * 7: no modulo bias.
                for b in ids.bytes(5) where suffix.count < 5 && b < 252 { suffix.append(alphabet[Int(b) % 36]) }
            }
            let id = displayName.lowercased() + "-" + String(decoding: suffix, as: UTF8.self)
            if try tx.tenant(project, id) == nil { return id }
        }
        throw AuthError.internalError("Cannot generate a unique tenant id after 10 tries.")
    }

    /// `POST v2/projects/{p}/tenants`: creates a tenant from `displayName` (required) and its
    /// settings; unset switches are off and `mfaConfig` is `DISABLED`, as in production.
    func createTenant(_ ctx: OperationContext, _ body: RequestBody) throws(AuthError) -> JSON {
        try validateTenant(body)
        guard let displayName = try body.string("displayName") else { throw .missingDisplayName }
        let tenant = try store.write { tx -> Tenant in
            let id = try newTenantID(tx, project: ctx.projectID, displayName: displayName)
            let tenant = Tenant(projectID: ctx.projectID, tenantID: id, document: body.object)
            try tx.saveTenant(tenant)
            return tenant
        }
        logger.info("auth tenant created", [("project", .string(ctx.projectID)), ("tenant", .string(tenant.tenantID))])
        return tenant.json
    }

    /// `GET v2/projects/{p}/tenants/{t}`.
    func getTenant(_ ctx: OperationContext, _ tenantID: String) throws(AuthError) -> JSON {
        guard let tenant = try tenant(project: ctx.projectID, tenantID) else { throw .tenantNotFound }
        return tenant.json
    }

    /// `GET v2/projects/{p}/tenants?pageSize=&pageToken=`: tenants in id order, 20 a page unless
    /// asked (at most 1000); `nextPageToken` (the last id) only when more follow.
    func listTenants(_ ctx: OperationContext, _ request: Request) throws(AuthError) -> JSON {
        var pageSize = 20
        if let text = request.query("pageSize"), !text.isEmpty {
            guard let n = Int32(text) else {
                throw .invalidArgument("Invalid value at 'page_size' (TYPE_INT32), \"\(text)\"", reason: "invalid")
            }
            if n > 0 { pageSize = min(Int(n), 1000) }
        }
        let token = request.query("pageToken").flatMap { $0.isEmpty ? nil : $0 }
        var tenants = try store.read { tx in try tx.tenants(ctx.projectID, after: token, limit: pageSize + 1) }
        var reply = JSONObject()
        if tenants.count > pageSize {
            tenants.removeLast(tenants.count - pageSize)
            reply["tenants"] = .array(tenants.map(\.json))
            reply["nextPageToken"] = .string(tenants.last?.tenantID ?? "")
        } else {
            reply["tenants"] = .array(tenants.map(\.json))
        }
        return .object(reply)
    }

    /// `PATCH v2/projects/{p}/tenants/{t}?updateMask=…`: with a mask only the listed (dotted)
    /// members change, an absent value clearing one; without one the tenant is replaced.
    func updateTenant(_ ctx: OperationContext, _ tenantID: String, _ body: RequestBody, updateMask: String?) throws(AuthError) -> JSON {
        try validateTenant(body)
        let tenant = try store.write { tx -> Tenant in
            guard var tenant = try tx.tenant(ctx.projectID, tenantID) else { throw AuthError.tenantNotFound }
            if let updateMask, !updateMask.isEmpty {
                tenant.apply(body.object, paths: FieldMask.paths(updateMask))
            } else {
                tenant.replace(with: body.object)
            }
            // The display name is required: a mask that clears it, or a replacement without one,
            // is refused.
            guard tenant.displayName != nil else { throw AuthError.missingDisplayName }
            try tx.saveTenant(tenant)
            return tenant
        }
        return tenant.json
    }

    /// `DELETE v2/projects/{p}/tenants/{t}`: the tenant and all of its accounts → `{}`.
    func deleteTenant(_ ctx: OperationContext, _ tenantID: String) throws(AuthError) -> JSON {
        try store.write { tx in
            guard try tx.tenant(ctx.projectID, tenantID) != nil else { throw AuthError.tenantNotFound }
            try tx.deleteTenant(ctx.projectID, tenantID)
        }
        return .object(JSONObject())
    }
}
