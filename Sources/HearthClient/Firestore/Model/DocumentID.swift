/// The id of the document a value was read from; never written as a field.
///
/// ```swift
/// struct FileDoc: Codable { @DocumentID var id: String?; var s3Key: String }
/// ```
@propertyWrapper
public struct DocumentID: Codable, Sendable, Equatable, _MissingFieldDefaultable {
    public var wrappedValue: String?

    public init(wrappedValue: String?) { self.wrappedValue = wrappedValue }

    /// Only `FirestoreDecoder` knows the document; other decoders leave it nil.
    public init(from decoder: any Decoder) throws {
        wrappedValue = (decoder.userInfo[.firestoreDocumentReference] as? DocumentReference)?.documentID
    }

    /// Writes nothing: `FirestoreEncoder` skips it, other encoders get null.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encodeNil()
    }

    static var missingFieldValue: Self { Self(wrappedValue: nil) }
}
