/// A timestamp the server fills in: nil encodes as `FieldValue.serverTimestamp`; when read back it
/// holds the commit time. As in the Firebase SDK, `Value` is `Date` or `Timestamp`.
///
/// ```swift
/// struct FileDoc: Codable { var s3Key: String; @ServerTimestamp var createdAt: Date? }
/// ```
@propertyWrapper
public struct ServerTimestamp<Value: Codable & Sendable & Equatable>: Codable, Sendable, Equatable, _MissingFieldDefaultable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        wrappedValue = c.decodeNil() ? nil : try c.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let wrappedValue { try c.encode(wrappedValue) } else { try c.encode(FieldValue.serverTimestamp) }
    }

    static var missingFieldValue: Self { Self(wrappedValue: nil) }
}

/// Types the Firestore decoder builds when their field is absent instead of failing.
protocol _MissingFieldDefaultable {
    static var missingFieldValue: Self { get }
}

extension CodingUserInfoKey {
    /// The `DocumentReference` of the document being decoded, set by `FirestoreDecoder`.
    public static let firestoreDocumentReference = CodingUserInfoKey(rawValue: "hearth.firestore.documentReference")!
}
