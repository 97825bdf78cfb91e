import HearthCore

/// A bucket policy: the JSON document PutBucketPolicy stores, validated as S3 validates it.
///
/// Related: "Policies and permissions in Amazon S3", the IAM JSON policy element reference (its
/// grammar: Version, Id, Statement of Sid, Effect, Principal/NotPrincipal, Action/NotAction,
/// Resource/NotResource, Condition) and S3's recorded `MalformedPolicy` answers. Hearth evaluates a
/// policy for unauthenticated requests only (`evaluate`); a request signed with a configured key
/// has full access, as the bucket owner's account has in S3 when no policy denies it.
struct BucketPolicy: Sendable, Equatable {
    var version: String?
    var statements: [Statement]
    /// The document as GetBucketPolicy returns it: compact, elements in S3's order, account ids
    /// written as the account's root ARN.
    var normalized: String

    /// Largest normalized document (S3: 20 KB).
    static let maxSize = 20_480
    static let versions: Set<String> = ["2008-10-17", "2012-10-17"]

    /// One statement.
    struct Statement: Sendable, Equatable {
        var sid: String?
        var effect: Effect
        /// Exactly one of `principal` / `notPrincipal` is set.
        var principal: Principal?
        var notPrincipal: Principal?
        /// Exactly one of `actions` / `notActions` is set.
        var actions: [String]?
        var notActions: [String]?
        /// Exactly one of `resources` / `notResources` is set (object ARNs without `arn:aws:s3:::`).
        var resources: [String]?
        var notResources: [String]?
        var conditions: [PolicyCondition]
    }

    enum Effect: String, Sendable {
        case allow = "Allow"
        case deny = "Deny"
    }

    /// Who a statement names.
    enum Principal: Sendable, Equatable {
        /// `"*"` (or `{"AWS": "*"}`): everyone, anonymous requests included.
        case everyone
        /// Named principals of each type.
        case named([String: [String]])

        /// Whether it includes anonymous callers (`"*"` either way).
        var includesEveryone: Bool {
            switch self {
            case .everyone: true
            case .named(let types): types["AWS"]?.contains("*") ?? false
            }
        }
    }

    private static let policyElements: Set<String> = ["Version", "Id", "Statement"]
    private static let statementElements: Set<String> = [
        "Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource", "NotResource", "Condition",
    ]
    private static let principalTypes = ["AWS", "CanonicalUser", "Federated", "Service"]

    // MARK: Parsing

    /// Parses and validates a PutBucketPolicy body for `bucket`, with S3's message for the first fault.
    static func parse(_ body: [UInt8], bucket: String) -> Result<BucketPolicy, S3Error> {
        do throws(PolicyFault) {
            return .success(try parseOrThrow(body, bucket: bucket))
        } catch {
            return .failure(.malformedPolicy(message: error.message))
        }
    }

    /// Why a document was refused (the `MalformedPolicy` message).
    struct PolicyFault: Error {
        let message: String
        init(_ message: String) { self.message = message }
        static let syntax = PolicyFault("Invalid policy syntax.")
    }

    private static func parseOrThrow(_ body: [UInt8], bucket: String) throws(PolicyFault) -> BucketPolicy {
        // S3 reads the first byte (after white space) before parsing: anything but `{` is not a policy.
        guard let first = body.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }), first == UInt8(ascii: "{") else {
            throw PolicyFault("Policies must be valid JSON and the first byte must be '{'")
        }
        let json: JSON
        do { json = try JSON.parse(body, maxDepth: 32) } catch {
            // Well-formed JSON with a number past a double's range (`1e400`) is a syntax fault, as
            // the condition that would hold it has always answered; what S3 says is undocumented.
            throw PolicyFault(error.isNumberOutOfRange ? "Invalid policy syntax." : "This policy contains invalid Json")
        }
        guard let document = json.objectValue else { throw PolicyFault("This policy contains invalid Json") }
        try checkDuplicates(body)
        for name in document.keys where !policyElements.contains(name) { throw PolicyFault("Unknown field \(name)") }
        guard let statementValue = document["Statement"] else { throw PolicyFault("Missing required field Statement") }
        var version: String?
        if let v = document["Version"] {
            guard let text = v.stringValue, versions.contains(text) else { throw PolicyFault("The policy must contain a valid version string") }
            version = text
        }
        var id: String?
        if let v = document["Id"] {
            guard let text = v.stringValue else { throw PolicyFault.syntax }
            id = text
        }
        let items: [JSON]
        switch statementValue {
        case .array(let a): items = a
        case .object: items = [statementValue]
        default: throw PolicyFault.syntax
        }
        guard !items.isEmpty else { throw PolicyFault("Could not parse the policy: Statement is empty!") }
        var statements: [Statement] = []
        var normalizedStatements: [JSON] = []
        for item in items {
            guard let object = item.objectValue else { throw PolicyFault.syntax }
            let (statement, normalized) = try parseStatement(object, bucket: bucket)
            statements.append(statement)
            normalizedStatements.append(normalized)
        }
        var out = JSONObject()
        if let version { out["Version"] = .string(version) }
        if let id { out["Id"] = .string(id) }
        // A single statement object comes back as written; a list as a list.
        out["Statement"] = statementValue.arrayValue != nil ? .array(normalizedStatements) : normalizedStatements[0]
        let text = JSON.object(out).serialized()
        guard text.utf8.count <= maxSize else {
            throw PolicyFault("Normalized policy document exceeds the maximum allowed size of \(maxSize) bytes")
        }
        return BucketPolicy(version: version, statements: statements, normalized: text)
    }

    /// RFC 8259 leaves duplicate names to the reader (HearthCore's keeps the last); S3 refuses
    /// them. Scans the text, which has parsed, for a name repeated within one object.
    private static func checkDuplicates(_ body: [UInt8]) throws(PolicyFault) {
        var open: [Set<[UInt8]>?] = []  // one entry per open container; nil for an array
        var expectingName = false
        var i = 0
        while i < body.count {
            switch body[i] {
            case UInt8(ascii: "{"):
                open.append([])
                expectingName = true
            case UInt8(ascii: "["):
                open.append(nil)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = open.popLast()
                expectingName = false
            case UInt8(ascii: ","):
                expectingName = open.last.map { $0 != nil } ?? false
            case UInt8(ascii: "\""):
                var end = i + 1
                while end < body.count, body[end] != UInt8(ascii: "\"") { end += body[end] == UInt8(ascii: "\\") ? 2 : 1 }
                if expectingName, var names = open.last ?? nil {
                    let name = Array(body[(i + 1)..<min(end, body.count)])
                    guard names.insert(name).inserted else {
                        throw PolicyFault("Statement/policy already has instance of \(String(decoding: name, as: UTF8.self))")
                    }
                    open[open.count - 1] = names
                    expectingName = false
                }
                i = end
            default:
                break
            }
            i += 1
        }
    }

    private static func parseStatement(_ object: JSONObject, bucket: String) throws(PolicyFault) -> (Statement, JSON) {
        for name in object.keys where !statementElements.contains(name) { throw PolicyFault("Unknown field \(name)") }
        for name in ["Principal", "Action", "Resource"] where object[name] != nil && object["Not" + name] != nil {
            throw PolicyFault("Statement/policy already has instance of \(name)")
        }
        var out = JSONObject()
        var sid: String?
        if let v = object["Sid"] {
            guard let text = v.stringValue else { throw PolicyFault.syntax }
            sid = text
            out["Sid"] = .string(text)
        }
        guard let effectValue = object["Effect"] else { throw PolicyFault("Missing required field Effect") }
        guard let effectText = effectValue.stringValue else { throw PolicyFault("Invalid effect: \(effectValue.serialized())") }
        guard let effect = Effect(rawValue: effectText) else { throw PolicyFault("Invalid effect: \(effectText)") }
        out["Effect"] = .string(effectText)

        var statement = Statement(sid: sid, effect: effect, conditions: [])
        if let v = object["Principal"] {
            let (principal, normalized) = try parsePrincipal(v)
            statement.principal = principal
            out["Principal"] = normalized
        } else if let v = object["NotPrincipal"] {
            let (principal, normalized) = try parsePrincipal(v)
            statement.notPrincipal = principal
            out["NotPrincipal"] = normalized
        } else {
            throw PolicyFault("Missing required field Principal")
        }

        let actionName = object["Action"] != nil ? "Action" : "NotAction"
        guard let actionValue = object[actionName] else { throw PolicyFault("Missing required field Action") }
        let actions = try stringList(actionValue, element: "Action")
        for action in actions where !PolicyActions.isValid(action) { throw PolicyFault("Policy has invalid action") }
        if actionName == "Action" { statement.actions = actions } else { statement.notActions = actions }
        out[actionName] = actionValue

        let resourceName = object["Resource"] != nil ? "Resource" : "NotResource"
        guard let resourceValue = object[resourceName] else { throw PolicyFault("Missing required field Resource") }
        var resources: [String] = []
        for resource in try stringList(resourceValue, element: "Resource") {
            // A wildcard that reaches the bucket (`arn:aws:s3:::*`, `arn:aws:s3:::*/*`) is fine too.
            guard let path = objectPath(resource),
                  path == bucket || path.hasPrefix(bucket + "/")
                    || Wildcard.matches(String(path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)[0]), bucket) else {
                throw PolicyFault("Policy has invalid resource")
            }
            resources.append(path)
        }
        if resourceName == "Resource" { statement.resources = resources } else { statement.notResources = resources }
        out[resourceName] = resourceValue

        if let v = object["Condition"] {
            statement.conditions = try PolicyCondition.parse(v)
            out["Condition"] = v
        }
        // S3 refuses a statement with an action that reaches none of its resources
        // (`s3:GetObject` on the bucket's ARN alone).
        if let actions = statement.actions, let resources = statement.resources {
            // A pattern with a wildcard in its bucket part reaches objects as well.
            let kinds = Set(resources.flatMap { r -> [PolicyActions.Kind] in
                let head = r.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)[0]
                if head.contains("*") && !r.contains("/") { return [.bucket, .object] }
                return [r.contains("/") ? .object : .bucket]
            })
            for action in actions {
                let reached = PolicyActions.kinds(matching: action)
                if !reached.isEmpty && reached.isDisjoint(with: kinds) {
                    throw PolicyFault("Action does not apply to any resource(s) in statement")
                }
            }
        }
        return (statement, .object(out))
    }

    /// `"x"` or `["x", …]`: the strings; anything else is a syntax error, an empty list S3's own.
    private static func stringList(_ value: JSON, element: String) throws(PolicyFault) -> [String] {
        switch value {
        case .string(let s): return [s]
        case .array(let items):
            guard !items.isEmpty else { throw PolicyFault("Missing required field \(element) cannot be empty!") }
            var out: [String] = []
            for item in items {
                guard let s = item.stringValue else { throw PolicyFault.syntax }
                out.append(s)
            }
            return out
        default:
            throw PolicyFault.syntax
        }
    }

    /// The bucket-and-key part of an S3 ARN (`arn:aws:s3:::b/k` → `b/k`), or nil for any other text.
    static func objectPath(_ resource: String) -> String? {
        for partition in ["arn:aws:s3:::", "arn:aws-cn:s3:::", "arn:aws-us-gov:s3:::"] where resource.hasPrefix(partition) {
            let path = String(resource.dropFirst(partition.count))
            return path.isEmpty || path.hasPrefix("/") ? nil : path
        }
        return nil
    }

    private static func parsePrincipal(_ value: JSON) throws(PolicyFault) -> (Principal, JSON) {
        let invalid = PolicyFault("Invalid principal in policy")
        if value.stringValue == "*" { return (.everyone, value) }
        guard let object = value.objectValue, !object.isEmpty else { throw invalid }
        var types: [String: [String]] = [:]
        var normalized = JSONObject()
        for (type, v) in object.members {
            guard principalTypes.contains(type) else { throw invalid }
            var values: [String]
            switch v {
            case .string(let s): values = [s]
            case .array(let items):
                values = []
                for item in items {
                    guard let s = item.stringValue else { throw invalid }
                    values.append(s)
                }
            default: throw invalid
            }
            guard !values.isEmpty, values.allSatisfy({ !$0.isEmpty }) else { throw invalid }
            if type == "AWS" {
                values = try values.map { (p: String) throws(PolicyFault) -> String in
                    if p == "*" || isPrincipalARN(p) { return p }
                    // S3 stores an account id as the account's root user.
                    if p.count == 12, p.allSatisfy(\.isASCIIDigit) { return "arn:aws:iam::\(p):root" }
                    throw invalid
                }
            } else if type == "Service", values.contains("*") {
                throw invalid
            }
            types[type] = values
            normalized[type] = v.arrayValue != nil ? .array(values.map(JSON.string)) : .string(values[0])
        }
        return (.named(types), .object(normalized))
    }

    /// `arn:aws:iam::123456789012:…` or `arn:aws:sts::123456789012:…`.
    private static func isPrincipalARN(_ text: String) -> Bool {
        let parts = text.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "arn", ["aws", "aws-cn", "aws-us-gov"].contains(String(parts[1])),
              parts[2] == "iam" || parts[2] == "sts", parts[3].isEmpty, parts[4].count == 12,
              parts[4].allSatisfy(\.isASCIIDigit), !parts[5].isEmpty else { return false }
        return true
    }

    // MARK: Public access

    /// Whether S3 calls the policy public (GetBucketPolicyStatus, BlockPublicPolicy,
    /// RestrictPublicBuckets): some Allow statement reaches everyone and is not limited by a
    /// condition to fixed values of the keys S3 lists ("The meaning of public").
    var isPublic: Bool {
        statements.contains { s in
            guard s.effect == .allow else { return false }
            let everyone: Bool
            if let principal = s.principal {
                everyone = principal.includesEveryone
            } else {
                // NotPrincipal reaches every principal it does not name, anonymous callers included.
                everyone = !(s.notPrincipal?.includesEveryone ?? true)
            }
            return everyone && !s.conditions.contains(where: \.limitsToFixedValues)
        }
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
