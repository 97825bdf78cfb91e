import Foundation
import HearthClient
import Testing

/// The file metadata document of the seed app, as the shipped rules require it.
struct FileMetadata: Codable, Equatable {
    var ownerUid: String
    var storage = "s3"
    var s3Key: String
    var contentType: String
    var status = "ready"
    var size: Int?
    @ServerTimestamp var createdAt: Date?
}

/// Finds the `hearth` binary for the flow tests; they are skipped (with this reason) without one.
enum Flow {
    static let binary = HearthTestServer.locateBinary(filePath: #filePath)
    static var available: Bool { binary != nil }
    static let skipReason: Comment = "no hearth binary: set HEARTH_BIN, or build it first (`make test` builds .build/debug/hearth)"

    /// A fresh hearth for one test.
    static func start(_ arguments: [String] = []) async throws -> HearthTestServer {
        try await HearthTestServer.start(HearthTestServer.Options(binary: binary, arguments: arguments))
    }

    static let jpegBytes = Data([0xFF, 0xD8, 0xFF, 0xE0] + (0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 31) } + [0xFF, 0xD9])
}

/// One signed-up user with clients for each service.
struct FlowUser {
    let session: AuthSession
    let uploads: UploadsClient
    let firestore: FirestoreClient
    var uid: String { session.uid }

    static func signUp(_ hearth: HearthTestServer, _ name: String) async throws -> FlowUser {
        let session = try await hearth.instance.auth().signUp(email: "\(name)@example.com", password: "secret-\(name)")
        return try FlowUser(hearth, session)
    }

    init(_ hearth: HearthTestServer, _ session: AuthSession) throws {
        self.session = session
        uploads = try hearth.instance.uploads(token: session.bearer)
        firestore = try hearth.instance.firestore(token: session.bearer)
    }
}
