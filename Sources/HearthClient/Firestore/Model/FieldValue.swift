/// Sentinels resolved by the server at commit time; encode one in place of a field's value.
///
/// ```swift
/// try await db.set(["name": "x", "createdAt": FieldValue.serverTimestamp], at: "users/u1")
/// ```
public enum FieldValue: Sendable, Hashable, Encodable {
    /// The commit time (`setToServerValue: REQUEST_TIME`): in rules, `request.time`.
    case serverTimestamp
    /// Adds to the current number (`increment`).
    case increment(FirestoreValue)
    /// The larger of the current and given number (`maximum`).
    case maximum(FirestoreValue)
    /// The smaller (`minimum`).
    case minimum(FirestoreValue)
    /// Appends the values not already present (`appendMissingElements`).
    case arrayUnion([FirestoreValue])
    /// Removes every occurrence of the values (`removeAllFromArray`).
    case arrayRemove([FirestoreValue])
    /// Removes the field (only in `update` and merging `set`).
    case delete

    /// `increment` by an integer.
    public static func increment(_ by: Int64) -> FieldValue { .increment(.integer(by)) }
    /// `increment` by a double.
    public static func increment(_ by: Double) -> FieldValue { .increment(.double(by)) }

    /// Only `FirestoreEncoder` can encode a sentinel.
    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath,
                                                      debugDescription: "FieldValue sentinels are only meaningful to FirestoreEncoder"))
    }

    /// The REST `FieldTransform` member for this sentinel, nil for `delete`.
    var transform: (String, TransformArgument)? {
        switch self {
        case .serverTimestamp: ("setToServerValue", .serverValue("REQUEST_TIME"))
        case .increment(let v): ("increment", .value(v))
        case .maximum(let v): ("maximum", .value(v))
        case .minimum(let v): ("minimum", .value(v))
        case .arrayUnion(let vs): ("appendMissingElements", .values(vs))
        case .arrayRemove(let vs): ("removeAllFromArray", .values(vs))
        case .delete: nil
        }
    }

    enum TransformArgument: Sendable, Hashable {
        case serverValue(String)
        case value(FirestoreValue)
        case values([FirestoreValue])
    }
}

/// A field transform the server applies after the write's fields.
public struct FieldTransform: Sendable, Hashable {
    public let fieldPath: FieldPath
    public let value: FieldValue
}
