/// A document as the REST API returns it (`name`, `fields`, `createTime`, `updateTime`).
public struct FirestoreDocument: Sendable, Equatable, Codable {
    /// `projects/{p}/databases/{d}/documents/{path}`.
    public let name: String
    public let fields: [String: FirestoreValue]
    public let createTime: Timestamp?
    public let updateTime: Timestamp?

    public init(name: String, fields: [String: FirestoreValue], createTime: Timestamp? = nil, updateTime: Timestamp? = nil) {
        self.name = name
        self.fields = fields
        self.createTime = createTime
        self.updateTime = updateTime
    }

    /// The path relative to the database root (`users/u1/files/f1`).
    public var path: String {
        guard let r = name.range(of: "/documents/") else { return name }
        return String(name[r.upperBound...])
    }

    /// The last path segment.
    public var id: String { String(path.split(separator: "/").last ?? "") }

    /// A reference to this document.
    public var reference: DocumentReference { DocumentReference(unchecked: path) }

    /// The fields decoded as `T` (`@DocumentID` properties get `id`).
    public func data<T: Decodable>(as type: T.Type) throws -> T {
        try FirestoreDecoder().decode(type, fromFields: fields, document: reference)
    }

    enum CodingKeys: String, CodingKey { case name, fields, createTime, updateTime }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        // A document with no fields comes without `fields`.
        fields = try c.decodeIfPresent([String: FirestoreValue].self, forKey: .fields) ?? [:]
        createTime = try c.decodeIfPresent(Timestamp.self, forKey: .createTime)
        updateTime = try c.decodeIfPresent(Timestamp.self, forKey: .updateTime)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(fields, forKey: .fields)
        try c.encodeIfPresent(createTime, forKey: .createTime)
        try c.encodeIfPresent(updateTime, forKey: .updateTime)
    }
}
