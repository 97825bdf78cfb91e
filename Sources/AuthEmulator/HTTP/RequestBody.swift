import Foundation
import HearthCore
import HearthHTTP

/// A request's JSON object with typed, validating accessors.
///
/// Keys are normalised to camelCase first (`return_secure_token` → `returnSecureToken`), since
/// Google's REST mapping accepts both spellings. Type errors become 400 INVALID_ARGUMENT naming the
/// field; numbers are accepted where the API declares strings (int64 fields travel as strings in
/// proto JSON, and the Node Admin SDK sends some as numbers), as the Firebase emulator accepts them.
struct RequestBody: Sendable {
    let object: JSONObject
    /// JSON-pointer-ish location for error messages (`""` at the top, `/users/0` below).
    let path: String

    init(_ object: JSONObject, path: String = "") {
        self.object = object
        self.path = path
    }

    /// An empty body.
    static let empty = RequestBody(JSONObject())

    /// Parses a request body: empty means `{}`; anything but a JSON object is an error.
    static func parse(_ bytes: [UInt8]) throws(AuthError) -> RequestBody {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .empty }
        let value: JSON
        do {
            value = try JSON.parse(bytes)
        } catch {
            throw .invalidArgument("Invalid JSON payload received. \(error.reason) at byte \(error.offset).", reason: "parseError")
        }
        guard case .object(let o) = value else {
            throw .invalidArgument("Invalid JSON payload received. Expected an object at the top level, got \(value.typeName).",
                                   reason: "parseError")
        }
        return RequestBody(camelCased(o))
    }

    /// Parses `application/x-www-form-urlencoded` pairs into a body of strings.
    static func form(_ text: String) -> RequestBody {
        var o = JSONObject()
        for item in Request.parseQuery(text, plusAsSpace: true) { o[item.name] = .string(item.value ?? "") }
        return RequestBody(camelCased(o))
    }

    /// Converts `snake_case` member names to `camelCase`, recursively.
    static func camelCased(_ o: JSONObject) -> JSONObject {
        JSONObject(o.members.map { (camelCase($0.0), camelCased($0.1)) })
    }

    private static func camelCased(_ v: JSON) -> JSON {
        switch v {
        case .object(let o): return .object(camelCased(o))
        case .array(let a): return .array(a.map(camelCased))
        default: return v
        }
    }

    static func camelCase(_ key: String) -> String {
        guard key.contains("_") || key.contains("-") else { return key }
        var out = ""
        var upper = false
        for ch in key {
            if ch == "_" || ch == "-" {
                upper = !out.isEmpty
                continue
            }
            out.append(upper ? Character(ch.uppercased()) : ch)
            upper = false
        }
        return out
    }

    private func location(_ key: String) -> String { "\(path)/\(key)" }

    private func typeError(_ key: String, _ expected: String) -> AuthError {
        .invalidArgument("Invalid JSON payload received. \(location(key)) should be \(expected)", reason: "invalid")
    }

    /// Whether the member is present and not null.
    func has(_ key: String) -> Bool {
        if let v = object[key], !v.isNull { return true }
        return false
    }

    /// A string member (numbers and booleans are converted as the emulator's schema fixer does).
    func string(_ key: String) throws(AuthError) -> String? {
        guard let v = object[key] else { return nil }
        switch v {
        case .null: return nil
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        default: throw typeError(key, "string")
        }
    }

    /// A string member, nil when absent or empty (JavaScript truthiness, which the emulator's
    /// `assert(reqBody.x, …)` checks rely on).
    func nonEmptyString(_ key: String) throws(AuthError) -> String? {
        guard let s = try string(key), !s.isEmpty else { return nil }
        return s
    }

    /// A boolean member.
    func bool(_ key: String) throws(AuthError) -> Bool? {
        guard let v = object[key] else { return nil }
        switch v {
        case .null: return nil
        case .bool(let b): return b
        case .string("true"): return true
        case .string("false"): return false
        default: throw typeError(key, "boolean")
        }
    }

    /// An integer member, from a number or a decimal string (proto JSON int64).
    func int64(_ key: String) throws(AuthError) -> Int64? {
        guard let v = object[key] else { return nil }
        switch v {
        case .null: return nil
        case .int(let i): return i
        case .double(let d):
            guard let i = v.intValue else { throw typeError(key, "integer, got \(d)") }
            return i
        case .string(let s):
            guard let i = Int64(s.trimmingCharacters(in: .whitespaces)) else { throw typeError(key, "an integer string") }
            return i
        default: throw typeError(key, "integer")
        }
    }

    /// A repeated string member.
    func strings(_ key: String) throws(AuthError) -> [String]? {
        guard let v = object[key] else { return nil }
        switch v {
        case .null: return nil
        case .array(let items):
            var out: [String] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                switch item {
                case .string(let s): out.append(s)
                case .int(let n): out.append(String(n))
                default:
                    throw .invalidArgument("Invalid JSON payload received. \(location(key))/\(i) should be string", reason: "invalid")
                }
            }
            return out
        default: throw typeError(key, "array")
        }
    }

    /// A message member.
    func object(_ key: String) throws(AuthError) -> RequestBody? {
        guard let v = object[key] else { return nil }
        switch v {
        case .null: return nil
        case .object(let o): return RequestBody(o, path: location(key))
        default: throw typeError(key, "object")
        }
    }

    /// A repeated message member.
    func objects(_ key: String) throws(AuthError) -> [RequestBody]? {
        guard let v = object[key] else { return nil }
        switch v {
        case .null: return nil
        case .array(let items):
            var out: [RequestBody] = []
            for (i, item) in items.enumerated() {
                guard case .object(let o) = item else {
                    throw .invalidArgument("Invalid JSON payload received. \(location(key))/\(i) should be object", reason: "invalid")
                }
                out.append(RequestBody(o, path: "\(location(key))/\(i)"))
            }
            return out
        default: throw typeError(key, "array")
        }
    }

    /// Boolean flags of the Identity Toolkit request messages: checked on every request, so a
    /// wrongly typed flag is a 400 even where an operation ignores it (as the API's schema does).
    static let booleanFields = ["returnSecureToken", "returnIdpCredential", "returnOobLink", "emailVerified", "disabled",
                                "disableUser", "force", "sanityCheck", "allowOverwrite", "returnUserInfo", "canHandleCodeInApp",
                                "autoCreate", "returnRefreshToken"]

    /// Type-checks the common flags.
    func validateCommonFields() throws(AuthError) {
        for key in Self.booleanFields where object[key] != nil { _ = try bool(key) }
    }

    /// The raw member.
    subscript(key: String) -> JSON? { object[key] }
}

