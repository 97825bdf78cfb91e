import Foundation
import HearthCore

/// A browser form upload's policy document: the base64 JSON a form's signature covers, with the
/// `expiration` and the `conditions` every field of the form must meet.
///
/// Related: "POST Policy" (sigv4-HTTPPOSTConstructPolicy) in the S3 API reference — condition
/// matching (exact, `starts-with`, an empty prefix for anything, `content-length-range`) and "each
/// form field that you specify in a form (except x-amz-signature, file, policy, and field names
/// that have an x-ignore- prefix) must appear in the list of conditions".
struct PostPolicy: Sendable, Equatable {
    /// One condition, with the field named as the policy names it (`$key`, or `key` in a list
    /// condition that forgot the `$`, which then never holds).
    enum Condition: Sendable, Equatable {
        /// `{"field": "value"}` (stored with a `$`) or `["eq", "$field", "value"]`.
        case equals(field: String, value: String)
        /// `["starts-with", "$field", "prefix"]`; an empty prefix allows any value.
        case startsWith(field: String, prefix: String)
        /// `["content-length-range", min, max]` on the file's size, checked once it is read.
        case contentLengthRange(min: Int64, max: Int64)

        /// The condition as S3 prints it in "Policy Condition failed: …".
        var rendered: String {
            func quoted(_ s: String) -> String { JSON.string(s).serialized() }
            switch self {
            case .equals(let field, let value): return "[\"eq\", \(quoted(field)), \(quoted(value))]"
            case .startsWith(let field, let prefix): return "[\"starts-with\", \(quoted(field)), \(quoted(prefix))]"
            case .contentLengthRange(let min, let max): return "[\"content-length-range\", \(min), \(max)]"
            }
        }

        /// The form field the condition constrains (lower-cased, without `$`); nil for the
        /// length range and for a field named without `$`.
        var fieldName: String? {
            switch self {
            case .equals(let field, _), .startsWith(let field, _):
                guard field.hasPrefix("$") else { return nil }
                return String(field.dropFirst()).lowercased()
            case .contentLengthRange:
                return nil
            }
        }
    }

    /// The expiration as the policy wrote it.
    let expirationText: String
    let expiration: Instant
    let conditions: [Condition]

    /// The file-size ranges of the `content-length-range` conditions.
    var lengthRanges: [(min: Int64, max: Int64)] {
        conditions.compactMap { if case .contentLengthRange(let min, let max) = $0 { (min, max) } else { nil } }
    }

    // MARK: Parsing

    /// Decodes and validates the `policy` field.
    static func parse(base64 text: String) throws(PostPolicyFailure) -> PostPolicy {
        // A form may wrap the base64 in lines; anything outside the alphabet is skipped, as a
        // lenient decoder does, so damage shows up as invalid JSON.
        var alphabet = Array(text.utf8).filter { b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2B || b == 0x2F
        }
        guard !alphabet.isEmpty else { throw .invalidPolicy(detail: "Expecting '{' but found End-of-Input") }
        while alphabet.count % 4 != 0 { alphabet.append(0x3D) }
        guard let decoded = Data(base64Encoded: Data(alphabet)), let document = try? JSON.parse(decoded),
              let object = document.objectValue else {
            throw .invalidPolicy(detail: "Invalid JSON.")
        }
        guard let expirationValue = object["expiration"] else { throw .invalidPolicy(detail: "Policy missing expiration.") }
        guard let expirationText = expirationValue.stringValue, let expiration = parseExpiration(expirationText) else {
            throw .invalidPolicy(detail: "Invalid 'expiration' value: '\(expirationValue.stringValue ?? expirationValue.serialized())'")
        }
        guard let conditionsValue = object["conditions"] else { throw .invalidPolicy(detail: "Policy missing conditions.") }
        guard let list = conditionsValue.arrayValue else {
            throw .invalidPolicy(detail: "Invalid 'conditions' value: must be a List.")
        }
        var conditions: [Condition] = []
        for item in list { conditions.append(try condition(item)) }
        return PostPolicy(expirationText: expirationText, expiration: expiration, conditions: conditions)
    }

    private static func condition(_ item: JSON) throws(PostPolicyFailure) -> Condition {
        if let object = item.objectValue {
            guard object.count == 1, let (name, value) = object.members.first else {
                throw .invalidPolicy(detail: "Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.")
            }
            guard let text = value.stringValue else { throw .invalidPolicy(detail: "Invalid Simple-Condition: value must be a string.") }
            return .equals(field: "$" + name, value: text)
        }
        guard let list = item.arrayValue else { throw .invalidPolicy(detail: "Invalid condition test: must be a List or Object.") }
        guard let operation = list.first?.stringValue else {
            throw .invalidPolicy(detail: "Invalid Condition: missing operation identifier.")
        }
        switch operation.lowercased() {
        case "eq", "starts-with":
            guard list.count == 3 else { throw .invalidPolicy(detail: "Invalid \(operation): wrong number of arguments.") }
            guard let field = list[1].stringValue, let value = list[2].stringValue else {
                throw .invalidPolicy(detail: "Invalid \(operation): the field and the value must be strings.")
            }
            return operation.lowercased() == "eq" ? .equals(field: field, value: value) : .startsWith(field: field, prefix: value)
        case "content-length-range":
            guard list.count == 3 else { throw .invalidPolicy(detail: "Invalid \(operation): wrong number of arguments.") }
            guard let min = size(list[1]), let max = size(list[2]) else {
                throw .invalidPolicy(detail: "Invalid \(operation): the range must be two non-negative integers.")
            }
            return .contentLengthRange(min: min, max: max)
        default:
            throw .invalidPolicy(detail: "Invalid Condition: unknown operation '\(operation)'.")
        }
    }

    /// A range bound: a non-negative integer, as a number or as decimal text.
    private static func size(_ value: JSON) -> Int64? {
        if case .int(let n) = value { return n >= 0 ? n : nil }
        if let text = value.stringValue, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return Int64(text) }
        return nil
    }

    /// `2030-01-01T12:00:00.000Z` or `2030-01-01T12:00:00Z`: ISO 8601 in UTC (a `Z`, no offset),
    /// a real calendar date.
    static func parseExpiration(_ text: String) -> Instant? {
        let c = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= c.count else { return nil }
            var v = 0
            for i in from..<(from + count) {
                guard c[i] >= 0x30, c[i] <= 0x39 else { return nil }
                v = v * 10 + Int(c[i] - 0x30)
            }
            return v
        }
        guard c.count >= 20, c.last == 0x5A, c[4] == 0x2D, c[7] == 0x2D, c[10] == 0x54, c[13] == 0x3A, c[16] == 0x3A,
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
              let minute = number(14, 2), let second = number(17, 2),
              var instant = SigV4Time.instant(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        if c.count > 20 {
            // A fraction: `.` and 1–9 digits before the `Z`.
            guard c[19] == 0x2E, c.count - 21 >= 1, c.count - 21 <= 9, let fraction = number(20, c.count - 21) else { return nil }
            let digits = c.count - 21
            var micros = fraction
            if digits > 6 { for _ in 6..<digits { micros /= 10 } } else { for _ in digits..<6 { micros *= 10 } }
            instant = Instant(unixMicros: instant.unixMicros + Int64(micros))
        }
        return instant
    }

    // MARK: Evaluation

    /// Checks every condition except the file size against the form (after `${filename}`),
    /// then that every field is named by one; the first problem, or nil.
    /// - Parameters:
    ///   - bucket: the bucket the form was posted to (the `bucket` field S3 adds).
    ///   - exempt: fields no condition needs to name.
    func check(_ form: PostForm, bucket: String, exempt: Set<String>) -> PostPolicyFailure? {
        func value(_ name: String) -> String? { name == "bucket" ? bucket : form[name] }
        for condition in conditions {
            switch condition {
            case .equals(let field, let expected):
                guard let name = condition.fieldName else {
                    return .conditionFailed(condition: condition.rendered,
                                            diagnosis: "The condition names '\(field)' without the '$' that marks a form field, so it can never hold.")
                }
                let actual = value(name)
                // Bytes, as S3 compares: `String`'s `!=` is canonical equivalence, under which a
                // key with U+212A KELVIN SIGN met `eq $key "K…"` and was stored under other bytes.
                if !ExactText.sameBytes(actual ?? "", expected) {
                    return .conditionFailed(condition: condition.rendered, diagnosis: Self.explain(name, actual, wanted: "equal '\(expected)'"))
                }
            case .startsWith(let field, let prefix):
                guard let name = condition.fieldName else {
                    return .conditionFailed(condition: condition.rendered,
                                            diagnosis: "The condition names '\(field)' without the '$' that marks a form field, so it can never hold.")
                }
                guard !prefix.isEmpty else { continue }
                let actual = value(name)
                // Content-Type may list several types; each must have the prefix.
                let items = name == "content-type"
                    ? (actual ?? "").split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                    : [actual ?? ""]
                if !items.allSatisfy({ $0.utf8.starts(with: prefix.utf8) }) {
                    return .conditionFailed(condition: condition.rendered, diagnosis: Self.explain(name, actual, wanted: "start with '\(prefix)'"))
                }
            case .contentLengthRange:
                continue
            }
        }
        let covered = Set(conditions.compactMap(\.fieldName))
        let extra = (["bucket"] + form.names).filter { name in
            !exempt.contains(name) && !name.hasPrefix("x-ignore-") && !covered.contains(name)
        }
        return extra.isEmpty ? nil : .extraFields(extra)
    }

    private static func explain(_ name: String, _ actual: String?, wanted: String) -> String {
        guard let actual else {
            return "The policy requires the form field '\(name)' to \(wanted), but the form has no such field (before the file field)."
        }
        return "The policy requires the form field '\(name)' to \(wanted), but the form sends '\(actual)'."
    }
}
