import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HearthClient
import Testing

/// The profile-image flow through HearthClient's StorageClient against a real `hearth` and its
/// shipped storage.rules: upload in chunks, download URL, another user and a non-image denied.
@Suite(.enabled(if: Flow.available, Flow.skipReason))
struct StorageFlowTests {
    @Test func ownerUploadsAnImageOthersAreDenied() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let bob = try await FlowUser.signUp(hearth, "bob")
        let storage = try hearth.instance.storage(token: alice.session.bearer)
        let path = "users/\(alice.uid)/profile.jpg"
        let object = try await storage.upload(Flow.jpegBytes, to: path, contentType: "image/jpeg", metadata: ["v": "1"], chunkSize: 1000)
        #expect(object.byteCount == Int64(Flow.jpegBytes.count))
        #expect(object.metadata == ["v": "1"])
        let url = try storage.downloadURL(for: object)
        let (data, _) = try await URLSession.shared.data(from: url)
        #expect(data == Flow.jpegBytes)
        #expect(try await storage.download(path) == Flow.jpegBytes)

        let asBob = try hearth.instance.storage(token: bob.session.bearer)
        await #expect(throws: HearthClientError.self) { try await asBob.upload(Flow.jpegBytes, to: path, contentType: "image/jpeg") }
        await #expect(throws: HearthClientError.self) { try await storage.upload(Data("hi".utf8), to: "users/\(alice.uid)/a.txt", contentType: "text/plain") }
        try await storage.delete(path)
        await #expect(throws: HearthClientError.self) { try await storage.metadata(path) }
    }
}
