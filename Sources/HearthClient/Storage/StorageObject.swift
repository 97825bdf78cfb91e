import Foundation

/// An object's metadata as the Firebase Storage REST API returns it (numbers as strings, as on the wire).
public struct StorageObject: Decodable, Sendable, Equatable {
    public let name: String
    public let bucket: String
    public let generation: String
    public let metageneration: String
    public let size: String
    public let contentType: String?
    public let md5Hash: String?
    public let crc32c: String?
    /// Comma-separated download tokens.
    public let downloadTokens: String?
    /// Custom metadata.
    public let metadata: [String: String]?

    /// The size in bytes.
    public var byteCount: Int64 { Int64(size) ?? 0 }
}
