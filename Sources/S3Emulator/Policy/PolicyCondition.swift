import Foundation
import HearthCore

/// One condition of a policy statement: an operator, a context key and the values it compares.
///
/// Related: "IAM JSON policy elements: Condition operators" and "Condition with multiple context
/// keys or values": operators and keys of one block are ANDed, a key's values ORed (NORed for the
/// negated operators); `…IfExists` holds when the key is absent; `ForAllValues:` / `ForAnyValue:`
/// compare multivalued keys; a key absent from the request fails every operator but the negated
/// ones and `Null`.
struct PolicyCondition: Sendable, Equatable {
    var operation: Operation
    var ifExists: Bool
    var qualifier: Qualifier?
    /// The context key as written (compared case-insensitively).
    var key: String
    var values: [String]

    enum Qualifier: String, Sendable {
        case forAllValues = "ForAllValues"
        case forAnyValue = "ForAnyValue"
    }

    enum Operation: String, Sendable, CaseIterable {
        case stringEquals = "StringEquals", stringNotEquals = "StringNotEquals"
        case stringEqualsIgnoreCase = "StringEqualsIgnoreCase", stringNotEqualsIgnoreCase = "StringNotEqualsIgnoreCase"
        case stringLike = "StringLike", stringNotLike = "StringNotLike"
        case numericEquals = "NumericEquals", numericNotEquals = "NumericNotEquals"
        case numericLessThan = "NumericLessThan", numericLessThanEquals = "NumericLessThanEquals"
        case numericGreaterThan = "NumericGreaterThan", numericGreaterThanEquals = "NumericGreaterThanEquals"
        case dateEquals = "DateEquals", dateNotEquals = "DateNotEquals"
        case dateLessThan = "DateLessThan", dateLessThanEquals = "DateLessThanEquals"
        case dateGreaterThan = "DateGreaterThan", dateGreaterThanEquals = "DateGreaterThanEquals"
        case bool = "Bool", binaryEquals = "BinaryEquals"
        case ipAddress = "IpAddress", notIpAddress = "NotIpAddress"
        case arnEquals = "ArnEquals", arnLike = "ArnLike", arnNotEquals = "ArnNotEquals", arnNotLike = "ArnNotLike"
        case null = "Null"

        var isNegated: Bool {
            switch self {
            case .stringNotEquals, .stringNotEqualsIgnoreCase, .stringNotLike, .numericNotEquals, .dateNotEquals,
                 .notIpAddress, .arnNotEquals, .arnNotLike: true
            default: false
            }
        }
    }

    // MARK: Parsing

    /// The `Condition` block of a statement.
    static func parse(_ value: JSON) throws(BucketPolicy.PolicyFault) -> [PolicyCondition] {
        guard let blocks = value.objectValue else { throw .syntax }
        var out: [PolicyCondition] = []
        for (operatorName, keys) in blocks.members {
            guard let (operation, ifExists, qualifier) = parseOperator(operatorName) else {
                throw BucketPolicy.PolicyFault("Invalid Condition type : \(operatorName)")
            }
            guard let entries = keys.objectValue else { throw .syntax }
            for (key, raw) in entries.members {
                guard isKnownKey(key) else { throw BucketPolicy.PolicyFault("Policy has an invalid condition key") }
                var values: [String] = []
                for item in raw.arrayValue ?? [raw] {
                    switch item {
                    case .string(let s): values.append(s)
                    case .bool(let b): values.append(b ? "true" : "false")
                    case .int(let i): values.append(String(i))
                    case .double(let d):
                        // Infinity would be written as `null` in the stored (normalized) document, which
                        // would not parse again. `JSON.parse` refuses `1e400` now (`BucketPolicy`
                        // answers it the same); this stays for any other way a tree gets here.
                        guard d.isFinite else { throw .syntax }
                        values.append(String(d))
                    default: throw .syntax
                    }
                }
                if operation == .ipAddress || operation == .notIpAddress, !values.allSatisfy({ IPNetwork($0) != nil }) {
                    throw BucketPolicy.PolicyFault("Invalid IP address in Conditions")
                }
                out.append(PolicyCondition(operation: operation, ifExists: ifExists, qualifier: qualifier, key: key, values: values))
            }
        }
        return out
    }

    /// `[ForAllValues:|ForAnyValue:]Name[IfExists]` (`Null` takes no `IfExists`).
    static func parseOperator(_ text: String) -> (Operation, Bool, Qualifier?)? {
        var rest = Substring(text)
        var qualifier: Qualifier?
        if let colon = rest.firstIndex(of: ":") {
            guard let q = Qualifier(rawValue: String(rest[..<colon])) else { return nil }
            qualifier = q
            rest = rest[rest.index(after: colon)...]
        }
        if let operation = Operation(rawValue: String(rest)) { return (operation, false, qualifier) }
        guard rest.hasSuffix("IfExists"), let operation = Operation(rawValue: String(rest.dropLast(8))), operation != .null else { return nil }
        return (operation, true, qualifier)
    }

    /// The S3-specific condition keys (global `aws:` keys are all accepted).
    private static let s3Keys: Set<String> = [
        "s3:authtype", "s3:dataaccesspointaccount", "s3:dataaccesspointarn", "s3:accesspointnetworkorigin", "s3:delimiter",
        "s3:if-match", "s3:if-none-match", "s3:locationconstraint", "s3:max-keys", "s3:objectcreationoperation",
        "s3:object-lock-legal-hold", "s3:object-lock-mode", "s3:object-lock-remaining-retention-days",
        "s3:object-lock-retain-until-date", "s3:prefix", "s3:requestobjecttagkeys", "s3:resourceaccount",
        "s3:signatureage", "s3:signatureversion", "s3:tlsversion", "s3:versionid", "s3:x-amz-acl",
        "s3:x-amz-content-sha256", "s3:x-amz-copy-source", "s3:x-amz-grant-full-control", "s3:x-amz-grant-read",
        "s3:x-amz-grant-read-acp", "s3:x-amz-grant-write", "s3:x-amz-grant-write-acp", "s3:x-amz-metadata-directive",
        "s3:x-amz-object-ownership", "s3:x-amz-server-side-encryption", "s3:x-amz-server-side-encryption-aws-kms-key-id",
        "s3:x-amz-server-side-encryption-customer-algorithm", "s3:x-amz-storage-class", "s3:x-amz-website-redirect-location",
        "s3:x-amz-write-offset-bytes", "s3:bucketobjectlockenabled",
    ]

    static func isKnownKey(_ key: String) -> Bool {
        let lower = key.lowercased()
        if lower.hasPrefix("aws:") { return lower.count > 4 }
        if lower.hasPrefix("s3:existingobjecttag/") || lower.hasPrefix("s3:requestobjecttag/") { return true }
        return s3Keys.contains(lower)
    }

    // MARK: Evaluation

    /// Whether the condition holds for a request whose context (keys lower-cased) is `context`.
    func holds(_ context: [String: [String]]) -> Bool {
        let present = context[key.lowercased()] ?? []
        if operation == .null {
            let missing = present.isEmpty
            return values.contains { ($0.lowercased() == "true") == missing }
        }
        if present.isEmpty {
            if ifExists || qualifier == .forAllValues { return true }
            return operation.isNegated && qualifier == nil
        }
        func one(_ value: String) -> Bool {
            operation.isNegated ? values.allSatisfy { !matches(value, $0) } : values.contains { matches(value, $0) }
        }
        switch qualifier {
        case .forAllValues: return present.allSatisfy(one)
        case .forAnyValue: return present.contains(where: one)
        case nil: return operation.isNegated ? present.allSatisfy(one) : present.contains(where: one)
        }
    }

    /// The positive comparison behind `operation` of a request value with a policy value.
    private func matches(_ value: String, _ expected: String) -> Bool {
        switch operation {
        case .stringEquals, .stringNotEquals: return value == expected
        case .stringEqualsIgnoreCase, .stringNotEqualsIgnoreCase: return value.lowercased() == expected.lowercased()
        case .stringLike, .stringNotLike: return Wildcard.matches(expected, value)
        case .numericEquals, .numericNotEquals: return compare(Double(value), Double(expected)) { $0 == $1 }
        case .numericLessThan: return compare(Double(value), Double(expected)) { $0 < $1 }
        case .numericLessThanEquals: return compare(Double(value), Double(expected)) { $0 <= $1 }
        case .numericGreaterThan: return compare(Double(value), Double(expected)) { $0 > $1 }
        case .numericGreaterThanEquals: return compare(Double(value), Double(expected)) { $0 >= $1 }
        case .dateEquals, .dateNotEquals: return compare(Self.date(value), Self.date(expected)) { $0 == $1 }
        case .dateLessThan: return compare(Self.date(value), Self.date(expected)) { $0 < $1 }
        case .dateLessThanEquals: return compare(Self.date(value), Self.date(expected)) { $0 <= $1 }
        case .dateGreaterThan: return compare(Self.date(value), Self.date(expected)) { $0 > $1 }
        case .dateGreaterThanEquals: return compare(Self.date(value), Self.date(expected)) { $0 >= $1 }
        case .bool: return value.lowercased() == expected.lowercased()
        case .binaryEquals: return Data(base64Encoded: value) != nil && Data(base64Encoded: value) == Data(base64Encoded: expected)
        case .ipAddress, .notIpAddress:
            guard let network = IPNetwork(expected), let address = IPNetwork(value), address.prefix == address.bytes.count * 8 else { return false }
            return network.contains(address.bytes)
        case .arnEquals, .arnLike, .arnNotEquals, .arnNotLike:
            // Each of the six colon-separated parts is matched on its own.
            let p = expected.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
            let v = value.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
            return p.count == v.count && zip(p, v).allSatisfy { Wildcard.matches(String($0), String($1)) }
        case .null: return false
        }
    }

    private func compare<T>(_ a: T?, _ b: T?, _ op: (T, T) -> Bool) -> Bool {
        guard let a, let b else { return false }
        return op(a, b)
    }

    /// ISO 8601 (a date, or a date and time) or epoch seconds, as microseconds.
    static func date(_ text: String) -> Int64? {
        if let seconds = Double(text) {
            // Held within the dates Instant writes: a policy may say 1e300 (or nan), and converting
            // such a double to an integer traps.
            guard !seconds.isNaN else { return nil }
            let bounded = min(max(seconds, Double(Instant.earliest.unixSeconds)), Double(Instant.latest.unixSeconds))
            return Int64(bounded * 1_000_000)
        }
        if let instant = Instant(rfc3339: text) { return instant.unixMicros }
        if text.count == 10, let instant = Instant(rfc3339: text + "T00:00:00Z") { return instant.unixMicros }
        return nil
    }

    // MARK: Public access

    /// Condition keys whose fixed values make an Allow for everyone non-public ("The meaning of
    /// public" in "Blocking public access to your Amazon S3 storage").
    private static let fixedValueKeys: Set<String> = [
        "aws:sourceip", "aws:sourcearn", "aws:sourcevpc", "aws:sourcevpce", "aws:sourceowner", "aws:sourceaccount",
        "aws:userid", "aws:principalorgid", "aws:principalarn", "aws:principalaccount",
        "s3:x-amz-server-side-encryption-aws-kms-key-id", "s3:dataaccesspointarn", "s3:dataaccesspointaccount",
    ]

    /// Whether this condition confines a statement to fixed values of such a key.
    var limitsToFixedValues: Bool {
        guard !ifExists, qualifier != .forAllValues,
              [.stringEquals, .stringEqualsIgnoreCase, .stringLike, .arnEquals, .arnLike, .ipAddress].contains(operation),
              Self.fixedValueKeys.contains(key.lowercased()) else { return false }
        return values.allSatisfy { value in
            if value.contains("*") || value.contains("?") || value.contains("${") { return false }
            // A source range wider than /8 (IPv4) or /32 (IPv6) counts as the whole internet.
            if key.lowercased() == "aws:sourceip", let network = IPNetwork(value) {
                return network.prefix >= (network.bytes.count == 4 ? 8 : 32)
            }
            return true
        }
    }
}
