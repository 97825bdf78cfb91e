/// The file document `POST /v1/files/{fileId}/complete` wrote (`users/{uid}/files/{fileId}`).
public struct CompletedFile: Sendable, Equatable, Decodable {
    public let id: String
    /// `users/{uid}/files/{fileId}`.
    public let path: String
    public let ownerUid: String
    public let storage: String
    public let s3Key: String
    public let contentType: String
    public let size: Int64
    public let status: String
    /// The server timestamp, RFC 3339.
    public let createdAt: String
    public let originalName: String?
    /// The document in its REST form, when the server sent it.
    public let document: FirestoreDocument?

    enum CodingKeys: String, CodingKey {
        case id, path, ownerUid, storage, s3Key, contentType, size, status, createdAt, originalName
        case name, fields, createTime, updateTime
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        path = try c.decode(String.self, forKey: .path)
        ownerUid = try c.decode(String.self, forKey: .ownerUid)
        storage = try c.decode(String.self, forKey: .storage)
        s3Key = try c.decode(String.self, forKey: .s3Key)
        contentType = try c.decode(String.self, forKey: .contentType)
        size = try c.decode(Int64.self, forKey: .size)
        status = try c.decode(String.self, forKey: .status)
        createdAt = try c.decode(String.self, forKey: .createdAt)
        originalName = try c.decodeIfPresent(String.self, forKey: .originalName)
        document = c.contains(.name) ? try FirestoreDocument(from: decoder) : nil
    }
}
