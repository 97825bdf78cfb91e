/// A document's path relative to the database root, e.g. `users/u1/files/f1` (`referenceValue`).
public struct DocumentReference: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `users/u1/files/f1`.
    public let path: String

    /// A reference to `path` (an even number of non-empty segments).
    public init(_ path: String) throws(HearthClientError) {
        let trimmed = path.hasPrefix("/") ? String(path.dropFirst()) : path
        let segments = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.isEmpty, segments.count % 2 == 0, !segments.contains(where: \.isEmpty) else {
            throw .invalidArgument("'\(path)' is not a document path (it needs an even number of non-empty segments)")
        }
        self.path = trimmed
    }

    init(unchecked path: String) { self.path = path }

    /// The last segment.
    public var documentID: String { String(path.split(separator: "/").last ?? "") }
    /// The collection path this document is in.
    public var parentPath: String { String(path.split(separator: "/").dropLast().joined(separator: "/")) }

    public var description: String { path }

    /// Outside the Firestore coders a reference is its path.
    public init(from decoder: any Decoder) throws {
        path = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(path)
    }
}
