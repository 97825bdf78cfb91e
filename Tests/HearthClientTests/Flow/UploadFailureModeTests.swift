import Foundation
import HearthClient
import Testing

/// Each classic failure of the flow, reproduced on demand (docs/recipes.md tells what users see).
@Suite(.enabled(if: Flow.available, Flow.skipReason))
struct UploadFailureModeTests {
    @Test func putWithAnotherContentTypeIsSignatureDoesNotMatchNamingBothTypes() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let presigned = try await alice.uploads.presign(contentType: "image/jpeg", fileExt: "jpg")

        let e = try await assertS3Error("SignatureDoesNotMatch") {
            try await alice.uploads.upload(Flow.jpegBytes, to: presigned, contentType: "image/png")
        }
        #expect(e.httpStatus == 403)
        let diagnosis = try #require(e.diagnosis)
        #expect(diagnosis.contains("image/jpeg"), "\(diagnosis)")
        #expect(diagnosis.contains("image/png"), "\(diagnosis)")
        #expect(e.headers["x-hearth-diagnosis"] != nil)
        #expect(e.canonicalRequest?.contains("content-type:image/png") == true)
        #expect(e.stringToSign?.hasPrefix("AWS4-HMAC-SHA256\n") == true)
        #expect(e.requestID != nil)

        // Nothing was stored; the right type still works with the same URL.
        await #expect(throws: HearthClientError.self) { try await alice.uploads.complete(fileID: "f", key: presigned.key) }
        try await alice.uploads.upload(Flow.jpegBytes, to: presigned)
    }

    @Test func putAfterTheURLExpiredIsRequestHasExpired() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let presigned = try await alice.uploads.presign(contentType: "image/jpeg", fileExt: "jpg", expiresSeconds: 60)
        try await hearth.advanceClock(by: 61)

        let e = try await assertS3Error("AccessDenied") { try await alice.uploads.upload(Flow.jpegBytes, to: presigned) }
        #expect(e.httpStatus == 403)
        #expect(e.message == "Request has expired")
        #expect(e["X-Amz-Expires"] == "60")
        #expect(e["Expires"] != nil)
        #expect(e["ServerTime"] != nil)

        // Download URLs expire the same way.
        let fresh = try await alice.uploads.presign(contentType: "image/jpeg", fileExt: "jpg")
        try await alice.uploads.upload(Flow.jpegBytes, to: fresh)
        let download = try await alice.uploads.presignDownload(s3Key: fresh.key, expiresSeconds: 30)
        try await hearth.advanceClock(by: 31)
        let expired = try await assertS3Error("AccessDenied") { try await alice.uploads.download(download) }
        #expect(expired.message == "Request has expired")
    }

    @Test func expiredIDTokenIs401UntilRefreshed() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let auth = try hearth.instance.auth()
        let session = try await auth.signUp(email: "alice@example.com", password: "secret-alice")
        try await hearth.advanceClock(by: 3601)

        let stale = try hearth.instance.uploads(token: session.bearer)
        let e = try await assertAPIError(httpStatus: 401, status: "UNAUTHENTICATED") {
            try await stale.presign(contentType: "image/jpeg", fileExt: "jpg")
        }
        #expect(e.reason == "ID_TOKEN_EXPIRED")

        let refreshed = try await auth.refresh(session)
        #expect(refreshed.uid == session.uid)
        #expect(refreshed.idToken != session.idToken)
        let p = try await stale.with(token: refreshed.bearer).presign(contentType: "image/jpeg", fileExt: "jpg")
        #expect(p.key.hasPrefix("users/\(session.uid)/"))
    }

    @Test func revokedIDTokenIs401AndSigningInAgainWorks() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let auth = try hearth.instance.auth()
        let session = try await auth.signUp(email: "alice@example.com", password: "secret-alice")
        // Revocation compares whole seconds (iat < validSince), so revoke a little later than the sign-in.
        try await hearth.advanceClock(by: 5)
        try await hearth.instance.revokeRefreshTokens(uid: session.uid)

        let uploads = try hearth.instance.uploads(token: session.bearer)
        let e = try await assertAPIError(httpStatus: 401) { try await uploads.presign(contentType: "image/jpeg", fileExt: "jpg") }
        #expect(e.reason == "ID_TOKEN_REVOKED")
        // Revocation kills the refresh token too, as in production.
        let refresh = try await assertThrowsHearthError { try await auth.refresh(session) }
        guard case .api(let refreshError) = refresh else { Issue.record("not an API error: \(refresh)"); return }
        #expect(refreshError.authErrorCode == "TOKEN_EXPIRED")

        let again = try await auth.signIn(email: "alice@example.com", password: "secret-alice")
        _ = try await uploads.with(token: again.bearer).presign(contentType: "image/jpeg", fileExt: "jpg")
    }

    @Test func disabledUserIs401() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        try await hearth.instance.setDisabled(true, uid: alice.uid)
        let e = try await assertAPIError(httpStatus: 401) { try await alice.uploads.presign(contentType: "image/jpeg", fileExt: "jpg") }
        #expect(e.reason == "USER_DISABLED")
    }

    @Test func missingTokenIs401() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let anonymous = try hearth.instance.uploads(token: .none)
        let e = try await assertAPIError(httpStatus: 401) { try await anonymous.presign(contentType: "image/jpeg", fileExt: "jpg") }
        #expect(e.reason == "MISSING_ID_TOKEN")
    }

    @Test func anotherUserIsDeniedEverywhere() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let bob = try await FlowUser.signUp(hearth, "bob")
        let presigned = try await alice.uploads.presign(contentType: "image/jpeg", fileExt: "jpg")
        try await alice.uploads.upload(Flow.jpegBytes, to: presigned)
        let file = try await alice.uploads.complete(fileID: "f1", key: presigned.key)

        // Firestore: Bob can neither read nor write Alice's file documents.
        let readDenied = try await assertPermissionDenied { try await bob.firestore.document(at: file.path) }
        #expect(!readDenied.message.isEmpty)
        try await assertPermissionDenied {
            try await bob.firestore.query(Query(collection: "files", parent: "users/\(alice.uid)"))
        }
        try await assertPermissionDenied {
            try await bob.firestore.set(FileMetadata(ownerUid: alice.uid, s3Key: presigned.key, contentType: "image/jpeg"),
                                        at: "users/\(alice.uid)/files/f2")
        }
        try await assertPermissionDenied { try await bob.firestore.delete(at: file.path) }
        // Nor can an unauthenticated client.
        try await assertPermissionDenied { try await hearth.instance.firestore().document(at: file.path) }

        // The uploads API: Alice's key is not Bob's to download or complete.
        let download = try await assertPermissionDenied { try await bob.uploads.presignDownload(s3Key: presigned.key) }
        #expect(download.httpStatus == 403)
        try await assertPermissionDenied { try await bob.uploads.complete(fileID: "stolen", key: presigned.key) }

        // Alice still can.
        #expect(try await alice.firestore.document(at: file.path) != nil)
    }

    @Test func metadataWithTheURLOrAForeignKeyIsRejectedByTheRules() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let bob = try await FlowUser.signUp(hearth, "bob")
        let presigned = try await alice.uploads.presign(contentType: "image/jpeg", fileExt: "jpg")
        try await alice.uploads.upload(Flow.jpegBytes, to: presigned)
        let bobsKey = try await bob.uploads.presign(contentType: "image/jpeg", fileExt: "jpg").key
        let files = "users/\(alice.uid)/files"

        // The presigned URL stored as the key.
        try await assertPermissionDenied("URL as s3Key") {
            try await alice.firestore.add(FileMetadata(ownerUid: alice.uid, s3Key: presigned.putUrl, contentType: "image/jpeg"), to: files)
        }
        // The URL in an extra field.
        struct WithURL: Encodable {
            var meta: FileMetadata
            var url: String
            func encode(to encoder: any Encoder) throws {
                try meta.encode(to: encoder)
                var c = encoder.container(keyedBy: K.self)
                try c.encode(url, forKey: .url)
            }
            enum K: CodingKey { case url }
        }
        try await assertPermissionDenied("URL in a field") {
            try await alice.firestore.add(WithURL(meta: FileMetadata(ownerUid: alice.uid, s3Key: presigned.key, contentType: "image/jpeg"),
                                                  url: presigned.putUrl), to: files)
        }
        // Keys outside users/<uid>/.
        for key in [bobsKey, "public/\(presigned.key.split(separator: "/").last ?? "x")", "users/\(alice.uid)/other/x.jpg"] {
            try await assertPermissionDenied("key \(key)") {
                try await alice.firestore.add(FileMetadata(ownerUid: alice.uid, s3Key: key, contentType: "image/jpeg"), to: files)
            }
        }
        // A client-chosen createdAt instead of the server time.
        try await assertPermissionDenied("client createdAt") {
            var m = FileMetadata(ownerUid: alice.uid, s3Key: presigned.key, contentType: "image/jpeg")
            m.createdAt = Date()
            return try await alice.firestore.add(m, to: files)
        }
        // The well-formed document passes.
        _ = try await alice.firestore.add(FileMetadata(ownerUid: alice.uid, s3Key: presigned.key, contentType: "image/jpeg"), to: files)
    }

    @Test func completeBeforeThePutIs404() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let presigned = try await alice.uploads.presign(contentType: "image/jpeg", fileExt: "jpg")
        let e = try await assertAPIError(httpStatus: 404, status: "NOT_FOUND") {
            try await alice.uploads.complete(fileID: "f1", key: presigned.key)
        }
        #expect(e.reason == "OBJECT_NOT_FOUND")
        try await assertAPIError(httpStatus: 404) { try await alice.uploads.presignDownload(s3Key: presigned.key) }
        #expect(try await alice.firestore.document(at: "users/\(alice.uid)/files/f1") == nil)
    }

    @Test func aPutInterruptedHalfWayLeavesNoObject() async throws {
        let hearth = try await Flow.start()
        defer { hearth.stop() }
        let alice = try await FlowUser.signUp(hearth, "alice")
        let presigned = try await alice.uploads.presign(contentType: "video/mp4", fileExt: "mp4")
        let video = Data((0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0) })
        let url = try #require(URL(string: presigned.putUrl))

        try RawHTTP.sendTruncated("PUT", url: url, headers: ["Content-Type": "video/mp4"], declaredLength: video.count,
                                  body: video.prefix(video.count / 2))
        // The server notices the hang-up asynchronously; give it a moment before asking.
        var completed: HearthClientError?
        for _ in 0..<20 {
            completed = try await assertThrowsHearthError { try await alice.uploads.complete(fileID: "clip", key: presigned.key) }
            if completed?.httpStatus == 404 { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(completed?.httpStatus == 404)
        try await assertAPIError(httpStatus: 404) { try await alice.uploads.presignDownload(s3Key: presigned.key) }

        // A full retry with the same URL succeeds.
        try await alice.uploads.upload(video, to: presigned)
        let file = try await alice.uploads.complete(fileID: "clip", key: presigned.key)
        #expect(file.size == Int64(video.count))
    }
}
